// The import boundaries of docs/architecture.md are enforced by
// dependency-cruiser in `npm test` (.dependency-cruiser.cjs). These tests pin
// that the rules bite: deliberately wrong imports in a fixture tree fail, the
// allowed direction passes, and src/ itself has no violation beyond the
// recorded baseline.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { cruise } from 'dependency-cruiser';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const config = require('../../.dependency-cruiser.cjs') as { forbidden: unknown[]; options: Record<string, unknown> };
const root = join(import.meta.dirname, '..', '..');

interface Violation { rule: { name: string; severity: string }; from: string; to: string }

async function violations(baseDir: string, known?: unknown): Promise<Violation[]> {
  const { tsConfig: _ts, ...options } = config.options;
  const r = await cruise(['src'], {
    ...options,
    baseDir,
    ruleSet: { forbidden: config.forbidden },
    validate: true,
    ...(known ? { knownViolations: known } : {}),
  } as Parameters<typeof cruise>[1]);
  const out = r.output as { summary: { violations: Violation[] } };
  // known violations come back with severity 'ignore'
  return out.summary.violations.filter((v) => v.rule.severity !== 'ignore');
}

describe('import boundaries', () => {
  it('deliberately wrong imports fail: raft → store, raft core → node:fs, store → api, nodeagent → server', async () => {
    const v = await violations(join(root, 'test', 'fixtures', 'boundaries'));
    const found = v.map((x) => `${x.rule.name}: ${x.from} → ${x.to}`).sort();
    expect(found).toEqual([
      'nodeagent-is-separate: src/nodeagent/agent.ts → src/server/pki.ts',
      'raft-core-is-pure: src/raft/log.ts → fs',
      'raft-imports-nothing: src/raft/log.ts → src/store/state.ts',
      'store-imports-raft-only: src/store/upward.ts → src/api/registry.ts',
    ]);
  });

  it('deliberately wrong imports across the request path fail: machinery → registry, registry → endpoints, endpoints → gateway, core → store, auth → endpoints', async () => {
    const v = await violations(join(root, 'test', 'fixtures', 'boundaries-layers'));
    const found = v.map((x) => `${x.rule.name}: ${x.from} → ${x.to}`).sort();
    expect(found).toEqual([
      'auth-imports-below: src/auth/kinds/review.ts → src/endpoints/handler.ts',
      'core-imports-nothing: src/core/errors.ts → src/store/types.ts',
      'endpoints-imports-below: src/endpoints/handler.ts → src/gateway/server.ts',
      'machinery-imports-core-only: src/machinery/patch.ts → src/registry/types.ts',
      'registry-imports-below: src/registry/kinds.ts → src/endpoints/handler.ts',
    ]);
  });

  it('a controller outside src/controllers/runtime/ importing the store fails; the runtime may', async () => {
    const v = await violations(join(root, 'test', 'fixtures', 'boundaries-controllers'));
    const found = v.map((x) => `${x.rule.name}: ${x.from} → ${x.to}`).sort();
    expect(found).toEqual(['controllers-use-the-runtime: src/controllers/namespace.ts → src/store/types.ts']);
  });

  it('src/ has no violation and no import circle, and the baseline of tolerated ones is empty', async () => {
    const known = JSON.parse(readFileSync(join(root, '.dependency-cruiser-known-violations.json'), 'utf8')) as unknown[];
    expect(known).toEqual([]);
    expect(await violations(root)).toEqual([]);
  }, 60_000);
});
