// RuntimeClass, the CSI kinds and the flow-control kinds (spec 000 §9's
// deprecation table) through the HTTP API and kubectl 1.32, with
// `--api-domain k8s.io` as kubectl sees kube.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { runKubectl } from '../helpers/kubectl.js';

let t: TestServer;
const kubectl = (...args: string[]) => runKubectl(t.server.kubeconfigPath, args);

beforeAll(async () => {
  t = await startTestServer({ apiDomain: 'k8s.io' });
});
afterAll(async () => {
  await t?.stop();
});

type Obj = Record<string, unknown>;
interface Cause { field: string; message: string; reason: string }

async function crud(base: string, name: string, body: Obj, change: (o: Obj) => void): Promise<Obj> {
  let r = await t.request('POST', base, { body });
  expect(r.status, r.text).toBe(201);
  r = await t.request('GET', `${base}/${name}`);
  expect(r.status, r.text).toBe(200);
  const got = r.json();
  change(got);
  r = await t.request('PUT', `${base}/${name}`, { body: got });
  expect(r.status, r.text).toBe(200);
  r = await t.request('GET', base);
  expect(r.status).toBe(200);
  expect(r.json<{ items: { metadata: { name: string } }[] }>().items.map((i) => i.metadata.name)).toContain(name);
  return r.json<{ items: Obj[] }>().items.find((i) => (i.metadata as Obj).name === name)!;
}

async function refused(method: string, path: string, body: Obj): Promise<Cause[]> {
  const r = await t.request(method, path, { body });
  expect(r.status, r.text).toBe(422);
  const s = r.json<{ kind: string; reason: string; details: { causes: Cause[] } }>();
  expect(s.kind).toBe('Status');
  expect(s.reason).toBe('Invalid');
  return s.details.causes;
}

describe('node.k8s.io/v1 RuntimeClass', () => {
  const base = '/apis/node.k8s.io/v1/runtimeclasses';
  it('create, get, update, list; handler is immutable; delete', async () => {
    const rc = await crud(base, 'gvisor', {
      apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: 'gvisor' }, handler: 'runsc',
      overhead: { podFixed: { cpu: '250m', memory: '64Mi' } },
      scheduling: { nodeSelector: { sandbox: 'true' }, tolerations: [{ key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }] },
    }, (o) => { (o.metadata as Obj).labels = { tier: 'sandbox' }; });
    expect(rc).toMatchObject({ handler: 'runsc', metadata: { labels: { tier: 'sandbox' } }, overhead: { podFixed: { cpu: '250m' } } });

    const cur = (await t.request('GET', `${base}/gvisor`)).json();
    const causes = await refused('PUT', `${base}/gvisor`, { ...cur, handler: 'kata' });
    expect(causes).toContainEqual(expect.objectContaining({ field: 'handler', message: 'Invalid value: "kata": field is immutable' }));
    expect((await t.request('GET', `${base}/gvisor`)).json().handler).toBe('runsc');

    const bad = await refused('POST', base, { apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: 'bad' }, handler: 'Run_SC',
      scheduling: { tolerations: [{ operator: 'Equal', value: 'x' }] } });
    expect(bad.map((c) => c.field)).toEqual(expect.arrayContaining(['handler', 'scheduling.tolerations[0].operator']));
    expect(bad.find((c) => c.field === 'handler')!.message).toContain('a lowercase RFC 1123 label must consist of');
    expect((await t.request('GET', `${base}/bad`)).status).toBe(404);
  });

  it('kubectl get runtimeclasses shows NAME HANDLER AGE; kubectl explain reads the schema', async () => {
    const r = await kubectl('get', 'runtimeclasses');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^NAME\s+HANDLER\s+AGE\n/);
    expect(r.stdout).toMatch(/gvisor\s+runsc\s+\d+s/);
    const e = await kubectl('explain', 'runtimeclass.handler');
    expect(e.code, e.stderr).toBe(0);
    expect(e.stdout).toContain('FIELD: handler <string>');
    const d = await kubectl('delete', 'runtimeclass', 'gvisor');
    expect(d.code, d.stderr).toBe(0);
    expect((await t.request('GET', `${base}/gvisor`)).status).toBe(404);
  });
});
