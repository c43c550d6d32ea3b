// The PersistentVolumeClaimResize and TaintNodesByCondition admission plugins
// on a real server with its controllers: a claim the persistent volume binder
// bound grows when its StorageClass allows expansion and is refused (403,
// kube's messages) otherwise or while unbound; a new Node carries the not-ready
// NoSchedule taint until the node lifecycle controller sees it Ready. A second
// server with both plugins disabled does neither.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { NO_WORKLOAD_CONTROLLERS, type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
let off: TestServer;
const PVS = '/api/v1/persistentvolumes';
const PVCS = '/api/v1/namespaces/default/persistentvolumeclaims';
const NODES = '/api/v1/nodes';
const NOT_READY = { key: 'node.orch.io/not-ready', effect: 'NoSchedule' };

beforeAll(async () => {
  [t, off] = await Promise.all([
    startTestServer(),
    startTestServer({ authn: NO_WORKLOAD_CONTROLLERS, admissionPlugins: { disable: ['PersistentVolumeClaimResize', 'TaintNodesByCondition'] } }),
  ]);
});
afterAll(async () => {
  await Promise.all([t?.stop(), off?.stop()]);
});

type Obj = Record<string, any>;
async function send(s: TestServer, method: string, path: string, body: object, want = method === 'POST' ? 201 : 200): Promise<Obj> {
  const r = await s.request(method, path, { body, headers: method === 'PATCH' ? { 'content-type': 'application/merge-patch+json' } : {} });
  expect(r.status, r.text).toBe(want);
  return r.json();
}
const get = async (s: TestServer, path: string): Promise<Obj> => (await s.request('GET', path)).json();
const storageClass = (name: string, expand?: boolean) => ({
  apiVersion: 'storage.orch.io/v1', kind: 'StorageClass', metadata: { name }, provisioner: 'example.com/external',
  ...(expand === undefined ? {} : { allowVolumeExpansion: expand }),
});
const volume = (name: string, cls: string) => ({
  apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name },
  spec: { capacity: { storage: '5Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: `/tmp/${name}` }, storageClassName: cls },
});
const claim = (name: string, cls: string) => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: cls },
});
const resize = (storage: string) => ({ spec: { resources: { requests: { storage } } } });
const boundClaim = (s: TestServer, name: string) => eventually(async () => (await get(s, `${PVCS}/${name}`)).status?.phase === 'Bound', `${name} Bound`, 20_000);

async function refused(s: TestServer, path: string, body: object): Promise<string> {
  const r = await s.request('PATCH', path, { body, headers: { 'content-type': 'application/merge-patch+json' } });
  expect(r.status, r.text).toBe(403);
  const status = r.json<Obj>();
  expect(status).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403, details: { kind: 'persistentvolumeclaims' } });
  return status.message;
}

describe('PersistentVolumeClaimResize', () => {
  it('lets a bound claim of an expandable class grow, and refuses one whose class does not allow it', async () => {
    await send(t, 'POST', '/apis/storage.orch.io/v1/storageclasses', storageClass('gold', true));
    await send(t, 'POST', '/apis/storage.orch.io/v1/storageclasses', storageClass('silver'));
    await send(t, 'POST', PVS, volume('pv-gold', 'gold'));
    await send(t, 'POST', PVS, volume('pv-silver', 'silver'));
    await send(t, 'POST', PVCS, claim('gold-data', 'gold'));
    await send(t, 'POST', PVCS, claim('silver-data', 'silver'));
    await boundClaim(t, 'gold-data');
    await boundClaim(t, 'silver-data');

    const grown = await send(t, 'PATCH', `${PVCS}/gold-data`, resize('2Gi'));
    expect(grown.spec.resources.requests.storage).toBe('2Gi');
    expect((await get(t, `${PVCS}/gold-data`)).spec.resources.requests.storage).toBe('2Gi');

    expect(await refused(t, `${PVCS}/silver-data`, resize('2Gi'))).toBe(
      'persistentvolumeclaims "silver-data" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize');
    expect((await get(t, `${PVCS}/silver-data`)).spec.resources.requests.storage).toBe('1Gi');
    // the same size written another way, a smaller one and a label are not growth (1024Mi is written back as kube's canonical 1Gi)
    expect((await send(t, 'PATCH', `${PVCS}/silver-data`, resize('1024Mi'))).spec.resources.requests.storage).toBe('1Gi');
    expect((await send(t, 'PATCH', `${PVCS}/silver-data`, { metadata: { labels: { tier: 'b' } } })).metadata.labels).toEqual({ tier: 'b' });
  });

  it('refuses growth of a claim that is not bound, even of an expandable class: validation first, as in kube (422 before the plugin)', async () => {
    // no volume left for it: the claim waits for the (absent) external provisioner, Pending
    await send(t, 'POST', PVCS, claim('waiting', 'gold'));
    expect((await get(t, `${PVCS}/waiting`)).status.phase).toBe('Pending');
    const r = await t.request('PATCH', `${PVCS}/waiting`, { body: resize('3Gi'), headers: { 'content-type': 'application/merge-patch+json' } });
    expect(r.status, r.text).toBe(422);
    expect(r.json<Obj>().message).toMatch(/^PersistentVolumeClaim "waiting" is invalid: spec: Forbidden: spec is immutable after creation except resources\.requests and volumeAttributesClassName for bound claims\n/);
    expect((await get(t, `${PVCS}/waiting`)).spec.resources.requests.storage).toBe('1Gi');
    expect((await send(t, 'PATCH', `${PVCS}/waiting`, { metadata: { annotations: { note: 'x' } } })).metadata.annotations).toMatchObject({ note: 'x' });
  });

  it('disabled, lets a bound claim of a class without expansion grow', async () => {
    await send(off, 'POST', '/apis/storage.orch.io/v1/storageclasses', storageClass('silver', false));
    await send(off, 'POST', PVCS, claim('loose', 'silver'));
    // bound as the volume binder would mark it (this server runs no workload controllers)
    await send(off, 'PATCH', `${PVCS}/loose/status`, { status: { phase: 'Bound' } });
    expect((await send(off, 'PATCH', `${PVCS}/loose`, resize('4Gi'))).spec.resources.requests.storage).toBe('4Gi');
  });
});

describe('TaintNodesByCondition', () => {
  const node = (name: string, spec: Obj = {}, ready?: 'True' | 'False') => ({
    apiVersion: 'v1', kind: 'Node', metadata: { name }, spec,
    ...(ready ? { status: { conditions: [{ type: 'Ready', status: ready, reason: 'Test', message: 'test', lastHeartbeatTime: new Date().toISOString(), lastTransitionTime: new Date().toISOString() }] } } : {}),
  });

  it('taints a new Node not-ready NoSchedule; the node lifecycle controller removes it once the node is Ready', async () => {
    const created = await send(t, 'POST', NODES, node('fresh', {}, 'False'));
    expect(created.spec.taints).toEqual([NOT_READY]);
    // still not ready: the controller keeps it (and adds nothing else for a while)
    expect((await get(t, `${NODES}/fresh`)).spec.taints).toEqual([NOT_READY]);
    const ready = node('fresh', {}, 'True');
    await send(t, 'PATCH', `${NODES}/fresh/status`, { status: ready.status });
    await eventually(async () => ((await get(t, `${NODES}/fresh`)).spec.taints ?? []).length === 0, 'the not-ready taint removed', 20_000);
  });

  it('adds no second not-ready NoSchedule taint, and keeps the Node\'s own taints', async () => {
    const own = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };
    expect((await send(t, 'POST', NODES, node('pretainted', { taints: [own, { ...NOT_READY, value: 'v' }] }))).spec.taints).toEqual([own, { ...NOT_READY, value: 'v' }]);
    expect((await send(t, 'POST', NODES, node('owned', { taints: [own] }))).spec.taints).toEqual([own, NOT_READY]);
  });

  it('disabled, leaves a new Node untainted', async () => {
    const created = await send(off, 'POST', NODES, node('plain', {}, 'True'));
    expect(created.spec.taints).toBeUndefined();
  });
});
