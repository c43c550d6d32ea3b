// Property (spec 000 §4.9, §4.6): applying the same configuration twice over
// HTTP is a no-op — the second answer is the identical object, with the same
// resourceVersion, and nothing is written. Holds for creates and for
// re-applies after an earlier, different configuration by the same or
// another manager, on configmaps (granular maps) and pods (map lists).

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_WORKLOAD_CONTROLLERS, type RawResponse, type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
type Obj = Record<string, any>;

const key = fc.stringMatching(/^[a-z][a-z0-9]{0,6}$/);
const value = fc.stringMatching(/^[a-z0-9]{0,8}$/);
const smallMap = fc.dictionary(key, value, { maxKeys: 4 });
const manager = fc.constantFrom('alice', 'bob');

let counter = 0;

function apply(path: string, cfg: object, mgr: string, force = false): Promise<RawResponse> {
  return t.request('PATCH', `${path}?fieldManager=${mgr}${force ? '&force=true' : ''}`, {
    // JSON is YAML: the apply body may be JSON (spec 000 §4.3)
    body: JSON.stringify(cfg),
    headers: { 'Content-Type': 'application/apply-patch+yaml' },
  });
}

function configMap(name: string, data: Record<string, string>, labels: Record<string, string>): Obj {
  const metadata: Obj = { name };
  if (Object.keys(labels).length > 0) metadata.labels = labels;
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata, data };
}

function pod(name: string, containers: { name: string; image: string }[]): Obj {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers } };
}

async function rvOf(path: string): Promise<string> {
  const r = await t.request('GET', path);
  expect(r.status, r.text).toBe(200);
  return r.json<Obj>().metadata.resourceVersion as string;
}

beforeAll(async () => {
  t = await startTestServer({ authn: NO_WORKLOAD_CONTROLLERS });
});
afterAll(async () => {
  await t?.stop();
});

describe('apply twice is a no-op', () => {
  it('configmaps: same resourceVersion and identical object, after any earlier apply', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.option(fc.record({ data: smallMap, labels: smallMap, mgr: manager }), { nil: undefined }),
        fc.record({ data: smallMap, labels: smallMap, mgr: manager }),
        async (earlier, cfg) => {
          const name = `noop-${++counter}`;
          const path = `/api/v1/namespaces/default/configmaps/${name}`;
          if (earlier) {
            const e = await apply(path, configMap(name, earlier.data, earlier.labels), earlier.mgr);
            expect(e.status, e.text).toBe(201);
          }
          // force so that a different manager's earlier values never stop the property from being exercised
          const first = await apply(path, configMap(name, cfg.data, cfg.labels), cfg.mgr, true);
          expect([200, 201], first.text).toContain(first.status);
          const second = await apply(path, configMap(name, cfg.data, cfg.labels), cfg.mgr, true);
          expect(second.status, second.text).toBe(200);
          expect(second.json<Obj>()).toEqual(first.json<Obj>());
          expect(second.json<Obj>().metadata.resourceVersion).toBe(first.json<Obj>().metadata.resourceVersion);
          expect(await rvOf(path)).toBe(first.json<Obj>().metadata.resourceVersion);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('pods: containers as a map list keyed by name', async () => {
    const containers = fc.uniqueArray(fc.record({ name: key, image: fc.constantFrom('nginx:1', 'nginx:2', 'busybox:1') }), {
      minLength: 1,
      maxLength: 3,
      selector: (c) => c.name,
    });
    await fc.assert(
      fc.asyncProperty(containers, manager, async (cs, mgr) => {
        const name = `noop-pod-${++counter}`;
        const path = `/api/v1/namespaces/default/pods/${name}`;
        const first = await apply(path, pod(name, cs), mgr);
        expect(first.status, first.text).toBe(201);
        const second = await apply(path, pod(name, cs), mgr);
        expect(second.status, second.text).toBe(200);
        expect(second.json<Obj>()).toEqual(first.json<Obj>());
        expect(await rvOf(path)).toBe(first.json<Obj>().metadata.resourceVersion);
      }),
      { numRuns: 25 },
    );
  });
});
