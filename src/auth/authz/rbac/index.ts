// The RBAC state an authorizer reads (spec 001 §5.14), kept current from the
// Role/ClusterRole/RoleBinding/ClusterRoleBinding sources. Bindings are
// indexed by scope (cluster, or one namespace) and by subject key (user name
// or group name), so a decision looks up the caller's name and groups in at
// most two scopes instead of scanning every binding. Roles are resolved by
// name at decision time from a map of their parsed rules: a binding to a
// missing role grants nothing and starts granting once the role appears.

import type { UserInfo } from '../../types.js';
import type { ObjectSources, SourceEvent, SourceObject } from '../types.js';
import { type PolicyRule, rulesOf } from './rules.js';

export interface Subject {
  kind: string;
  name: string;
  namespace?: string;
  apiGroup?: string;
}

export interface Binding {
  kind: 'RoleBinding' | 'ClusterRoleBinding';
  name: string;
  /** '' for ClusterRoleBinding */
  namespace: string;
  roleRef: { kind: string; name: string };
  subjects: Subject[];
}

/** what a visitor is told about where a rule came from (for kube's reason text) */
export interface RuleSource {
  binding: Binding;
  subject: Subject;
}

/** returns true to stop the visit */
export type RuleVisitor = (source: RuleSource, rule: PolicyRule) => boolean;

interface Entry {
  id: string;
  binding: Binding;
  subject: Subject;
}

const SA_PREFIX = 'system:serviceaccount:';

/** the index key a subject is found under; undefined for a subject that can match nobody */
export function subjectKey(s: Subject, bindingNamespace: string): string | undefined {
  switch (s.kind) {
    case 'User':
      return `u:${s.name}`;
    case 'Group':
      return `g:${s.name}`;
    case 'ServiceAccount': {
      // the subject's namespace defaults to the binding's (kube: appliesToUser)
      const ns = s.namespace || bindingNamespace;
      return ns && s.name ? `u:${SA_PREFIX}${ns}:${s.name}` : undefined;
    }
    default:
      return undefined;
  }
}

export class RbacIndex {
  private readonly roles = new Map<string, PolicyRule[]>();
  private readonly clusterRoles = new Map<string, PolicyRule[]>();
  /** scope ('' = cluster) → subject key → binding id → entry */
  private readonly bySubject = new Map<string, Map<string, Map<string, Entry>>>();
  private readonly bindings = new Map<string, Binding>();

  // ---- updates ----

  setRole(namespace: string, name: string, rules: PolicyRule[] | undefined): void {
    const k = `${namespace}/${name}`;
    if (rules) this.roles.set(k, rules);
    else this.roles.delete(k);
  }

  setClusterRole(name: string, rules: PolicyRule[] | undefined): void {
    if (rules) this.clusterRoles.set(name, rules);
    else this.clusterRoles.delete(name);
  }

  /** adds or replaces a binding (`b`), or removes the binding `id` when `b` is undefined */
  setBinding(kind: Binding['kind'], namespace: string, name: string, b: Binding | undefined): void {
    const id = `${kind}/${namespace}/${name}`;
    const old = this.bindings.get(id);
    if (old) {
      const scope = this.bySubject.get(old.namespace);
      for (const s of old.subjects) {
        const key = subjectKey(s, old.namespace);
        const m = key ? scope?.get(key) : undefined;
        if (!m) continue;
        m.delete(id);
        // no empty maps left behind by churn (many short-lived subjects or namespaces)
        if (m.size === 0) scope!.delete(key!);
      }
      if (scope?.size === 0) this.bySubject.delete(old.namespace);
      this.bindings.delete(id);
    }
    if (!b) return;
    this.bindings.set(id, b);
    let scope = this.bySubject.get(b.namespace);
    if (!scope) this.bySubject.set(b.namespace, (scope = new Map()));
    for (const s of b.subjects) {
      const key = subjectKey(s, b.namespace);
      if (!key) continue;
      let m = scope.get(key);
      if (!m) scope.set(key, (m = new Map()));
      if (!m.has(id)) m.set(id, { id, binding: b, subject: s });
    }
  }

  // ---- reads ----

  /** rules of the role a binding refers to; undefined when that role does not exist */
  roleRules(binding: Binding): PolicyRule[] | undefined {
    if (binding.roleRef.kind === 'ClusterRole') return this.clusterRoles.get(binding.roleRef.name);
    if (binding.roleRef.kind === 'Role' && binding.kind === 'RoleBinding') return this.roles.get(`${binding.namespace}/${binding.roleRef.name}`);
    return undefined;
  }

  /** rules of a role by reference (escalation checks of bindings) */
  referencedRules(kind: string, namespace: string, name: string): PolicyRule[] | undefined {
    if (kind === 'ClusterRole') return this.clusterRoles.get(name);
    if (kind === 'Role') return this.roles.get(`${namespace}/${name}`);
    return undefined;
  }

  /**
   * Visits the rules that apply to `user` in `namespace` ('' = cluster scope
   * only): cluster bindings first, then the namespace's bindings, as kube does.
   * `missing` is told of each applying binding whose role does not exist
   * (kube's resolution errors, §5.14).
   */
  visit(user: UserInfo, namespace: string, visitor: RuleVisitor, missing?: (binding: Binding) => void): void {
    const keys = [`u:${user.username}`];
    for (const g of user.groups) keys.push(`g:${g}`);
    const scopes = namespace ? ['', namespace] : [''];
    const seen = new Set<string>();
    for (const scope of scopes) {
      const bySubject = this.bySubject.get(scope);
      if (!bySubject) continue;
      for (const key of keys) {
        const entries = bySubject.get(key);
        if (!entries) continue;
        for (const e of entries.values()) {
          if (seen.has(e.id)) continue;
          seen.add(e.id);
          const rules = this.roleRules(e.binding);
          if (!rules) {
            missing?.(e.binding);
            continue;
          }
          for (const r of rules) if (visitor(e, r)) return;
        }
      }
    }
  }

  /** every rule `user` holds in `namespace` (cluster-wide ones included) */
  rulesFor(user: UserInfo, namespace: string, missing?: (binding: Binding) => void): PolicyRule[] {
    const out: PolicyRule[] = [];
    this.visit(
      user,
      namespace,
      (_s, r) => {
        out.push(r);
        return false;
      },
      missing,
    );
    return out;
  }

  /** for the brute-force reference and diagnostics */
  allBindings(): Binding[] {
    return [...this.bindings.values()];
  }

  counts(): { roles: number; clusterRoles: number; bindings: number } {
    return { roles: this.roles.size, clusterRoles: this.clusterRoles.size, bindings: this.bindings.size };
  }
}

/** a stored binding object → Binding; undefined when it has no usable roleRef */
export function bindingOf(kind: Binding['kind'], obj: SourceObject): Binding | undefined {
  const rr = obj.roleRef as { kind?: unknown; name?: unknown } | undefined;
  if (!rr || typeof rr.kind !== 'string' || typeof rr.name !== 'string') return undefined;
  const subjects: Subject[] = [];
  if (Array.isArray(obj.subjects)) {
    for (const s of obj.subjects as unknown[]) {
      if (!s || typeof s !== 'object') continue;
      const o = s as Record<string, unknown>;
      if (typeof o.kind !== 'string' || typeof o.name !== 'string') continue;
      subjects.push({
        kind: o.kind,
        name: o.name,
        ...(typeof o.namespace === 'string' ? { namespace: o.namespace } : {}),
        ...(typeof o.apiGroup === 'string' ? { apiGroup: o.apiGroup } : {}),
      });
    }
  }
  return {
    kind,
    name: obj.metadata?.name ?? '',
    namespace: kind === 'RoleBinding' ? (obj.metadata?.namespace ?? '') : '',
    roleRef: { kind: rr.kind, name: rr.name },
    subjects,
  };
}

/** Keeps `index` current from the four RBAC resources; returns the unsubscribe function. */
export function followRbacSources(index: RbacIndex, sources: ObjectSources, rbacGroup: string): () => void {
  const meta = (e: SourceEvent) => ({ name: e.object.metadata?.name ?? '', namespace: e.object.metadata?.namespace ?? '' });
  const offs = [
    sources(rbacGroup, 'roles').subscribe((e) => {
      const m = meta(e);
      index.setRole(m.namespace, m.name, e.type === 'DELETED' ? undefined : rulesOf(e.object));
    }),
    sources(rbacGroup, 'clusterroles').subscribe((e) => {
      index.setClusterRole(meta(e).name, e.type === 'DELETED' ? undefined : rulesOf(e.object));
    }),
    sources(rbacGroup, 'rolebindings').subscribe((e) => {
      const m = meta(e);
      index.setBinding('RoleBinding', m.namespace, m.name, e.type === 'DELETED' ? undefined : bindingOf('RoleBinding', e.object));
    }),
    sources(rbacGroup, 'clusterrolebindings').subscribe((e) => {
      index.setBinding('ClusterRoleBinding', '', meta(e).name, e.type === 'DELETED' ? undefined : bindingOf('ClusterRoleBinding', e.object));
    }),
  ];
  return () => {
    for (const off of offs) off();
  };
}
