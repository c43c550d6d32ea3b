// A volume mount's subPath, as kubelet 1.32's makeMounts computes it
// (pkg/kubelet/kubelet_pods.go; docs/nodeagent.md "Volumes"): `subPathExpr`
// is `$(VAR)`-expanded with the container's final environment — a variable
// that is missing or empty is an error (ExpandContainerVolumeMounts) — and
// the result, like a plain `subPath`, must be relative and free of `..`. Any
// failure leaves the container waiting with CreateContainerConfigError (kube's
// e2e expansion.go "should fail substituting values in a volume subpath …").

import { expand } from './expansion.js';

export class SubPathError extends Error {}

export interface SubPathMount {
  subPath?: string;
  subPathExpr?: string;
}

/** the mount's sub-path under the volume ('' for none), or SubPathError with kubelet's message */
export function resolveSubPath(vm: SubPathMount, env: readonly { key: string; value: string }[]): string {
  let sub = vm.subPath ?? '';
  if (vm.subPathExpr) {
    const vars = new Map(env.map((e) => [e.key, e.value]));
    const missing = new Set<string>();
    sub = expand(vm.subPathExpr, (name) => {
      const v = vars.get(name);
      if (!v) missing.add(name);
      return v ?? '';
    });
    if (missing.size > 0) throw new SubPathError(`missing value for ${[...missing].sort().join(', ')}`);
  }
  if (!sub) return '';
  if (sub.startsWith('/')) throw new SubPathError(`error SubPath \`${sub}\` must not be an absolute path`);
  if (sub.split('/').includes('..')) throw new SubPathError(`unable to provision SubPath \`${sub}\`: must not contain '..'`);
  return sub;
}
