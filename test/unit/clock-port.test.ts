// Time and randomness come in through ports (issue #9 item 6, src/core/clock.ts,
// src/core/random.ts): a module that reads the wall clock, sets a global timer
// or draws Math.random cannot be tested on a simulated clock or replayed from a
// seed. This test scans src/ for those calls outside the port modules.
//
// ALLOWED is where the calls belong and must stay short. PENDING lists files
// not yet converted, with the reason; it may only shrink: a listed file that
// no longer has a call fails the test until it is taken off the list.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** the ports themselves */
const ALLOWED = new Set([
  'src/core/clock.ts',
  'src/core/random.ts',
  // the wall-clock fault injector replaces Date itself (docs/reliability.md)
  'src/core/wall-clock-skew.ts',
  // the node agent imports nothing of the control plane, so it has its own port
  'src/nodeagent/clock.ts',
]);

/** not yet converted; may only shrink */
const PENDING: Record<string, string> = {
};

const FORBIDDEN: Array<[RegExp, string]> = [
  [/\bDate\.now\b/, 'Date.now'],
  [/\bnew Date\(\s*\)/, 'new Date()'],
  [/\bMath\.random\b/, 'Math.random'],
  // a bare call: `clock.setTimeout(...)` is the port and fine
  [/(?<![.\w$])(setTimeout|setInterval|clearTimeout|clearInterval)\s*\(/, 'global timer'],
];

/** whether a `/` after this code starts a regex literal rather than a division */
function startsRegex(before: string): boolean {
  const m = /(\S*)\s*$/.exec(before)![1]!;
  if (m === '') return true;
  if (/[(,=:[!&|?{};+\-*%<>~^]$/.test(m)) return true;
  return /(?:^|[^\w$])(?:return|typeof|case|in|of|void|delete|throw|else|do|yield|await)$/.test(m);
}

/**
 * source with comments and string literals blanked, so a comment saying
 * "Date.now" is no violation. A template literal loses only its text: the
 * `${…}` expressions in it are code and stay (a call hidden in one is found).
 */
export function codeOnly(source: string): string {
  let out = '';
  let i = 0;
  // one entry per open template literal: the brace depth of its current `${`
  const templates: number[] = [];
  let depth = 0;
  const n = source.length;
  const inTemplateText = (): boolean => templates.length > 0 && templates[templates.length - 1] === -1;
  while (i < n) {
    const c = source[i]!;
    if (inTemplateText()) {
      if (c === '\\') i += 2;
      else if (c === '`') {
        templates.pop();
        out += "''";
        i++;
      } else if (c === '$' && source[i + 1] === '{') {
        templates[templates.length - 1] = depth;
        depth++;
        out += ' ';
        i += 2;
      } else i++;
      continue;
    }
    const two = source.slice(i, i + 2);
    if (two === '//') {
      const end = source.indexOf('\n', i);
      i = end < 0 ? n : end;
      out += ' ';
    } else if (two === '/*') {
      const end = source.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
      out += ' ';
    } else if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < n && source[j] !== c && source[j] !== '\n') j += source[j] === '\\' ? 2 : 1;
      i = j + 1;
      out += "''";
    } else if (c === '/' && startsRegex(out)) {
      // a regex literal: its quotes and backticks are no strings
      let j = i + 1;
      let inClass = false;
      while (j < n && source[j] !== '\n' && (inClass || source[j] !== '/')) {
        if (source[j] === '\\') j++;
        else if (source[j] === '[') inClass = true;
        else if (source[j] === ']') inClass = false;
        j++;
      }
      i = j + 1;
      out += "''";
    } else if (c === '`') {
      templates.push(-1);
      i++;
    } else if (c === '{') {
      depth++;
      out += c;
      i++;
    } else if (c === '}') {
      depth--;
      // the end of a `${…}`: back to the template's text
      if (templates.length > 0 && templates[templates.length - 1] === depth) {
        templates[templates.length - 1] = -1;
        out += ' ';
      } else out += c;
      i++;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

export function violations(source: string): string[] {
  const code = codeOnly(source);
  return FORBIDDEN.filter(([re]) => re.test(code)).map(([, name]) => name);
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (p.endsWith('.ts')) out.push(relative(ROOT, p).split('\\').join('/'));
  }
  return out.sort();
}

describe('clock and random ports', () => {
  const files = sourceFiles(join(ROOT, 'src'));
  const found = new Map(files.map((f) => [f, violations(readFileSync(join(ROOT, f), 'utf8'))] as const).filter(([, v]) => v.length > 0));

  it('the check sees the calls it forbids', () => {
    expect(violations('const t = Date.now();')).toEqual(['Date.now']);
    expect(violations('x = new Date();')).toEqual(['new Date()']);
    expect(violations('setTimeout(f, 1)')).toEqual(['global timer']);
    expect(violations('clock.setTimeout(f, 1); new Date(ms); // Date.now()')).toEqual([]);
    expect(violations('const r = Math.random;')).toEqual(['Math.random']);
    // a template literal's text is blanked, its `${}` expressions are code
    expect(violations('const s = `at ${Date.now()} ms`;')).toEqual(['Date.now']);
    expect(violations('const s = `a ${`b ${x({ y: setTimeout(f, 1) })}`} c`;')).toEqual(['global timer']);
    expect(violations('const s = `Date.now() ${"new Date()"} Math.random`;')).toEqual([]);
    expect(codeOnly('f(`x${a}y`, "z") // w')).not.toMatch(/[xyzw]/);
    // a quote or backtick in a regex literal opens no string: the call after it is still seen
    expect(violations('const r = /["`]/g; const t = Date.now();')).toEqual(['Date.now']);
    expect(violations('const half = a / 2; const b = c / d; setTimeout(f, 1);')).toEqual(['global timer']);
  });

  it('only the port modules read the wall clock, set global timers or draw Math.random', () => {
    const offenders = [...found].filter(([f]) => !ALLOWED.has(f) && !(f in PENDING)).map(([f, v]) => `${f}: ${v.join(', ')}`);
    expect(offenders).toEqual([]);
  });

  it('the pending list only shrinks (a converted file leaves it)', () => {
    expect(Object.keys(PENDING).filter((f) => !found.has(f))).toEqual([]);
  });

  it('the allow-list stays short', () => {
    expect(ALLOWED.size).toBeLessThanOrEqual(6);
  });
});
