// The Endpoints and EndpointSlice controllers (src/controllers/endpoints/)
// on a real LocalStore with a simulated clock, each step waited for
// (`settled`): pods selected by a Service show up in both, readiness moves
// them, a pod change the endpoints do not show writes nothing, a deleted
// Endpoints object is made again, a tampered slice is restored, leftovers
// of deleted Services go at start, Services without a selector are left to
// their users, a node's zone reaches the slices, and a refused write records
// kube's Warning (an admission hook denying) and is retried.

import { describe, expect, it, onTestFinished } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { EndpointsController } from '../../src/controllers/endpoints/endpoints-controller.js';
import { EndpointSliceController, ZONE_LABEL } from '../../src/controllers/endpoints/endpointslice-controller.js';
import type { EndpointSlice } from '../../src/controllers/endpoints/slice-plan.js';
import type { GenericStore, WriteHooks } from '../../src/registry/generic-store.js';
import { forbidden } from '../../src/core/errors.js';
import { EventRecorder } from '../../src/controllers/event-recorder.js';
import type { ApiObject } from '../../src/registry/types.js';
import { openLocalRegistry, settleControllers } from '../helpers/local-registry.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const W = { dryRun: false };
const DISCOVERY = 'discovery.orch.io';

interface Env {
  clock: ManualClock;
  /** Events recorded by the controllers */
  events: Record<string, unknown>[];
  /** while set, writes of Endpoints and EndpointSlices are refused (an admission denial) */
  refuse: { on: boolean };
  gs(resource: string, group?: string): GenericStore;
  start(): void;
  stop(): void;
  settled(): Promise<void>;
}

async function env(): Promise<Env> {
  const clock = new ManualClock(T0);
  const refuse = { on: false };
  const hooks: WriteHooks = {
    validateAdmission: async ({ def }) => {
      if (refuse.on && (def.kind === 'Endpoints' || def.kind === 'EndpointSlice')) throw forbidden(`admission denied the ${def.kind} write`);
    },
  };
  const { store, gs, close } = await openLocalRegistry('orch.io', 'orch-eps-', clock, hooks);
  const events: Record<string, unknown>[] = [];
  const recorder = new EventRecorder({ create: async (_ns, ev) => (events.push(ev), `e${events.length}`), update: async () => true }, { component: 'test', clock });
  await gs('namespaces').create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } }, W);
  const ctrl = [
    new EndpointsController({ store, clock, events: recorder.forComponent('endpoint-controller'), services: () => gs('services'), pods: () => gs('pods'), endpoints: () => gs('endpoints') }),
    new EndpointSliceController({ store, clock, events: recorder.forComponent('endpoint-slice-controller'), services: () => gs('services'), pods: () => gs('pods'), nodes: () => gs('nodes'), slices: () => gs('endpointslices', DISCOVERY), sliceApiVersion: `${DISCOVERY}/v1` }),
  ];
  onTestFinished(async () => {
    for (const c of ctrl) c.stop();
    await close();
  });
  const settled = (): Promise<void> => settleControllers(ctrl);
  return { clock, events, refuse, gs, start: () => ctrl.forEach((c) => c.start()), stop: () => ctrl.forEach((c) => c.stop()), settled };
}

// ipFamilies as the server's allocator sets them (this registry has none)
const service = (name: string, spec: Record<string, unknown> = {}, selector = true): ApiObject => ({
  apiVersion: 'v1', kind: 'Service', metadata: { name, labels: { tier: 'front' } },
  spec: { clusterIP: '10.96.0.20', ipFamilies: ['IPv4'], ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }], ...(selector ? { selector: { app: name } } : {}), ...spec },
}) as ApiObject;

async function runPod(e: Env, name: string, app: string, ip: string, ready = true, node = 'n1'): Promise<ApiObject> {
  const pods = e.gs('pods');
  await pods.create('default', { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app } }, spec: { nodeName: node, containers: [{ name: 'c', image: 'nginx' }] } } as ApiObject, W);
  return setPodStatus(e, name, ip, ready);
}

async function setPodStatus(e: Env, name: string, ip: string, ready: boolean): Promise<ApiObject> {
  const at = new Date(e.clock.now()).toISOString().replace(/\.\d+Z$/, 'Z');
  const r = await e.gs('pods').guaranteedUpdate('default', name, { ...W, subresource: 'status' }, (cur) => ({
    ...cur!,
    status: { phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: at }] },
  }));
  return r.object;
}

const endpointsOf = async (e: Env, name: string): Promise<ApiObject | undefined> => (await e.gs('endpoints').list('default')).find((x) => x.metadata?.name === name);
const slicesOf = async (e: Env, name: string): Promise<EndpointSlice[]> =>
  (await e.gs('endpointslices', DISCOVERY).list('default')).filter((s) => s.metadata?.labels?.['kubernetes.io/service-name'] === name) as EndpointSlice[];
const addrs = (ep: ApiObject | undefined, k: 'addresses' | 'notReadyAddresses'): string[] =>
  ((ep as { subsets?: Record<string, { ip: string }[]>[] } | undefined)?.subsets ?? []).flatMap((s) => (s[k] ?? []).map((a) => a.ip));

describe('Endpoints and EndpointSlices follow the selected pods', () => {
  it('lists ready and unready pods, moves them with readiness, and writes nothing for a change they do not show', async () => {
    const e = await env();
    e.start();
    await runPod(e, 'a', 'web', '10.1.0.1');
    e.clock.advance(2_000);
    await runPod(e, 'b', 'web', '10.1.0.2', false);
    await runPod(e, 'other', 'db', '10.1.0.9');
    await e.settled();
    // the first sync's trigger: the earliest of the Service's creation and its pods' Ready transitions
    await e.gs('services').create('default', service('web'), W);
    await e.settled();
    const ep = await endpointsOf(e, 'web');
    expect([addrs(ep, 'addresses'), addrs(ep, 'notReadyAddresses')]).toEqual([['10.1.0.1'], ['10.1.0.2']]);
    expect(ep!.metadata!.labels).toEqual({ tier: 'front' });
    expect(ep!.metadata!.annotations?.['endpoints.kubernetes.io/last-change-trigger-time']).toBe('2026-01-01T00:00:00Z');
    const [slice, ...more] = await slicesOf(e, 'web');
    expect(more).toEqual([]);
    expect(slice!.metadata!.name).toMatch(/^web-[a-z0-9]{5}$/);
    expect(slice!.metadata!.ownerReferences).toEqual([expect.objectContaining({ kind: 'Service', name: 'web', controller: true, blockOwnerDeletion: true })]);
    expect(Object.fromEntries(slice!.endpoints.map((x) => [x.targetRef.name, x.conditions.ready]))).toEqual({ a: true, b: false });

    // b becomes ready
    e.clock.advance(1_000);
    await setPodStatus(e, 'b', '10.1.0.2', true);
    await e.settled();
    expect(addrs(await endpointsOf(e, 'web'), 'addresses')).toEqual(['10.1.0.1', '10.1.0.2']);
    const [updated] = await slicesOf(e, 'web');
    expect(updated!.metadata!.name).toBe(slice!.metadata!.name);
    expect(updated!.endpoints.every((x) => x.conditions.ready)).toBe(true);
    expect(updated!.metadata!.annotations?.['endpoints.kubernetes.io/last-change-trigger-time']).toBe('2026-01-01T00:00:03Z');

    // an annotation on a pod: no write
    const rvs = [(await endpointsOf(e, 'web'))!.metadata!.resourceVersion, updated!.metadata!.resourceVersion];
    await e.gs('pods').guaranteedUpdate('default', 'a', W, (cur) => ({ ...cur!, metadata: { ...cur!.metadata, annotations: { note: 'x' } } }));
    await e.settled();
    expect([(await endpointsOf(e, 'web'))!.metadata!.resourceVersion, (await slicesOf(e, 'web'))[0]!.metadata!.resourceVersion]).toEqual(rvs);

    // a terminating pod: out of the Endpoints, terminating in the slice
    await e.gs('pods').delete('default', 'a', { ...W, gracePeriodSeconds: 30 });
    await e.settled();
    expect(addrs(await endpointsOf(e, 'web'), 'addresses')).toEqual(['10.1.0.2']);
    const a = (await slicesOf(e, 'web'))[0]!.endpoints.find((x) => x.targetRef.name === 'a');
    expect(a?.conditions).toEqual({ ready: false, serving: true, terminating: true });
  });

  it('the Service deleted: its Endpoints go; deleted Endpoints and tampered slices are restored', async () => {
    const e = await env();
    e.start();
    await e.gs('services').create('default', service('web'), W);
    await runPod(e, 'a', 'web', '10.1.0.1');
    await e.settled();
    await e.gs('endpoints').delete('default', 'web', W);
    await e.settled();
    expect(addrs(await endpointsOf(e, 'web'), 'addresses')).toEqual(['10.1.0.1']);
    const [slice] = await slicesOf(e, 'web');
    await e.gs('endpointslices', DISCOVERY).guaranteedUpdate('default', slice!.metadata!.name!, W, (cur) => ({ ...cur!, endpoints: [] }));
    await e.settled();
    expect((await slicesOf(e, 'web'))[0]!.endpoints.map((x) => x.addresses)).toEqual([['10.1.0.1']]);
    await e.gs('services').delete('default', 'web', W);
    await e.settled();
    expect(await endpointsOf(e, 'web')).toBeUndefined();
  });

  it('leaves Services without a selector to their users; deletes leftovers of deleted Services at start', async () => {
    const e = await env();
    await e.gs('services').create('default', service('manual', {}, false), W);
    const manual = { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'manual' }, subsets: [{ addresses: [{ ip: '192.0.2.1' }], ports: [{ port: 80 }] }] } as ApiObject;
    await e.gs('endpoints').create('default', manual, W);
    await e.gs('endpoints').create('default', { ...manual, metadata: { name: 'gone' } } as ApiObject, W);
    e.start();
    await e.settled();
    expect(addrs(await endpointsOf(e, 'manual'), 'addresses')).toEqual(['192.0.2.1']);
    expect(await endpointsOf(e, 'gone')).toBeUndefined();
    expect(await slicesOf(e, 'manual')).toEqual([]);
  });

  it('a selector Service without pods has empty Endpoints and one placeholder slice; the node zone reaches the slice', async () => {
    const e = await env();
    await e.gs('nodes').create('', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { [ZONE_LABEL]: 'zone-a' } } } as ApiObject, W);
    e.start();
    await e.gs('services').create('default', service('web', { clusterIP: 'None' }), W);
    await e.settled();
    const ep = await endpointsOf(e, 'web');
    expect([ep?.metadata?.labels, (ep as { subsets?: unknown }).subsets]).toEqual([{ tier: 'front', 'service.kubernetes.io/headless': '' }, undefined]);
    const [placeholder, ...rest] = await slicesOf(e, 'web');
    expect(rest).toEqual([]);
    expect([placeholder!.endpoints ?? [], placeholder!.ports ?? []]).toEqual([[], []]);
    await runPod(e, 'a', 'web', '10.1.0.1');
    await e.settled();
    const [filled, ...none] = await slicesOf(e, 'web');
    expect(none).toEqual([]);
    expect(filled!.metadata!.name).toBe(placeholder!.metadata!.name);
    expect(filled!.endpoints[0]!.zone).toBe('zone-a');
    await e.gs('nodes').guaranteedUpdate('', 'n1', W, (cur) => ({ ...cur!, metadata: { ...cur!.metadata, labels: { [ZONE_LABEL]: 'zone-b' } } }));
    await e.settled();
    expect((await slicesOf(e, 'web'))[0]!.endpoints[0]!.zone).toBe('zone-b');
  });

  it('a refused write records kube\'s Warning and is retried until it goes through', async () => {
    const e = await env();
    e.start();
    e.refuse.on = true;
    await e.gs('services').create('default', service('web'), W);
    await runPod(e, 'a', 'web', '10.1.0.1');
    await e.settled();
    const reasons = e.events.map((x) => [x.reason, (x.involvedObject as { kind: string }).kind, (x.source as { component: string }).component]);
    expect(reasons).toEqual(expect.arrayContaining([['FailedToCreateEndpoint', 'Endpoints', 'endpoint-controller'], ['FailedToUpdateEndpointSlices', 'Service', 'endpoint-slice-controller']]));
    expect(String(e.events.find((x) => x.reason === 'FailedToCreateEndpoint')!.message)).toContain('admission denied the Endpoints write');
    expect(await endpointsOf(e, 'web')).toBeUndefined();
    // the queue retries with backoff on the clock
    e.refuse.on = false;
    for (let i = 0; i < 5 && (!(await endpointsOf(e, 'web')) || (await slicesOf(e, 'web')).length === 0); i++) {
      e.clock.advance(60_000);
      await e.settled();
    }
    expect(addrs(await endpointsOf(e, 'web'), 'addresses')).toEqual(['10.1.0.1']);
    expect((await slicesOf(e, 'web')).map((s) => s.endpoints.length)).toEqual([1]);
  });
});
