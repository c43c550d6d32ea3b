// Built-in objects carry kube's Go zero values (docs/schemas.md "Zero shapes"):
// a fresh Deployment's `status: {}`, a Service's `status.loadBalancer: {}`, a
// ReplicaSet's `status.replicas: 0`, every container's `resources: {}`, in
// the answers to create, get, list and watch, and in the create's managedFields.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_WORKLOAD_CONTROLLERS, type TestServer, startTestServer } from '../helpers/server.js';

type J = Record<string, any>;

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ apiDomain: 'k8s.io', authn: NO_WORKLOAD_CONTROLLERS });
});
afterAll(async () => {
  await t.stop();
});

const labels = { app: 'zero' };
const podTemplate = { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'nginx' }], initContainers: [{ name: 'i', image: 'busybox' }] } };

async function create(path: string, body: J, query = ''): Promise<J> {
  const res = await t.request('POST', `${path}${query}`, { body });
  expect(res.status, res.text).toBe(201);
  return res.json();
}

/** the list's item and the watch's ADDED object of `name` at `path` */
async function listedAndWatched(path: string, name: string): Promise<{ listed: J; watched: J }> {
  const list = (await t.request('GET', path)).json<J>();
  const listed = (list.items as J[]).find((i) => i.metadata.name === name)!;
  const w = await t.request('GET', `${path}?watch=1&resourceVersion=0&timeoutSeconds=1`);
  const events = w.text.trim().split('\n').map((l) => JSON.parse(l) as J);
  const watched = events.find((e) => e.type === 'ADDED' && e.object.metadata.name === name)!.object as J;
  return { listed, watched };
}

describe('zero shapes of built-in kinds', () => {
  it('a Deployment: status {} and every container resources {}, in create, get, list and watch; managedFields own f:resources', async () => {
    const path = '/apis/apps/v1/namespaces/default/deployments';
    const created = await create(path, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { selector: { matchLabels: labels }, template: podTemplate } }, '?fieldManager=zero-test');
    const got = (await t.request('GET', `${path}/d`)).json<J>();
    const { listed, watched } = await listedAndWatched(path, 'd');
    for (const d of [created, got, listed, watched]) {
      expect(d.status).toEqual({});
      expect(d.spec.strategy).toMatchObject({ type: 'RollingUpdate' });
      expect(d.spec.template.spec.containers[0].resources).toEqual({});
      expect(d.spec.template.spec.initContainers[0].resources).toEqual({});
    }
    const mf = (created.metadata.managedFields as J[]).find((m) => m.manager === 'zero-test')!;
    expect(mf.operation).toBe('Update');
    const containers = mf.fieldsV1['f:spec']['f:template']['f:spec']['f:containers'];
    expect(containers['k:{"name":"c"}']['f:resources']).toEqual({});
    // the main resource does not own status (kube's reset fields)
    expect(mf.fieldsV1['f:status']).toBeUndefined();
  });

  it('a Service: status {loadBalancer: {}}', async () => {
    const path = '/api/v1/namespaces/default/services';
    const created = await create(path, { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { selector: labels, ports: [{ port: 80 }] } });
    const got = (await t.request('GET', `${path}/s`)).json<J>();
    const { listed, watched } = await listedAndWatched(path, 's');
    for (const s of [created, got, listed, watched]) expect(s.status).toEqual({ loadBalancer: {} });
  });

  it('a ReplicaSet: status {replicas: 0}, kept through a status update that sets other counters', async () => {
    const path = '/apis/apps/v1/namespaces/default/replicasets';
    const created = await create(path, { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'rs' }, spec: { replicas: 0, selector: { matchLabels: labels }, template: podTemplate } });
    const got = (await t.request('GET', `${path}/rs`)).json<J>();
    const { listed, watched } = await listedAndWatched(path, 'rs');
    for (const rs of [created, got, listed, watched]) {
      expect(rs.status).toEqual({ replicas: 0 });
      expect(rs.spec.template.spec.containers[0].resources).toEqual({});
    }
    // a /status merge patch that removes replicas: kube decodes it into its Go type, so replicas is 0 again
    const patched = await t.request('PATCH', `${path}/rs/status`, {
      body: { status: { replicas: null, observedGeneration: 1 } },
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.json<J>().status).toEqual({ replicas: 0, observedGeneration: 1 });
  });

  it('a Pod: every container resources {}; the scale and apply paths fill the merged object', async () => {
    const pods = '/api/v1/namespaces/default/pods';
    const pod = await create(pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'a', image: 'nginx' }, { name: 'b', image: 'nginx', resources: { limits: { cpu: '1' } } }] } }, '?fieldManager=zero-test');
    expect(pod.spec.containers.map((c: J) => c.resources)).toEqual([{}, { limits: { cpu: '1' }, requests: { cpu: '1' } }]);
    const mf = (pod.metadata.managedFields as J[]).find((m) => m.manager === 'zero-test')!;
    expect(mf.fieldsV1['f:spec']['f:containers']['k:{"name":"a"}']['f:resources']).toEqual({});

    // server-side apply: the stored (merged) object has the shape, the applier owns only what it applied
    const sts = '/apis/apps/v1/namespaces/default/statefulsets';
    const applied = await t.request('PATCH', `${sts}/ss?fieldManager=applier`, {
      body: { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'ss' }, spec: { serviceName: 'ss', selector: { matchLabels: labels }, template: podTemplate } },
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
    });
    expect(applied.status, applied.text).toBe(201);
    const ss = applied.json<J>();
    expect(ss.status).toEqual({ replicas: 0, availableReplicas: 0 });
    expect(ss.spec.template.spec.containers[0].resources).toEqual({});
    const applyEntry = (ss.metadata.managedFields as J[]).find((m) => m.manager === 'applier')!;
    expect(applyEntry.operation).toBe('Apply');
    expect(applyEntry.fieldsV1['f:spec']['f:template']['f:spec']['f:containers']['k:{"name":"c"}']['f:resources']).toBeUndefined();

    // the scale sub-resource writes through the same path
    const scaled = await t.request('PATCH', `${sts}/ss/scale`, { body: { spec: { replicas: 2 } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(scaled.status, scaled.text).toBe(200);
    const after = (await t.request('GET', `${sts}/ss`)).json<J>();
    expect(after.spec.replicas).toBe(2);
    expect(after.status).toEqual({ replicas: 0, availableReplicas: 0 });
  });

  it('custom resources get nothing', async () => {
    const crd = await create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.zero.example.com' },
      spec: {
        group: 'zero.example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: [{ name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    });
    // kube's CRD status right after create
    expect(crd.status).toEqual({ acceptedNames: { plural: '', kind: '' }, storedVersions: ['v1'] });
    let res;
    for (let i = 0; i < 100; i++) {
      res = await t.request('POST', '/apis/zero.example.com/v1/namespaces/default/widgets', { body: { apiVersion: 'zero.example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { a: 1 } } });
      if (res.status !== 404) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(res!.status, res!.text).toBe(201);
    const w = res!.json<J>();
    expect(w.spec).toEqual({ a: 1 });
    expect(w.status).toBeUndefined();
  });
});
