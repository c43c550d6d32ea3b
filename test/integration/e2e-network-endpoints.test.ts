// Ports of Kubernetes' "[sig-network] Services" conformance tests of a
// Service's endpoints as pods come and go (test/e2e/network/service.go "should
// serve a basic endpoint from pods", "should serve multiport endpoints from
// pods") to orch: its controllers and one real node agent (simulated runtime).
// kube's validateEndpointsPortsOrFail is checked on the EndpointSlices and on
// the Endpoints: by pod name, the ports each ready pod serves. Left out: the
// traffic sent through the Service between steps (no pod networking here), so
// the pods run pause rather than agnhost netexec. "[sig-network] EndpointSlice"
// (test/e2e/network/endpointslice.go): Endpoints and EndpointSlices made for a
// Service whose selector matches nothing and removed with it; made for pods
// (an int and a named target port, no match), and slices deleted made again.

import { describe, expect, it } from 'vitest';
import { type Obj, PAUSE, e2eEnv, namespace } from '../helpers/e2e-apps.js';

const env = e2eEnv('endpoints-node');
const PODS = (ns: string) => `/api/v1/namespaces/${ns}/pods`;
let seq = 0;
const ns = (base: string) => namespace(env, `${base}-${++seq}-${Math.random().toString(36).slice(2, 7)}`);

type PortsByPod = Record<string, number[]>;

/** the ports by pod name a Service's EndpointSlices and Endpoints list (the ready endpoints) */
async function endpointPorts(n: string, service: string): Promise<{ slices: PortsByPod; endpoints: PortsByPod }> {
  const slices: PortsByPod = {};
  const list = (await env.list(`/apis/discovery.k8s.io/v1/namespaces/${n}/endpointslices`, `kubernetes.io/service-name=${service}`)).items as Obj[];
  for (const s of list) {
    for (const e of (s.endpoints ?? []) as Obj[]) {
      if (e.conditions?.ready === false || !e.targetRef?.name) continue;
      slices[e.targetRef.name] = [...(slices[e.targetRef.name] ?? []), ...((s.ports ?? []) as Obj[]).map((p) => p.port as number)].sort();
    }
  }
  const endpoints: PortsByPod = {};
  const ep = await env.ts().request('GET', `/api/v1/namespaces/${n}/endpoints/${service}`);
  for (const subset of ep.status === 200 ? ((ep.json<Obj>().subsets ?? []) as Obj[]) : []) {
    for (const a of (subset.addresses ?? []) as Obj[]) {
      endpoints[a.targetRef.name] = [...(endpoints[a.targetRef.name] ?? []), ...((subset.ports ?? []) as Obj[]).map((p) => p.port as number)].sort();
    }
  }
  return { slices, endpoints };
}

/** kube's validateEndpointsPortsOrFail: the Service's endpoints come to be exactly `want` */
async function validateEndpointsPorts(n: string, service: string, want: PortsByPod): Promise<void> {
  await env.eventually(async () => {
    const got = await endpointPorts(n, service);
    const canon = (m: PortsByPod): string => JSON.stringify(Object.entries(m).sort(([a], [b]) => a.localeCompare(b)));
    return canon(got.slices) === canon(want) && canon(got.endpoints) === canon(want);
  }, `${service}'s endpoints ${JSON.stringify(want)}`);
}

/** kube's createPodOrFail: a pod of the labels and container ports, Running and Ready */
async function createPod(n: string, name: string, labels: Record<string, string>, ports: Obj[]): Promise<void> {
  await env.call('POST', PODS(n), { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels }, spec: { containers: [{ name: 'pause', image: PAUSE, ports }] } });
  await env.runningPods(n, `name=${name}`, 1);
}

/** kube's deletePodOrFail (the pod gone from the API) */
async function deletePod(n: string, name: string): Promise<void> {
  await env.call('DELETE', `${PODS(n)}/${name}`);
  await env.eventually(async () => (await env.ts().request('GET', `${PODS(n)}/${name}`)).status === 404, `${name} deleted`);
}

describe('[sig-network] Services', () => {
  it('should serve a basic endpoint from pods [Conformance]', async () => {
    const n = await ns('services');
    const labels = { foo: 'bar', baz: 'blah' };
    const service = 'endpoint-test2';
    await env.call('POST', `/api/v1/namespaces/${n}/services`, { metadata: { name: service }, spec: { selector: labels, ports: [{ port: 80, targetPort: 80 }] } });
    await validateEndpointsPorts(n, service, {});
    await createPod(n, 'pod1', { ...labels, name: 'pod1' }, [{ containerPort: 80 }]);
    await validateEndpointsPorts(n, service, { pod1: [80] });
    await createPod(n, 'pod2', { ...labels, name: 'pod2' }, [{ containerPort: 80 }]);
    await validateEndpointsPorts(n, service, { pod1: [80], pod2: [80] });
    await deletePod(n, 'pod1');
    await validateEndpointsPorts(n, service, { pod2: [80] });
    await deletePod(n, 'pod2');
    await validateEndpointsPorts(n, service, {});
  });

  it('should serve multiport endpoints from pods [Conformance]', async () => {
    const n = await ns('services');
    const labels = { foo: 'bar', baz: 'blah' };
    const service = 'multi-endpoint-test';
    await env.call('POST', `/api/v1/namespaces/${n}/services`, {
      metadata: { name: service },
      spec: { selector: labels, ports: [{ name: 'portname1', port: 80, targetPort: 'svc1' }, { name: 'portname2', port: 81, targetPort: 'svc2' }] },
    });
    await validateEndpointsPorts(n, service, {});
    await createPod(n, 'pod1', { ...labels, name: 'pod1' }, [{ name: 'svc1', containerPort: 100 }]);
    await validateEndpointsPorts(n, service, { pod1: [100] });
    await createPod(n, 'pod2', { ...labels, name: 'pod2' }, [{ name: 'svc2', containerPort: 101 }]);
    await validateEndpointsPorts(n, service, { pod1: [100], pod2: [101] });
    await deletePod(n, 'pod1');
    await validateEndpointsPorts(n, service, { pod2: [101] });
    await deletePod(n, 'pod2');
    await validateEndpointsPorts(n, service, {});
  });
});

describe('[sig-network] EndpointSlice (endpointslice.go)', () => {
  const NGINX = 'registry.k8s.io/e2e-test-images/nginx:1.14-4';
  const svcPath = (n: string) => `/api/v1/namespaces/${n}/services`;
  const slicesOf = async (n: string, svc: string): Promise<Obj[]> => (await env.list(`/apis/discovery.k8s.io/v1/namespaces/${n}/endpointslices`, `kubernetes.io/service-name=${svc}`)).items;
  const getEndpoints = async (n: string, svc: string): Promise<Obj | undefined> => {
    const r = await env.ts().request('GET', `/api/v1/namespaces/${n}/endpoints/${svc}`);
    return r.status === 200 ? r.json<Obj>() : undefined;
  };

  /** kube's ensurePodTargetRef */
  const expectTargetRef = (pod: Obj, ref: Obj | undefined): void =>
    expect(ref).toMatchObject({ kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid });

  /**
   * kube's expectEndpointsAndSlices: at least `numSlices` slices holding at least the pods' count of endpoints,
   * then Endpoints of `numSubsets` subsets and the pods' count of addresses, each address a pod's IP
   * referencing it, with the Service's ports (or, for a named target port, the pod's port of that name)
   */
  async function expectEndpointsAndSlices(n: string, svc: Obj, pods: Obj[], numSubsets: number, numSlices: number, namedPort: boolean): Promise<void> {
    const slices = await env.eventually(async () => {
      const items = await slicesOf(n, svc.metadata.name);
      const count = items.reduce((a, s) => a + (s.endpoints ?? []).length, 0);
      return items.length > 0 && items.length >= numSlices && count >= pods.length ? items : undefined;
    }, `EndpointSlices of ${svc.metadata.name}`);
    const endpoints = await env.eventually(async () => {
      const ep = await getEndpoints(n, svc.metadata.name);
      const subsets = (ep?.subsets ?? []) as Obj[];
      const ips = subsets.reduce((a, s) => a + (s.addresses ?? []).length + (s.notReadyAddresses ?? []).length, 0);
      return ep && subsets.length === numSubsets && ips === pods.length ? ep : undefined;
    }, `Endpoints of ${svc.metadata.name}`);
    const byIP = new Map(pods.map((p) => [p.status.podIP as string, p]));
    const svcPort = svc.spec.ports[0];
    /** the pod's port the Service's named target port names */
    const namedContainerPort = (pod: Obj): number | undefined => (pod.spec.containers[0].ports as Obj[]).find((p) => p.name === svcPort.targetPort)?.containerPort;
    expect(endpoints.metadata.name).toBe(svc.metadata.name);
    let total = 0;
    for (const subset of (endpoints.subsets ?? []) as Obj[]) {
      const addresses = [...(subset.addresses ?? []), ...(subset.notReadyAddresses ?? [])] as Obj[];
      total += addresses.length;
      expect(subset.ports).toHaveLength(svc.spec.ports.length);
      if (!namedPort) {
        (subset.ports as Obj[]).forEach((p, i) => expect(p).toMatchObject({ name: svc.spec.ports[i].name, protocol: svc.spec.ports[i].protocol, port: svc.spec.ports[i].targetPort }));
      }
      for (const a of addresses) {
        const pod = byIP.get(a.ip);
        expect(pod, `an address of a pod: ${a.ip}`).toBeDefined();
        expectTargetRef(pod!, a.targetRef);
        if (namedPort) expect(subset.ports[0]).toMatchObject({ port: namedContainerPort(pod!), name: svcPort.name });
      }
    }
    expect(total).toBe(pods.length);
    if (pods.length === 0) expect(slices).toHaveLength(1);
    const sliceAddresses = new Set<string>();
    for (const s of slices) {
      const ports = (s.ports ?? []) as Obj[];
      expect(ports).toHaveLength(pods.length === 0 ? 0 : svc.spec.ports.length);
      if (!namedPort) ports.forEach((p, i) => expect(p).toMatchObject({ name: svc.spec.ports[i].name, protocol: svc.spec.ports[i].protocol, port: svc.spec.ports[i].targetPort }));
      for (const e of (s.endpoints ?? []) as Obj[]) {
        expect(e.addresses.length).toBeGreaterThan(0);
        sliceAddresses.add(e.addresses[0]);
        const pod = byIP.get(e.addresses[0]);
        expect(pod, `an endpoint of a pod: ${e.addresses[0]}`).toBeDefined();
        expectTargetRef(pod!, e.targetRef);
        if (namedPort) expect(ports[0]).toMatchObject({ port: namedContainerPort(pod!), name: svcPort.name });
      }
    }
    expect(sliceAddresses.size).toBe(pods.length);
  }

  it('should create and delete Endpoints and EndpointSlices for a Service with a selector specified [Conformance]', async () => {
    const n = await ns('endpointslice');
    const svc = await env.call('POST', svcPath(n), {
      metadata: { name: 'example-empty-selector' },
      spec: { selector: { 'does-not-match-anything': 'endpoints-and-endpoint-slices-should-still-be-created' }, ports: [{ name: 'example', port: 80, protocol: 'TCP' }] },
    });
    await env.eventually(async () => (await getEndpoints(n, svc.metadata.name)) !== undefined, 'the Endpoints');
    const [slice] = await env.eventually(async () => {
      const items = await slicesOf(n, svc.metadata.name);
      return items.length > 0 ? items : undefined;
    }, 'an EndpointSlice');
    expect(slice!.metadata.labels['endpointslice.kubernetes.io/managed-by']).toBe('endpointslice-controller.k8s.io');
    expect(slice!.endpoints ?? []).toHaveLength(0);
    await env.call('DELETE', `${svcPath(n)}/${svc.metadata.name}`);
    await env.eventually(async () => (await getEndpoints(n, svc.metadata.name)) === undefined, 'the Endpoints deleted');
    await env.eventually(async () => (await slicesOf(n, svc.metadata.name)).length === 0, 'the EndpointSlices deleted', 90_000);
  });

  it('should create Endpoints and EndpointSlices for Pods matching a Service [Conformance]', async () => {
    const n = await ns('endpointslice');
    const podWith = (name: string, labels: Record<string, string>, ports: Obj[]): Obj => ({ metadata: { name, labels }, spec: { containers: [{ name: 'container1', image: NGINX, ports }] } });
    await env.call('POST', PODS(n), podWith('pod1', { pod1: 'on', shared12: 'on' }, [{ name: 'example-name', containerPort: 3000 }]));
    await env.call('POST', PODS(n), podWith('pod2', { pod2: 'on', shared12: 'on' }, [{ name: 'example-name', containerPort: 3001 }, { name: 'other-port', containerPort: 3002 }]));
    const service = (name: string, selector: Record<string, string>, port: Obj): Promise<Obj> =>
      env.call('POST', svcPath(n), { metadata: { name }, spec: { selector, publishNotReadyAddresses: true, ports: [{ port: 80, protocol: 'TCP', ...port }] } });
    const svc1 = await service('example-int-port', { pod1: 'on' }, { name: 'example', targetPort: 3000 });
    const svc2 = await service('example-named-port', { shared12: 'on' }, { name: 'http', targetPort: 'example-name' });
    const svc3 = await service('example-no-match', { pod3: 'on' }, { name: 'example-no-match', targetPort: 8080 });
    const [pod1, pod2] = await env.eventually(async () => {
      const ps = [await env.get(`${PODS(n)}/pod1`), await env.get(`${PODS(n)}/pod2`)];
      return ps.every((p) => (p.status?.podIPs ?? []).length > 0) ? ps : undefined;
    }, 'the pods have IPs');
    // referencing a single matching pod
    await expectEndpointsAndSlices(n, svc1, [pod1!], 1, 1, false);
    // referencing matching pods with named port
    await expectEndpointsAndSlices(n, svc2, [pod1!, pod2!], 2, 2, true);
    // creating empty Endpoints and EndpointSlices for no matching Pods
    await expectEndpointsAndSlices(n, svc3, [], 0, 1, false);
    // recreating EndpointSlices after they've been deleted
    for (const s of await slicesOf(n, svc2.metadata.name)) await env.call('DELETE', `/apis/discovery.k8s.io/v1/namespaces/${n}/endpointslices/${s.metadata.name}`);
    await expectEndpointsAndSlices(n, svc2, [pod1!, pod2!], 2, 2, true);
  });
});
