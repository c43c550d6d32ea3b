// `--controllers` as kube-controller-manager reads it: `*` turns on every
// controller that is on by default, `name` turns one on, `-name` turns one
// off; unset means `*`. In-process controllers of this server consult it.

export function controllerEnabled(list: readonly string[] | undefined, name: string, onByDefault: boolean): boolean {
  if (list === undefined || list.length === 0) return onByDefault;
  if (list.includes(`-${name}`)) return false;
  if (list.includes(name)) return true;
  return list.includes('*') && onByDefault;
}

/** the namespace defaults (issue #11 item 6), by kube's controller names */
export const SERVICE_ACCOUNT_CONTROLLER = 'serviceaccount';
export const ROOT_CA_PUBLISHER = 'root-ca-cert-publisher';
