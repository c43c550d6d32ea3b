// The scheduler's pure decisions (src/controllers/scheduler/fit.ts): node fit
// by readiness, cordon, taints, node selector and affinity, host ports, resources; the
// least-requested pick; kube's FailedScheduling message.

import { nodeTaintKeys } from '../../src/machinery/node-taints.js';
import { daemonTolerations } from '../../src/controllers/sets/daemonset-plan.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type NodeState, leastAllocatedScore, nodeState, place, podRequests, unfitReasons } from '../../src/controllers/scheduler/fit.js';
import { NodeTotals } from '../../src/controllers/scheduler/node-totals.js';
import { parseQuantity, resourceAmount } from '../../src/core/quantity.js';
import type { ApiObject } from '../../src/registry/types.js';

function node(name: string, o: { cpu?: string; memory?: string; pods?: string; ready?: boolean; unschedulable?: boolean; taints?: unknown[]; labels?: Record<string, string> } = {}): ApiObject {
  return {
    apiVersion: 'v1', kind: 'Node',
    metadata: { name, labels: o.labels ?? {} },
    spec: { ...(o.unschedulable ? { unschedulable: true } : {}), ...(o.taints ? { taints: o.taints } : {}) },
    status: {
      allocatable: { cpu: o.cpu ?? '2', memory: o.memory ?? '4Gi', pods: o.pods ?? '110' },
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
    },
  } as unknown as ApiObject;
}

function pod(spec: Record<string, unknown> = {}, cpu?: string, memory?: string): ApiObject {
  const requests = { ...(cpu ? { cpu } : {}), ...(memory ? { memory } : {}) };
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'x', resources: { requests } }], ...spec } } as unknown as ApiObject;
}

const bound = (nodeName: string, cpu: string, memory = '0'): ApiObject => {
  const p = pod({ nodeName }, cpu, memory);
  return { ...p, status: { phase: 'Running' } } as ApiObject;
};

const state = (n: ApiObject, pods: ApiObject[] = []): NodeState => nodeState(n, pods);

describe('quantities', () => {
  it('parses kube quantities in base units and CPU in millicores', () => {
    expect(parseQuantity('128Mi')).toBe(128 * 1024 * 1024);
    expect(parseQuantity('1G')).toBe(1e9);
    expect(parseQuantity('1e3')).toBe(1000);
    expect(parseQuantity('bogus')).toBeUndefined();
    expect(resourceAmount('cpu', '100m')).toBe(100);
    expect(resourceAmount('cpu', '0.5')).toBe(500);
    expect(resourceAmount('cpu', 2)).toBe(2000);
    expect(resourceAmount('cpu', '1u')).toBe(1);
  });
});

describe('pod requests', () => {
  it('sums containers, takes the largest init container, adds overhead', () => {
    const p = pod({
      initContainers: [{ name: 'i', resources: { requests: { cpu: '3', memory: '1Gi' } } }],
      containers: [{ name: 'a', resources: { requests: { cpu: '1', memory: '1Gi' } } }, { name: 'b', resources: { requests: { cpu: '500m', memory: '1Gi' } } }],
      overhead: { cpu: '100m' },
    });
    expect(podRequests(p)).toEqual({ cpu: 3100, memory: 2 * 1024 ** 3 });
    // scoring counts a container without requests as 100m / 200Mi
    expect(podRequests(pod(), true)).toEqual({ cpu: 100, memory: 200 * 1024 * 1024 });
  });

  it('with sidecars: the larger of the sidecars plus the containers and each init container plus the sidecars started before it', () => {
    const r = (cpu: string, memory: string) => ({ resources: { requests: { cpu, memory } } });
    const p = pod({
      initContainers: [
        { name: 's1', restartPolicy: 'Always', ...r('1', '1Gi') },
        { name: 'i1', ...r('2', '1Gi') },
        { name: 's2', restartPolicy: 'Always', ...r('500m', '1Gi') },
        { name: 'i2', ...r('1', '4Gi') },
      ],
      containers: [{ name: 'a', ...r('1', '1Gi') }],
    });
    // cpu: max(1 + 0.5 + 1 = 2.5, 1 + 2 = 3, 1.5 + 1 = 2.5) = 3; memory: max(3Gi, 2Gi, 2Gi + 4Gi = 6Gi) = 6Gi
    expect(podRequests(p)).toEqual({ cpu: 3000, memory: 6 * 1024 ** 3 });
    // scoring: a sidecar without requests counts kube's 100m / 200Mi like any container
    const q = pod({ initContainers: [{ name: 's', restartPolicy: 'Always' }], containers: [{ name: 'a', ...r('1', '1Gi') }] });
    expect(podRequests(q, true)).toEqual({ cpu: 1100, memory: 1024 ** 3 + 200 * 1024 * 1024 });
  });
});

describe('node fit', () => {
  it('refuses a cordoned node unless the pod tolerates node.kubernetes.io/unschedulable', () => {
    const n = state(node('a', { unschedulable: true }));
    expect(unfitReasons(pod(), n)).toEqual(['node(s) were unschedulable']);
    expect(unfitReasons(pod({ tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }] }), n)).toEqual([]);
  });

  it('refuses untolerated NoSchedule and NoExecute taints, ignores PreferNoSchedule', () => {
    const n = state(node('a', { taints: [{ key: 'gpu', value: 'yes', effect: 'NoSchedule' }, { key: 'soft', effect: 'PreferNoSchedule' }] }));
    expect(unfitReasons(pod(), n)).toEqual(['node(s) had untolerated taint {gpu: yes}']);
    expect(unfitReasons(pod({ tolerations: [{ key: 'gpu', operator: 'Equal', value: 'yes' }] }), n)).toEqual([]);
    expect(unfitReasons(pod({ tolerations: [{ key: 'gpu', operator: 'Equal', value: 'no' }] }), n)).toHaveLength(1);
    expect(unfitReasons(pod({ tolerations: [{ operator: 'Exists' }] }), n)).toEqual([]);
    const ne = state(node('b', { taints: [{ key: 'k', effect: 'NoExecute' }] }));
    expect(unfitReasons(pod({ tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoSchedule' }] }), ne)).toEqual(['node(s) had untolerated taint {k: }']);
  });

  it('treats a node that is not Ready as tainted not-ready', () => {
    const n = state(node('a', { ready: false }));
    expect(unfitReasons(pod(), n)).toEqual(['node(s) had untolerated taint {node.kubernetes.io/not-ready: }']);
    expect(unfitReasons(pod({ tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists' }] }), n)).toEqual([]);
  });

  it('uses the server\'s taint keys: node.orch.io/… with the default API domain, node.kubernetes.io/… with k8s.io', () => {
    const orch = nodeTaintKeys('orch.io');
    expect(orch.notReady).toBe('node.orch.io/not-ready');
    expect(nodeTaintKeys('k8s.io').notReady).toBe('node.kubernetes.io/not-ready');
    const cordoned = { ...state(node('a', { unschedulable: true })), taintKeys: orch };
    expect(unfitReasons(pod({ tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }] }), cordoned)).toEqual(['node(s) were unschedulable']);
    expect(unfitReasons(pod({ tolerations: [{ key: orch.unschedulable, operator: 'Exists', effect: 'NoSchedule' }] }), cordoned)).toEqual([]);
    const notReady = { ...state(node('b', { ready: false })), taintKeys: orch };
    expect(unfitReasons(pod(), notReady)).toEqual(['node(s) had untolerated taint {node.orch.io/not-ready: }']);
    // a daemon pod tolerates what the lifecycle controller taints with
    const tolerated = daemonTolerations({}, orch).map((t) => `${String(t.key)}:${String(t.effect)}`);
    expect(tolerated).toEqual(expect.arrayContaining(['node.orch.io/not-ready:NoExecute', 'node.orch.io/unreachable:NoExecute', 'node.orch.io/unschedulable:NoSchedule']));
    expect(tolerated.some((t) => t.startsWith('node.kubernetes.io/'))).toBe(false);
  });

  it('matches nodeSelector and required node affinity (In, NotIn, Exists, DoesNotExist; terms ORed)', () => {
    const n = state(node('a', { labels: { zone: 'z1', disk: 'ssd' } }));
    const affinity = (terms: unknown[]): Record<string, unknown> => ({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } } });
    const miss = ["node(s) didn't match Pod's node affinity/selector"];
    expect(unfitReasons(pod({ nodeSelector: { zone: 'z1' } }), n)).toEqual([]);
    expect(unfitReasons(pod({ nodeSelector: { zone: 'z2' } }), n)).toEqual(miss);
    expect(unfitReasons(pod(affinity([{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['z1', 'z3'] }] }])), n)).toEqual([]);
    expect(unfitReasons(pod(affinity([{ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['z1'] }] }])), n)).toEqual(miss);
    expect(unfitReasons(pod(affinity([{ matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }])), n)).toEqual(miss);
    expect(unfitReasons(pod(affinity([{ matchExpressions: [{ key: 'gpu', operator: 'DoesNotExist' }, { key: 'disk', operator: 'Exists' }] }])), n)).toEqual([]);
    expect(unfitReasons(pod(affinity([{ matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }, { matchExpressions: [{ key: 'zone', operator: 'In', values: ['z1'] }] }])), n)).toEqual([]);
    expect(unfitReasons(pod(affinity([{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['b'] }] }])), n)).toEqual(miss);
  });

  it('counts the requests of the non-terminal pods bound to the node', () => {
    const n = node('a', { cpu: '2', memory: '1Gi', pods: '3' });
    expect(unfitReasons(pod({}, '1500m'), state(n, [bound('a', '1')]))).toEqual(['Insufficient cpu']);
    expect(unfitReasons(pod({}, '1'), state(n, [bound('a', '1')]))).toEqual([]);
    const finished = { ...bound('a', '1'), status: { phase: 'Succeeded' } } as ApiObject;
    expect(unfitReasons(pod({}, '1500m'), state(n, [finished]))).toEqual([]);
    expect(unfitReasons(pod({}, '1', '2Gi'), state(n, [bound('a', '1')]))).toEqual(['Insufficient memory']);
    expect(unfitReasons(pod(), state(n, [bound('a', '0'), bound('a', '0'), bound('a', '0')]))).toEqual(['Too many pods']);
  });
});

describe('node ports', () => {
  const withPorts = (ports: Record<string, unknown>[], nodeName?: string): ApiObject => {
    const p = pod(nodeName ? { nodeName } : {});
    (p.spec as { containers: Record<string, unknown>[] }).containers[0]!.ports = ports;
    return { ...p, status: { phase: 'Running' } } as ApiObject;
  };
  const FULL = ["node(s) didn't have free ports for the requested pod ports"];

  it("refuses a node where a bound pod holds the host port (kube's NodePorts), before the resources filter", () => {
    const n = node('a', { cpu: '1' });
    const holder = withPorts([{ containerPort: 5555, hostPort: 5555 }], 'a');
    expect(unfitReasons(withPorts([{ containerPort: 5555, hostPort: 5555 }]), state(n, [holder]))).toEqual(FULL);
    expect(unfitReasons(withPorts([{ containerPort: 5555, hostPort: 5556 }]), state(n, [holder]))).toEqual([]);
    // a container port without a host port takes nothing on the node
    expect(unfitReasons(withPorts([{ containerPort: 5555 }]), state(n, [holder]))).toEqual([]);
    // another protocol on the same port is free
    expect(unfitReasons(withPorts([{ containerPort: 5555, hostPort: 5555, protocol: 'UDP' }]), state(n, [holder]))).toEqual([]);
    // a finished pod holds nothing
    expect(unfitReasons(withPorts([{ containerPort: 5555, hostPort: 5555 }]), state(n, [{ ...holder, status: { phase: 'Succeeded' } } as ApiObject]))).toEqual([]);
    // ports come before resources: one reason per node
    const big = withPorts([{ containerPort: 5555, hostPort: 5555 }]);
    (big.spec as { containers: { resources: unknown }[] }).containers[0]!.resources = { requests: { cpu: '2' } };
    expect(unfitReasons(big, state(n, [holder]))).toEqual(FULL);
  });

  it('0.0.0.0 conflicts with the port on any address, an address only with itself and 0.0.0.0', () => {
    const n = node('a');
    const on = (hostIP: string) => withPorts([{ containerPort: 80, hostPort: 80, hostIP }], 'a');
    const want = (hostIP: string) => withPorts([{ containerPort: 80, hostPort: 80, hostIP }]);
    expect(unfitReasons(want('10.0.0.1'), state(n, [on('10.0.0.2')]))).toEqual([]);
    expect(unfitReasons(want('10.0.0.1'), state(n, [on('10.0.0.1')]))).toEqual(FULL);
    expect(unfitReasons(want('10.0.0.1'), state(n, [on('')]))).toEqual(FULL);
    expect(unfitReasons(want(''), state(n, [on('10.0.0.2')]))).toEqual(FULL);
    expect(place(want(''), [state(n, [on('')]), state(node('b'))], () => 0)).toEqual({ node: 'b' });
    expect(place(want(''), [state(n, [on('')])], () => 0)).toMatchObject({ unschedulable: "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports." });
  });
});

describe('scalar resources', () => {
  const withReq = (requests: Record<string, string>, nodeName?: string): ApiObject =>
    ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' }, spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'c', resources: { requests } }] }, status: nodeName ? { phase: 'Running' } : {} }) as unknown as ApiObject;
  const gpuNode = (): ApiObject => {
    const n = node('g');
    (n.status as { allocatable: Record<string, string> }).allocatable['example.com/gpu'] = '2';
    (n.status as { allocatable: Record<string, string> }).allocatable['ephemeral-storage'] = '10Gi';
    return n;
  };

  it('counts extended resources and ephemeral-storage; a node that does not list one has none', () => {
    const n = gpuNode();
    expect(unfitReasons(withReq({ 'example.com/gpu': '2' }), state(n))).toEqual([]);
    expect(unfitReasons(withReq({ 'example.com/gpu': '1' }), state(n, [withReq({ 'example.com/gpu': '2' }, 'g')]))).toEqual(['Insufficient example.com/gpu']);
    expect(unfitReasons(withReq({ 'example.com/gpu': '1' }), state(node('plain')))).toEqual(['Insufficient example.com/gpu']);
    // ephemeral-storage first, then the others by name
    expect(unfitReasons(withReq({ 'example.com/gpu': '3', 'ephemeral-storage': '11Gi', 'example.com/a': '1' }), state(n))).toEqual(['Insufficient ephemeral-storage', 'Insufficient example.com/a', 'Insufficient example.com/gpu']);
    // a request of 0 asks for nothing
    expect(unfitReasons(withReq({ 'example.com/other': '0' }), state(n))).toEqual([]);
  });

  it('kept by the node totals as by a sum from scratch', () => {
    const totals = new NodeTotals();
    const a = withReq({ 'example.com/gpu': '1', cpu: '1' }, 'g');
    const b = withReq({ 'example.com/gpu': '1' }, 'g');
    totals.change(undefined, a);
    totals.change(undefined, b);
    expect(totals.state(gpuNode())).toEqual(nodeState(gpuNode(), [a, b]));
    totals.change(a, undefined);
    totals.change(b, undefined);
    expect(totals.state(gpuNode()).requested).toEqual({ cpu: 0, memory: 0 });
  });
});

describe('placement', () => {
  it('picks the least requested fitting node', () => {
    const a = state(node('a'), [bound('a', '1500m')]);
    const b = state(node('b'), [bound('b', '500m')]);
    expect(place(pod({}, '100m'), [a, b], () => 0)).toEqual({ node: 'b' });
  });

  it("writes kube's FailedScheduling message, reasons counted and sorted", () => {
    const nodes = [
      state(node('a', { unschedulable: true })),
      state(node('b', { cpu: '1' }), [bound('b', '1')]),
      state(node('c', { cpu: '1' }), [bound('c', '1')]),
      state(node('d', { taints: [{ key: 'x', value: 'y', effect: 'NoSchedule' }] })),
    ];
    const out = place(pod({}, '500m'), nodes, () => 0);
    expect(out).toMatchObject({ unschedulable: '0/4 nodes are available: 1 node(s) had untolerated taint {x: y}, 1 node(s) were unschedulable, 2 Insufficient cpu.' });
    // what preemption starts from: resources can be freed, a cordon or a taint cannot
    expect('statuses' in out && Object.fromEntries([...out.statuses].map(([n, s]) => [n, s.resolvable]))).toEqual({ a: false, b: true, c: true, d: false });
    expect(place(pod(), [], () => 0)).toMatchObject({ unschedulable: 'no nodes available to schedule pods' });
  });

  it('the chosen node always fits and has the highest score', () => {
    const nodeArb = fc.record({ cpu: fc.integer({ min: 1, max: 8 }), used: fc.integer({ min: 0, max: 8000 }), cordoned: fc.boolean(), ready: fc.boolean() });
    fc.assert(
      fc.property(fc.array(nodeArb, { minLength: 1, maxLength: 6 }), fc.integer({ min: 0, max: 4000 }), fc.double({ min: 0, max: 0.999, noNaN: true }), (specs, want, r) => {
        const states = specs.map((s, i) => state(node(`n${i}`, { cpu: String(s.cpu), unschedulable: s.cordoned, ready: s.ready }), [bound(`n${i}`, `${s.used}m`)]));
        const p = pod({}, `${want}m`);
        const out = place(p, states, () => r);
        const fitting = states.filter((s) => unfitReasons(p, s).length === 0);
        if (fitting.length === 0) {
          expect('unschedulable' in out).toBe(true);
          return;
        }
        expect('node' in out).toBe(true);
        const chosen = states.find((s) => s.node.metadata?.name === (out as { node: string }).node)!;
        expect(unfitReasons(p, chosen)).toEqual([]);
        expect(leastAllocatedScore(p, chosen)).toBe(Math.max(...fitting.map((s) => leastAllocatedScore(p, s))));
      }),
    );
  });
});

describe('node totals', () => {
  it('kept from adds, updates and deletes, equal the sums over the pods bound now', () => {
    const change = fc.record({ key: fc.nat(5), gone: fc.boolean(), node: fc.constantFrom('', 'a', 'b'), phase: fc.constantFrom('Pending', 'Running', 'Succeeded'), cpu: fc.nat(3000), hostPort: fc.constantFrom(0, 80, 81) });
    fc.assert(
      fc.property(fc.array(change, { maxLength: 40 }), (changes) => {
        const totals = new NodeTotals();
        const pods = new Map<number, ApiObject>();
        for (const c of changes) {
          const old = pods.get(c.key);
          if (c.gone) {
            if (old) totals.change(old, undefined);
            pods.delete(c.key);
            continue;
          }
          const next = { ...pod(c.node ? { nodeName: c.node } : {}, `${c.cpu}m`), status: { phase: c.phase } } as ApiObject;
          if (c.hostPort) (next.spec as { containers: Record<string, unknown>[] }).containers[0]!.ports = [{ containerPort: 8080, hostPort: c.hostPort }];
          totals.change(old, next);
          pods.set(c.key, next);
        }
        for (const name of ['a', 'b']) {
          const n = node(name);
          const bound = [...pods.values()].filter((p) => (p.spec as { nodeName?: string }).nodeName === name);
          expect(totals.state(n)).toEqual(nodeState(n, bound));
        }
      }),
    );
  });
});
