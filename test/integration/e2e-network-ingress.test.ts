// Ports of Kubernetes' API-only e2e tests "[sig-network] Ingress API" and
// "[sig-network] IngressClass API" (test/e2e/network/ingress.go,
// ingressclass.go) to orch, on a started server with kube's group names:
// networking.k8s.io/v1 in discovery, create / get / list (in a namespace and
// across them) / watch / patch / update / delete / delete a collection, and an
// Ingress's load balancer status through `/status` (patch and update).

import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import {
  type Obj, type TestServer, annotations, call, deleteOneThenCollection, listItems, newNamespace, patchUpdateAndWatch, useKubeServer,
} from '../helpers/kube-e2e.js';

let t: TestServer;
useKubeServer((s) => (t = s));

const NET = '/apis/networking.k8s.io/v1';
const sel = (s: string): string => `labelSelector=${encodeURIComponent(s)}`;

async function expectInDiscovery(resource: string): Promise<void> {
  const group = await call(t, 'GET', '/apis/networking.k8s.io');
  expect((group.versions as Obj[]).map((v) => v.version)).toContain('v1');
  const resources = await call(t, 'GET', NET);
  expect((resources.resources as Obj[]).map((r) => r.name)).toContain(resource);
}

describe('[sig-network] Ingress API (ingress.go)', () => {
  it('[Conformance] should support creating Ingress API operations', async () => {
    await expectInDiscovery('ingresses');
    const ns = await newNamespace(t, 'ingress');
    const path = `${NET}/namespaces/${ns}/ingresses`;
    const label = `special-label=${ns}`;
    const backend = (name: string): Obj => ({ service: { name, port: { number: 8080 } } });
    const template = (): Obj => ({
      metadata: { generateName: 'e2e-example-ing', labels: { 'special-label': ns }, creationTimestamp: null },
      spec: {
        defaultBackend: backend('default-backend'),
        rules: [{ host: 'foo.bar.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: backend('test-backend') }] } }],
      },
      status: { loadBalancer: {} },
    });
    const created: Obj[] = [];
    for (let i = 0; i < 3; i++) created.push(await call(t, 'POST', path, template(), undefined, 201));
    const one = `${path}/${created[0]!.metadata.name}`;
    expect((await call(t, 'GET', one)).metadata.uid).toBe(created[0]!.metadata.uid);
    const list = await call(t, 'GET', `${path}?${sel(label)}`);
    expect(list.items).toHaveLength(3);
    expect(await listItems(t, `${NET}/ingresses?${sel(label)}`)).toHaveLength(3);
    await patchUpdateAndWatch(t, path, one, list.metadata.resourceVersion, label);

    // /status: a merge patch of an annotation and the load balancer, then an update
    expect((await call(t, 'GET', `${one}/status`)).metadata.uid).toBe(created[0]!.metadata.uid);
    const lb1 = { ingress: [{ ip: '169.1.1.1' }] };
    const st = await call(t, 'PATCH', `${one}/status`, { metadata: { annotations: { patchedstatus: 'true' } }, status: { loadBalancer: lb1 } });
    expect(st.status.loadBalancer).toEqual(lb1);
    expect(annotations(st).patchedstatus).toBe('true');
    const lb2 = { ingress: [{ ip: '169.1.1.2' }] };
    const toUpdate = await call(t, 'GET', `${one}/status`);
    toUpdate.status.loadBalancer = lb2;
    expect((await call(t, 'PUT', `${one}/status`, toUpdate)).status.loadBalancer).toEqual(lb2);

    await deleteOneThenCollection(t, path, one, label, 2);
  });
});

describe('[sig-network] IngressClass API (ingressclass.go)', () => {
  it('[Conformance] should support creating IngressClass API operations', async () => {
    const groups = await call(t, 'GET', '/apis');
    expect((groups.groups as Obj[]).find((g) => g.name === 'networking.k8s.io')?.versions.map((v: Obj) => v.version)).toContain('v1');
    await expectInDiscovery('ingressclasses');
    const unique = `ingressclass-${Math.random().toString(36).slice(2, 8)}`;
    const path = `${NET}/ingressclasses`;
    const mine = `ingressclass=${unique}`;
    const create = (name: string): Promise<Obj> => call(t, 'POST', path, {
      metadata: { name, labels: { ingressclass: unique, 'special-label': 'generic' }, creationTimestamp: null },
      spec: { controller: 'example.com/controller' },
    }, undefined, 201);
    const first = await create('ingressclass1');
    await create('ingressclass2');
    await create('ingressclass3');
    const one = `${path}/ingressclass1`;
    expect((await call(t, 'GET', one)).metadata.uid).toBe(first.metadata.uid);
    const list = await call(t, 'GET', `${path}?${sel('special-label=generic')}`);
    expect(list.items).toHaveLength(3);

    await patchUpdateAndWatch(t, path, one, list.metadata.resourceVersion, mine);
    await deleteOneThenCollection(t, path, one, mine, 2);
  });
});

describe("the e2e framework's namespace teardown (framework.go AfterEach)", () => {
  it('deletes a namespace holding the objects these tests leave behind', async () => {
    const ns = await newNamespace(t, 'teardown');
    const meta = (name: string): Obj => ({ name, creationTimestamp: null });
    await call(t, 'POST', `/api/v1/namespaces/${ns}/services`, { metadata: meta('svc'), spec: { ports: [{ port: 80 }] } }, undefined, 201);
    await call(t, 'POST', `/api/v1/namespaces/${ns}/endpoints`, { metadata: meta('ep'), subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }] }] }, undefined, 201);
    await call(t, 'POST', `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, { metadata: meta('eps'), addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.1'] }] }, undefined, 201);
    await call(t, 'POST', `${NET}/namespaces/${ns}/ingresses`, { metadata: meta('ing'), spec: { defaultBackend: { service: { name: 'svc', port: { number: 80 } } } } }, undefined, 201);
    await call(t, 'POST', `/api/v1/namespaces/${ns}/events`, { metadata: meta('ev'), involvedObject: { namespace: ns }, reason: 'Test', message: 'm', type: 'Normal', count: 1 }, undefined, 201);
    await call(t, 'POST', `/apis/events.k8s.io/v1/namespaces/${ns}/events`, {
      metadata: meta('ev2'), eventTime: '2017-09-19T13:49:16.000000Z', reportingController: 'test-controller', reportingInstance: 'test-node', action: 'Do', reason: 'Test', type: 'Normal', regarding: { namespace: ns },
    }, undefined, 201);
    await call(t, 'POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: meta('sa') }, undefined, 201);
    await call(t, 'DELETE', `/api/v1/namespaces/${ns}`);
    await eventually(async () => (await t.request('GET', `/api/v1/namespaces/${ns}`)).status === 404, `namespace ${ns} deleted`, 30_000);
  });
});
