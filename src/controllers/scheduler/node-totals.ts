// What the pods bound to each node request, kept up to date from the pods
// informer's add/update/delete (kube's scheduler cache NodeInfo, reduced):
// a scheduling decision then costs O(nodes) instead of adding up every bound
// pod again (150,000 pods on 5,000 nodes would be ~150,000 request sums per
// decision).

import type { NodeTaintKeys } from '../../machinery/node-taints.js';
import type { ApiObject } from '../../registry/types.js';
import { type HostPort, type NodeState, type Resources, addResources, cloneState, holdsResources, hostPortKey, hostPorts, podRequests } from './fit.js';

interface Totals {
  requested: Resources;
  nonZeroRequested: Resources;
  pods: number;
  /** the host ports held, by hostPortKey, with how many container ports hold each */
  ports: Map<string, { port: HostPort; count: number }>;
}

const nodeOf = (pod: ApiObject): string => String((pod.spec as { nodeName?: unknown } | undefined)?.nodeName ?? '');

export class NodeTotals {
  private readonly byNode = new Map<string, Totals>();

  /** `taintKeys`: the server's node taint keys, handed to the filters with each node */
  constructor(private readonly taintKeys?: NodeTaintKeys) {}

  /** a pod's change as the informer hands it over (old undefined = add, pod undefined = delete) */
  change(old: ApiObject | undefined, pod: ApiObject | undefined): void {
    if (old && holdsResources(old)) this.apply(old, -1);
    if (pod && holdsResources(pod)) this.apply(pod, 1);
  }

  clear(): void {
    this.byNode.clear();
  }

  state(node: ApiObject): NodeState {
    const t = this.byNode.get(node.metadata?.name ?? '');
    return cloneState({
      node,
      requested: t?.requested ?? { cpu: 0, memory: 0 },
      nonZeroRequested: t?.nonZeroRequested ?? { cpu: 0, memory: 0 },
      pods: t?.pods ?? 0,
      usedPorts: [...(t?.ports ?? new Map<string, { port: HostPort; count: number }>())]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .flatMap(([, { port, count }]) => Array.from({ length: count }, () => ({ ...port }))),
      ...(this.taintKeys ? { taintKeys: this.taintKeys } : {}),
    });
  }

  private apply(pod: ApiObject, sign: 1 | -1): void {
    const name = nodeOf(pod);
    let t = this.byNode.get(name);
    if (!t) this.byNode.set(name, (t = { requested: { cpu: 0, memory: 0 }, nonZeroRequested: { cpu: 0, memory: 0 }, pods: 0, ports: new Map() }));
    addResources(t.requested, podRequests(pod), sign);
    addResources(t.nonZeroRequested, podRequests(pod, true), sign);
    t.pods += sign;
    for (const port of hostPorts(pod)) {
      const key = hostPortKey(port);
      const count = (t.ports.get(key)?.count ?? 0) + sign;
      if (count > 0) t.ports.set(key, { port, count });
      else t.ports.delete(key);
    }
    if (t.pods === 0) this.byNode.delete(name);
  }
}
