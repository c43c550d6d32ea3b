// The Endpoints and EndpointSlice controllers against a started server: pods
// created and given an IP and readiness through the API (the node agent's
// part), a Service selecting them; its Endpoints and EndpointSlices awaited
// (no timing asserted: `eventually` only bounds a failure), scaled up and
// down, shown by kubectl 1.32, and cleaned up when the Service goes (the
// slices by the garbage collector, through their owner reference). The
// `kubernetes` Service has its EndpointSlice beside its Endpoints.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { runKubectl } from '../helpers/kubectl.js';
import { NO_NODE_LIFECYCLE, type TestServer, startTestServer } from '../helpers/server.js';
import { workloadApi } from '../helpers/workload-api.js';

let ts: TestServer;
const NS = '/api/v1/namespaces/default';
// --api-domain k8s.io: kubectl 1.32's describe reads discovery.k8s.io EndpointSlices by that group
const SLICES = '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices';
const { send } = workloadApi(() => ts);

interface Slice {
  metadata: { name: string; labels?: Record<string, string>; ownerReferences?: { kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }[] };
  addressType: string;
  endpoints?: { addresses: string[]; conditions: { ready: boolean; serving: boolean; terminating: boolean }; targetRef: { name: string }; nodeName?: string }[];
  ports?: { name: string; port: number; protocol: string }[];
}
interface Eps {
  subsets?: { addresses?: { ip: string; targetRef?: { name: string } }[]; notReadyAddresses?: { ip: string }[]; ports?: { name: string; port: number; protocol: string }[] }[];
}

/** a pod on node n1, then the node agent's status: Running with an IP, Ready or not */
async function runPod(name: string, ip: string, ready = true): Promise<void> {
  const p = await send('POST', `${NS}/pods`, { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'web' } }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'nginx', ports: [{ name: 'http', containerPort: 8080 }] }] } });
  const at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await send('PUT', `${NS}/pods/${name}/status`, { ...p, status: { phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: at }] } });
}

const slicesOf = async (svc: string): Promise<Slice[]> => {
  const r = await ts.request('GET', `${SLICES}?labelSelector=${encodeURIComponent(`kubernetes.io/service-name=${svc}`)}`);
  expect(r.status, r.text).toBe(200);
  return r.json<{ items: Slice[] }>().items;
};
const sliceIps = (slices: Slice[]): string[] => slices.flatMap((s) => (s.endpoints ?? []).map((e) => e.addresses[0]!)).sort();
const endpointIps = async (svc: string): Promise<string[] | undefined> => {
  const r = await ts.request('GET', `${NS}/endpoints/${svc}`);
  if (r.status !== 200) return undefined;
  return (r.json<Eps>().subsets ?? []).flatMap((s) => (s.addresses ?? []).map((a) => a.ip)).sort();
};

beforeAll(async () => {
  ts = await startTestServer({ apiDomain: 'k8s.io', ...NO_NODE_LIFECYCLE });
});

afterAll(async () => {
  await ts?.stop();
});

describe('Endpoints and EndpointSlices of a Service', () => {
  it('follow its pods through scaling and readiness, show in kubectl, and go with the Service', async () => {
    await runPod('web-a', '10.244.0.11');
    await runPod('web-b', '10.244.0.12');
    await runPod('web-c', '10.244.0.13', false);
    const svc = await send('POST', `${NS}/services`, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', labels: { team: 'x' } }, spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] } });

    await eventually(async () => (JSON.stringify(await endpointIps('web')) === '["10.244.0.11","10.244.0.12"]' ? true : undefined), 'Endpoints of web', 20_000);
    const eps = (await ts.request('GET', `${NS}/endpoints/web`)).json<Eps & { metadata: { labels?: Record<string, string>; annotations?: Record<string, string> } }>();
    expect(eps.metadata.labels).toEqual({ team: 'x' });
    expect(eps.metadata.annotations?.['endpoints.kubernetes.io/last-change-trigger-time']).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(eps.subsets).toHaveLength(1);
    expect(eps.subsets![0]!.notReadyAddresses).toEqual([expect.objectContaining({ ip: '10.244.0.13' })]);
    expect(eps.subsets![0]!.ports).toEqual([{ name: 'http', port: 8080, protocol: 'TCP' }]);

    const slices = await eventually(async () => {
      const s = await slicesOf('web');
      return sliceIps(s).length === 3 ? s : undefined;
    }, 'EndpointSlices of web', 20_000);
    expect(slices).toHaveLength(1);
    const slice = slices[0]!;
    expect(slice.metadata.name).toMatch(/^web-/);
    expect(slice.metadata.labels).toEqual({ team: 'x', 'kubernetes.io/service-name': 'web', 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' });
    expect(slice.metadata.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: svc.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    expect([slice.addressType, slice.ports]).toEqual(['IPv4', [{ name: 'http', port: 8080, protocol: 'TCP' }]]);
    expect(Object.fromEntries(slice.endpoints!.map((e) => [e.targetRef.name, [e.conditions.ready, e.nodeName]]))).toEqual({ 'web-a': [true, 'n1'], 'web-b': [true, 'n1'], 'web-c': [false, 'n1'] });

    // kubectl 1.32 reads them as kube's (describe lists the ready addresses of the slices)
    const kc = join(ts.dataDir, 'admin.kubeconfig');
    const got = await runKubectl(kc, ['get', 'endpoints', 'web', '--no-headers']);
    expect(got.stdout.trim().split(/\s+/).slice(0, 2)).toEqual(['web', '10.244.0.11:8080,10.244.0.12:8080']);
    const gotSlices = await runKubectl(kc, ['get', 'endpointslices', '-l', 'kubernetes.io/service-name=web', '--no-headers']);
    expect(gotSlices.stdout.trim().split(/\s+/).slice(1, 4)).toEqual(['IPv4', '8080', '10.244.0.11,10.244.0.12,10.244.0.13']);
    const described = await runKubectl(kc, ['describe', 'svc', 'web']);
    expect(described.stdout).toMatch(/Endpoints:\s+10\.244\.0\.11:8080,10\.244\.0\.12:8080\n/);

    // scale: one more, one gone, the unready one ready
    await runPod('web-d', '10.244.0.14');
    expect((await ts.request('DELETE', `${NS}/pods/web-a`, { body: { gracePeriodSeconds: 0 } })).status).toBeLessThan(300);
    const c = await send('GET', `${NS}/pods/web-c`, undefined);
    await send('PUT', `${NS}/pods/web-c/status`, { ...c, status: { ...c.status, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }] } });
    const want = ['10.244.0.12', '10.244.0.13', '10.244.0.14'];
    await eventually(async () => (JSON.stringify(await endpointIps('web')) === JSON.stringify(want) ? true : undefined), 'Endpoints scaled', 20_000);
    const scaled = await eventually(async () => {
      const s = await slicesOf('web');
      return JSON.stringify(sliceIps(s)) === JSON.stringify(want) && s.every((x) => x.endpoints!.every((e) => e.conditions.ready)) ? s : undefined;
    }, 'EndpointSlices scaled', 20_000);
    // updated in place
    expect(scaled.map((s) => s.metadata.name)).toEqual([slice.metadata.name]);

    // the Service goes: its Endpoints by the controller, its slices by the garbage collector
    expect((await ts.request('DELETE', `${NS}/services/web`)).status).toBeLessThan(300);
    await eventually(async () => ((await ts.request('GET', `${NS}/endpoints/web`)).status === 404 ? true : undefined), 'Endpoints deleted', 20_000);
    await eventually(async () => ((await slicesOf('web')).length === 0 ? true : undefined), 'EndpointSlices deleted', 20_000);
  });

  it('leave out a pod whose only IP Endpoints cannot hold (a link-local one)', async () => {
    const pod = async (name: string, ip: string) => {
      const p = await send('POST', `${NS}/pods`, { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'lo' } }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'nginx' }] } });
      await send('PUT', `${NS}/pods/${name}/status`, { ...p, status: { phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions: [{ type: 'Ready', status: 'True' }] } });
    };
    await pod('lo-a', '169.254.3.4');
    await pod('lo-b', '10.244.0.21');
    await send('POST', `${NS}/services`, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'lo' }, spec: { selector: { app: 'lo' }, ports: [{ port: 80 }] } });
    // both controllers wrote (no refused write left them behind) and list the other pod only
    await eventually(async () => (JSON.stringify(await endpointIps('lo')) === '["10.244.0.21"]' ? true : undefined), 'Endpoints of lo', 20_000);
    await eventually(async () => (JSON.stringify(sliceIps(await slicesOf('lo'))) === '["10.244.0.21"]' ? true : undefined), 'EndpointSlices of lo', 20_000);
  });

  it('the kubernetes Service has its EndpointSlice as kube-apiserver writes it', async () => {
    const s = await eventually(async () => {
      const r = await ts.request('GET', `${SLICES}/kubernetes`);
      return r.status === 200 ? r.json<Slice>() : undefined;
    }, 'kubernetes EndpointSlice', 20_000);
    expect(s.metadata.labels).toEqual({ 'kubernetes.io/service-name': 'kubernetes' });
    expect([s.addressType, s.endpoints, s.ports]).toEqual(['IPv4', [{ addresses: ['127.0.0.1'], conditions: { ready: true } }], [{ name: 'https', port: ts.server.port, protocol: 'TCP' }]]);
    // the EndpointSlice controller leaves it alone: it is the only slice of the Service
    expect((await slicesOf('kubernetes')).map((x) => x.metadata.name)).toEqual(['kubernetes']);
  });
});
