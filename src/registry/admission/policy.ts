// The in-process alternative to webhooks (kube's ValidatingAdmissionPolicy
// plugin): a policy (CEL validations, matchConstraints, paramKind) applies
// through its bindings (matchResources, paramRef, validationActions). For each
// binding that matches a request, the policy is evaluated once per parameter
// object; a false validation Denies (a Status with the validation's reason
// and code), Warns (a `Warning` header) and/or Audits (an audit annotation).
// An expression error or a misconfigured binding follows the policy's
// failurePolicy (Fail by default).

import { StatusError } from '../../core/errors.js';
import type { ApiObject } from '../types.js';
import { labelsMatch, namespaceSelectorMatches, objectSelectorMatches, ruleMatches } from './matching.js';
import type { CompiledBinding, CompiledPolicy, MatchResources } from './policy-config.js';
import type { AdmissionLookups, AdmissionRequest, ValidatingPlugin } from './types.js';
import { exemptFromWebhooks, reviewRequest } from './webhooks.js';

export interface PolicyEnvironment {
  apiDomain: string;
  /** every policy with the bindings naming it */
  policies(): readonly { policy: CompiledPolicy; bindings: readonly CompiledBinding[] }[];
  lookups: AdmissionLookups;
  versionsOf(group: string, resource: string): readonly string[];
}

const CODES: Record<string, number> = { Unauthorized: 401, Forbidden: 403, Invalid: 422, RequestEntityTooLarge: 413 };

/** a binding's matchResources without resourceRules narrows by selectors only (kube: rules then do not constrain) */
function matches(m: MatchResources, req: AdmissionRequest, env: PolicyEnvironment, binding = false): boolean {
  const versions = m.matchPolicy === 'Equivalent' ? env.versionsOf(req.def.group, req.def.resource) : [req.def.version];
  const vs = versions.includes(req.def.version) ? versions : [req.def.version, ...versions];
  if (!(binding && m.rules.length === 0) && !m.rules.some((r) => ruleMatches(r, req, vs))) return false;
  if (m.exclude.some((r) => ruleMatches(r, req, vs))) return false;
  if (!namespaceSelectorMatches(m.namespaceSelector, req, (n) => env.lookups.namespace(n)?.metadata?.labels)) return false;
  return objectSelectorMatches(m.objectSelector, req);
}

class Misconfigured extends Error {}

export class ValidatingAdmissionPolicies implements ValidatingPlugin {
  readonly name = 'ValidatingAdmissionPolicy';
  constructor(private readonly env: PolicyEnvironment) {}

  async validate(req: AdmissionRequest): Promise<void> {
    const all = this.env.policies();
    if (all.length === 0 || exemptFromWebhooks(req, this.env.apiDomain)) return;
    let denied: StatusError | undefined;
    let request: Record<string, unknown> | undefined;
    for (const { policy, bindings } of all) {
      if (bindings.length === 0 || !matches(policy.match, req, this.env)) continue;
      for (const b of bindings) {
        if (b.match && !matches(b.match, req, this.env, true)) continue;
        request ??= reviewRequest(req, this.env.apiDomain);
        const prefix = `ValidatingAdmissionPolicy '${policy.name}' with binding '${b.name}'`;
        const fail = (why: string): void => {
          if (policy.failurePolicy === 'Ignore') return;
          denied ??= new StatusError(422, 'Invalid', `${prefix} denied request: ${why}`);
        };
        let paramsList: (ApiObject | null)[];
        try {
          if (policy.broken) throw new Misconfigured(`the policy cannot be used: ${policy.broken}`);
          paramsList = this.params(policy, b, req);
        } catch (e) {
          if (!(e instanceof Misconfigured)) throw e;
          fail(`failed to configure binding: ${e.message}`);
          continue;
        }
        if (paramsList.length === 0) {
          if (b.paramRef?.parameterNotFoundAction === 'Deny') {
            // not subject to the failure policy: the binding asked for it
            denied ??= new StatusError(422, 'Invalid', `${prefix} denied request: failed to configure binding: no params found for policy binding with \`Deny\` parameterNotFoundAction`);
          }
          continue;
        }
        const namespaceObject = req.def.scope === 'Namespaced' && req.namespace ? (this.env.lookups.namespace(req.namespace) ?? null) : null;
        for (const params of paramsList) {
          const vars: Record<string, unknown> = {
            object: req.object ?? null,
            oldObject: req.oldObject ?? null,
            request,
            params,
            namespaceObject,
            variables: {},
          };
          const outcome = this.evaluate(policy, vars);
          if (outcome.error) {
            fail(outcome.error);
            continue;
          }
          for (const [key, value] of outcome.annotations) req.auditAnnotations[`${policy.name}/${key}`] = value;
          for (const f of outcome.failures) {
            if (b.actions.includes('Deny')) denied ??= new StatusError(CODES[f.reason] ?? 422, f.reason, `${prefix} denied request: ${f.message}`);
            if (b.actions.includes('Warn')) req.warnings.push(`Validation failed for ${prefix}: ${f.message}`);
            if (b.actions.includes('Audit')) {
              const key = `validation.policy.admission.${this.env.apiDomain}/validation_failure`;
              const list = JSON.parse(req.auditAnnotations[key] ?? '[]') as unknown[];
              list.push({ message: f.message, policy: policy.name, binding: b.name, expressionIndex: f.index, validationActions: b.actions });
              req.auditAnnotations[key] = JSON.stringify(list);
            }
          }
        }
      }
    }
    if (denied) throw denied;
  }

  /** the parameter objects to evaluate with: [null] without paramKind; [] when none is found */
  private params(policy: CompiledPolicy, b: CompiledBinding, req: AdmissionRequest): (ApiObject | null)[] {
    if (!policy.paramKind) return [null];
    const ref = b.paramRef;
    if (!ref) throw new Misconfigured(`policy has paramKind ${policy.paramKind.kind} but binding has no paramRef`);
    const source = this.env.lookups.objectsOf(policy.paramKind.apiVersion, policy.paramKind.kind, '');
    if (!source) throw new Misconfigured(`paramKind ${policy.paramKind.apiVersion}, Kind=${policy.paramKind.kind} is not served`);
    let namespace = '';
    if (source.namespaced) {
      namespace = ref.namespace ?? req.namespace;
      if (!namespace) throw new Misconfigured('cannot use a namespaced paramKind without paramRef.namespace for a cluster-scoped request');
    }
    const objs = this.env.lookups.objectsOf(policy.paramKind.apiVersion, policy.paramKind.kind, namespace)!.list();
    if (ref.name) return objs.filter((o) => o.metadata?.name === ref.name);
    return objs.filter((o) => labelsMatch(ref.selector ?? [], o.metadata?.labels));
  }

  /** matchConditions, variables, validations and audit annotations of one policy with one params object */
  private evaluate(policy: CompiledPolicy, vars: Record<string, unknown>): {
    error?: string;
    failures: { message: string; reason: string; index: number }[];
    annotations: [string, string][];
  } {
    const failures: { message: string; reason: string; index: number }[] = [];
    const annotations: [string, string][] = [];
    let condError: string | undefined;
    for (const c of policy.matchConditions) {
      try {
        const v = c.expr.evaluate(vars);
        if (v === false) return { failures, annotations };
        if (v !== true) condError ??= `matchCondition '${c.name}' did not evaluate to a bool`;
      } catch (e) {
        condError ??= `matchCondition '${c.name}' failed: ${(e as Error).message}`;
      }
    }
    if (condError) return { error: condError, failures, annotations };
    const variables = vars.variables as Record<string, unknown>;
    for (const v of policy.variables) {
      try {
        variables[v.name] = v.expr.evaluate(vars);
      } catch (e) {
        return { error: `variable '${v.name}' resulted in error: ${(e as Error).message}`, failures, annotations };
      }
    }
    for (let i = 0; i < policy.validations.length; i++) {
      const v = policy.validations[i]!;
      let ok: unknown;
      try {
        ok = v.expr.evaluate(vars);
      } catch (e) {
        return { error: `expression '${v.expr.source}' resulted in error: ${(e as Error).message}`, failures, annotations };
      }
      if (ok === true) continue;
      if (ok !== false) return { error: `expression '${v.expr.source}' did not evaluate to a bool`, failures, annotations };
      let message = v.message ?? `failed expression: ${v.expr.source}`;
      if (v.messageExpr) {
        try {
          const m = v.messageExpr.evaluate(vars);
          if (typeof m === 'string' && m.trim() !== '' && !/[\r\n]/.test(m)) message = m.trim();
        } catch {
          // kube falls back to `message` when messageExpression fails
        }
      }
      failures.push({ message, reason: v.reason, index: i });
    }
    for (const a of policy.auditAnnotations) {
      try {
        const value = a.expr.evaluate(vars);
        if (typeof value === 'string') annotations.push([a.key, value]);
      } catch (e) {
        return { error: `auditAnnotation '${a.key}' resulted in error: ${(e as Error).message}`, failures, annotations };
      }
    }
    return { failures, annotations };
  }
}
