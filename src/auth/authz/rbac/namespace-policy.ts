// The default Roles and RoleBindings of the system and public namespaces
// (spec 001 §5.14), after kube 1.32's namespaced bootstrap policy
// (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/namespace_policy.go):
// `kube-system`/`kube-public` are the product's namespaces (core/product-names.ts:
// `orch-system`/`orch-public`, kube's with `--api-domain k8s.io`), `*.k8s.io`
// groups are `*.<domain>`. The role and binding names, the ConfigMap names
// and the subjects stay kube's: manifests (metrics-server and every
// aggregated API server bind `extension-apiserver-authentication-reader`)
// refer to them, and orch's controllers call themselves
// kube-controller-manager and kube-scheduler (their field managers and users).

import { systemNamespacesOf } from '../../../core/product-names.js';
import { type BootstrapMeta, type Subject, bootstrapMetaOf, eventsRule, rule, subjectsOf } from './policy-meta.js';
import type { PolicyRule } from './rules.js';

export interface DefaultRole {
  apiVersion: string;
  kind: 'Role';
  metadata: BootstrapMeta & { namespace: string };
  rules: PolicyRule[];
}

export interface DefaultRoleBinding {
  apiVersion: string;
  kind: 'RoleBinding';
  metadata: BootstrapMeta & { namespace: string };
  roleRef: { apiGroup: string; kind: 'Role'; name: string };
  subjects: Subject[];
}

export interface NamespacePolicy {
  roles: DefaultRole[];
  roleBindings: DefaultRoleBinding[];
}

/** the ConfigMap with the front proxy's and client CA's settings that aggregated API servers read */
export const EXTENSION_APISERVER_AUTHENTICATION = 'extension-apiserver-authentication';

export function defaultNamespacePolicy(domain: string): NamespacePolicy {
  const rbac = `rbac.authorization.${domain}`;
  const meta = bootstrapMetaOf(domain);
  const { system, public: pub } = systemNamespacesOf(domain);
  const { user, sa } = subjectsOf(domain);
  const events = eventsRule(domain);
  const role = (namespace: string, name: string, rules: PolicyRule[]): DefaultRole => ({
    apiVersion: `${rbac}/v1`,
    kind: 'Role',
    metadata: { ...meta(name), namespace },
    rules,
  });
  const binding = (namespace: string, roleName: string, subjects: Subject[], name = roleName): DefaultRoleBinding => ({
    apiVersion: `${rbac}/v1`,
    kind: 'RoleBinding',
    metadata: { ...meta(name), namespace },
    roleRef: { apiGroup: rbac, kind: 'Role', name: roleName },
    subjects,
  });
  const systemSA = (name: string) => sa(system, name);
  // kube's user.KubeControllerManager and user.KubeScheduler
  const kcm = user('system:kube-controller-manager');
  const scheduler = user('system:kube-scheduler');

  const roles = [
    // the one ConfigMap (by name) with the authentication settings aggregated API servers start from
    role(system, 'extension-apiserver-authentication-reader', [rule(['get', 'list', 'watch'], [''], ['configmaps'], [EXTENSION_APISERVER_AUTHENTICATION])]),
    role(system, 'system:controller:bootstrap-signer', [rule(['get', 'list', 'watch'], [''], ['secrets'])]),
    // deprecated in kube since 1.10 and still bootstrapped there
    role(system, 'system:controller:cloud-provider', [rule(['create', 'get', 'list', 'watch'], [''], ['configmaps'])]),
    role(system, 'system:controller:token-cleaner', [rule(['delete', 'get', 'list', 'watch'], [''], ['secrets']), events]),
    role(system, 'system::leader-locking-kube-controller-manager', [
      rule(['watch'], [''], ['configmaps']),
      rule(['get', 'update'], [''], ['configmaps'], ['kube-controller-manager']),
      rule(['create', 'get', 'list', 'update', 'watch'], [`coordination.${domain}`], ['leases']),
    ]),
    role(system, 'system::leader-locking-kube-scheduler', [
      rule(['watch'], [''], ['configmaps']),
      rule(['get', 'update'], [''], ['configmaps'], ['kube-scheduler']),
    ]),
    // the bootstrap signer signs the public `cluster-info` ConfigMap (src/controllers/bootstrapsigner.ts)
    role(pub, 'system:controller:bootstrap-signer', [
      rule(['get', 'list', 'watch'], [''], ['configmaps']),
      rule(['update'], [''], ['configmaps'], ['cluster-info']),
      events,
    ]),
  ];

  const roleBindings = [
    binding(system, 'extension-apiserver-authentication-reader', [kcm, scheduler], 'system::extension-apiserver-authentication-reader'),
    binding(system, 'system::leader-locking-kube-controller-manager', [kcm, systemSA('kube-controller-manager'), systemSA('leader-election-controller')]),
    binding(system, 'system::leader-locking-kube-scheduler', [scheduler, systemSA('kube-scheduler')]),
    binding(system, 'system:controller:bootstrap-signer', [systemSA('bootstrap-signer')]),
    binding(system, 'system:controller:cloud-provider', [systemSA('cloud-provider')]),
    binding(system, 'system:controller:token-cleaner', [systemSA('token-cleaner')]),
    binding(pub, 'system:controller:bootstrap-signer', [systemSA('bootstrap-signer')]),
  ];
  return { roles, roleBindings };
}
