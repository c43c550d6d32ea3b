// The well-known taint keys of nodes (spec 002 "Node conditions":
// `node.orch.io/not-ready`, `node.orch.io/unreachable`): kube's
// `node.kubernetes.io/<name>` with the product's label domain in place of
// `kubernetes.io`. With `--api-domain k8s.io` the API groups are kube's
// (`rbac.authorization.k8s.io`) and so are the labels and taints
// (`node.kubernetes.io/not-ready`): kube names groups under k8s.io and
// labels under kubernetes.io. The lifecycle controller, the scheduler, the
// DaemonSet controller and the DefaultTolerationSeconds admission must agree
// on them, so they all take them from here.

/** the domain of well-known labels and taints for an API domain */
export function labelDomainOf(apiDomain: string): string {
  return apiDomain === 'k8s.io' ? 'kubernetes.io' : apiDomain;
}

/** the taint keys, `node.<label domain>/<name>` */
export interface NodeTaintKeys {
  unreachable: string;
  notReady: string;
  memoryPressure: string;
  diskPressure: string;
  pidPressure: string;
  networkUnavailable: string;
  unschedulable: string;
}

const byDomain = new Map<string, NodeTaintKeys>();

/** one frozen object per API domain (callers may cache by identity) */
export function nodeTaintKeys(apiDomain: string): NodeTaintKeys {
  let keys = byDomain.get(apiDomain);
  if (keys) return keys;
  const k = (n: string) => `node.${labelDomainOf(apiDomain)}/${n}`;
  keys = Object.freeze({
    unreachable: k('unreachable'),
    notReady: k('not-ready'),
    memoryPressure: k('memory-pressure'),
    diskPressure: k('disk-pressure'),
    pidPressure: k('pid-pressure'),
    networkUnavailable: k('network-unavailable'),
    unschedulable: k('unschedulable'),
  });
  byDomain.set(apiDomain, keys);
  return keys;
}

/** kube's own keys (`node.kubernetes.io/…`): the pure planners' default when no domain is given */
export const KUBE_NODE_TAINT_KEYS: NodeTaintKeys = nodeTaintKeys('k8s.io');
