// Unit tests of the RBAC evaluator (spec 001 §5.14): wildcards, resourceNames,
// sub-resources, non-resource URLs, subject kinds, scopes, missing roles,
// updates and kube's reason text; and of the covers check used by escalation
// prevention.

import { describe, expect, it } from 'vitest';
import { RbacAuthorizer } from '../../src/auth/authz/rbac/authorizer.js';
import { uncovered } from '../../src/auth/authz/rbac/escalation.js';
import { RbacIndex, bindingOf } from '../../src/auth/authz/rbac/index.js';
import type { PolicyRule } from '../../src/auth/authz/rbac/rules.js';
import type { RequestAttributes } from '../../src/auth/authz/types.js';

const G = 'rbac.authorization.orch.io';

function req(p: Partial<Omit<RequestAttributes, 'user'>> & { user?: string; groups?: string[] }): RequestAttributes {
  return {
    user: { username: p.user ?? 'alice', groups: p.groups ?? ['system:authenticated'] },
    verb: p.verb ?? 'get',
    isResourceRequest: p.isResourceRequest ?? true,
    path: p.path ?? '',
    apiGroup: p.apiGroup ?? '',
    apiVersion: 'v1',
    namespace: p.namespace ?? '',
    resource: p.resource ?? '',
    subresource: p.subresource ?? '',
    name: p.name ?? '',
  };
}

function setup(rules: PolicyRule[], subject: { kind: string; name: string; namespace?: string }, bindingNs = ''): RbacAuthorizer {
  const idx = new RbacIndex();
  idx.setClusterRole('r', rules);
  const kind = bindingNs ? 'RoleBinding' : 'ClusterRoleBinding';
  const obj = { metadata: { name: 'b', namespace: bindingNs || undefined }, roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'r' }, subjects: [subject] };
  idx.setBinding(kind, bindingNs, 'b', bindingOf(kind, obj));
  return new RbacAuthorizer(idx, 'rbac.authorization.orch.io');
}

const allowed = (a: RbacAuthorizer, r: RequestAttributes) => a.decide(r).decision === 'allow';

describe('RBAC rule matching', () => {
  const alice = { kind: 'User', name: 'alice' };

  it('matches verbs, groups and resources exactly or by *', () => {
    const a = setup([{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }], alice);
    expect(allowed(a, req({ verb: 'get', resource: 'pods', namespace: 'x' }))).toBe(true);
    expect(allowed(a, req({ verb: 'delete', resource: 'pods', namespace: 'x' }))).toBe(false);
    expect(allowed(a, req({ verb: 'get', resource: 'pods', apiGroup: 'apps' }))).toBe(false);
    expect(allowed(a, req({ verb: 'get', resource: 'secrets' }))).toBe(false);
    const star = setup([{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }], alice);
    expect(allowed(star, req({ verb: 'escalate', resource: 'roles', apiGroup: G }))).toBe(true);
    expect(allowed(star, req({ isResourceRequest: false, path: '/metrics' }))).toBe(false);
  });

  it('sub-resources: exact pods/log, */scale; the plain resource does not grant its sub-resources', () => {
    const a = setup([{ verbs: ['get'], apiGroups: ['*'], resources: ['pods/log', '*/scale'] }], alice);
    expect(allowed(a, req({ resource: 'pods', subresource: 'log' }))).toBe(true);
    expect(allowed(a, req({ resource: 'deployments', subresource: 'scale', apiGroup: 'apps' }))).toBe(true);
    expect(allowed(a, req({ resource: 'pods' }))).toBe(false);
    expect(allowed(a, req({ resource: 'pods', subresource: 'exec' }))).toBe(false);
    const plain = setup([{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], alice);
    expect(allowed(plain, req({ resource: 'pods', subresource: 'status' }))).toBe(false);
  });

  it('resourceNames restrict by name; a collection request has no name and is not covered', () => {
    const a = setup([{ verbs: ['get', 'list'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['cfg'] }], alice);
    expect(allowed(a, req({ resource: 'configmaps', name: 'cfg' }))).toBe(true);
    expect(allowed(a, req({ resource: 'configmaps', name: 'other' }))).toBe(false);
    expect(allowed(a, req({ verb: 'list', resource: 'configmaps' }))).toBe(false);
  });

  it('non-resource URLs: exact, trailing * prefix, *', () => {
    const a = setup([{ verbs: ['get'], nonResourceURLs: ['/healthz', '/logs/*'] }], alice);
    expect(allowed(a, req({ isResourceRequest: false, path: '/healthz' }))).toBe(true);
    expect(allowed(a, req({ isResourceRequest: false, path: '/healthz/etcd' }))).toBe(false);
    expect(allowed(a, req({ isResourceRequest: false, path: '/logs/a/b' }))).toBe(true);
    expect(allowed(a, req({ isResourceRequest: false, path: '/logs/a', verb: 'post' }))).toBe(false);
  });

  it('subjects: groups, service accounts with and without a namespace', () => {
    const g = setup([{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], { kind: 'Group', name: 'devs' });
    expect(allowed(g, req({ resource: 'pods', groups: ['devs'] }))).toBe(true);
    expect(allowed(g, req({ resource: 'pods', groups: ['ops'] }))).toBe(false);
    const sa = setup([{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], { kind: 'ServiceAccount', name: 'app', namespace: 'default' });
    expect(allowed(sa, req({ resource: 'pods', user: 'system:serviceaccount:default:app' }))).toBe(true);
    expect(allowed(sa, req({ resource: 'pods', user: 'system:serviceaccount:other:app' }))).toBe(false);
    // the subject namespace defaults to the binding's
    const local = setup([{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], { kind: 'ServiceAccount', name: 'app' }, 'team');
    expect(allowed(local, req({ resource: 'pods', namespace: 'team', user: 'system:serviceaccount:team:app' }))).toBe(true);
  });

  it('a RoleBinding grants only in its namespace; nonResourceURLs only through ClusterRoleBindings', () => {
    const a = setup([{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }, { verbs: ['get'], nonResourceURLs: ['*'] }], alice, 'team');
    expect(allowed(a, req({ resource: 'pods', namespace: 'team' }))).toBe(true);
    expect(allowed(a, req({ resource: 'pods', namespace: 'other' }))).toBe(false);
    expect(allowed(a, req({ resource: 'pods' }))).toBe(false);
    expect(allowed(a, req({ isResourceRequest: false, path: '/version' }))).toBe(false);
  });

  it('gives kube\'s reason, ignores bindings to missing roles, and follows changes', () => {
    const idx = new RbacIndex();
    const obj = { metadata: { name: 'b' }, roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'r' }, subjects: [{ kind: 'User', name: 'alice' }] };
    idx.setBinding('ClusterRoleBinding', '', 'b', bindingOf('ClusterRoleBinding', obj));
    const a = new RbacAuthorizer(idx, 'rbac.authorization.orch.io');
    const r = req({ resource: 'pods' });
    expect(a.decide(r).decision).toBe('noOpinion');
    idx.setClusterRole('r', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]);
    expect(a.decide(r)).toEqual({ decision: 'allow', reason: 'RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "r" to User "alice"' });
    idx.setBinding('ClusterRoleBinding', '', 'b', bindingOf('ClusterRoleBinding', { ...obj, subjects: [{ kind: 'User', name: 'bob' }] }));
    expect(a.decide(r).decision).toBe('noOpinion');
    expect(a.decide({ ...r, user: { username: 'bob', groups: [] } }).decision).toBe('allow');
    idx.setBinding('ClusterRoleBinding', '', 'b', undefined);
    expect(a.decide({ ...r, user: { username: 'bob', groups: [] } }).decision).toBe('noOpinion');
  });

  it('a binding to a missing role: no opinion with kube\'s reason `RBAC: <aggregate>`, and the rules review says which', async () => {
    const idx = new RbacIndex();
    const rb = (name: string, kind: string) => ({ metadata: { name, namespace: 'team' }, roleRef: { apiGroup: G, kind, name: 'doesnotexist' }, subjects: [{ kind: 'User', name: 'bob' }] });
    idx.setBinding('RoleBinding', 'team', 'to-role', bindingOf('RoleBinding', rb('to-role', 'Role')));
    const a = new RbacAuthorizer(idx, 'rbac.authorization.k8s.io');
    const bob = req({ user: 'bob', namespace: 'team', verb: 'list', resource: 'pods' });
    // one error prints bare
    expect(a.decide(bob)).toEqual({ decision: 'noOpinion', reason: 'RBAC: role.rbac.authorization.k8s.io "doesnotexist" not found' });
    idx.setBinding('RoleBinding', 'team', 'to-cluster-role', bindingOf('RoleBinding', rb('to-cluster-role', 'ClusterRole')));
    // several as [a, b]
    const both = '[role.rbac.authorization.k8s.io "doesnotexist" not found, clusterrole.rbac.authorization.k8s.io "doesnotexist" not found]';
    expect(a.decide(bob)).toEqual({ decision: 'noOpinion', reason: `RBAC: ${both}` });
    // kube's RBAC RulesFor: complete, with the resolution errors
    expect(await a.rulesFor(bob.user, 'team')).toEqual({
      resourceRules: [],
      nonResourceRules: [],
      incomplete: false,
      errors: ['role.rbac.authorization.k8s.io "doesnotexist" not found', 'clusterrole.rbac.authorization.k8s.io "doesnotexist" not found'],
    });
    // an allow says nothing of the errors met before it
    idx.setClusterRole('pods', [{ verbs: ['list'], apiGroups: [''], resources: ['pods'] }]);
    idx.setBinding('RoleBinding', 'team', 'ok', bindingOf('RoleBinding', { ...rb('ok', 'ClusterRole'), roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'pods' } }));
    expect(a.decide(bob)).toEqual({ decision: 'allow', reason: 'RBAC: allowed by RoleBinding "ok/team" of ClusterRole "pods" to User "bob"' });
  });

  it('lists the rules of a user for SelfSubjectRulesReview', async () => {
    const a = setup([{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['p'] }, { verbs: ['get'], nonResourceURLs: ['/x'] }], alice);
    const r = await a.rulesFor({ username: 'alice', groups: [] }, 'ns');
    expect(r).toEqual({
      resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['p'] }],
      nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/x'] }],
      incomplete: false,
    });
  });
});

describe('covers (escalation prevention)', () => {
  it('reports exactly the pieces not held', () => {
    const owner: PolicyRule[] = [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', '*/scale'] }, { verbs: ['get'], nonResourceURLs: ['/api/*'] }];
    expect(uncovered(owner, [{ verbs: ['get'], apiGroups: [''], resources: ['pods', 'deployments/scale'] }])).toEqual([]);
    expect(uncovered(owner, [{ verbs: ['get', 'delete'], apiGroups: [''], resources: ['pods'] }])).toEqual([{ verbs: ['delete'], apiGroups: [''], resources: ['pods'] }]);
    expect(uncovered(owner, [{ verbs: ['get'], nonResourceURLs: ['/api/v1', '/apis'] }])).toEqual([{ verbs: ['get'], nonResourceURLs: ['/apis'] }]);
    const named: PolicyRule[] = [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['a'] }];
    expect(uncovered(named, [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['a'] }])).toEqual([]);
    expect(uncovered(named, [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }])).toHaveLength(1);
  });
});
