// The node agent's pod admission (kubelet 1.32's admit handlers; admission.ts,
// pod-admitter.ts): each rejection reason and message as kubelet writes them,
// the order of the checks, how the admitted pods are counted (terminal ones
// not), the rejected pod's status, and the admitter deciding pods one at a
// time in creation order. Pure: no server, no runtime; a fixed clock.
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/nodeagent/api-client.js';
import { type AdmissionNode, admitPod, holdsNode, rejectedStatus, wasRejected } from '../../src/nodeagent/admission.js';
import type { Clock } from '../../src/nodeagent/clock.js';
import { type AdmissionSource, PodAdmitter } from '../../src/nodeagent/pod-admitter.js';
import type { PodSyncer } from '../../src/nodeagent/pod-sync.js';

type Obj = Record<string, any>;
const NODE = 'node-a';

function node(extra: Partial<AdmissionNode> = {}, labels: Record<string, string> = {}, taints: Obj[] = []): AdmissionNode {
  return {
    node: { metadata: { name: NODE, labels: { 'kubernetes.io/os': 'linux', ...labels } }, spec: { taints } },
    allocatable: { cpu: '2', memory: '4Gi', 'ephemeral-storage': '10Gi', pods: '3' },
    pressure: [],
    os: 'linux',
    memoryPressureTaint: 'node.kubernetes.io/memory-pressure',
    ...extra,
  };
}

let n = 0;
/** a pod bound to the node; `requests` for its one container */
function pod(requests: Record<string, string> = {}, spec: Obj = {}, meta: Obj = {}, status: Obj = { phase: 'Pending', qosClass: Object.keys(requests).length ? 'Burstable' : 'BestEffort' }): KubeObject {
  n += 1;
  return {
    metadata: { name: `p${n}`, namespace: 'default', uid: `uid-${n}`, ...meta },
    spec: { nodeName: NODE, containers: [{ name: 'c', image: 'busybox', resources: { requests } }], ...spec },
    status,
  } as KubeObject;
}
const withPort = (port: number, extra: Obj = {}): Obj => ({ containers: [{ name: 'c', image: 'httpd', ports: [{ containerPort: port, hostPort: port, ...extra }] }] });
const rejection = (r: ReturnType<typeof admitPod>) => (r.admit ? undefined : { reason: r.reason, message: r.message });

describe('admitPod: the predicate handler', () => {
  it('admits a pod that fits next to the admitted pods', () => {
    expect(admitPod(node(), [pod({ cpu: '1' })], pod({ cpu: '1', memory: '1Gi' }))).toEqual({ admit: true });
  });

  it('OutOfcpu: requested, used and capacity in millicores, counted over every admitted pod', () => {
    const r = admitPod(node(), [pod({ cpu: '1' }), pod({ cpu: '500m' })], pod({ cpu: '600m' }));
    expect(rejection(r)).toEqual({ reason: 'OutOfcpu', message: "Node didn't have enough resource: cpu, requested: 600, used: 1500, capacity: 2000" });
  });

  it('OutOfmemory in bytes; OutOfephemeral-storage', () => {
    expect(rejection(admitPod(node(), [pod({ memory: '3Gi' })], pod({ memory: '2Gi' })))).toEqual({
      reason: 'OutOfmemory',
      message: `Node didn't have enough resource: memory, requested: ${2 * 1024 ** 3}, used: ${3 * 1024 ** 3}, capacity: ${4 * 1024 ** 3}`,
    });
    expect(rejection(admitPod(node(), [], pod({ 'ephemeral-storage': '11Gi' })))?.reason).toBe('OutOfephemeral-storage');
  });

  it('OutOfpods counts the admitted pods against allocatable pods, first among the resources', () => {
    const r = admitPod(node(), [pod(), pod(), pod()], pod({ cpu: '3' }));
    expect(rejection(r)).toEqual({ reason: 'OutOfpods', message: "Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3" });
  });

  it('extended resources: checked when the node has them, ignored when it does not (cluster-level resources)', () => {
    const gpuNode = node({ allocatable: { ...node().allocatable, 'example.com/gpu': '1' } });
    expect(rejection(admitPod(gpuNode, [pod({ 'example.com/gpu': '1' })], pod({ 'example.com/gpu': '1' })))).toEqual({
      reason: 'OutOfexample.com/gpu',
      message: "Node didn't have enough resource: example.com/gpu, requested: 1, used: 1, capacity: 1",
    });
    expect(admitPod(node(), [], pod({ 'example.com/other': '5' })).admit).toBe(true);
  });

  it("an init container's request counts when it is larger than the containers' (the pod's effective request)", () => {
    const init = { initContainers: [{ name: 'i', image: 'busybox', resources: { requests: { cpu: '2500m' } } }] };
    expect(rejection(admitPod(node(), [], pod({ cpu: '100m' }, init)))?.message).toBe("Node didn't have enough resource: cpu, requested: 2500, used: 0, capacity: 2000");
  });

  it('NodeAffinity: nodeSelector and required node affinity against the node labels', () => {
    const want = { reason: 'NodeAffinity', message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector" };
    expect(rejection(admitPod(node(), [], pod({}, { nodeSelector: { disk: 'ssd' } })))).toEqual(want);
    expect(admitPod(node({}, { disk: 'ssd' }), [], pod({}, { nodeSelector: { disk: 'ssd' } })).admit).toBe(true);
    const affinity = { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }] } } } };
    expect(rejection(admitPod(node({}, { zone: 'b' }), [], pod({}, affinity)))).toEqual(want);
  });

  it('NodeName: a pod naming another node', () => {
    expect(rejection(admitPod(node(), [], pod({}, { nodeName: 'node-b' })))).toEqual({ reason: 'NodeName', message: "Predicate NodeName failed: node(s) didn't match the requested node name" });
  });

  it('NodePorts: a host port an admitted pod holds (same protocol; 0.0.0.0 takes every address)', () => {
    const want = { reason: 'NodePorts', message: "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports" };
    const holder = pod({}, withPort(21017));
    expect(rejection(admitPod(node(), [holder], pod({}, withPort(21017))))).toEqual(want);
    expect(admitPod(node(), [holder], pod({}, withPort(21017, { protocol: 'UDP' }))).admit).toBe(true);
    expect(rejection(admitPod(node(), [holder], pod({}, withPort(21017, { hostIP: '127.0.0.1' }))))).toEqual(want);
    expect(admitPod(node(), [pod({}, withPort(21017, { hostIP: '127.0.0.2' }))], pod({}, withPort(21017, { hostIP: '127.0.0.1' }))).admit).toBe(true);
  });

  it('TaintToleration: only untolerated NoExecute taints, and not for static pods', () => {
    const tainted = node({}, {}, [{ key: 'dedicated', value: 'db', effect: 'NoExecute' }]);
    expect(rejection(admitPod(tainted, [], pod()))).toEqual({ reason: 'TaintToleration', message: "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate" });
    expect(admitPod(tainted, [], pod({}, { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoExecute' }] })).admit).toBe(true);
    expect(admitPod(tainted, [], pod(), { static: true }).admit).toBe(true);
    expect(admitPod(node({}, {}, [{ key: 'dedicated', effect: 'NoSchedule' }]), [], pod()).admit).toBe(true);
  });

  it("the OS: the pod's kubernetes.io/os label, then spec.os.name", () => {
    expect(rejection(admitPod(node(), [], pod({}, {}, { labels: { 'kubernetes.io/os': 'windows' } })))).toEqual({
      reason: 'PodOSSelectorNodeLabelDoesNotMatch',
      message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label",
    });
    expect(rejection(admitPod(node(), [], pod({}, { os: { name: 'windows' } })))).toEqual({ reason: 'PodOSNotSupported', message: "Failed to admit pod as the OS field doesn't match node OS" });
    expect(admitPod(node(), [], pod({}, { os: { name: 'linux' } })).admit).toBe(true);
  });

  it('reports the first failure only, in kubelet order: OS, resources, affinity, node name, ports, taints', () => {
    const tainted = node({}, {}, [{ key: 'k', effect: 'NoExecute' }]);
    const everything = pod({}, { containers: [{ name: 'c', image: 'httpd', resources: { requests: { cpu: '3' } }, ports: [{ containerPort: 80, hostPort: 80 }] }], nodeSelector: { x: 'y' }, nodeName: 'other' });
    expect(rejection(admitPod(tainted, [pod({}, withPort(80))], everything))?.reason).toBe('OutOfcpu');
    const noCpu = pod({}, { ...withPort(80), nodeSelector: { x: 'y' }, nodeName: 'other' });
    expect(rejection(admitPod(tainted, [pod({}, withPort(80))], noCpu))?.reason).toBe('NodeAffinity');
    expect(rejection(admitPod(tainted, [pod({}, withPort(80))], pod({}, { ...withPort(80), nodeName: 'other' })))?.reason).toBe('NodeName');
    expect(rejection(admitPod(tainted, [pod({}, withPort(80))], pod({}, withPort(80))))?.reason).toBe('NodePorts');
  });
});

describe('admitPod: node pressure (the eviction manager)', () => {
  it('DiskPressure or PIDPressure rejects every pod that is not critical', () => {
    expect(rejection(admitPod(node({ pressure: ['DiskPressure'] }), [], pod({ cpu: '1' })))).toEqual({ reason: 'Evicted', message: 'The node had condition: [DiskPressure]. ' });
    expect(rejection(admitPod(node({ pressure: ['MemoryPressure', 'PIDPressure'] }), [], pod({ cpu: '1' })))?.message).toBe('The node had condition: [MemoryPressure PIDPressure]. ');
    expect(admitPod(node({ pressure: ['DiskPressure'] }), [], pod({}, { priority: 2_000_000_000 })).admit).toBe(true);
    expect(admitPod(node({ pressure: ['DiskPressure'] }), [], pod(), { static: true }).admit).toBe(true);
  });

  it('MemoryPressure alone rejects only BestEffort pods that do not tolerate the memory-pressure taint', () => {
    const mem = node({ pressure: ['MemoryPressure'] });
    expect(rejection(admitPod(mem, [], pod()))?.reason).toBe('Evicted');
    expect(admitPod(mem, [], pod({ memory: '1Mi' })).admit).toBe(true);
    expect(admitPod(mem, [], pod({}, { tolerations: [{ key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' }] })).admit).toBe(true);
  });
});

describe('counting and status', () => {
  it('a Succeeded or Failed pod no longer holds the node, unless it is still being stopped', () => {
    expect(holdsNode(pod({}, {}, {}, { phase: 'Running' }))).toBe(true);
    expect(holdsNode(pod({}, {}, {}, { phase: 'Succeeded' }))).toBe(false);
    expect(holdsNode(pod({}, {}, {}, { phase: 'Failed' }))).toBe(false);
    expect(holdsNode(pod({}, {}, { deletionTimestamp: '2026-01-01T00:00:00Z' }, { phase: 'Failed' }))).toBe(true);
  });

  it("the rejected status: Failed, kubelet's reason and message, QoS and start time; the conditions kubelet owns dropped, other fields cleared", () => {
    const p = pod({}, {}, {}, {
      phase: 'Pending', qosClass: 'BestEffort', nominatedNodeName: 'x',
      conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'example.com/gate', status: 'False' }],
    });
    const s = rejectedStatus(p, { reason: 'NodePorts', message: 'Predicate NodePorts failed: x' }, '2026-01-01T00:00:00Z');
    expect(s).toEqual({
      phase: 'Failed', reason: 'NodePorts', message: 'Pod was rejected: Predicate NodePorts failed: x', qosClass: 'BestEffort',
      startTime: '2026-01-01T00:00:00Z', conditions: [{ type: 'example.com/gate', status: 'False' }], nominatedNodeName: null,
    });
    expect(wasRejected({ ...p, status: s })).toBe(true);
    expect(wasRejected(pod({}, {}, {}, { phase: 'Failed', message: 'other' }))).toBe(false);
    // no condition left to keep: none sent, and the old list is cleared
    expect(rejectedStatus(pod({}, {}, {}, { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True' }] }), { reason: 'r', message: 'm' }, 't').conditions).toBeNull();
  });
});

describe('PodAdmitter: one pod at a time, in creation order', () => {
  const clock: Clock = { now: () => Date.UTC(2026, 0, 1), setTimeout: () => 0, clearTimeout: () => {} };
  function harness(source: AdmissionSource) {
    const pods = new Map<string, KubeObject>();
    const events: string[] = [];
    const decided: string[] = [];
    let waiter: (() => void) | undefined;
    const a = new PodAdmitter({
      source,
      clock,
      log: () => {},
      events: { event: (_ref, type, reason, message) => events.push(`${type} ${reason} ${message}`) },
      pod: (uid) => pods.get(uid),
      isStatic: () => false,
      decided: (uid) => {
        decided.push(uid);
        waiter?.();
      },
      stopped: () => false,
    });
    const add = (...ps: KubeObject[]) => ps.forEach((p) => pods.set(p.metadata.uid!, p));
    /** admits the pods and waits until they are all decided */
    const admit = (ps: KubeObject[]) =>
      new Promise<void>((resolve) => {
        const want = decided.length + ps.length;
        waiter = () => decided.length >= want && resolve();
        a.admitInOrder(ps);
      });
    return { a, pods, events, decided, add, admit };
  }

  it('two pods after the same host port: the older one is admitted, the other rejected with an Event, whatever order they come in', async () => {
    const h = harness({ node: () => node() });
    const first = pod({}, withPort(21017), { creationTimestamp: '2026-01-01T00:00:01Z' });
    const second = pod({}, withPort(21017), { creationTimestamp: '2026-01-01T00:00:02Z' });
    h.add(first, second);
    await h.admit([second, first]);
    expect(h.decided).toEqual([first.metadata.uid, second.metadata.uid]);
    expect(h.a.decision(first.metadata.uid!)).toEqual({ admit: true });
    expect(h.a.decision(second.metadata.uid!)).toMatchObject({ admit: false, reason: 'NodePorts' });
    expect(h.events).toEqual(["Warning NodePorts Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"]);
  });

  it('counts admitted pods that still hold the node: not rejected ones, not finished ones', async () => {
    const h = harness({ node: () => node() });
    const holder = pod({ cpu: '1500m' });
    const rejected = pod({ cpu: '1' });
    h.add(holder, rejected);
    await h.admit([holder, rejected]);
    expect(h.a.decision(rejected.metadata.uid!)).toMatchObject({ admit: false, reason: 'OutOfcpu' });
    // the rejected pod's request is not counted: 1500m is used, so 500m still fits
    const small = pod({ cpu: '500m' });
    h.add(small);
    await h.admit([small]);
    expect(h.a.decision(small.metadata.uid!)).toEqual({ admit: true });
    // the holder finishes: its CPU is free again
    h.pods.set(holder.metadata.uid!, { ...holder, status: { phase: 'Succeeded' } });
    const big = pod({ cpu: '1500m' });
    h.add(big);
    await h.admit([big]);
    expect(h.a.decision(big.metadata.uid!)).toEqual({ admit: true });
  });

  it('a finished pod and a pod rejected before (a restart) are not admitted again; the latter keeps its rejection', async () => {
    const h = harness({ node: () => node({ pressure: ['DiskPressure'] }) });
    const done = pod({}, {}, {}, { phase: 'Succeeded' });
    const before = pod({}, {}, {}, { phase: 'Failed', reason: 'OutOfcpu', message: "Pod was rejected: Node didn't have enough resource: cpu" });
    h.add(done, before);
    await h.admit([done, before]);
    expect(h.a.decision(done.metadata.uid!)).toEqual({ admit: true });
    expect(h.a.decision(before.metadata.uid!)).toMatchObject({ admit: false, reason: 'OutOfcpu', message: "Node didn't have enough resource: cpu", written: true });
    expect(h.events).toEqual([]);
  });

  it('a refusal for the node labels is checked again against the Node read afresh', async () => {
    let reads = 0;
    const h = harness({
      node: () => node(),
      refresh: () => {
        reads += 1;
        return Promise.resolve(node({}, { disk: 'ssd' }));
      },
    });
    const p = pod({}, { nodeSelector: { disk: 'ssd' } });
    const q = pod({ cpu: '3' });
    h.add(p, q);
    await h.admit([p, q]);
    expect(h.a.decision(p.metadata.uid!)).toEqual({ admit: true });
    // a resource refusal does not depend on the Node object: no read
    expect(h.a.decision(q.metadata.uid!)).toMatchObject({ admit: false, reason: 'OutOfcpu' });
    expect(reads).toBe(1);
  });

  it('a rejected pod: runtime leftovers removed and its status written once; deleted, it goes from the API at once', async () => {
    const h = harness({ node: () => node({ pressure: ['DiskPressure'] }) });
    const p = pod({}, {}, {}, { phase: 'Pending', qosClass: 'BestEffort', conditions: [{ type: 'PodScheduled', status: 'True' }] });
    h.add(p);
    await h.admit([p]);
    const d = h.a.decision(p.metadata.uid!)!;
    const calls: string[] = [];
    const syncer = { kill: (uid: string) => (calls.push(`kill ${uid}`), Promise.resolve()), remove: (uid: string) => (calls.push(`remove ${uid}`), Promise.resolve()) } as unknown as PodSyncer;
    const written: Obj[] = [];
    let accepted = false;
    const io = { syncer, write: (st: Obj) => (written.push(st), Promise.resolve(accepted)), delete: () => (calls.push('delete'), Promise.resolve()) };
    await h.a.settleRejected(p, d, io); // the API did not take it (say, a static pod's mirror not made yet): again next time
    accepted = true;
    await h.a.settleRejected(p, d, io);
    await h.a.settleRejected(p, d, io);
    expect(calls).toEqual([`kill ${p.metadata.uid}`, `remove ${p.metadata.uid}`]);
    expect(written).toHaveLength(2);
    expect(written[1]).toEqual({ phase: 'Failed', reason: 'Evicted', message: 'Pod was rejected: The node had condition: [DiskPressure]. ', qosClass: 'BestEffort', startTime: '2026-01-01T00:00:00Z', conditions: null });
    await h.a.settleRejected({ ...p, metadata: { ...p.metadata, deletionTimestamp: '2026-01-01T00:00:05Z' } }, d, io);
    expect(calls.at(-1)).toBe('delete');
    expect(written).toHaveLength(2);
  });
});
