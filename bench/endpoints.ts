// What the endpoint and endpointslice controllers add to the pod write path
// (docs/controllers.md "Endpoints and EndpointSlices"): pod status updates
// through the registry on a real LocalStore, with the two controllers stopped
// or running, N Services in the namespace each selecting 1/N of the pods.
// `flip`: every update changes the pod's readiness, so its Service's
// Endpoints and one EndpointSlice are written; `steady`: every update changes
// only a status message, which no endpoint shows (no sync, no write). Prints
// process CPU µs per pod update, alternating off/on rounds so host noise
// falls on both sides.
//
//   npx tsx bench/endpoints.ts [pods=1000] [updates=4000] [services=50] [rounds=2]

import { EndpointsController } from '../src/controllers/endpoints/endpoints-controller.js';
import { EndpointSliceController } from '../src/controllers/endpoints/endpointslice-controller.js';
import type { ApiObject } from '../src/registry/types.js';
import { openLocalRegistry } from '../test/helpers/local-registry.js';

const [PODS = 1000, UPDATES = 4000, SERVICES = 50, ROUNDS = 2] = process.argv.slice(2).map(Number);
const D = 'orch.io';
const W = { dryRun: false };

const status = (i: number, ready: boolean, message?: string) => ({
  phase: 'Running', podIP: `10.8.${i >> 8}.${i & 255}`, podIPs: [{ ip: `10.8.${i >> 8}.${i & 255}` }],
  conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: '2026-01-01T00:00:00Z', ...(message ? { message } : {}) }],
});

async function round(on: boolean, mode: 'flip' | 'steady'): Promise<number> {
  const { store, gs, close } = await openLocalRegistry(D, 'orch-bench-eps-');
  await gs('namespaces').create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } }, W);
  for (let i = 0; i < PODS; i++) {
    await gs('pods').create('default', { apiVersion: 'v1', kind: 'Pod', metadata: { name: `p${i}`, labels: { app: `a${i % SERVICES}` } }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox:1' }] } } as ApiObject, W);
    await gs('pods').guaranteedUpdate('default', `p${i}`, { ...W, subresource: 'status' }, (cur) => ({ ...cur!, status: status(i, true) }));
  }
  for (let s = 0; s < SERVICES; s++) {
    await gs('services').create('default', { apiVersion: 'v1', kind: 'Service', metadata: { name: `a${s}` }, spec: { clusterIP: `10.96.1.${s + 2}`, ipFamilies: ['IPv4'], selector: { app: `a${s}` }, ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] } } as ApiObject, W);
  }
  const ctrl = [
    new EndpointsController({ store, services: () => gs('services'), pods: () => gs('pods'), endpoints: () => gs('endpoints') }),
    new EndpointSliceController({ store, services: () => gs('services'), pods: () => gs('pods'), nodes: () => gs('nodes'), slices: () => gs('endpointslices', `discovery.${D}`), sliceApiVersion: `discovery.${D}/v1` }),
  ];
  const settle = async (): Promise<void> => {
    for (let i = 0; i < 3; i++) {
      for (const c of ctrl) await c.settled();
      await new Promise((r) => setImmediate(r));
    }
  };
  if (on) for (const c of ctrl) c.start();
  await settle();
  const t0 = process.cpuUsage();
  for (let i = 0; i < UPDATES; i++) {
    const p = i % PODS;
    const ready = mode === 'steady' || Math.floor(i / PODS) % 2 === 1;
    await gs('pods').guaranteedUpdate('default', `p${p}`, { ...W, subresource: 'status' }, (cur) => ({ ...cur!, status: status(p, ready, mode === 'steady' ? `beat ${i}` : undefined) }));
    // one sync per update, as when updates are spread out (a burst would fold into fewer syncs)
    if (on) await settle();
  }
  await settle();
  const d = process.cpuUsage(t0);
  if (on && mode === 'flip') {
    // the controllers did their work: a0's Endpoints list its ready pods as the store has them
    const ready = (await gs('pods').list('default')).filter((p) => p.metadata?.labels?.app === 'a0' && JSON.stringify(p.status).includes('"status":"True"')).length;
    const ep = (await gs('endpoints').get('default', 'a0')) as { subsets?: { addresses?: unknown[] }[] };
    if ((ep.subsets ?? []).reduce((n, s) => n + (s.addresses ?? []).length, 0) !== ready) throw new Error('the Endpoints do not follow the pods: the bench measures nothing');
  }
  for (const c of ctrl) c.stop();
  await close();
  return (d.user + d.system) / UPDATES;
}

const out: Record<string, number[]> = {};
for (let r = 0; r < ROUNDS; r++) {
  for (const mode of ['steady', 'flip'] as const) {
    for (const on of [false, true]) {
      const k = `${mode}, ${on ? 'controllers' : 'no controllers'}`;
      (out[k] ??= []).push(Math.round(await round(on, mode)));
    }
  }
}
console.log(JSON.stringify({ pods: PODS, updates: UPDATES, services: SERVICES, cpuUsPerPodUpdate: out }));
