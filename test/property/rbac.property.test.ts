// Properties of RBAC (spec 001 §5.14):
// 1. the indexed evaluator (bindings by scope and subject, roles by name)
//    decides exactly as a brute-force reference that scans every binding and
//    role for every request;
// 2. escalation prevention never lets a user create a role or binding that
//    grants something the user does not hold: whenever the guard accepts a
//    write from a writer without the `escalate` / `bind` verb, every request
//    the new grant would allow the writer already may do.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RbacAuthorizer } from '../../src/auth/authz/rbac/authorizer.js';
import { EscalationGuard, type RbacResource } from '../../src/auth/authz/rbac/escalation.js';
import { type Binding, RbacIndex, type Subject } from '../../src/auth/authz/rbac/index.js';
import { type PolicyRule, ruleAllows } from '../../src/auth/authz/rbac/rules.js';
import type { RequestAttributes } from '../../src/auth/authz/types.js';

const NAMESPACES = ['', 'a', 'b'];
const USERS = ['alice', 'bob', 'system:serviceaccount:a:app', 'system:serviceaccount:b:app'];
const GROUPS = ['devs', 'ops', 'system:authenticated'];
const VERBS = ['get', 'list', 'create', 'delete', 'escalate'];
const API_GROUPS = ['', 'apps'];
const RESOURCES = ['pods', 'secrets', 'deployments'];
const SUBRESOURCES = ['', 'status', 'scale'];
const NAMES = ['', 'x', 'y'];
const PATHS = ['/healthz', '/healthz/etcd', '/version', '/metrics'];
const ROLE_NAMES = ['r1', 'r2', 'r3'];
const G = 'rbac.authorization.orch.io';

const pick = <T>(xs: T[]) => fc.constantFrom(...xs);
const subset = <T>(xs: T[], min = 1) => fc.subarray(xs, { minLength: min });

const resourceRule: fc.Arbitrary<PolicyRule> = fc.record({
  verbs: fc.oneof(subset(VERBS), fc.constant<string[]>(['*'])),
  apiGroups: fc.oneof(subset(API_GROUPS), fc.constant<string[]>(['*'])),
  resources: fc.oneof(
    subset([...RESOURCES, 'pods/status', '*/scale', 'deployments/scale']),
    fc.constant<string[]>(['*']),
  ),
  resourceNames: fc.oneof(fc.constant([] as string[]), subset(['x', 'y'])),
});
const urlRule: fc.Arbitrary<PolicyRule> = fc.record({
  verbs: fc.oneof(subset(['get', 'post']), fc.constant<string[]>(['*'])),
  nonResourceURLs: subset(['/healthz', '/healthz/*', '/version', '*']),
});
const rules = fc.array(fc.oneof(resourceRule, urlRule), { maxLength: 4 });

const subject: fc.Arbitrary<Subject> = fc.oneof(
  pick(['alice', 'bob']).map((name) => ({ kind: 'User', name })),
  pick(GROUPS).map((name) => ({ kind: 'Group', name })),
  fc.record({ kind: fc.constant('ServiceAccount'), name: fc.constant('app'), namespace: fc.constantFrom(undefined, 'a', 'b') }),
);

const binding: fc.Arbitrary<Binding> = fc
  .record({
    cluster: fc.boolean(),
    ns: pick(['a', 'b']),
    roleKind: pick(['Role', 'ClusterRole']),
    role: pick(ROLE_NAMES),
    subjects: fc.array(subject, { maxLength: 3 }),
    id: fc.integer({ min: 0, max: 5 }),
  })
  .map((b) => ({
    kind: b.cluster ? 'ClusterRoleBinding' : 'RoleBinding',
    name: `b${b.id}`,
    namespace: b.cluster ? '' : b.ns,
    roleRef: { kind: b.cluster ? 'ClusterRole' : b.roleKind, name: b.role },
    subjects: b.subjects.map((s) => (s.namespace === undefined ? { kind: s.kind, name: s.name } : s)),
  }));

const world = fc.record({
  clusterRoles: fc.dictionary(pick(ROLE_NAMES), rules),
  roles: fc.array(fc.record({ ns: pick(['a', 'b']), name: pick(ROLE_NAMES), rules }), { maxLength: 4 }),
  bindings: fc.array(binding, { maxLength: 8 }),
});

const request: fc.Arbitrary<RequestAttributes> = fc
  .record({
    user: pick(USERS),
    groups: subset(GROUPS, 0),
    resource: fc.boolean(),
    verb: pick([...VERBS, 'post']),
    apiGroup: pick(API_GROUPS),
    namespace: pick(NAMESPACES),
    res: pick(RESOURCES),
    sub: pick(SUBRESOURCES),
    name: pick(NAMES),
    path: pick(PATHS),
  })
  .map((r) => ({
    user: { username: r.user, groups: r.groups },
    verb: r.verb,
    isResourceRequest: r.resource,
    path: r.resource ? '' : r.path,
    apiGroup: r.resource ? r.apiGroup : '',
    apiVersion: 'v1',
    namespace: r.resource ? r.namespace : '',
    resource: r.resource ? r.res : '',
    subresource: r.resource ? r.sub : '',
    name: r.resource ? r.name : '',
  }));

type World = { clusterRoles: Record<string, PolicyRule[]>; roles: { ns: string; name: string; rules: PolicyRule[] }[]; bindings: Binding[] };

function build(w: World): RbacIndex {
  const idx = new RbacIndex();
  for (const [name, r] of Object.entries(w.clusterRoles)) idx.setClusterRole(name, r);
  for (const r of w.roles) idx.setRole(r.ns, r.name, r.rules);
  for (const b of w.bindings) idx.setBinding(b.kind, b.namespace, b.name, b);
  return idx;
}

/** the last write of each key wins, as in the index */
function effective(w: World) {
  const roles = new Map<string, PolicyRule[]>();
  for (const r of w.roles) roles.set(`${r.ns}/${r.name}`, r.rules);
  const bindings = new Map<string, Binding>();
  for (const b of w.bindings) bindings.set(`${b.kind}/${b.namespace}/${b.name}`, b);
  return { roles, bindings: [...bindings.values()] };
}

/** kube's semantics written the slow, obvious way */
function reference(w: World, a: RequestAttributes): boolean {
  const { roles, bindings } = effective(w);
  for (const b of bindings) {
    if (b.kind === 'RoleBinding' && b.namespace !== a.namespace) continue;
    const applies = b.subjects.some((s) => {
      if (s.kind === 'User') return s.name === a.user.username;
      if (s.kind === 'Group') return a.user.groups.includes(s.name);
      const ns = s.namespace || b.namespace;
      return ns !== '' && `system:serviceaccount:${ns}:${s.name}` === a.user.username;
    });
    if (!applies) continue;
    const rs = b.roleRef.kind === 'ClusterRole' ? w.clusterRoles[b.roleRef.name] : roles.get(`${b.namespace}/${b.roleRef.name}`);
    if ((rs ?? []).some((r) => ruleAllows(a, r))) return true;
  }
  return false;
}

/** one concrete request per verb and resource (or URL) each rule grants, so the check is never vacuous */
function requestsGrantedBy(granted: PolicyRule[]): RequestAttributes[] {
  const out: RequestAttributes[] = [];
  const base = { user: { username: '', groups: [] }, apiVersion: 'v1', namespace: 'a', subresource: '', name: '', path: '', apiGroup: '', resource: '' };
  for (const r of granted) {
    for (const v of r.verbs) {
      const verb = v === '*' ? 'get' : v;
      for (const u of r.nonResourceURLs ?? []) {
        const path = u === '*' ? '/version' : u.endsWith('*') ? `${u.slice(0, -1)}x` : u;
        out.push({ ...base, verb, isResourceRequest: false, path, namespace: '' });
      }
      for (const g of r.apiGroups ?? []) {
        for (const res of r.resources ?? []) {
          const [resource, subresource = ''] = res === '*' ? ['pods'] : res.startsWith('*/') ? ['deployments', res.slice(2)] : res.split('/');
          out.push({ ...base, verb, isResourceRequest: true, apiGroup: g === '*' ? 'apps' : g, resource: resource!, subresource, name: r.resourceNames?.[0] ?? 'x' });
        }
      }
    }
  }
  return out;
}

describe('RBAC properties', () => {
  it('the indexed evaluator agrees with the brute-force reference', () => {
    fc.assert(
      fc.property(world, fc.array(request, { minLength: 1, maxLength: 20 }), (w, reqs) => {
        const authz = new RbacAuthorizer(build(w), 'rbac.authorization.orch.io');
        for (const a of reqs) expect(authz.decide(a).decision === 'allow').toBe(reference(w, a));
      }),
      { numRuns: 400 },
    );
  });

  it('after removing bindings the index still agrees (updates leave no stale entries)', () => {
    fc.assert(
      fc.property(world, fc.array(fc.nat(), { maxLength: 4 }), fc.array(request, { minLength: 1, maxLength: 10 }), (w, drops, reqs) => {
        const idx = build(w);
        const kept = effective(w).bindings;
        for (const d of drops) {
          if (kept.length === 0) break;
          const [b] = kept.splice(d % kept.length, 1);
          idx.setBinding(b!.kind, b!.namespace, b!.name, undefined);
        }
        const after: World = { ...w, bindings: kept };
        const authz = new RbacAuthorizer(idx, 'rbac.authorization.orch.io');
        for (const a of reqs) expect(authz.decide(a).decision === 'allow').toBe(reference(after, a));
      }),
      { numRuns: 200 },
    );
  });

  it('escalation prevention: a role or binding the guard accepts allows nothing the writer could not already do', async () => {
    await fc.assert(
      fc.asyncProperty(
        world,
        pick(USERS),
        subset(GROUPS, 0),
        pick(NAMESPACES),
        fc.oneof(rules.map((r) => ({ role: r })), pick(ROLE_NAMES).map((n) => ({ bindTo: n }))),
        fc.array(request, { minLength: 1, maxLength: 30 }),
        async (w, user, groups, ns, write, reqs) => {
          const idx = build(w);
          const authz = new RbacAuthorizer(idx, 'rbac.authorization.orch.io');
          const guard = new EscalationGuard({ index: idx, authorizer: () => authz, rbacGroup: G });
          const u = { username: user, groups };
          const meta = { name: 'new', ...(ns ? { namespace: ns } : {}) };
          let granted: PolicyRule[];
          let obj: Record<string, unknown>;
          let resource: RbacResource;
          if ('role' in write) {
            granted = write.role;
            resource = ns ? 'roles' : 'clusterroles';
            obj = { metadata: meta, rules: granted };
          } else {
            const kind = ns && w.roles.some((r) => r.ns === ns && r.name === write.bindTo) ? 'Role' : 'ClusterRole';
            granted = idx.referencedRules(kind, ns, write.bindTo) ?? [];
            resource = ns ? 'rolebindings' : 'clusterrolebindings';
            obj = { metadata: meta, roleRef: { apiGroup: G, kind, name: write.bindTo }, subjects: [{ kind: 'User', name: user }] };
          }
          let accepted = true;
          try {
            await guard.check(resource, obj, undefined, u);
          } catch (e) {
            accepted = false;
            // a refusal: 403, or 404 for a binding to a role that does not exist (kube's binding storage)
            const missingRole = !('role' in write) && idx.referencedRules((obj.roleRef as { kind: 'Role' | 'ClusterRole' }).kind, ns, write.bindTo) === undefined;
            expect((e as { code?: number }).code).toBe(missingRole ? 404 : 403);
          }
          if (!accepted) return;
          // the `escalate` / `bind` verbs (here only through `*` rules) are permission to grant more, by design
          const verb = resource.endsWith('bindings') ? 'bind' : 'escalate';
          const onRoles = resource.startsWith('cluster') || (resource === 'rolebindings' && (obj.roleRef as { kind: string }).kind === 'ClusterRole') ? 'clusterroles' : 'roles';
          const target = 'role' in write ? 'new' : write.bindTo;
          const special = { user: u, verb, isResourceRequest: true, path: '', apiGroup: G, apiVersion: 'v1', namespace: ns, resource: onRoles, subresource: '', name: target };
          if (authz.decide(special).decision === 'allow') return;
          // bound to the writer in the same scope: cluster-wide (ns '') the grant reaches every namespace and
          // the non-resource URLs; in a namespace it reaches that namespace's resources only
          for (const r0 of [...reqs, ...requestsGrantedBy(granted)]) {
            if (ns !== '' && !r0.isResourceRequest) continue;
            const a = { ...r0, user: u, namespace: ns === '' ? r0.namespace : ns };
            if (!granted.some((r) => ruleAllows(a, r))) continue;
            expect(authz.decide(a).decision).toBe('allow');
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});
