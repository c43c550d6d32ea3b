// Ports of Kubernetes' API-only e2e tests "[sig-network] Services"
// (test/e2e/network/service.go) and "[sig-network] EndpointSlice"
// (test/e2e/network/endpointslice.go) to orch, on a started server with kube's
// group names: an Endpoints object's lifecycle (watch by label, patch, delete
// by collection), listing services across namespaces, deleting a collection
// of services, a service's status through `/status` (patch, update, watch),
// and the `kubernetes` service (its presence, its Endpoints and EndpointSlice).

import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import {
  type Obj, type TestServer, call, deleteOneThenCollection, generateName, getOrUndefined, listItems, newNamespace, patchUpdateAndWatch, useKubeServer,
} from '../helpers/kube-e2e.js';
import { type WatchEvent, openWatch } from '../helpers/watch-stream.js';

let t: TestServer;
useKubeServer((s) => (t = s));

const sel = (s: string): string => `labelSelector=${encodeURIComponent(s)}`;
const named = (name: string) => (e: WatchEvent): boolean => e.object.metadata?.name === name;

describe('[sig-network] Services (service.go)', () => {
  it('[Conformance] should provide secure master service', async () => {
    const svc = await call(t, 'GET', '/api/v1/namespaces/default/services/kubernetes');
    // what the e2e relies on when it reaches the API server through it
    expect(svc.spec.ports).toEqual([expect.objectContaining({ name: 'https', port: 443, protocol: 'TCP' })]);
  });

  it('[Conformance] should test the lifecycle of an Endpoint', async () => {
    const ns = await newNamespace(t, 'endpoints');
    const name = 'testservice';
    const path = `/api/v1/namespaces/${ns}/endpoints`;
    const label = 'test-endpoint-static=true';
    const before = await call(t, 'GET', `/api/v1/endpoints?${sel(label)}`);
    const w = openWatch(t.server, `${path}?watch=true&resourceVersion=${before.metadata.resourceVersion}&${sel(label)}`);
    try {
      const created = await call(t, 'POST', path, {
        metadata: { name, labels: { 'test-endpoint-static': 'true' }, creationTimestamp: null },
        subsets: [{ addresses: [{ ip: '10.0.0.24' }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }],
      }, undefined, 201);
      expect(created.metadata.resourceVersion).toMatch(/^[1-9]\d*$/);
      await w.waitUntil((e) => e.type === 'ADDED' && named(name)(e));

      // listing all namespaces by label finds it; the listed object is updated with a new label
      const all = await listItems(t, `/api/v1/endpoints?${sel(label)}`);
      const found = all.find((e) => e.metadata.name === name && e.metadata.namespace === ns);
      expect(found).toBeDefined();
      found!.metadata.labels['test-service'] = 'updated';
      await call(t, 'PUT', `${path}/${name}`, found);
      await w.waitUntil((e) => e.type === 'MODIFIED' && (e.object.metadata as Obj).labels?.['test-service'] === 'updated');

      // a strategic merge patch of a label and the subsets (a port without protocol)
      const patched = await call(t, 'PATCH', `${path}/${name}`, {
        metadata: { labels: { 'test-service': 'patched' } },
        subsets: [{ addresses: [{ ip: '10.0.0.25' }], ports: [{ name: 'http-test', port: 8080 }] }],
      }, 'application/strategic-merge-patch+json');
      expect(BigInt(patched.metadata.resourceVersion)).toBeGreaterThan(BigInt(created.metadata.resourceVersion));
      await w.waitUntil((e) => e.type === 'MODIFIED' && (e.object.metadata as Obj).labels?.['test-service'] === 'patched');
      const again = await call(t, 'GET', `${path}/${name}`);
      expect(again.metadata.labels).toEqual({ 'test-endpoint-static': 'true', 'test-service': 'patched' });
      expect(again.subsets).toEqual([{ addresses: [{ ip: '10.0.0.25' }], ports: [{ name: 'http-test', port: 8080, protocol: 'TCP' }] }]);

      await call(t, 'DELETE', `${path}?${sel(label)}`);
      await w.waitUntil((e) => e.type === 'DELETED' && named(name)(e));
      expect(await getOrUndefined(t, `${path}/${name}`)).toBeUndefined();
    } finally {
      w.close();
    }
  });

  it('[Conformance] should find a service from listing all namespaces', async () => {
    const ns = await newNamespace(t, 'services');
    await call(t, 'POST', `/api/v1/namespaces/${ns}/services`, {
      metadata: { name: 'test-service', creationTimestamp: null },
      spec: { ports: [{ port: 80, targetPort: 80 }] },
      status: { loadBalancer: {} },
    }, undefined, 201);
    const all = await listItems(t, '/api/v1/services');
    expect(all.some((s) => s.metadata.name === 'test-service' && s.metadata.namespace === ns)).toBe(true);
  });

  it('[Conformance] should delete a collection of services', async () => {
    const ns = await newNamespace(t, 'services');
    const path = `/api/v1/namespaces/${ns}/services`;
    const label = 'e2e-test-service=delete';
    for (const base of ['e2e-svc-a-', 'e2e-svc-b-', 'e2e-svc-c-']) {
      const svc = await call(t, 'POST', path, {
        metadata: { name: generateName(base), labels: { 'e2e-test-service': 'delete' }, creationTimestamp: null },
        spec: { type: 'ClusterIP', ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }] },
        status: { loadBalancer: {} },
      }, undefined, 201);
      expect(svc.spec.clusterIP).toBeTruthy();
    }
    expect(await listItems(t, `/api/v1/services?${sel(label)}`)).toHaveLength(3);
    // the dynamic client's DeleteCollection; the services are gone when it answers (no finalizer holds them)
    await call(t, 'DELETE', `${path}?${sel(label)}`, { kind: 'DeleteOptions', apiVersion: 'v1' });
    expect(await listItems(t, `/api/v1/services?${sel(label)}`)).toHaveLength(0);
  });

  it('[Conformance] should complete a service status lifecycle', async () => {
    const ns = await newNamespace(t, 'services');
    const path = `/api/v1/namespaces/${ns}/services`;
    const name = generateName('test-service-');
    const label = 'test-service-static=true';
    // the e2e's watches all start at the resourceVersion of a list across namespaces
    const before = await call(t, 'GET', `/api/v1/services?${sel(label)}`);
    const w = openWatch(t.server, `${path}?watch=true&resourceVersion=${before.metadata.resourceVersion}&${sel(label)}`);
    try {
      await call(t, 'POST', path, {
        metadata: { name, labels: { 'test-service-static': 'true' }, creationTimestamp: null },
        spec: { type: 'LoadBalancer', ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 80 }], loadBalancerClass: 'example.com/internal-vip' },
        status: { loadBalancer: {} },
      }, undefined, 201);
      await w.waitUntil((e) => e.type === 'ADDED' && named(name)(e));
      expect((await listItems(t, `/api/v1/services?${sel(label)}`)).map((s) => s.metadata.name)).toContain(name);

      // the status sub-resource, as the dynamic client reads it
      const status = await call(t, 'GET', `${path}/${name}/status`);
      expect(status.kind).toBe('Service');
      expect(status.metadata.name).toBe(name);

      // a merge patch of an annotation and the load balancer's ingress through /status
      const lb = { ingress: [{ ip: '203.0.113.1' }] };
      const patched = await call(t, 'PATCH', `${path}/${name}/status`, { metadata: { annotations: { patchedstatus: 'true' } }, status: { loadBalancer: lb } });
      expect(patched.status.loadBalancer).toEqual(lb);
      expect(patched.metadata.annotations?.patchedstatus).toBe('true');
      await w.waitUntil((e) => e.type === 'MODIFIED' && (e.object.metadata?.annotations ?? {}).patchedstatus === 'true');

      // an update of /status adding a condition
      const cur = await call(t, 'GET', `${path}/${name}/status`);
      // a metav1.Condition as the e2e builds it: no transition time, which Go's client sends as null
      cur.status.conditions = [{ type: 'StatusUpdate', status: 'True', lastTransitionTime: null, reason: 'E2E', message: 'Set from e2e test' }];
      const updated = await call(t, 'PUT', `${path}/${name}/status`, cur);
      expect(updated.status.conditions).toHaveLength(1);
      expect(updated.status.conditions[0]).toMatchObject({ type: 'StatusUpdate', reason: 'E2E', message: 'Set from e2e test' });
      await w.waitUntil((e) => e.type === 'MODIFIED' && ((e.object.status as Obj)?.conditions ?? []).some((c: Obj) => c.type === 'StatusUpdate'));

      // a patch of the service itself
      // json.Marshal(v1.Service{labels}) as a strategic merge patch
      await call(t, 'PATCH', `${path}/${name}`, { metadata: { labels: { 'test-service': 'patched' }, creationTimestamp: null }, spec: {}, status: { loadBalancer: {} } }, 'application/strategic-merge-patch+json');
      await w.waitUntil((e) => e.type === 'MODIFIED' && (e.object.metadata as Obj).labels?.['test-service'] === 'patched');

      await call(t, 'DELETE', `${path}/${name}`);
      await w.waitUntil((e) => e.type === 'DELETED' && named(name)(e));
      expect(await getOrUndefined(t, `${path}/${name}`)).toBeUndefined();
    } finally {
      w.close();
    }
  });

  it('[Conformance] should serve endpoints on same port and different protocols (the API part: no traffic is sent)', async () => {
    const ns = await newNamespace(t, 'services');
    const svc = await call(t, 'POST', `/api/v1/namespaces/${ns}/services`, {
      metadata: { name: 'multiprotocol-test' },
      spec: {
        selector: { app: 'multiprotocol' },
        ports: [
          { name: 'tcp-port', port: 53, targetPort: 53, protocol: 'TCP' },
          { name: 'udp-port', port: 53, targetPort: 53, protocol: 'UDP' },
        ],
      },
    }, undefined, 201);
    expect((svc.spec.ports as Obj[]).map((p) => p.protocol)).toEqual(['TCP', 'UDP']);
    // the e2e's server pod, running and ready (its node agent's part written through /status)
    const podPath = `/api/v1/namespaces/${ns}/pods/pod1`;
    await call(t, 'POST', `/api/v1/namespaces/${ns}/pods`, {
      metadata: { name: 'pod1', labels: { app: 'multiprotocol' } },
      spec: { nodeName: 'node-1', containers: [{ name: 'agnhost', image: 'agnhost', ports: [{ containerPort: 53, protocol: 'TCP' }, { containerPort: 53, protocol: 'UDP' }] }] },
    }, undefined, 201);
    const pod = await call(t, 'GET', podPath);
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    pod.status = { phase: 'Running', podIP: '10.244.1.7', podIPs: [{ ip: '10.244.1.7' }], conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }] };
    await call(t, 'PUT', `${podPath}/status`, pod);

    const portsOf = (ports: Obj[]): string[] => ports.map((p) => `${p.name}/${p.port}/${p.protocol}`).sort();
    await eventually(async () => {
      const ep = await getOrUndefined(t, `/api/v1/namespaces/${ns}/endpoints/multiprotocol-test`);
      const subset = (ep?.subsets as Obj[] | undefined)?.[0];
      if (!subset?.addresses) return false;
      expect((subset.addresses as Obj[]).map((a) => a.ip)).toEqual(['10.244.1.7']);
      expect(portsOf(subset.ports as Obj[])).toEqual(['tcp-port/53/TCP', 'udp-port/53/UDP']);
      return true;
    }, 'Endpoints with both protocols');
    await eventually(async () => {
      const slices = await listItems(t, `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices?${sel('kubernetes.io/service-name=multiprotocol-test')}`);
      const withPod = slices.filter((s) => ((s.endpoints ?? []) as Obj[]).some((e) => (e.addresses as string[]).includes('10.244.1.7')));
      if (withPod.length === 0) return false;
      expect(withPod.flatMap((s) => portsOf(s.ports as Obj[])).sort()).toEqual(['tcp-port/53/TCP', 'udp-port/53/UDP']);
      return true;
    }, 'EndpointSlices with both protocols');
  });
});

describe('[sig-network] EndpointSlice (endpointslice.go)', () => {
  it('[Conformance] should have Endpoints and EndpointSlices pointing to API Server', async () => {
    const svc = await call(t, 'GET', '/api/v1/namespaces/default/services/kubernetes');
    expect(svc.spec.clusterIP).toBeTruthy();
    const ep = await eventually(async () => {
      const e = await getOrUndefined(t, '/api/v1/namespaces/default/endpoints/kubernetes');
      return (e?.subsets as Obj[] | undefined)?.length ? e : undefined;
    }, 'kubernetes Endpoints');
    expect(ep.subsets).toHaveLength(1);
    const subset = (ep.subsets as Obj[])[0]!;
    // the API server's own slice is named after the service, as kube's endpoint reconciler names it
    const slice = await eventually(() => getOrUndefined(t, '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes'), 'kubernetes EndpointSlice');
    expect(slice.metadata.labels?.['kubernetes.io/service-name']).toBe('kubernetes');
    expect(slice.ports).toHaveLength((subset.ports as Obj[]).length);
    expect(slice.endpoints).toHaveLength((subset.addresses as Obj[]).length);
    // the slice has the Endpoints' addresses and ports
    const sliceAddrs = (slice.endpoints as Obj[]).flatMap((e) => e.addresses as string[]).sort();
    expect(sliceAddrs).toEqual((subset.addresses as Obj[]).map((a) => a.ip as string).sort());
    const portKey = (p: Obj): string => `${p.name ?? ''}/${p.port}/${p.protocol}`;
    expect((slice.ports as Obj[]).map(portKey).sort()).toEqual((subset.ports as Obj[]).map(portKey).sort());
  });

  it('[Conformance] should support creating EndpointSlice API operations', async () => {
    const ns = await newNamespace(t, 'endpointslice');
    const group = await call(t, 'GET', '/apis/discovery.k8s.io');
    expect((group.versions as Obj[]).map((v) => v.version)).toContain('v1');
    const resources = await call(t, 'GET', '/apis/discovery.k8s.io/v1');
    expect((resources.resources as Obj[]).map((r) => r.name)).toContain('endpointslices');

    const path = `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`;
    const label = `special-label=${ns}`;
    const tmpl = (): Obj => ({
      // as Go marshals a discovery/v1 EndpointSlice: ports is not omitempty, an endpoint's conditions are sent empty
      metadata: { generateName: 'e2e-example-ing', labels: { 'special-label': ns }, creationTimestamp: null },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['1.2.3.4', '5.6.7.8'], conditions: {} }],
      ports: null,
    });
    const created: Obj[] = [];
    for (let i = 0; i < 3; i++) created.push(await call(t, 'POST', path, tmpl(), undefined, 201));
    const got = await call(t, 'GET', `${path}/${created[0]!.metadata.name}`);
    expect(got.metadata.uid).toBe(created[0]!.metadata.uid);
    // a port with neither name nor protocol is defaulted as kube's discovery/v1 SetDefaults_EndpointPort does
    const withPort = await call(t, 'POST', path, { ...tmpl(), ports: [{ port: 80 }] }, undefined, 201);
    expect(withPort.ports).toEqual([{ name: '', protocol: 'TCP', port: 80 }]);
    await call(t, 'DELETE', `${path}/${withPort.metadata.name}`);
    const list = await call(t, 'GET', `${path}?${sel(label)}`);
    expect(list.items).toHaveLength(3);
    expect(await listItems(t, `/apis/discovery.k8s.io/v1/endpointslices?${sel(label)}`)).toHaveLength(3);

    const one = `${path}/${created[0]!.metadata.name}`;
    await patchUpdateAndWatch(t, path, one, list.metadata.resourceVersion, label);
    await deleteOneThenCollection(t, path, one, label, 2);
  });
});

describe('[sig-network] EndpointSliceMirroring (endpointslicemirroring.go)', () => {
  it('[Conformance] should mirror a custom Endpoints resource through create update and delete', async () => {
    const ns = await newNamespace(t, 'endpointslicemirroring');
    const name = 'example-custom-endpoints';
    await call(t, 'POST', `/api/v1/namespaces/${ns}/services`, { metadata: { name }, spec: { ports: [{ name: 'example', port: 80, protocol: 'TCP' }] } });
    const slicesPath = `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices?${sel(`kubernetes.io/service-name=${name}`)}`;
    /** every mirrored slice: one port 80, one endpoint of one address `ip` (kube allows a duplicate slice on the first sync) */
    const mirrors = (ip: string, exactlyOne: boolean) => async (): Promise<boolean> => {
      const slices = await listItems(t, slicesPath);
      if (slices.length === 0 || (exactlyOne && slices.length !== 1)) return false;
      return slices.every((s) => {
        const ports = (s.ports ?? []) as Obj[];
        const eps = (s.endpoints ?? []) as Obj[];
        return ports.length === 1 && ports[0]!.port === 80 && eps.length === 1 && (eps[0]!.addresses as string[]).length === 1 && eps[0]!.addresses[0] === ip;
      });
    };
    const endpoints = { metadata: { name }, subsets: [{ ports: [{ port: 80 }], addresses: [{ ip: '10.1.2.3' }] }] };
    await call(t, 'POST', `/api/v1/namespaces/${ns}/endpoints`, endpoints);
    await eventually(mirrors('10.1.2.3', false), 'the Endpoints mirrored', 12_000);

    // kube's update sends the object it created (no resourceVersion): an unconditional update
    await call(t, 'PUT', `/api/v1/namespaces/${ns}/endpoints/${name}`, { ...endpoints, subsets: [{ ports: [{ port: 80 }], addresses: [{ ip: '10.2.3.4' }] }] });
    await eventually(mirrors('10.2.3.4', true), 'the update mirrored', 12_000);

    await call(t, 'DELETE', `/api/v1/namespaces/${ns}/endpoints/${name}`);
    await eventually(async () => (await listItems(t, slicesPath)).length === 0, 'the deletion mirrored', 12_000);
  });
});
