// Two core/v1 resources kube 1.32 still serves for old clients: the computed,
// read-only `componentstatuses` (kubectl get cs) and the legacy `bindings`
// collection (POST a Binding naming the pod), on a real server with kubectl.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKubectl } from '../helpers/kubectl.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
const kubectl = (...args: string[]) => runKubectl(t.server.kubeconfigPath, args);
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

type Cs = { kind?: string; apiVersion?: string; metadata: { name: string; creationTimestamp?: null }; conditions: { type: string; status: string; message?: string; error?: string }[] };

beforeAll(async () => {
  // the scheduler off, so that a pod stays unbound until a Binding binds it
  t = await startTestServer({ authn: { controllers: ['*', '-scheduler'] } });
});
afterAll(async () => {
  await t?.stop();
});

describe('componentstatuses', () => {
  it('is discovered with get and list only, short name cs, and no storage hash', async () => {
    const r = await t.request('GET', '/api/v1');
    const res = r.json<{ resources: Record<string, unknown>[] }>().resources.find((x) => x.name === 'componentstatuses');
    expect(res).toEqual({ name: 'componentstatuses', singularName: 'componentstatus', namespaced: false, kind: 'ComponentStatus', verbs: ['get', 'list'], shortNames: ['cs'] });
  });

  it('lists the store and the leader-run components with the deprecation warning', async () => {
    const r = await t.request('GET', '/api/v1/componentstatuses');
    expect(r.status, r.text).toBe(200);
    expect(r.headers.warning).toBe('299 - "v1 ComponentStatus is deprecated in v1.19+"');
    const list = r.json<{ kind: string; apiVersion: string; metadata: object; items: Cs[] }>();
    expect(list.kind).toBe('ComponentStatusList');
    expect(list.metadata).toEqual({});
    expect(list.items.map((i) => i.metadata.name)).toEqual(['scheduler', 'controller-manager', 'etcd-0']);
    // kube's items: no type meta, a null creation time, one Healthy condition
    expect(list.items[2]).toEqual({ metadata: { name: 'etcd-0', creationTimestamp: null }, conditions: [{ type: 'Healthy', status: 'True', message: 'ok' }] });
    expect(list.items[1]!.conditions[0]).toEqual({ type: 'Healthy', status: 'True', message: 'ok' });
    // this server runs without its scheduler (--controllers=-scheduler): the row says so
    expect(list.items[0]!.conditions[0]).toEqual({ type: 'Healthy', status: 'False', error: 'the in-process scheduler is disabled (--controllers=-scheduler)' });
  });

  it('gets one by name; an unknown name is kube\'s 500', async () => {
    const r = await t.request('GET', '/api/v1/componentstatuses/etcd-0');
    expect(r.status, r.text).toBe(200);
    expect(r.json()).toEqual({ kind: 'ComponentStatus', apiVersion: 'v1', metadata: { name: 'etcd-0', creationTimestamp: null }, conditions: [{ type: 'Healthy', status: 'True', message: 'ok' }] });
    const missing = await t.request('GET', '/api/v1/componentstatuses/nope');
    expect(missing.status).toBe(500);
    expect(missing.json()).toMatchObject({ reason: 'InternalError', message: 'Internal error occurred: Component not found: nope' });
  });

  it('filters by field selector and serves kube\'s columns as a Table', async () => {
    const r = await t.request('GET', '/api/v1/componentstatuses?fieldSelector=metadata.name%3Detcd-0', { headers: { accept: TABLE } });
    expect(r.status, r.text).toBe(200);
    const table = r.json<{ columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] }>();
    expect(table.columnDefinitions.map((c) => c.name)).toEqual(['Name', 'Status', 'Message', 'Error']);
    expect(table.rows.map((x) => x.cells)).toEqual([['etcd-0', 'Healthy', 'ok', '']]);
  });

  it('serves protobuf to clients that ask for it, and kubectl explain knows the kind', async () => {
    const r = await t.request('GET', '/api/v1/componentstatuses', { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/vnd.kubernetes.protobuf');
    const explain = await kubectl('explain', 'componentstatuses.conditions');
    expect(explain.code, explain.stderr).toBe(0);
    expect(explain.stdout).toContain('ComponentStatus');
  });

  it('refuses watch and writes with 405', async () => {
    expect((await t.request('GET', '/api/v1/componentstatuses?watch=true')).status).toBe(405);
    expect((await t.request('POST', '/api/v1/componentstatuses', { body: { apiVersion: 'v1', kind: 'ComponentStatus', metadata: { name: 'x' } } })).status).toBe(405);
    expect((await t.request('DELETE', '/api/v1/componentstatuses/etcd-0')).status).toBe(405);
  });

  it('kubectl get cs prints kube\'s table and warning', async () => {
    const r = await kubectl('get', 'cs');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('Warning: v1 ComponentStatus is deprecated in v1.19+');
    const lines = r.stdout.trim().split('\n').map((l) => l.trim().split(/\s+/));
    expect(lines[0]).toEqual(['NAME', 'STATUS', 'MESSAGE', 'ERROR']);
    expect(lines.slice(1).map((l) => l.slice(0, 3))).toEqual([
      ['scheduler', 'Unhealthy', 'the'],
      ['controller-manager', 'Healthy', 'ok'],
      ['etcd-0', 'Healthy', 'ok'],
    ]);
    const one = await kubectl('get', 'cs', 'etcd-0', '--no-headers');
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout.trim().split(/\s+/)).toEqual(['etcd-0', 'Healthy', 'ok']);
  });
});

describe('the legacy bindings collection', () => {
  const createPod = async (name: string): Promise<void> => {
    const r = await t.request('POST', '/api/v1/namespaces/default/pods', {
      body: { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox:1' }] } },
    });
    expect(r.status, r.text).toBe(201);
  };

  it('is discovered with create only', async () => {
    const r = await t.request('GET', '/api/v1');
    const res = r.json<{ resources: Record<string, unknown>[] }>().resources.find((x) => x.name === 'bindings');
    expect(res).toEqual({ name: 'bindings', singularName: 'binding', namespaced: true, kind: 'Binding', verbs: ['create'] });
  });

  it('binds the pod the Binding names, as pods/binding does', async () => {
    await createPod('legacy-1');
    const r = await t.request('POST', '/api/v1/namespaces/default/bindings', {
      body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'legacy-1', annotations: { a: 'b' } }, target: { kind: 'Node', name: 'node-a' } },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.json()).toMatchObject({ kind: 'Status', status: 'Success' });
    const pod = (await t.request('GET', '/api/v1/namespaces/default/pods/legacy-1')).json<{ metadata: { annotations?: Record<string, string> }; spec: { nodeName?: string }; status: { conditions?: { type: string; status: string }[] } }>();
    expect(pod.spec.nodeName).toBe('node-a');
    expect(pod.metadata.annotations).toEqual({ a: 'b' });
    expect(pod.status.conditions).toContainEqual(expect.objectContaining({ type: 'PodScheduled', status: 'True' }));
    // a second binding is kube's 409
    const again = await t.request('POST', '/api/v1/namespaces/default/bindings', {
      body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'legacy-1' }, target: { name: 'node-b' } },
    });
    expect(again.status).toBe(409);
    expect(again.json<{ message: string }>().message).toContain('pod legacy-1 is already assigned to node "node-a"');
  });

  it('answers kube\'s errors: no name, unknown pod, wrong namespace, bad target; and serves no other verb', async () => {
    const post = (body: object) => t.request('POST', '/api/v1/namespaces/default/bindings', { body: { apiVersion: 'v1', kind: 'Binding', ...body } });
    const noName = await post({ metadata: {}, target: { name: 'n' } });
    expect([noName.status, noName.json<{ message: string }>().message]).toEqual([400, 'Name parameter required.']);
    const unknown = await post({ metadata: { name: 'ghost' }, target: { name: 'n' } });
    expect(unknown.status).toBe(404);
    const otherNs = await post({ metadata: { name: 'ghost', namespace: 'kube-public' }, target: { name: 'n' } });
    expect(otherNs.status).toBe(400);
    await createPod('legacy-2');
    const noTarget = await post({ metadata: { name: 'legacy-2' }, target: {} });
    expect(noTarget.status).toBe(422);
    expect((await t.request('GET', '/api/v1/namespaces/default/bindings')).status).toBe(405);
    expect((await t.request('GET', '/api/v1/namespaces/default/pods/legacy-2')).json<{ spec: { nodeName?: string } }>().spec.nodeName).toBeUndefined();
  });
});
