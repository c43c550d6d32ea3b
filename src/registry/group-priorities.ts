// The order of API groups in discovery (kube-aggregator's APIService
// priorities): kube-apiserver lists `/apis` and aggregated discovery by
// groupPriorityMinimum, highest first, then by name (SortedByGroupAndVersion).
// kubectl keeps that order (`kubectl api-resources`, and which group wins a
// resource or short name two groups share); the local APIServices carry the
// same numbers (src/controllers/local-apiservices.ts).

export interface APIServicePriority {
  group: number;
  version: number;
}

/** kube-apiserver 1.32's group priorities (controlplane DefaultGenericAPIServicePriorities), keyed by the group's first words */
const BUILT_IN: Record<string, APIServicePriority> = Object.fromEntries(
  ([
    ['', 18000, 1], ['apps', 17800, 15], ['events', 17750, 15], ['authentication', 17700, 15], ['authorization', 17600, 15],
    ['autoscaling', 17500, 15], ['batch', 17400, 15], ['certificates', 17300, 15], ['networking', 17200, 15], ['policy', 17100, 15],
    ['rbac.authorization', 17000, 15], ['storage', 16800, 15], ['apiextensions', 16700, 15], ['admissionregistration', 16700, 15],
    ['scheduling', 16600, 15], ['coordination', 16500, 15], ['node', 16300, 15], ['discovery', 16200, 15],
    ['flowcontrol.apiserver', 16100, 21], ['apiregistration', 18000, 15],
    // metrics-server's APIService (docs/metrics.md)
    ['metrics', 100, 100],
  ] as const).map(([g, group, version]) => [g, { group, version }]),
);
/** kube's version priorities where a group serves more than one version */
const VERSION_PRIORITY: Record<string, number> = { 'autoscaling/v2': 30, 'autoscaling/v1': 15 };

/** a custom resource's group (kube's crdregistration controller) */
export const CUSTOM_PRIORITY: APIServicePriority = { group: 1000, version: 100 };

/** the group's key in the table: the API domain's groups without `.<domain>`, the unsuffixed ones as they are */
function tableKey(group: string, apiDomain: string): string {
  const suffix = `.${apiDomain}`;
  return group.endsWith(suffix) ? group.slice(0, -suffix.length) : group;
}

/** kube's priority of a built-in group/version; undefined for a group kube does not serve itself */
export function builtInPriority(group: string, version: string, apiDomain: string): APIServicePriority | undefined {
  const key = tableKey(group, apiDomain);
  const p = BUILT_IN[key];
  if (!p) return undefined;
  return { group: p.group, version: VERSION_PRIORITY[`${key}/${version}`] ?? p.version };
}

/** the group's discovery priority: kube's for its own groups, a custom resource group's otherwise */
export function groupPriority(group: string, apiDomain: string): number {
  return BUILT_IN[tableKey(group, apiDomain)]?.group ?? CUSTOM_PRIORITY.group;
}

/** orders group names as kube's discovery does: priority (from `priorityOf`), highest first, then name */
export function byGroupPriority(priorityOf: (group: string) => number): (a: string, b: string) => number {
  return (a, b) => priorityOf(b) - priorityOf(a) || (a < b ? -1 : a > b ? 1 : 0);
}
