// Escalation prevention (spec 001 §5.14, §7): a user may create or update a
// Role/ClusterRole only when it already holds every permission the role
// grants, in the same scope, or has the `escalate` verb on that role; and a
// binding only when it holds every permission of the referenced role in the
// binding's scope, or has the `bind` verb on that role. This is kube's
// ConfirmNoEscalation / Covers: rules are broken into single-verb,
// single-resource pieces and each piece must be covered by a held rule.

import { forbidden, notFound } from '../../../core/errors.js';
import type { UserInfo } from '../../types.js';
import type { Authorizer } from '../types.js';
import { type RbacIndex, bindingOf } from './index.js';
import { type PolicyRule, rulesOf } from './rules.js';

/** one verb on one group/resource[/name], or one verb on one URL */
type Piece = { verb: string; group: string; resource: string; name?: string } | { verb: string; url: string };

function pieces(rule: PolicyRule): Piece[] {
  const out: Piece[] = [];
  for (const verb of rule.verbs) {
    for (const group of rule.apiGroups ?? []) {
      for (const resource of rule.resources ?? []) {
        if ((rule.resourceNames ?? []).length === 0) out.push({ verb, group, resource });
        else for (const name of rule.resourceNames!) out.push({ verb, group, resource, name });
      }
    }
    for (const url of rule.nonResourceURLs ?? []) out.push({ verb, url });
  }
  return out;
}

const has = (l: readonly string[] | undefined, v: string) => l !== undefined && l.includes(v);

function resourceCovers(owner: readonly string[], resource: string): boolean {
  if (owner.includes('*') || owner.includes(resource)) return true;
  const slash = resource.indexOf('/');
  return slash > 0 && owner.includes(`*/${resource.slice(slash + 1)}`);
}

function pieceCovered(owner: PolicyRule, p: Piece): boolean {
  if (!has(owner.verbs, '*') && !has(owner.verbs, p.verb)) return false;
  if ('url' in p) {
    return (owner.nonResourceURLs ?? []).some((u) => u === '*' || u === p.url || (u.endsWith('*') && p.url.startsWith(u.slice(0, -1))));
  }
  if (!has(owner.apiGroups, '*') && !has(owner.apiGroups, p.group)) return false;
  if (!resourceCovers(owner.resources ?? [], p.resource)) return false;
  const names = owner.resourceNames ?? [];
  return names.length === 0 || (p.name !== undefined && names.includes(p.name));
}

/** the parts of `servant` that `owner` does not cover (empty = covered) */
export function uncovered(owner: readonly PolicyRule[], servant: readonly PolicyRule[]): PolicyRule[] {
  const missing: PolicyRule[] = [];
  for (const rule of servant) {
    for (const p of pieces(rule)) {
      if (owner.some((o) => pieceCovered(o, p))) continue;
      missing.push('url' in p ? { verbs: [p.verb], nonResourceURLs: [p.url] } : { verbs: [p.verb], apiGroups: [p.group], resources: [p.resource], ...(p.name !== undefined ? { resourceNames: [p.name] } : {}) });
    }
  }
  return missing;
}

/** kube's PolicyRule String form: `{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}` */
/**
 * kube's CompactRules: rules that differ only in their verbs and name one group and one resource
 * (and at most one resourceName) merge into one, their verbs in order; others stay as they are
 */
export function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const simple = new Map<string, PolicyRule>();
  for (const r of rules) {
    const names = r.resourceNames ?? [];
    const isSimple = !r.nonResourceURLs?.length && names.length <= 1 && r.apiGroups?.length === 1 && r.resources?.length === 1;
    if (!isSimple) {
      out.push(r);
      continue;
    }
    const key = JSON.stringify([r.apiGroups![0], r.resources![0], names[0] ?? null]);
    const merged = simple.get(key);
    if (merged) merged.verbs = [...merged.verbs, ...r.verbs];
    else simple.set(key, { ...r, verbs: [...r.verbs] });
  }
  return [...out, ...simple.values()];
}

/** the refusal's list: kube's compacted rules, each once, sorted (a Go string set's List) */
export function describeMissing(rules: readonly PolicyRule[]): string {
  return [...new Set(compactRules(rules).map(describeRule))].sort().join('\n');
}

export function describeRule(r: PolicyRule): string {
  const q = (l: readonly string[]) => `[${l.map((s) => JSON.stringify(s)).join(' ')}]`;
  const parts: string[] = [];
  if (r.apiGroups?.length) parts.push(`APIGroups:${q(r.apiGroups)}`);
  if (r.resources?.length) parts.push(`Resources:${q(r.resources)}`);
  if (r.resourceNames?.length) parts.push(`ResourceNames:${q(r.resourceNames)}`);
  if (r.nonResourceURLs?.length) parts.push(`NonResourceURLs:${q(r.nonResourceURLs)}`);
  parts.push(`Verbs:${q(r.verbs)}`);
  return `{${parts.join(', ')}}`;
}

const FULL_AUTHORITY: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

export interface EscalationGuardOptions {
  index: RbacIndex;
  /** the server's whole chain, asked for the `escalate` and `bind` verbs */
  authorizer: () => Authorizer;
  rbacGroup: string;
  privilegedGroup?: string;
}

export type RbacResource = 'roles' | 'clusterroles' | 'rolebindings' | 'clusterrolebindings';

export class EscalationGuard {
  constructor(private readonly o: EscalationGuardOptions) {}

  /**
   * Throws 403 Forbidden when `user` may not write `obj` (old = the stored
   * object for updates). Writes without a user (the server's own bootstrap
   * and controllers) and by the privileged group are not checked, as in kube.
   */
  async check(resource: RbacResource, obj: Record<string, unknown> & { metadata?: { name?: string; namespace?: string } }, old: typeof obj | undefined, user: UserInfo | undefined): Promise<void> {
    if (!user || user.groups.includes(this.o.privilegedGroup ?? 'system:masters')) return;
    const name = obj.metadata?.name ?? '';
    const namespace = resource === 'roles' || resource === 'rolebindings' ? (obj.metadata?.namespace ?? '') : '';
    const denied = (why: string) =>
      forbidden(`${resource}.${this.o.rbacGroup} ${JSON.stringify(name)} is forbidden: ${why}`, { name, group: this.o.rbacGroup, kind: resource });
    const held = () => this.o.index.rulesFor(user, namespace);
    const notHeld = (missing: PolicyRule[]) =>
      `user ${JSON.stringify(user.username)} (groups=[${user.groups.map((g) => JSON.stringify(g)).join(' ')}]) is attempting to grant RBAC permissions not currently held:\n${describeMissing(missing)}`;

    if (resource === 'roles' || resource === 'clusterroles') {
      // an update that leaves the grant as it was grants nothing new (labels, annotations, finalizers)
      if (old && JSON.stringify(old.rules ?? []) === JSON.stringify(obj.rules ?? []) && JSON.stringify(old.aggregationRule ?? null) === JSON.stringify(obj.aggregationRule ?? null)) return;
      if (await this.allowed(user, 'escalate', resource, namespace, name)) return;
      const missing = uncovered(held(), rulesOf(obj));
      if (missing.length) throw denied(notHeld(missing));
      // an aggregationRule can gather anything, so it needs everything (kube)
      if (obj.aggregationRule && uncovered(held(), FULL_AUTHORITY).length) throw denied('must have cluster-admin privileges to use the aggregationRule');
      return;
    }
    const b = bindingOf(resource === 'rolebindings' ? 'RoleBinding' : 'ClusterRoleBinding', obj);
    if (!b) return; // schema validation reports the missing roleRef
    if (old && JSON.stringify(old.subjects ?? []) === JSON.stringify(obj.subjects ?? [])) return;
    const roleResource = b.roleRef.kind === 'Role' ? 'roles' : 'clusterroles';
    if (await this.allowed(user, 'bind', roleResource, namespace, b.roleRef.name)) return;
    const rules = this.o.index.referencedRules(b.roleRef.kind, namespace, b.roleRef.name);
    // kube's binding storage resolves the role through its lister: NotFound, named by the lister's singular resource
    if (!rules) throw notFound(b.roleRef.kind === 'Role' ? 'role' : 'clusterrole', this.o.rbacGroup, b.roleRef.name);
    const missing = uncovered(held(), rules);
    if (missing.length) throw denied(notHeld(missing));
  }

  private async allowed(user: UserInfo, verb: string, resource: string, namespace: string, name: string): Promise<boolean> {
    const d = await this.o.authorizer().authorize({
      user,
      verb,
      isResourceRequest: true,
      path: '',
      apiGroup: this.o.rbacGroup,
      apiVersion: 'v1',
      namespace,
      resource,
      subresource: '',
      name,
    });
    return d.decision === 'allow';
  }
}
