// The default Roles and RoleBindings of the system and public namespaces
// against kube 1.32's bootstrap policy (namespace_policy.go and its golden
// files testdata/namespace-roles.yaml, namespace-role-bindings.yaml): with
// `--api-domain k8s.io` they are kube's objects exactly; with the default
// domain the namespaces, groups, label and annotation are orch's.

import { describe, expect, it } from 'vitest';
import { defaultPolicy } from '../../src/auth/authz/rbac/bootstrap-policy.js';
import { defaultNamespacePolicy } from '../../src/auth/authz/rbac/namespace-policy.js';

const RBAC = 'rbac.authorization.k8s.io';
const kubeMeta = (namespace: string, name: string) => ({
  name,
  namespace,
  labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' },
  annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' },
});
const events = { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch', 'update'] };
const kubeRole = (namespace: string, name: string, rules: object[]) => ({ apiVersion: `${RBAC}/v1`, kind: 'Role', metadata: kubeMeta(namespace, name), rules });
const kubeBinding = (namespace: string, name: string, role: string, subjects: object[]) => ({
  apiVersion: `${RBAC}/v1`,
  kind: 'RoleBinding',
  metadata: kubeMeta(namespace, name),
  roleRef: { apiGroup: RBAC, kind: 'Role', name: role },
  subjects,
});
const user = (name: string) => ({ apiGroup: RBAC, kind: 'User', name });
const sa = (name: string) => ({ kind: 'ServiceAccount', name, namespace: 'kube-system' });
const byKey = (o: { metadata: { namespace?: string; name: string } }) => `${o.metadata.namespace}/${o.metadata.name}`;
const sorted = <T extends { metadata: { namespace?: string; name: string } }>(l: T[]) => [...l].sort((a, b) => byKey(a).localeCompare(byKey(b)));

// kube 1.32's objects (the golden files' content)
const KUBE_ROLES = [
  kubeRole('kube-public', 'system:controller:bootstrap-signer', [
    { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: [''], resourceNames: ['cluster-info'], resources: ['configmaps'], verbs: ['update'] },
    events,
  ]),
  kubeRole('kube-system', 'extension-apiserver-authentication-reader', [
    { apiGroups: [''], resourceNames: ['extension-apiserver-authentication'], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] },
  ]),
  kubeRole('kube-system', 'system::leader-locking-kube-controller-manager', [
    { apiGroups: [''], resources: ['configmaps'], verbs: ['watch'] },
    { apiGroups: [''], resourceNames: ['kube-controller-manager'], resources: ['configmaps'], verbs: ['get', 'update'] },
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create', 'get', 'list', 'update', 'watch'] },
  ]),
  kubeRole('kube-system', 'system::leader-locking-kube-scheduler', [
    { apiGroups: [''], resources: ['configmaps'], verbs: ['watch'] },
    { apiGroups: [''], resourceNames: ['kube-scheduler'], resources: ['configmaps'], verbs: ['get', 'update'] },
  ]),
  kubeRole('kube-system', 'system:controller:bootstrap-signer', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] }]),
  kubeRole('kube-system', 'system:controller:cloud-provider', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'get', 'list', 'watch'] }]),
  kubeRole('kube-system', 'system:controller:token-cleaner', [{ apiGroups: [''], resources: ['secrets'], verbs: ['delete', 'get', 'list', 'watch'] }, events]),
];
const KUBE_BINDINGS = [
  kubeBinding('kube-public', 'system:controller:bootstrap-signer', 'system:controller:bootstrap-signer', [sa('bootstrap-signer')]),
  kubeBinding('kube-system', 'system::extension-apiserver-authentication-reader', 'extension-apiserver-authentication-reader', [
    user('system:kube-controller-manager'),
    user('system:kube-scheduler'),
  ]),
  kubeBinding('kube-system', 'system::leader-locking-kube-controller-manager', 'system::leader-locking-kube-controller-manager', [
    user('system:kube-controller-manager'),
    sa('kube-controller-manager'),
    sa('leader-election-controller'),
  ]),
  kubeBinding('kube-system', 'system::leader-locking-kube-scheduler', 'system::leader-locking-kube-scheduler', [user('system:kube-scheduler'), sa('kube-scheduler')]),
  kubeBinding('kube-system', 'system:controller:bootstrap-signer', 'system:controller:bootstrap-signer', [sa('bootstrap-signer')]),
  kubeBinding('kube-system', 'system:controller:cloud-provider', 'system:controller:cloud-provider', [sa('cloud-provider')]),
  kubeBinding('kube-system', 'system:controller:token-cleaner', 'system:controller:token-cleaner', [sa('token-cleaner')]),
];

describe('namespaced bootstrap policy', () => {
  it('is kube 1.32\'s with --api-domain k8s.io: names, namespaces, rules, subjects, labels, annotations', () => {
    const p = defaultNamespacePolicy('k8s.io');
    expect(sorted(p.roles)).toEqual(sorted(KUBE_ROLES));
    expect(sorted(p.roleBindings)).toEqual(sorted(KUBE_BINDINGS));
  });

  it('spells namespaces, groups, the label and the annotation with the default domain', () => {
    const p = defaultNamespacePolicy('orch.io');
    expect(new Set(p.roles.map((r) => r.metadata.namespace))).toEqual(new Set(['orch-system', 'orch-public']));
    // the role and binding names are kube's (manifests bind to them)
    expect(p.roles.map((r) => r.metadata.name).sort()).toEqual(KUBE_ROLES.map((r) => r.metadata.name).sort());
    for (const o of [...p.roles, ...p.roleBindings]) {
      expect(o.apiVersion).toBe('rbac.authorization.orch.io/v1');
      expect(o.metadata.labels).toEqual({ 'orch.io/bootstrapping': 'rbac-defaults' });
      expect(o.metadata.annotations).toEqual({ 'rbac.authorization.orch.io/autoupdate': 'true' });
    }
    const kcm = p.roles.find((r) => r.metadata.name === 'system::leader-locking-kube-controller-manager')!;
    expect(kcm.rules.flatMap((r) => r.apiGroups)).toContain('coordination.orch.io');
    const cleaner = p.roles.find((r) => r.metadata.name === 'system:controller:token-cleaner')!;
    expect(cleaner.rules[1]!.apiGroups).toEqual(['', 'events.orch.io']);
    const signer = p.roleBindings.find((b) => b.metadata.namespace === 'orch-public')!;
    expect(signer.subjects).toEqual([{ kind: 'ServiceAccount', name: 'bootstrap-signer', namespace: 'orch-system' }]);
    expect(signer.roleRef).toEqual({ apiGroup: 'rbac.authorization.orch.io', kind: 'Role', name: 'system:controller:bootstrap-signer' });
  });

  it('every binding refers to a default Role of its namespace; names are unique per namespace', () => {
    for (const domain of ['orch.io', 'k8s.io']) {
      const p = defaultPolicy(domain);
      const roles = new Set(p.roles.map(byKey));
      expect(roles.size).toBe(p.roles.length);
      expect(new Set(p.roleBindings.map(byKey)).size).toBe(p.roleBindings.length);
      for (const b of p.roleBindings) expect(roles.has(`${b.metadata.namespace}/${b.roleRef.name}`), byKey(b)).toBe(true);
    }
  });

  it('token-cleaner and bootstrap-signer are namespaced only, as in kube (no ClusterRole grants them every namespace)', () => {
    const p = defaultPolicy('k8s.io');
    const names = [...p.clusterRoles, ...p.clusterRoleBindings].map((o) => o.metadata.name);
    expect(names).not.toContain('system:controller:token-cleaner');
    expect(names).not.toContain('system:controller:bootstrap-signer');
  });
});
