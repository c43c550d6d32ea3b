// The audit policy (`--audit-policy-file`, issue 16 item 3): loading with
// errors that name the file and the field, and matching a request to a level.
// Matching is kube-apiserver's policy checker: rules in order, the first whose
// users, userGroups, verbs and then resources/namespaces or nonResourceURLs all
// match decides; no match means level None. The policy's omitStages are added
// to every rule's.

import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { type AuditAttributes, type GroupResources, LEVELS, type Level, type Policy, type PolicyRule, type RequestAuditConfig, STAGES, type Stage } from './types.js';

const POLICY_KEYS = new Set(['apiVersion', 'kind', 'metadata', 'rules', 'omitStages', 'omitManagedFields']);
const RULE_KEYS = new Set(['level', 'users', 'userGroups', 'verbs', 'resources', 'namespaces', 'nonResourceURLs', 'omitStages', 'omitManagedFields']);
const GROUP_RESOURCE_KEYS = new Set(['group', 'resources', 'resourceNames']);
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export class PolicyError extends Error {}

/** Reads and validates the policy file; every problem is reported, each with its field path. */
export function loadPolicyFile(path: string, apiDomain: string): Policy {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new PolicyError(`--audit-policy-file: ${path}: ${(e as Error).message}`);
  }
  try {
    return parsePolicy(text, apiDomain);
  } catch (e) {
    throw new PolicyError(`--audit-policy-file: ${path}: ${(e as Error).message}`);
  }
}

/**
 * `apiVersion` must be `audit.<domain>/v1`; `audit.k8s.io/v1` is also read so a
 * policy written for Kubernetes works unchanged (docs/audit.md). Unknown fields
 * are errors (a misspelt `omitStage` would otherwise silently log more).
 */
export function parsePolicy(text: string, apiDomain: string): Policy {
  let doc: unknown;
  try {
    doc = parseYaml(text, { maxAliasCount: 100 });
  } catch (e) {
    throw new PolicyError(`not valid YAML or JSON: ${(e as Error).message.split('\n')[0]}`);
  }
  const errs: string[] = [];
  if (!isObject(doc)) throw new PolicyError('the file must hold a Policy object');
  const versions = [`audit.${apiDomain}/v1`, 'audit.k8s.io/v1'];
  if (!versions.includes(doc.apiVersion as string)) {
    errs.push(`apiVersion: Unsupported value: ${JSON.stringify(doc.apiVersion ?? '')}: supported values: ${[...new Set(versions)].map((v) => `"${v}"`).join(', ')}`);
  }
  if (doc.kind !== 'Policy') errs.push(`kind: Unsupported value: ${JSON.stringify(doc.kind ?? '')}: supported values: "Policy"`);
  unknownKeys(doc, POLICY_KEYS, '', errs);
  const omitStages = stages(doc.omitStages, 'omitStages', errs);
  const omitManagedFields = optionalBool(doc.omitManagedFields, 'omitManagedFields', errs) ?? false;
  const rules: PolicyRule[] = [];
  if (doc.rules !== undefined && !Array.isArray(doc.rules)) errs.push('rules: Invalid value: must be a list');
  else (doc.rules as unknown[] | undefined)?.forEach((r, i) => {
    const rule = parseRule(r, `rules[${i}]`, errs);
    if (rule) rules.push(rule);
  });
  if (errs.length === 0 && rules.length === 0) errs.push('rules: Required value: a policy with 0 rules logs nothing (kube refuses it too)');
  if (errs.length > 0) throw new PolicyError(errs.join('; '));
  return { omitStages, omitManagedFields, rules };
}

function parseRule(r: unknown, path: string, errs: string[]): PolicyRule | undefined {
  if (!isObject(r)) {
    errs.push(`${path}: Invalid value: must be an object`);
    return undefined;
  }
  unknownKeys(r, RULE_KEYS, `${path}.`, errs);
  let level: Level = 'None';
  if (r.level === undefined || r.level === '') errs.push(`${path}.level: Required value`);
  else if (!LEVELS.includes(r.level as Level)) errs.push(`${path}.level: Unsupported value: ${JSON.stringify(r.level)}: supported values: ${LEVELS.map((l) => `"${l}"`).join(', ')}`);
  else level = r.level as Level;
  const nonResourceURLs = strings(r.nonResourceURLs, `${path}.nonResourceURLs`, errs);
  nonResourceURLs.forEach((u, i) => {
    if (u === '*') return;
    if (!u.startsWith('/')) errs.push(`${path}.nonResourceURLs[${i}]: Invalid value: ${JSON.stringify(u)}: non-resource URL rules must begin with a '/' character`);
    if (u !== '' && u.slice(0, -1).includes('*')) errs.push(`${path}.nonResourceURLs[${i}]: Invalid value: ${JSON.stringify(u)}: non-resource URL wildcards '*' must be the final character of the rule`);
  });
  const resources: GroupResources[] = [];
  if (r.resources !== undefined && !Array.isArray(r.resources)) errs.push(`${path}.resources: Invalid value: must be a list`);
  else (r.resources as unknown[] | undefined)?.forEach((g, i) => {
    const p = `${path}.resources[${i}]`;
    if (!isObject(g)) {
      errs.push(`${p}: Invalid value: must be an object`);
      return;
    }
    unknownKeys(g, GROUP_RESOURCE_KEYS, `${p}.`, errs);
    const group = g.group === undefined ? '' : g.group;
    if (typeof group !== 'string') errs.push(`${p}.group: Invalid value: must be a string`);
    else if (group !== '' && !DNS_SUBDOMAIN.test(group)) errs.push(`${p}.group: Invalid value: ${JSON.stringify(group)}: a group is a lower-case DNS subdomain such as apps or rbac.authorization.orch.io ('' is the core group)`);
    const res = strings(g.resources, `${p}.resources`, errs);
    const names = strings(g.resourceNames, `${p}.resourceNames`, errs);
    if (names.length > 0 && res.length === 0) errs.push(`${p}.resourceNames: Invalid value: using resourceNames requires at least one resource`);
    resources.push({ group: typeof group === 'string' ? group : '', resources: res, resourceNames: names });
  });
  const namespaces = strings(r.namespaces, `${path}.namespaces`, errs);
  if (nonResourceURLs.length > 0 && (resources.length > 0 || namespaces.length > 0)) {
    errs.push(`${path}.nonResourceURLs: Invalid value: rules cannot apply to both regular resources and non-resource URLs`);
  }
  return {
    level,
    users: strings(r.users, `${path}.users`, errs),
    userGroups: strings(r.userGroups, `${path}.userGroups`, errs),
    verbs: strings(r.verbs, `${path}.verbs`, errs),
    resources,
    namespaces,
    nonResourceURLs,
    omitStages: stages(r.omitStages, `${path}.omitStages`, errs),
    omitManagedFields: optionalBool(r.omitManagedFields, `${path}.omitManagedFields`, errs),
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function unknownKeys(o: Record<string, unknown>, allowed: Set<string>, prefix: string, errs: string[]): void {
  for (const k of Object.keys(o)) if (!allowed.has(k)) errs.push(`${prefix}${k}: unknown field`);
}

function strings(v: unknown, path: string, errs: string[]): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) {
    errs.push(`${path}: Invalid value: must be a list of strings`);
    return [];
  }
  return v as string[];
}

function stages(v: unknown, path: string, errs: string[]): Stage[] {
  const list = strings(v, path, errs);
  list.forEach((s, i) => {
    if (!STAGES.includes(s as Stage)) errs.push(`${path}[${i}]: Invalid value: ${JSON.stringify(s)}: allowed stages are ${STAGES.join(',')}`);
  });
  return list.filter((s): s is Stage => STAGES.includes(s as Stage));
}

function optionalBool(v: unknown, path: string, errs: string[]): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') {
    errs.push(`${path}: Invalid value: must be true or false`);
    return undefined;
  }
  return v;
}

/** The compiled policy: per rule, the union of its and the policy's omitStages. */
export class PolicyEvaluator {
  private readonly rules: { rule: PolicyRule; config: RequestAuditConfig }[];
  private readonly fallback: RequestAuditConfig;

  constructor(policy: Policy) {
    this.rules = policy.rules.map((rule) => ({
      rule,
      config: {
        level: rule.level,
        omitStages: new Set([...policy.omitStages, ...rule.omitStages]),
        omitManagedFields: rule.omitManagedFields ?? policy.omitManagedFields,
      },
    }));
    this.fallback = { level: 'None', omitStages: new Set(policy.omitStages), omitManagedFields: policy.omitManagedFields };
  }

  evaluate(attrs: AuditAttributes): RequestAuditConfig {
    for (const r of this.rules) if (ruleMatches(r.rule, attrs)) return r.config;
    return this.fallback;
  }
}

export function ruleMatches(r: PolicyRule, a: AuditAttributes): boolean {
  if (r.users.length > 0 && (!a.user || !r.users.includes(a.user.username))) return false;
  if (r.userGroups.length > 0 && (!a.user || !a.user.groups.some((g) => r.userGroups.includes(g)))) return false;
  if (r.verbs.length > 0 && !r.verbs.includes(a.verb)) return false;
  if (r.namespaces.length > 0 || r.resources.length > 0) return resourceMatches(r, a);
  if (r.nonResourceURLs.length > 0) return !a.isResourceRequest && r.nonResourceURLs.some((spec) => pathMatches(a.path, spec));
  return true;
}

function pathMatches(path: string, spec: string): boolean {
  if (spec === '*' || spec === path) return true;
  return spec.endsWith('*') && path.startsWith(spec.slice(0, -1));
}

function resourceMatches(r: PolicyRule, a: AuditAttributes): boolean {
  if (!a.isResourceRequest) return false;
  // cluster-scoped resources have namespace ''
  if (r.namespaces.length > 0 && !r.namespaces.includes(a.namespace)) return false;
  if (r.resources.length === 0) return true;
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  for (const gr of r.resources) {
    if (gr.group !== a.group) continue;
    if (gr.resources.length === 0) return true;
    if (gr.resourceNames.length > 0 && !gr.resourceNames.includes(a.name)) continue;
    for (const res of gr.resources) {
      // `pods` matches no sub-resource of pods (as RBAC); `*` matches everything
      if (res === combined || res === '*') return true;
      if (a.subresource && res.startsWith('*/') && res.slice(2) === a.subresource) return true;
      if (res.endsWith('/*') && res.slice(0, -2) === a.resource) return true;
    }
  }
  return false;
}
