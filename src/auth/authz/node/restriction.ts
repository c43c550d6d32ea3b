// The NodeRestriction admission plugin (spec 001_bdb487117be0ea8a.txt §5.15):
// a node agent (`system:node:<name>` in `system:nodes`) may modify only its
// own Node and Lease and the pods bound to it, create only mirror pods bound
// to itself, and may not set the protected node labels nor change its taints.
// Other requesters are ignored. Runs as a write hook of the generic store, so
// it sees the final object and the stored one (like kube's validating step).

import { forbidden } from '../../../core/errors.js';
import { labelDomainOf } from '../../../machinery/node-taints.js';
import type { WriteHooks, WriteOptions } from '../../../registry/generic-store.js';
import type { ApiObject, ResourceDefinition } from '../../../registry/types.js';
import { nodeNameOf } from './authorizer.js';
import { podReferences } from './graph.js';
import { systemNamespacesOf } from '../../../core/product-names.js';

export const NODE_RESTRICTION = 'NodeRestriction';

export function nodeRestrictionHooks(apiDomain: string): Required<Pick<WriteHooks, 'beforeWrite' | 'beforeDelete'>> {
  const mirrorAnnotations = [`${apiDomain}/config.mirror`, 'kubernetes.io/config.mirror'];
  const nodeLeaseNamespace = systemNamespacesOf(apiDomain).nodeLease;
  const deny = (def: ResourceDefinition, name: string, msg: string): never => {
    const res = def.group ? `${def.resource}.${def.group}` : def.resource;
    throw forbidden(`${res} "${name}" is forbidden: ${msg}`, { name, group: def.group || undefined, kind: def.resource });
  };
  const check = (def: ResourceDefinition, obj: ApiObject, old: ApiObject | undefined, opts: WriteOptions | undefined, op: 'write' | 'delete'): void => {
    const node = opts?.requester ? nodeNameOf(opts.requester) : undefined;
    if (node === undefined) return;
    const name = obj.metadata?.name ?? '';
    const spec = (o: ApiObject | undefined): Record<string, unknown> => ((o as { spec?: Record<string, unknown> } | undefined)?.spec ?? {});
    if (def.group === '' && def.resource === 'pods') {
      const bound = spec(old ?? obj).nodeName;
      if (op === 'delete') {
        if (bound !== node) deny(def, name, `node "${node}" can only delete pods with spec.nodeName set to itself`);
        return;
      }
      // kube's NodeRestriction: a node writes no other pod sub-resource (pods/ephemeralcontainers among them)
      const sub = opts?.subresource ?? '';
      if (sub !== '' && sub !== 'status' && sub !== 'eviction') deny(def, name, `unexpected pod subresource "${sub}", only 'status' and 'eviction' are allowed`);
      if (opts?.subresource === 'status') {
        if (bound !== node) deny(def, name, `node "${node}" can only update pod status for pods with spec.nodeName set to itself`);
        return;
      }
      if (old) deny(def, name, `node "${node}" can only create and delete mirror pods`);
      const ann = obj.metadata?.annotations ?? {};
      if (!mirrorAnnotations.some((a) => a in ann)) {
        deny(def, name, `pod does not have "${mirrorAnnotations[0]}" annotation, node "${node}" can only create mirror pods`);
      }
      if (spec(obj).nodeName !== node) deny(def, name, `node "${node}" can only create pods with spec.nodeName set to itself`);
      if (podReferences(obj).length > 0) deny(def, name, `node "${node}" can not create pods that reference secrets, configmaps, persistent volume claims or service accounts`);
      return;
    }
    if (def.group === '' && def.resource === 'nodes') {
      if (name !== node) deny(def, name, `node "${node}" is not allowed to modify node "${name}"`);
      if (op === 'delete') return;
      const bad = forbiddenLabelChanges(obj.metadata?.labels ?? {}, old?.metadata?.labels ?? {}, apiDomain);
      if (bad.length > 0) deny(def, name, `node "${node}" is not allowed to modify labels: ${bad.join(', ')}`);
      if (old && JSON.stringify(spec(obj).taints ?? []) !== JSON.stringify(spec(old).taints ?? [])) {
        deny(def, name, `node "${node}" is not allowed to modify taints`);
      }
      return;
    }
    if (def.group === `coordination.${apiDomain}` && def.resource === 'leases') {
      if (obj.metadata?.namespace !== nodeLeaseNamespace) return;
      if (name !== node) deny(def, name, `can only access node lease with the same name as the requesting node`);
    }
  };
  return {
    beforeWrite: (def, obj, old, opts) => check(def, obj, old, opts, 'write'),
    beforeDelete: (def, obj, opts) => check(def, obj, undefined, opts, 'delete'),
  };
}

/**
 * Labels a node may not add, change or remove (kube's NodeRestriction): the
 * `node-restriction.<domain>/` prefix, and labels in the `<domain>` or
 * `k8s.io` namespaces except the ones an agent sets about itself.
 */
export function forbiddenLabelChanges(next: Record<string, string>, prev: Record<string, string>, domain: string): string[] {
  const restricted = labelRule(domain);
  const out: string[] = [];
  // every Node write of an agent (each status heartbeat) comes here: compare without building sets
  for (const k in next) if (next[k] !== prev[k] && restricted(k)) out.push(k);
  for (const k in prev) if (!(k in next) && restricted(k)) out.push(k);
  return out.sort();
}

/** whether a node may not change the label `key`; built once per API domain */
function labelRule(domain: string): (key: string) => boolean {
  let rule = labelRules.get(domain);
  if (rule) return rule;
  // kube's allowed list, in the product's label domain and in kubernetes.io (well-known labels agents set)
  const labelDomains = [...new Set([labelDomainOf(domain), 'kubernetes.io'])];
  const allowedKeys = new Set(
    labelDomains.flatMap((d) => [
      ...['hostname', 'arch', 'os'].map((k) => `${d}/${k}`),
      ...['arch', 'os', 'instance-type'].map((k) => `beta.${d}/${k}`),
      `node.${d}/instance-type`,
      `topology.${d}/region`,
      `topology.${d}/zone`,
      `failure-domain.beta.${d}/region`,
      `failure-domain.beta.${d}/zone`,
    ]),
  );
  const allowedPrefixes = labelDomains.flatMap((d) => [`kubelet.${d}/`, `node.${d}/`]);
  const namespaces = [domain, 'k8s.io', 'kubernetes.io'];
  rule = (key: string): boolean => {
    const slash = key.indexOf('/');
    if (slash < 0) return false;
    const prefix = key.slice(0, slash);
    if (prefix === `node-restriction.${domain}`) return true;
    const inNs = namespaces.some((d) => prefix === d || prefix.endsWith(`.${d}`));
    if (!inNs) return false;
    return !allowedKeys.has(key) && !allowedPrefixes.some((p) => key.startsWith(p));
  };
  labelRules.set(domain, rule);
  return rule;
}
const labelRules = new Map<string, (key: string) => boolean>();
