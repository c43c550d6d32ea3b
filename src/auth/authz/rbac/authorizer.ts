// The RBAC authorizer (spec 001 §5.14): allows when some rule of a role bound
// to the caller (by user name, group or service account) allows the request;
// otherwise no opinion — RBAC never denies, permissions are purely additive.
// A binding to a missing role is a resolution error, as in kube's rule
// resolver: not an authorizer error, but the no-opinion reason
// `RBAC: <aggregate>` and the SelfSubjectRulesReview's evaluationError.

import type { UserInfo } from '../../types.js';
import { aggregateErrors } from '../errors.js';
import type { Authorizer, Decision, NonResourceRule, RequestAttributes, ResourceRule, RulesResult } from '../types.js';
import type { Binding, RbacIndex, RuleSource } from './index.js';
import { type PolicyRule, ruleAllows } from './rules.js';

export class RbacAuthorizer implements Authorizer {
  /** `rbacGroup`: `rbac.authorization.<domain>`, which names the roles in the errors */
  constructor(
    readonly index: RbacIndex,
    private readonly rbacGroup: string,
  ) {}

  async authorize(attrs: RequestAttributes): Promise<Decision> {
    return this.decide(attrs);
  }

  /** synchronous form, for the benchmark and the escalation checks */
  decide(attrs: RequestAttributes): Decision {
    let reason: string | undefined;
    const errors: string[] = [];
    this.index.visit(
      attrs.user,
      attrs.namespace,
      (source, rule) => {
        if (!ruleAllows(attrs, rule)) return false;
        reason = `RBAC: allowed by ${describeSource(source)}`;
        return true;
      },
      (b) => errors.push(this.resolutionError(b)),
    );
    if (reason !== undefined) return { decision: 'allow', reason };
    // kube: `RBAC: ${utilerrors.NewAggregate(errors)}` when there were any
    return { decision: 'noOpinion', reason: errors.length > 0 ? `RBAC: ${aggregateErrors(errors)}` : '' };
  }

  /** kube's rules are complete (incomplete: false) even when some role is missing; the error says which */
  async rulesFor(user: UserInfo, namespace: string): Promise<RulesResult> {
    const errors: string[] = [];
    const result = toRulesResult(this.index.rulesFor(user, namespace, (b) => errors.push(this.resolutionError(b))));
    return errors.length > 0 ? { ...result, errors } : result;
  }

  /** the role lister's NotFound (`role.rbac.authorization.k8s.io "x" not found`), or kube's unsupported kind */
  private resolutionError(b: Binding): string {
    const { kind, name } = b.roleRef;
    if (kind !== 'Role' && kind !== 'ClusterRole') return `unsupported role reference kind: ${JSON.stringify(kind)}`;
    return `${kind.toLowerCase()}.${this.rbacGroup} ${JSON.stringify(name)} not found`;
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
