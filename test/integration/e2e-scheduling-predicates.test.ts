// Ports of Kubernetes' "[sig-scheduling] SchedulerPredicates [Serial]" conformance
// tests (test/e2e/scheduling/predicates.go) and the scheduling part of
// "[sig-network] HostPort" (test/e2e/network/hostport.go) to orch: its scheduler
// and one real node agent (simulated runtime). A nodeSelector no node matches
// leaves the pod unschedulable; one the node's new label matches puts it
// there; pods asking more CPU than the node has left are not scheduled; a
// hostPort on 0.0.0.0 conflicts with the same port and protocol on another
// host IP, while different host IPs or protocols do not. kube's verifyResult
// counts the namespace's pods: scheduled (a nodeName) and not scheduled
// (PodScheduled False, reason Unschedulable). Left out: hostport.go's traffic
// checks (no pod networking here).

import { describe, expect, it } from 'vitest';
import { type Obj, PAUSE, STRATEGIC, e2eEnv, namespace } from '../helpers/e2e-apps.js';

const node = 'predicates-node';
const env = e2eEnv(node);
const PODS = (ns: string) => `/api/v1/namespaces/${ns}/pods`;
let seq = 0;
const ns = (base: string) => namespace(env, `${base}-${++seq}-${Math.random().toString(36).slice(2, 7)}`);

/** kube's initPausePod: one pause container, the given labels, selector, resources and ports */
function pausePod(name: string, o: { nodeSelector?: Record<string, string>; requests?: Record<string, string>; ports?: Obj[] } = {}): Obj {
  const container: Obj = { name, image: PAUSE, ...(o.requests ? { resources: { requests: o.requests, limits: o.requests } } : {}), ...(o.ports ? { ports: o.ports } : {}) };
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { name } }, spec: { containers: [container], ...(o.nodeSelector ? { nodeSelector: o.nodeSelector } : {}) } };
}

const unschedulable = (p: Obj): boolean => ((p.status?.conditions ?? []) as Obj[]).some((c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable');

/** e2epod.WaitForPodNameUnschedulableInNamespace */
const waitUnschedulable = (n: string, name: string): Promise<Obj> =>
  env.eventually(async () => {
    const p = await env.get(`${PODS(n)}/${name}`);
    return unschedulable(p) ? p : undefined;
  }, `${name} Unschedulable`);

/** the pod scheduled and started (e2epod.WaitForPodNotPending) */
const waitScheduled = (n: string, name: string): Promise<Obj> =>
  env.eventually(async () => {
    const p = await env.get(`${PODS(n)}/${name}`);
    return p.spec.nodeName && p.status?.phase !== 'Pending' ? p : undefined;
  }, `${name} scheduled and started`);

/** kube's verifyResult */
async function verifyResult(n: string, scheduled: number, notScheduled: number): Promise<void> {
  const pods = (await env.list(PODS(n))).items as Obj[];
  expect(pods.filter((p) => p.spec.nodeName).length, 'scheduled pods').toBe(scheduled);
  expect(pods.filter((p) => !p.spec.nodeName && unschedulable(p)).length, 'not scheduled pods').toBe(notScheduled);
}

/** labels the node (framework.AddOrUpdateLabelOnNode); returns the removal */
async function labelNode(key: string, value: string): Promise<() => Promise<void>> {
  await env.call('PATCH', `/api/v1/nodes/${node}`, { metadata: { labels: { [key]: value } } }, STRATEGIC);
  return async () => {
    await env.call('PATCH', `/api/v1/nodes/${node}`, { metadata: { labels: { [key]: null } } }, STRATEGIC);
  };
}

/** milli-CPU of a quantity ("2", "1500m") */
const milli = (q: string): number => (q.endsWith('m') ? Number(q.slice(0, -1)) : Math.round(Number(q) * 1000));

describe('[sig-scheduling] SchedulerPredicates [Serial]', () => {
  it('validates that NodeSelector is respected if not matching [Conformance]', async () => {
    const n = await ns('sched-pred');
    await env.call('POST', PODS(n), pausePod('restricted-pod', { nodeSelector: { label: 'nonempty' } }));
    await waitUnschedulable(n, 'restricted-pod');
    await verifyResult(n, 0, 1);
  });

  it('validates that NodeSelector is respected if matching [Conformance]', async () => {
    const n = await ns('sched-pred');
    // a pod without a selector finds the node, then goes
    await env.call('POST', PODS(n), pausePod('without-label'));
    const found = await waitScheduled(n, 'without-label');
    expect(found.spec.nodeName).toBe(node);
    await env.call('DELETE', `${PODS(n)}/without-label`, { gracePeriodSeconds: 0 });
    const key = `kubernetes.io/e2e-${crypto.randomUUID()}`;
    const unlabel = await labelNode(key, '42');
    try {
      await env.call('POST', PODS(n), pausePod('with-labels', { nodeSelector: { [key]: '42' } }));
      const p = await waitScheduled(n, 'with-labels');
      expect(p.spec.nodeName).toBe(node);
    } finally {
      await unlabel();
    }
  });

  it('validates resource limits of pods that are allowed to run [Conformance]', async () => {
    const n = await ns('sched-pred');
    const nodeObj = await env.get(`/api/v1/nodes/${node}`);
    const allocatable = milli(nodeObj.status.allocatable.cpu);
    // what the pods already on the node request
    const all = ((await env.list('/api/v1/pods')).items as Obj[]).filter((p) => p.spec.nodeName === node && !['Succeeded', 'Failed'].includes(p.status?.phase));
    const used = all.flatMap((p) => p.spec.containers as Obj[]).reduce((s, c) => s + (c.resources?.requests?.cpu ? milli(c.resources.requests.cpu) : 0), 0);
    const free = allocatable - used;
    expect(free).toBeGreaterThan(100);
    // kube's filler takes 70% of what is left; the additional pod asks half of the allocatable: it cannot fit
    await env.call('POST', PODS(n), pausePod('filler-pod', { requests: { cpu: `${Math.floor(free * 0.7)}m` } }));
    await waitScheduled(n, 'filler-pod');
    await env.call('POST', PODS(n), pausePod('additional-pod', { requests: { cpu: `${Math.floor(allocatable * 0.5)}m` } }));
    const p = await waitUnschedulable(n, 'additional-pod');
    expect(((p.status.conditions as Obj[]).find((c) => c.type === 'PodScheduled')?.message as string) ?? '').toContain('Insufficient cpu');
    await verifyResult(n, 1, 1);
  });

  it('validates that there exists conflict between pods with same hostPort and protocol but one using 0.0.0.0 hostIP [Conformance]', async () => {
    const n = await ns('sched-pred');
    const key = `kubernetes.io/e2e-${crypto.randomUUID()}`;
    const unlabel = await labelNode(key, '95');
    try {
      const port = 54322;
      await env.call('POST', PODS(n), pausePod('pod4', { nodeSelector: { [key]: '95' }, ports: [{ containerPort: 80, hostPort: port, hostIP: '0.0.0.0', protocol: 'TCP' }] }));
      await waitScheduled(n, 'pod4');
      await env.call('POST', PODS(n), pausePod('pod5', { nodeSelector: { [key]: '95' }, ports: [{ containerPort: 80, hostPort: port, hostIP: '127.0.0.1', protocol: 'TCP' }] }));
      await waitUnschedulable(n, 'pod5');
      await verifyResult(n, 1, 1);
    } finally {
      await unlabel();
    }
  });
});

describe('[sig-network] HostPort', () => {
  it('validates that there is no conflict between pods with same hostPort but different hostIP and protocol [LinuxOnly] [Conformance] (scheduling only)', async () => {
    const n = await ns('hostport');
    const key = `kubernetes.io/e2e-${crypto.randomUUID()}`;
    const unlabel = await labelNode(key, '90');
    try {
      const nodeObj = await env.get(`/api/v1/nodes/${node}`);
      const hostIP = ((nodeObj.status.addresses ?? []) as Obj[]).find((a) => a.type === 'InternalIP')?.address as string;
      expect(hostIP).toBeTruthy();
      const port = 54323;
      // kube's pod1 binds 127.0.0.1, another address than the node's; a node whose address is 127.0.0.1 (a host
      // without a network interface, as some sandboxes) gets another loopback address for it
      const loopback = hostIP === '127.0.0.1' ? '127.0.0.2' : '127.0.0.1';
      const pods: [string, string, string][] = [['pod1', loopback, 'TCP'], ['pod2', hostIP, 'TCP'], ['pod3', hostIP, 'UDP']];
      for (const [name, ip, protocol] of pods) {
        await env.call('POST', PODS(n), pausePod(name, { nodeSelector: { [key]: '90' }, ports: [{ containerPort: 8080, hostPort: port, hostIP: ip, protocol }] }));
        expect((await waitScheduled(n, name)).spec.nodeName).toBe(node);
      }
      await verifyResult(n, 3, 0);
    } finally {
      await unlabel();
    }
  });
});
