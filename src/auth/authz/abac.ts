// ABAC (spec 001 §5.17): `--authorization-policy-file` holds one JSON Policy
// (`abac.authorization.<domain>/v1beta1`) per line. Blank lines and lines
// starting with `#` are skipped, as kube does. Matching follows kube's ABAC:
// a policy matches when its subject matches (user and/or group; a policy
// naming neither matches nobody; `*` as user or group is every authenticated
// user, never an anonymous one: spec §5.9, kube's v1beta1 conversion), its verb matches (`readonly`
// allows only get/list/watch) and either its resource fields (namespace,
// resource, apiGroup: `*` or equal; empty equals only empty, e.g. the
// namespace of cluster-scoped requests) or its nonResourcePath (`*`, exact,
// or a `/prefix/*`) match. A match allows; otherwise no opinion.

import { readFileSync } from 'node:fs';
import type { UserInfo } from '../types.js';
import type { Authorizer, Decision, NonResourceRule, RequestAttributes, ResourceRule, RulesResult } from './types.js';

export interface AbacPolicySpec {
  user: string;
  group: string;
  readonly: boolean;
  apiGroup: string;
  resource: string;
  namespace: string;
  nonResourcePath: string;
}

const STRING_FIELDS = ['user', 'group', 'apiGroup', 'resource', 'namespace', 'nonResourcePath'] as const;
const READ_ONLY_VERBS = new Set(['get', 'list', 'watch']);
const ALL_AUTHENTICATED = 'system:authenticated';

/** Parses the policy file text; errors name the file and line number (1-based). */
export function parseAbacPolicies(text: string, apiDomain: string, file = 'policy file'): AbacPolicySpec[] {
  const apiVersion = `abac.authorization.${apiDomain}/v1beta1`;
  const out: AbacPolicySpec[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    const where = `--authorization-policy-file: ${file}: line ${i + 1}`;
    let obj: unknown;
    try {
      obj = JSON.parse(line);
    } catch (e) {
      throw new Error(`${where}: not valid JSON: ${(e as Error).message}`);
    }
    if (!obj || typeof obj !== 'object' || Array.isArray(obj)) throw new Error(`${where}: a policy must be a JSON object`);
    const p = obj as Record<string, unknown>;
    if (p.apiVersion !== apiVersion) throw new Error(`${where}: apiVersion must be "${apiVersion}", got ${JSON.stringify(p.apiVersion)}`);
    if (p.kind !== 'Policy') throw new Error(`${where}: kind must be "Policy", got ${JSON.stringify(p.kind)}`);
    const spec = p.spec;
    if (!spec || typeof spec !== 'object' || Array.isArray(spec)) throw new Error(`${where}: spec must be an object`);
    const s = spec as Record<string, unknown>;
    const known = new Set<string>([...STRING_FIELDS, 'readonly']);
    for (const k of Object.keys(s)) if (!known.has(k)) throw new Error(`${where}: spec.${k}: unknown field`);
    const policy: AbacPolicySpec = { user: '', group: '', readonly: false, apiGroup: '', resource: '', namespace: '', nonResourcePath: '' };
    for (const f of STRING_FIELDS) {
      const v = s[f];
      if (v === undefined) continue;
      if (typeof v !== 'string') throw new Error(`${where}: spec.${f}: must be a string`);
      policy[f] = v;
    }
    if (s.readonly !== undefined) {
      if (typeof s.readonly !== 'boolean') throw new Error(`${where}: spec.readonly: must be a boolean`);
      policy.readonly = s.readonly;
    }
    // spec §5.9: wildcard rules do not cover anonymous requests. As kube's v1beta1 conversion, a `*` user or
    // group is the group of every authenticated user (and the user is dropped).
    if (policy.user === '*' || policy.group === '*') {
      policy.group = ALL_AUTHENTICATED;
      policy.user = '';
    }
    out.push(policy);
  }
  return out;
}

export function loadAbacPolicyFile(path: string, apiDomain: string): AbacPolicySpec[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`--authorization-policy-file: ${(e as Error).message}`);
  }
  return parseAbacPolicies(text, apiDomain, path);
}

function subjectMatches(p: AbacPolicySpec, user: UserInfo): boolean {
  let matched = false;
  if (p.user !== '') {
    if (p.user !== user.username) return false;
    matched = true;
  }
  if (p.group !== '') {
    if (!user.groups.includes(p.group)) return false;
    matched = true;
  }
  return matched;
}

function resourceMatches(p: AbacPolicySpec, a: RequestAttributes): boolean {
  return (
    a.isResourceRequest &&
    (p.namespace === '*' || p.namespace === a.namespace) &&
    (p.resource === '*' || p.resource === a.resource) &&
    (p.apiGroup === '*' || p.apiGroup === a.apiGroup)
  );
}

function nonResourceMatches(p: AbacPolicySpec, a: RequestAttributes): boolean {
  if (a.isResourceRequest || p.nonResourcePath === '') return false;
  if (p.nonResourcePath === '*' || p.nonResourcePath === a.path) return true;
  return p.nonResourcePath.endsWith('*') && a.path.startsWith(p.nonResourcePath.slice(0, -1));
}

export class AbacAuthorizer implements Authorizer {
  constructor(private readonly policies: readonly AbacPolicySpec[]) {}

  async authorize(a: RequestAttributes): Promise<Decision> {
    for (const p of this.policies) {
      if (!subjectMatches(p, a.user)) continue;
      if (p.readonly && !READ_ONLY_VERBS.has(a.verb)) continue;
      if (resourceMatches(p, a) || nonResourceMatches(p, a)) return { decision: 'allow', reason: '' };
    }
    return { decision: 'noOpinion', reason: 'No policy matched.' };
  }

  /** As kube's ABAC RulesFor: every policy whose subject matches, as a rule. */
  async rulesFor(user: UserInfo, namespace: string): Promise<RulesResult> {
    const resourceRules: ResourceRule[] = [];
    const nonResourceRules: NonResourceRule[] = [];
    for (const p of this.policies) {
      if (!subjectMatches(p, user)) continue;
      const verbs = p.readonly ? ['get', 'list', 'watch'] : ['*'];
      if ((p.namespace === '*' || p.namespace === namespace) && p.resource !== '') {
        resourceRules.push({ verbs, apiGroups: [p.apiGroup], resources: [p.resource] });
      }
      if (p.nonResourcePath !== '') nonResourceRules.push({ verbs, nonResourceURLs: [p.nonResourcePath] });
    }
    return { resourceRules, nonResourceRules, incomplete: false };
  }
}
