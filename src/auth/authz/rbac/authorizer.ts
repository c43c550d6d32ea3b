// The RBAC authorizer (spec 001 §5.14): allows when some rule of a role bound
// to the caller (by user name, group or service account) allows the request;
// otherwise no opinion — RBAC never denies, permissions are purely additive.

import type { UserInfo } from '../../types.js';
import type { Authorizer, Decision, NonResourceRule, RequestAttributes, ResourceRule, RulesResult } from '../types.js';
import type { RbacIndex, RuleSource } from './index.js';
import { type PolicyRule, ruleAllows } from './rules.js';

export class RbacAuthorizer implements Authorizer {
  constructor(readonly index: RbacIndex) {}

  async authorize(attrs: RequestAttributes): Promise<Decision> {
    return this.decide(attrs);
  }

  /** synchronous form, for the benchmark and the escalation checks */
  decide(attrs: RequestAttributes): Decision {
    let reason: string | undefined;
    this.index.visit(attrs.user, attrs.namespace, (source, rule) => {
      if (!ruleAllows(attrs, rule)) return false;
      reason = `RBAC: allowed by ${describeSource(source)}`;
      return true;
    });
    return reason !== undefined ? { decision: 'allow', reason } : { decision: 'noOpinion', reason: '' };
  }

  async rulesFor(user: UserInfo, namespace: string): Promise<RulesResult> {
    return toRulesResult(this.index.rulesFor(user, namespace));
  }
}

/** kube's describer: `ClusterRoleBinding "x" of ClusterRole "y" to User "z"`, `RoleBinding "x/ns" of Role "y" to …` */
export function describeSource(s: RuleSource): string {
  const b = s.binding;
  const name = b.kind === 'RoleBinding' ? `${b.name}/${b.namespace}` : b.name;
  const subject = s.subject.kind === 'ServiceAccount' && s.subject.namespace ? `${s.subject.namespace}/${s.subject.name}` : s.subject.name;
  return `${b.kind} ${JSON.stringify(name)} of ${b.roleRef.kind} ${JSON.stringify(b.roleRef.name)} to ${s.subject.kind} ${JSON.stringify(subject)}`;
}

/** PolicyRules → SelfSubjectRulesReview's two lists (kube's ConvertToResourceRules / NonResourceRules) */
export function toRulesResult(rules: PolicyRule[]): RulesResult {
  const resourceRules: ResourceRule[] = [];
  const nonResourceRules: NonResourceRule[] = [];
  for (const r of rules) {
    if ((r.resources ?? []).length > 0) {
      resourceRules.push({
        verbs: [...r.verbs],
        apiGroups: [...(r.apiGroups ?? [])],
        resources: [...(r.resources ?? [])],
        ...(r.resourceNames?.length ? { resourceNames: [...r.resourceNames] } : {}),
      });
    }
    if ((r.nonResourceURLs ?? []).length > 0) nonResourceRules.push({ verbs: [...r.verbs], nonResourceURLs: [...(r.nonResourceURLs ?? [])] });
  }
  return { resourceRules, nonResourceRules, incomplete: false };
}
