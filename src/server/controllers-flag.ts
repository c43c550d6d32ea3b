// `--controllers` as kube-controller-manager reads it: `*` turns on every
// controller that is on by default, `name` turns one on, `-name` turns one
// off; unset means `*`. In-process controllers of this server consult it.

export function controllerEnabled(list: readonly string[] | undefined, name: string, onByDefault: boolean): boolean {
  if (list === undefined || list.length === 0) return onByDefault;
  if (list.includes(`-${name}`)) return false;
  if (list.includes(name)) return true;
  return list.includes('*') && onByDefault;
}

/**
 * every controller `*` turns on, by kube-controller-manager's names (`orch server --help` and the README list them;
 * test/unit/controllers-flag.test.ts checks this against the names the controllers are started under)
 */
export const DEFAULT_CONTROLLERS = [
  'serviceaccount', 'root-ca-cert-publisher', 'nodelifecycle', 'taint-eviction-controller', 'disruption', 'scheduler',
  'deployment', 'replicaset', 'replicationcontroller', 'daemonset', 'statefulset', 'job', 'cronjob', 'ttl-after-finished',
  'horizontalpodautoscaling', 'persistentvolume-binder', 'pvc-protection', 'pv-protection', 'endpoint', 'endpointslice', 'endpointslicemirroring',
  'resourcequota', 'csrsigning', 'csrapproving', 'csrcleaner', 'serviceaccount-token',
] as const;

/** controllers only a name in `--controllers` turns on */
export const OFF_BY_DEFAULT_CONTROLLERS = ['tokencleaner', 'bootstrapsigner'] as const;

/** the entries of `--controllers` that name no controller (`*`, `name`, `-name`): a typo would silently turn controllers off */
export function unknownControllers(list: readonly string[]): string[] {
  const known = new Set<string>([...DEFAULT_CONTROLLERS, ...OFF_BY_DEFAULT_CONTROLLERS]);
  return list.filter((e) => e !== '*' && !known.has(e.startsWith('-') ? e.slice(1) : e));
}

/** the namespace defaults (issue #11 item 6), by kube's controller names */
export const SERVICE_ACCOUNT_CONTROLLER = 'serviceaccount';
export const ROOT_CA_PUBLISHER = 'root-ca-cert-publisher';
