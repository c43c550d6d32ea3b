// Matching one RBAC PolicyRule against a request (spec 001 §5.14): `*` in
// verbs, apiGroups and resources; sub-resources as `resource/subresource`
// with `*/subresource` matching that sub-resource of every resource (kube
// has no `resource/*` form, so neither do we); empty resourceNames = every
// name; nonResourceURLs with a trailing `*` as a prefix match.

import type { RequestAttributes } from '../types.js';

/** A PolicyRule as stored (rbac.authorization.<domain>/v1). */
export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

const has = (list: readonly string[] | undefined, v: string): boolean => list !== undefined && list.includes(v);

export function verbMatches(rule: PolicyRule, verb: string): boolean {
  return has(rule.verbs, '*') || has(rule.verbs, verb);
}

export function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  return has(rule.apiGroups, '*') || has(rule.apiGroups, group);
}

export function resourceMatches(rule: PolicyRule, resource: string, subresource: string): boolean {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  for (const r of rule.resources ?? []) {
    if (r === '*' || r === combined) return true;
    if (subresource && r.length === subresource.length + 2 && r.startsWith('*/') && r.endsWith(subresource)) return true;
  }
  return false;
}

export function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(name);
}

export function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  for (const u of rule.nonResourceURLs ?? []) {
    if (u === '*' || u === path) return true;
    if (u.endsWith('*') && path.startsWith(u.slice(0, -1))) return true;
  }
  return false;
}

/** Kubernetes' RuleAllows. */
export function ruleAllows(attrs: RequestAttributes, rule: PolicyRule): boolean {
  if (attrs.isResourceRequest) {
    return (
      verbMatches(rule, attrs.verb) &&
      apiGroupMatches(rule, attrs.apiGroup) &&
      resourceMatches(rule, attrs.resource, attrs.subresource) &&
      resourceNameMatches(rule, attrs.name)
    );
  }
  return verbMatches(rule, attrs.verb) && nonResourceURLMatches(rule, attrs.path);
}

/** Reads the rules of a stored Role/ClusterRole defensively (the store holds validated objects, but never trust shapes). */
export function rulesOf(obj: { [k: string]: unknown }): PolicyRule[] {
  const raw = obj.rules;
  if (!Array.isArray(raw)) return [];
  const out: PolicyRule[] = [];
  for (const r of raw) {
    if (!r || typeof r !== 'object') continue;
    const o = r as Record<string, unknown>;
    const list = (k: string): string[] | undefined => (Array.isArray(o[k]) ? (o[k] as unknown[]).filter((x): x is string => typeof x === 'string') : undefined);
    const rule: PolicyRule = { verbs: list('verbs') ?? [] };
    for (const k of ['apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'] as const) {
      const v = list(k);
      if (v) rule[k] = v;
    }
    out.push(rule);
  }
  return out;
}
