// kube 1.32's update validation on a started server: a refused change answers
// 422 with a Status of reason Invalid whose causes carry kube's field paths,
// types and messages (a Service's cluster IP, a Node's provider ID, an
// IngressClass's controller, an events.k8s.io Event's note), while the
// changes kube allows go through.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.stop();
});

type Obj = Record<string, any>;
interface Cause { reason: string; message: string; field: string }

async function send(method: string, path: string, body: object, want: number): Promise<Obj> {
  const r = await t.request(method, path, { body, headers: method === 'PATCH' ? { 'content-type': 'application/merge-patch+json' } : {} });
  expect(r.status, r.text).toBe(want);
  return r.json();
}

/** the 422 Status of a refused update, checked for kube's shape; its causes */
async function refused(method: string, path: string, body: object, kindName: string): Promise<Cause[]> {
  const s = await send(method, path, body, 422);
  expect(s).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Invalid', code: 422 });
  expect(s.message).toMatch(new RegExp(`^${kindName.replace(/\./g, '\\.')} "[^"]+" is invalid: `));
  return s.details.causes as Cause[];
}

describe('update validation', () => {
  it('a Service keeps its cluster IP; other fields change', async () => {
    const svc = await send('POST', '/api/v1/namespaces/default/services', { metadata: { name: 'fixed-ip' }, spec: { ports: [{ port: 80 }] } }, 201);
    const ip = svc.spec.clusterIP as string;
    const moved = ip.replace(/\.\d+$/, (m) => (m === '.200' ? '.201' : '.200'));
    const causes = await refused('PATCH', '/api/v1/namespaces/default/services/fixed-ip', { spec: { clusterIP: moved } }, 'Service');
    expect(causes).toEqual([{ reason: 'FieldValueInvalid', field: 'spec.clusterIPs[0]', message: `Invalid value: []string{"${moved}"}: may not change once set` }]);
    const lbClass = await refused('PATCH', '/api/v1/namespaces/default/services/fixed-ip', { spec: { loadBalancerClass: 'example.com/lb' } }, 'Service');
    expect(lbClass).toContainEqual({ reason: 'FieldValueForbidden', field: 'spec.loadBalancerClass', message: "Forbidden: may only be used when `type` is 'LoadBalancer'" });
    const ok = await send('PATCH', '/api/v1/namespaces/default/services/fixed-ip', { spec: { selector: { app: 'x' } } }, 200);
    expect(ok.spec).toMatchObject({ clusterIP: ip, clusterIPs: [ip], selector: { app: 'x' } });
  });

  it('a Node takes a provider ID and pod CIDR once', async () => {
    await send('POST', '/api/v1/nodes', { metadata: { name: 'upd-node' } }, 201);
    const set = await send('PATCH', '/api/v1/nodes/upd-node', { spec: { providerID: 'example:///a', podCIDR: '10.244.3.0/24', podCIDRs: ['10.244.3.0/24'] } }, 200);
    expect(set.spec).toMatchObject({ providerID: 'example:///a', podCIDRs: ['10.244.3.0/24'] });
    const causes = await refused('PATCH', '/api/v1/nodes/upd-node', { spec: { providerID: 'example:///b', podCIDR: '10.244.4.0/24', podCIDRs: ['10.244.4.0/24'] } }, 'Node');
    expect(causes).toEqual([
      { reason: 'FieldValueForbidden', field: 'spec.podCIDRs', message: 'Forbidden: node updates may not change podCIDR except from "" to valid' },
      { reason: 'FieldValueForbidden', field: 'spec.providerID', message: 'Forbidden: node updates may not change providerID except from "" to valid' },
    ]);
    // cordoning still works
    expect((await send('PATCH', '/api/v1/nodes/upd-node', { spec: { unschedulable: true } }, 200)).spec.unschedulable).toBe(true);
  });

  it('an IngressClass keeps its controller', async () => {
    const path = '/apis/networking.orch.io/v1/ingressclasses';
    await send('POST', path, { metadata: { name: 'upd-class' }, spec: { controller: 'example.com/a' } }, 201);
    const causes = await refused('PATCH', `${path}/upd-class`, { spec: { controller: 'example.com/b' } }, 'IngressClass.networking.orch.io');
    expect(causes).toEqual([{ reason: 'FieldValueInvalid', field: 'spec.controller', message: 'Invalid value: "example.com/b": field is immutable' }]);
  });

  it('an events.k8s.io Event keeps its note; its series may grow', async () => {
    const path = '/apis/events.orch.io/v1/namespaces/default/events';
    await send('POST', path, {
      metadata: { name: 'upd-event' }, eventTime: '2024-05-01T10:00:00.000000Z', reportingController: 'example.com/c', reportingInstance: 'c-1',
      action: 'Pull', reason: 'Pulled', type: 'Normal', regarding: { kind: 'Pod', namespace: 'default', name: 'p' }, note: 'pulled',
    }, 201);
    const causes = await refused('PATCH', `${path}/upd-event`, { note: 'changed' }, 'Event.events.orch.io');
    expect(causes).toEqual([{ reason: 'FieldValueInvalid', field: 'message', message: 'Invalid value: "changed": field is immutable' }]);
    const grown = await send('PATCH', `${path}/upd-event`, { series: { count: 2, lastObservedTime: '2024-05-01T10:05:00.000000Z' } }, 200);
    expect(grown.series.count).toBe(2);
    // through core v1 the same object's message may change (legacy checks only)
    expect((await send('PATCH', '/api/v1/namespaces/default/events/upd-event', { message: 'changed' }, 200)).message).toBe('changed');
  });
});

describe('write preconditions, names and bodies (kube 1.32 handlers)', () => {
  const CMS = '/api/v1/namespaces/default/configmaps';

  it('a PUT carrying the uid of a deleted and re-created object is 409; its own uid or none writes', async () => {
    const old = await send('POST', CMS, { metadata: { name: 'uidt' }, data: { a: '1' } }, 201);
    await send('DELETE', `${CMS}/uidt`, {}, 200);
    const now = await send('POST', CMS, { metadata: { name: 'uidt' }, data: { a: '1' } }, 201);
    const s = await send('PUT', `${CMS}/uidt`, { metadata: { name: 'uidt', uid: old.metadata.uid }, data: { a: '2' } }, 409);
    expect(s).toEqual({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Conflict', code: 409,
      message: `Operation cannot be fulfilled on configmaps "uidt": StorageError: invalid object, Code: 4, Key: /registry/core/configmaps/default/uidt, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${old.metadata.uid}, UID in object meta: ${now.metadata.uid}`,
      details: { name: 'uidt', kind: 'configmaps' },
    });
    expect((await send('PUT', `${CMS}/uidt`, { metadata: { name: 'uidt', uid: now.metadata.uid }, data: { a: '3' } }, 200)).data).toEqual({ a: '3' });
    expect((await send('PUT', `${CMS}/uidt`, { metadata: { name: 'uidt' }, data: { a: '4' } }, 200)).data).toEqual({ a: '4' });
    // an absent object has no uid: the precondition fails instead of creating
    const gone = await send('PUT', `${CMS}/uidt-absent`, { metadata: { name: 'uidt-absent', uid: old.metadata.uid } }, 409);
    expect(gone.message).toMatch(/UID in object meta: $/);
  });

  it('a status PUT checks the uid too', async () => {
    const ns = await send('POST', '/api/v1/namespaces', { metadata: { name: 'uidt-ns' } }, 201);
    const s = await send('PUT', '/api/v1/namespaces/uidt-ns/status', { ...ns, metadata: { ...ns.metadata, uid: 'not-it' } }, 409);
    expect(s.message).toContain(`Precondition failed: UID in precondition: not-it, UID in object meta: ${ns.metadata.uid}`);
    await send('PUT', '/api/v1/namespaces/uidt-ns/status', ns, 200);
  });

  it('a PATCH or PUT that renames or moves the object is kube checkName 400 (without a name too: put-name.test.ts)', async () => {
    await send('POST', CMS, { metadata: { name: 'cm2' } }, 201);
    const bad = (s: Obj, message: string) => expect(s).toMatchObject({ reason: 'BadRequest', code: 400, message });
    bad(await send('PATCH', `${CMS}/cm2`, { metadata: { name: 'other' } }, 400), 'the name of the object (other) does not match the name on the URL (cm2)');
    bad(await send('PATCH', `${CMS}/cm2`, { metadata: { name: null } }, 400), 'the name of the object (cm2 based on URL) was undeterminable: name must be provided');
    // kube's applyPatch runs EnsureObjectNamespaceMatchesRequestNamespace before checkName
    bad(await send('PATCH', `${CMS}/cm2`, { metadata: { namespace: 'kube-system' } }, 400), 'the namespace of the provided object does not match the namespace sent on the request');
    bad(await send('PUT', `${CMS}/cm2`, { metadata: { name: 'other' } }, 400), 'the name of the object (other) does not match the name on the URL (cm2)');
    bad(await send('PUT', `${CMS}/cm2`, { metadata: { name: 'cm2', namespace: 'kube-system' } }, 400), 'the namespace of the provided object does not match the namespace sent on the request');
  });

  it('a create without name or generateName is 422 from the object metadata validation', async () => {
    const s = await send('POST', CMS, { metadata: {} }, 422);
    expect(s).toEqual({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Invalid', code: 422,
      message: 'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required',
      details: { kind: 'ConfigMap', causes: [{ reason: 'FieldValueRequired', field: 'metadata.name', message: 'Required value: name or generateName is required' }] },
    });
  });

  it('a body in an unknown format is 415 listing json, yaml and protobuf', async () => {
    const r = await t.request('POST', CMS, { body: 'a=b', headers: { 'content-type': 'text/plain' } });
    expect(r.status, r.text).toBe(415);
    expect(r.json<Obj>().message).toBe('the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.orch.protobuf');
  });
});
