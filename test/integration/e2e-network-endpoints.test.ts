// Ports of Kubernetes' "[sig-network] Services" conformance tests of a
// Service's endpoints as pods come and go (test/e2e/network/service.go "should
// serve a basic endpoint from pods", "should serve multiport endpoints from
// pods") to orch: its controllers and one real node agent (simulated runtime).
// kube's validateEndpointsPortsOrFail is checked on the EndpointSlices and on
// the Endpoints: by pod name, the ports each ready pod serves. Left out: the
// traffic sent through the Service between steps (no pod networking here), so
// the pods run pause rather than agnhost netexec.

import { describe, it } from 'vitest';
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
