// Applying the same configuration again is a no-op even when the second apply
// comes in a later second, whose time its managedFields entry would carry:
// `data: {}` on a ConfigMap is stored without the empty map (Go's omitempty),
// so the merge of the next apply sees the field added again, and used to bump
// the applier's time — a write and a new resourceVersion every time. Each
// second apply here waits until the clock has passed the second of the first
// one's entry (test/property/apply-noop.property.test.ts met this only when
// its two applies happened to straddle a second).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_WORKLOAD_CONTROLLERS, type TestServer, startTestServer } from '../helpers/server.js';

type Obj = Record<string, any>;
let t: TestServer;
/** waits (under a second) until the wall clock is past the whole second `time` names */
const afterSecond = async (time: string): Promise<void> => {
  while (new Date().toISOString().slice(0, 19) <= time.slice(0, 19)) await new Promise((r) => setTimeout(r, 50));
};

beforeAll(async () => {
  t = await startTestServer({ authn: NO_WORKLOAD_CONTROLLERS });
});
afterAll(async () => {
  await t?.stop();
});

const apply = async (path: string, cfg: object, manager: string): Promise<Obj> => {
  const r = await t.request('PATCH', `${path}?fieldManager=${manager}&force=true`, { body: JSON.stringify(cfg), headers: { 'Content-Type': 'application/apply-patch+yaml' } });
  expect([200, 201], r.text).toContain(r.status);
  return r.json<Obj>();
};
const configMap = (name: string, data: Record<string, string>, labels?: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...(labels ? { labels } : {}) }, data });

describe('apply of an unchanged configuration in a later second', () => {
  it.each([
    ['data: {} alone', [], configMap('only-empty', {})],
    ['data: {} with labels', [], configMap('empty-labels', {}, { l: 'v' })],
    ['data: {} after another manager set labels', [['bob', configMap('after-bob', {}, { l: 'v' })]], configMap('after-bob', {})],
    ['data: {} after the same manager set data', [['alice', configMap('after-alice', { a: 'x' })]], configMap('after-alice', {})],
  ] as [string, [string, object][], Obj][])('%s: same object, same resourceVersion', async (_what, earlier, cfg) => {
    const path = `/api/v1/namespaces/default/configmaps/${cfg.metadata.name}`;
    for (const [manager, c] of earlier) await apply(path, c, manager);
    const first = await apply(path, cfg, 'alice');
    await afterSecond(first.metadata.managedFields.find((e: Obj) => e.manager === 'alice').time);
    const second = await apply(path, cfg, 'alice');
    expect(second.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    expect(second).toEqual(first);
  });

  it('an apply that changes a value still takes the new time', async () => {
    const path = '/api/v1/namespaces/default/configmaps/changes';
    const first = await apply(path, configMap('changes', { a: 'x' }), 'alice');
    await afterSecond(first.metadata.managedFields[0].time);
    const second = await apply(path, configMap('changes', { a: 'y' }), 'alice');
    expect(second.metadata.resourceVersion).not.toBe(first.metadata.resourceVersion);
    expect(second.metadata.managedFields[0].time).not.toBe(first.metadata.managedFields[0].time);
  });
});
