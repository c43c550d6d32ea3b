// The Raft core is pure (docs/raft.md "Structure"): no I/O, no wall clock, no
// ambient randomness — time arrives as tick() calls and randomness through an
// injected source, so simulations (test/raft/sim.ts) replay exactly. This test
// scans the core files' import lines and source and fails on a forbidden
// dependency; the driver, storage and transport files sit outside the core.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const CORE_FILES = ['raft.ts', 'state.ts', 'election.ts', 'replication.ts', 'leader.ts', 'read-index.ts', 'follower.ts', 'membership.ts', 'raw-node.ts', 'progress.ts', 'quorum.ts', 'read-only.ts', 'log.ts', 'types.ts'];

/** Module specifiers a pure core file may not import. */
const FORBIDDEN_MODULES: RegExp[] = [/^node:/, /^level$/, /^level\//, /^@grpc\//];
/** Node built-ins imported without the node: prefix are I/O too. */
const BUILTINS = new Set(['fs', 'fs/promises', 'net', 'http', 'http2', 'https', 'os', 'crypto', 'timers', 'child_process', 'dgram', 'worker_threads', 'path', 'url']);

/** Global APIs the core may not touch: wall clock, ambient randomness, timers. */
const FORBIDDEN_GLOBALS: Array<[RegExp, string]> = [
  [/\bDate\b/, 'Date'],
  [/\bMath\.random\b/, 'Math.random'],
  [/\bperformance\.now\b/, 'performance.now'],
  [/\b(setTimeout|setInterval|setImmediate)\s*\(/, 'timers'],
  [/\bprocess\./, 'process'],
];

/** Import specifiers (static, dynamic, re-export, require) in a source text. */
function importSpecifiers(source: string): string[] {
  const out: string[] = [];
  const re = /(?:\bimport\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?|\bexport\s+(?:type\s+)?[^'";]*?\s+from\s+|\bimport\s*\(\s*|\brequire\s*\(\s*)['"]([^'"]+)['"]/g;
  for (const m of source.matchAll(re)) out.push(m[1]!);
  return out;
}

/** Source with comments and string literals blanked, so a comment saying "Date" is no violation. */
function codeOnly(source: string): string {
  return source
    .replace(/\/\*[\s\S]*?\*\//g, ' ')
    .replace(/\/\/[^\n]*/g, ' ')
    .replace(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g, "''");
}

function violations(source: string): string[] {
  const found: string[] = [];
  for (const spec of importSpecifiers(source)) {
    if (FORBIDDEN_MODULES.some((re) => re.test(spec)) || BUILTINS.has(spec)) found.push(`import '${spec}'`);
  }
  const code = codeOnly(source);
  for (const [re, name] of FORBIDDEN_GLOBALS) if (re.test(code)) found.push(name);
  return found;
}

describe('Raft core purity', () => {
  for (const file of CORE_FILES) {
    it(`${file} imports no I/O and uses no clock or ambient randomness`, () => {
      const source = readFileSync(fileURLToPath(new URL(`../../src/raft/${file}`, import.meta.url)), 'utf8');
      expect(violations(source)).toEqual([]);
    });
  }

  it('catches deliberately wrong imports and globals', () => {
    expect(violations(`import { readFileSync } from 'node:fs';`)).toEqual(["import 'node:fs'"]);
    expect(violations(`import { Level } from 'level';`)).toEqual(["import 'level'"]);
    expect(violations(`import * as grpc from '@grpc/grpc-js';`)).toEqual(["import '@grpc/grpc-js'"]);
    expect(violations(`import type { Server } from 'net';`)).toEqual(["import 'net'"]);
    expect(violations(`export { x } from 'node:os';`)).toEqual(["import 'node:os'"]);
    expect(violations(`const m = await import('node:crypto');`)).toEqual(["import 'node:crypto'"]);
    expect(violations(`const t = Date.now();`)).toEqual(['Date']);
    expect(violations(`const r = Math.random();`)).toEqual(['Math.random']);
    expect(violations(`setTimeout(() => {}, 1);`)).toEqual(['timers']);
  });

  it('ignores comments, strings and look-alike identifiers', () => {
    expect(violations(`// Date.now() is not used here\nconst s = 'Math.random';\nconst isUpToDate = 1;`)).toEqual([]);
    expect(violations(`import { Raft } from './raft.js';`)).toEqual([]);
  });
});
