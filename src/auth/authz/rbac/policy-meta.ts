// What every default role and binding carries (spec 001 §5.14), shared by the
// cluster policy (bootstrap-policy.ts) and the namespaced one
// (namespace-policy.ts): kube's `kubernetes.io/bootstrapping: rbac-defaults`
// label and `rbac.authorization.kubernetes.io/autoupdate: "true"` annotation,
// spelt with the product's label domain (`orch.io`; `kubernetes.io` with
// `--api-domain k8s.io`, as kube's policy.go writes them), and the subjects'
// shapes (kube's rbacv1helpers builders).

import { labelDomainOf } from '../../../machinery/node-taints.js';
import type { PolicyRule } from './rules.js';

/** the metadata of a default object; `namespace` only on Roles and RoleBindings */
export interface BootstrapMeta {
  name: string;
  namespace?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface Subject {
  kind: string;
  apiGroup?: string;
  name: string;
  namespace?: string;
}

/** the label and annotation names of §5.14 for an API domain */
export function bootstrapNames(domain: string) {
  const labels = labelDomainOf(domain);
  return {
    bootstrapLabel: `${labels}/bootstrapping`,
    bootstrapValue: 'rbac-defaults',
    autoupdate: `rbac.authorization.${labels}/autoupdate`,
    // kube spells the aggregation labels with the group's domain (`rbac.authorization.k8s.io/aggregate-to-view`)
    aggregateTo: (role: 'admin' | 'edit' | 'view') => `rbac.authorization.${domain}/aggregate-to-${role}`,
  };
}

/** the metadata of a default object: the bootstrap label (and `extra` labels), autoupdate "true" */
export function bootstrapMetaOf(domain: string): (name: string, extra?: Record<string, string>) => BootstrapMeta {
  const n = bootstrapNames(domain);
  return (name, extra = {}) => ({ name, labels: { [n.bootstrapLabel]: n.bootstrapValue, ...extra }, annotations: { [n.autoupdate]: 'true' } });
}

export const rule = (verbs: string[], apiGroups: string[], resources: string[], resourceNames?: string[]): PolicyRule =>
  resourceNames ? { verbs, apiGroups, resources, resourceNames } : { verbs, apiGroups, resources };
export const urls = (verbs: string[], nonResourceURLs: string[]): PolicyRule => ({ verbs, nonResourceURLs });

/** kube's eventsRule(): what a controller needs to record events */
export const eventsRule = (domain: string): PolicyRule => rule(['create', 'patch', 'update'], ['', `events.${domain}`], ['events']);

/** subjects as kube's binding builders write them: users and groups with the RBAC group, service accounts with a namespace */
export function subjectsOf(domain: string) {
  const apiGroup = `rbac.authorization.${domain}`;
  return {
    group: (name: string): Subject => ({ kind: 'Group', apiGroup, name }),
    user: (name: string): Subject => ({ kind: 'User', apiGroup, name }),
    sa: (namespace: string, name: string): Subject => ({ kind: 'ServiceAccount', name, namespace }),
  };
}
