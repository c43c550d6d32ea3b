// What every namespace has, as in Kubernetes (issue #11 item 6): the
// `<domain>/metadata.name` label, a `default` ServiceAccount and the cluster
// CA ConfigMap, restored when removed or changed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

type Obj = { metadata: { name: string; labels?: Record<string, string>; resourceVersion?: string }; data?: Record<string, string> };

describe('namespace defaults (orch.io)', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => t.stop());

  const exists = async (path: string): Promise<boolean> => (await t.request('GET', path)).status === 200;

  it('labels every namespace with its name, and keeps the label right', async () => {
    const r = await t.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'nd-one', labels: { team: 'a' } } } });
    expect(r.status).toBe(201);
    expect(r.json<Obj>().metadata.labels).toEqual({ team: 'a', 'orch.io/metadata.name': 'nd-one' });
    const put = await t.request('PUT', '/api/v1/namespaces/nd-one', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'nd-one', labels: { 'orch.io/metadata.name': 'other' } } } });
    expect(put.status).toBe(200);
    expect(put.json<Obj>().metadata.labels).toEqual({ 'orch.io/metadata.name': 'nd-one' });
    expect((await t.request('GET', '/api/v1/namespaces/default')).json<Obj>().metadata.labels?.['orch.io/metadata.name']).toBe('default');
  });

  it('gives a new namespace a default ServiceAccount and the CA ConfigMap', async () => {
    await t.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'nd-two' } } });
    await eventually(() => exists('/api/v1/namespaces/nd-two/serviceaccounts/default'), 'default ServiceAccount');
    await eventually(() => exists('/api/v1/namespaces/nd-two/configmaps/orch-root-ca.crt'), 'CA ConfigMap');
    const cm = (await t.request('GET', '/api/v1/namespaces/nd-two/configmaps/orch-root-ca.crt')).json<Obj>();
    expect(cm.data).toEqual({ 'ca.crt': t.server.caPem });
    // the built-in namespaces have them too
    expect(await exists('/api/v1/namespaces/default/serviceaccounts/default')).toBe(true);
  });

  it('restores the ServiceAccount and the ConfigMap when deleted or changed', async () => {
    await t.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'nd-three' } } });
    const sa = '/api/v1/namespaces/nd-three/serviceaccounts/default';
    const cm = '/api/v1/namespaces/nd-three/configmaps/orch-root-ca.crt';
    await eventually(async () => (await exists(sa)) && (await exists(cm)), 'defaults');
    const oldUid = (await t.request('GET', sa)).json<{ metadata: { uid: string } }>().metadata.uid;
    expect((await t.request('DELETE', sa)).status).toBe(200);
    await eventually(async () => {
      const r = await t.request('GET', sa);
      return r.status === 200 && r.json<{ metadata: { uid: string } }>().metadata.uid !== oldUid;
    }, 'ServiceAccount recreated');
    const cur = (await t.request('GET', cm)).json<Obj>();
    const changed = await t.request('PUT', cm, { body: { ...cur, data: { 'ca.crt': 'not the CA' } } });
    expect(changed.status).toBe(200);
    await eventually(async () => (await t.request('GET', cm)).json<Obj>().data?.['ca.crt'] === t.server.caPem, 'ConfigMap restored');
    expect((await t.request('DELETE', cm)).status).toBe(200);
    await eventually(() => exists(cm), 'ConfigMap recreated');
  });

  it('a Terminating namespace refuses new content with a Forbidden naming the object', async () => {
    await t.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'nd-term' } } });
    // a finalizer nobody removes keeps the namespace Terminating
    await t.request('POST', '/api/v1/namespaces/nd-term/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', finalizers: ['example.com/hold'] } } });
    expect((await t.request('DELETE', '/api/v1/namespaces/nd-term')).status).toBe(200);
    const r = await t.request('POST', '/api/v1/namespaces/nd-term/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late' } } });
    expect(r.status).toBe(403);
    expect(r.json()).toMatchObject({
      reason: 'Forbidden',
      message: 'configmaps "late" is forbidden: unable to create new content in namespace nd-term because it is being terminated',
      details: { name: 'late', kind: 'configmaps', causes: [{ reason: 'NamespaceTerminating', message: 'namespace nd-term is being terminated', field: 'metadata.namespace' }] },
    });
    // a name to be generated is shown as its prefix, as kube's admission does: the same refusal reads the same each time
    const gen = await t.request('POST', '/api/v1/namespaces/nd-term/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'web-' } } });
    expect(gen.status).toBe(403);
    expect(gen.json<{ message: string }>().message).toBe('configmaps "web-" is forbidden: unable to create new content in namespace nd-term because it is being terminated');
    const held = (await t.request('GET', '/api/v1/namespaces/nd-term/configmaps/held')).json<Obj>();
    await t.request('PUT', '/api/v1/namespaces/nd-term/configmaps/held', { body: { ...held, metadata: { ...held.metadata, finalizers: [] } } });
  });

  it('the server records an Event when it finishes deleting a namespace', async () => {
    await t.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'gone' } } });
    expect((await t.request('DELETE', '/api/v1/namespaces/gone')).status).toBe(200);
    type Ev = { reason: string; type: string; count: number; involvedObject: { kind: string; name: string }; source: { component: string } };
    const find = async (): Promise<Ev | undefined> => {
      const r = await t.request('GET', '/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dgone');
      return r.json<{ items: Ev[] }>().items.find((e) => e.reason === 'NamespaceContentDeleted');
    };
    await eventually(async () => (await find()) !== undefined, 'NamespaceContentDeleted event');
    expect(await find()).toMatchObject({ type: 'Normal', count: 1, involvedObject: { kind: 'Namespace', name: 'gone' }, source: { component: 'orch-server' } });
  });

  it('lets a namespace with its defaults be deleted', async () => {
    await t.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'nd-four' } } });
    await eventually(() => exists('/api/v1/namespaces/nd-four/configmaps/orch-root-ca.crt'), 'defaults');
    expect((await t.request('DELETE', '/api/v1/namespaces/nd-four')).status).toBe(200);
    await eventually(async () => (await t.request('GET', '/api/v1/namespaces/nd-four')).status === 404, 'namespace gone');
  });
});

describe('namespace defaults (--api-domain k8s.io)', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ apiDomain: 'k8s.io' });
  });
  afterAll(async () => t.stop());

  it("uses Kubernetes' names: kubernetes.io/metadata.name and kube-root-ca.crt", async () => {
    const r = await t.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kd' } } });
    expect(r.json<Obj>().metadata.labels).toEqual({ 'kubernetes.io/metadata.name': 'kd' });
    await eventually(async () => (await t.request('GET', '/api/v1/namespaces/kd/configmaps/kube-root-ca.crt')).status === 200, 'kube-root-ca.crt');
  });
});

