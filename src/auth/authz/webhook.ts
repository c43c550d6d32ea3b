// The Webhook authorizer (spec 001 §5.16, §4): each decision is a
// SubjectAccessReview POSTed to the server of a kubeconfig-format file and
// answered in the same version. `allowed: true` allows, `denied: true`
// denies, anything else is no opinion. Allowed answers are cached for
// authorizedTTL, the others for unauthorizedTTL, keyed by the whole review
// spec; transport errors, timeouts and answers that are not a review are
// errors: the failurePolicy (NoOpinion or Deny; the flag form: NoOpinion)
// gives the decision and the error goes with it, as kube's webhook
// authorizer returns (decisionOnError, "", err); they are never cached.
// matchConditions (CEL over `request`, the v1 review spec) are compiled once
// by the configuration loader: any false skips the webhook, an error with no
// false follows the failurePolicy.

import type { WebhookTarget } from '../authn/webhook.js';
import type { CompiledExpression } from '../authn/cel.js';
import { httpJson } from '../authn/http-client.js';
import type { WebhookMetricsSink } from './metrics.js';
import type { UserInfo } from '../types.js';
import type { Authorizer, Decision, RequestAttributes, RulesResult, SelectorRequirement } from './types.js';

export type FailurePolicy = 'NoOpinion' | 'Deny';

export interface WebhookAuthorizerOptions {
  /** the authorizer's name in the chain (metrics labels) */
  name: string;
  target: WebhookTarget;
  /** `authorization.<domain>` */
  group: string;
  version: 'v1' | 'v1beta1';
  timeoutMs: number;
  authorizedTtlMs: number;
  unauthorizedTtlMs: number;
  failurePolicy: FailurePolicy;
  matchConditions?: readonly CompiledExpression[];
  metrics?: WebhookMetricsSink;
  now: () => number;
}

const MAX_CACHE_ENTRIES = 10_000;

type Requirements = { requirements: SelectorRequirement[] } | undefined;
const selector = (r: SelectorRequirement[] | undefined): Requirements => (r && r.length > 0 ? { requirements: r } : undefined);

/** The SubjectAccessReview spec in v1 form (also the `request` of matchConditions). */
export function reviewSpec(a: RequestAttributes): Record<string, unknown> {
  const spec: Record<string, unknown> = { user: a.user.username, groups: a.user.groups };
  if (a.user.uid) spec.uid = a.user.uid;
  if (a.user.extra && Object.keys(a.user.extra).length > 0) spec.extra = a.user.extra;
  if (a.isResourceRequest) {
    const ra: Record<string, unknown> = { namespace: a.namespace, verb: a.verb, group: a.apiGroup, version: a.apiVersion, resource: a.resource };
    if (a.subresource) ra.subresource = a.subresource;
    if (a.name) ra.name = a.name;
    const ls = selector(a.labelSelector);
    const fs = selector(a.fieldSelector);
    if (ls) ra.labelSelector = ls;
    if (fs) ra.fieldSelector = fs;
    spec.resourceAttributes = ra;
  } else {
    spec.nonResourceAttributes = { path: a.path, verb: a.verb };
  }
  return spec;
}

/** v1beta1 names the groups field `group` (authorization v1beta1 SubjectAccessReviewSpec). */
function toVersion(spec: Record<string, unknown>, version: 'v1' | 'v1beta1'): Record<string, unknown> {
  if (version === 'v1') return spec;
  const { groups, ...rest } = spec;
  return { ...rest, group: groups };
}

export class WebhookAuthorizer implements Authorizer {
  private readonly cache = new Map<string, { until: number; decision: Decision }>();
  /** reviews actually sent (tests) */
  calls = 0;

  constructor(private readonly o: WebhookAuthorizerOptions) {}

  private now(): number {
    return this.o.now();
  }

  async authorize(a: RequestAttributes): Promise<Decision> {
    const spec = reviewSpec(a);
    const skip = this.matchConditions(spec);
    if (skip) return skip;
    const key = JSON.stringify(spec);
    const now = this.now();
    const hit = this.cache.get(key);
    if (hit && now < hit.until) {
      this.o.metrics?.cacheHit(this.o.name);
      return hit.decision;
    }
    const started = performance.now();
    let decision: Decision;
    try {
      decision = await this.review(spec);
      this.o.metrics?.evaluated(this.o.name, 'success', (performance.now() - started) / 1000);
    } catch (e) {
      const msg = (e as Error).message;
      const result = /timed out/.test(msg) ? 'timeout' : 'error';
      this.o.metrics?.evaluated(this.o.name, result, (performance.now() - started) / 1000);
      return this.failed(`webhook ${this.o.name}: ${msg}`, result);
    }
    this.remember(key, decision, now);
    return decision;
  }

  /** undefined: call the webhook; otherwise the decision without calling it */
  private matchConditions(spec: Record<string, unknown>): Decision | undefined {
    const conds = this.o.matchConditions ?? [];
    let error: string | undefined;
    for (const c of conds) {
      let r: unknown;
      try {
        r = c.evaluate({ request: spec });
      } catch (e) {
        error ??= (e as Error).message;
        continue;
      }
      if (r === false) {
        this.o.metrics?.matchConditionExcluded(this.o.name);
        return { decision: 'noOpinion' };
      }
      if (r !== true) error ??= `expression ${JSON.stringify(c.source)} did not evaluate to a bool`;
    }
    if (error === undefined) return undefined;
    this.o.metrics?.matchConditionError(this.o.name);
    return this.failed(`webhook ${this.o.name}: matchConditions: ${error}`);
  }

  /** kube: (decisionOnError, "", err): no reason, the error travels as an error */
  private failed(error: string, result?: 'timeout' | 'error'): Decision {
    if (this.o.failurePolicy === 'Deny') return { decision: 'deny', errors: [error] };
    if (result) this.o.metrics?.failOpen(this.o.name, result);
    return { decision: 'noOpinion', errors: [error] };
  }

  /** kube's webhook authorizer cannot list rules: incomplete, with this error */
  async rulesFor(_user: UserInfo, _namespace: string): Promise<RulesResult> {
    return { resourceRules: [], nonResourceRules: [], incomplete: true, errors: ['webhook authorizer does not support user rule resolution'] };
  }

  private remember(key: string, decision: Decision, now: number): void {
    const ttl = decision.decision === 'allow' ? this.o.authorizedTtlMs : this.o.unauthorizedTtlMs;
    if (ttl <= 0) return;
    if (this.cache.size >= MAX_CACHE_ENTRIES) {
      for (const [k, v] of this.cache) if (now >= v.until) this.cache.delete(k);
      if (this.cache.size >= MAX_CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
    }
    this.cache.set(key, { until: now + ttl, decision });
  }

  private async review(spec: Record<string, unknown>): Promise<Decision> {
    this.calls++;
    const apiVersion = `${this.o.group}/${this.o.version}`;
    const body = { apiVersion, kind: 'SubjectAccessReview', spec: toVersion(spec, this.o.version) };
    const r = await httpJson('POST', this.o.target.server, body, this.o.target.tls, this.o.timeoutMs);
    if (r.status < 200 || r.status >= 300) throw new Error(`remote answered status ${r.status}`);
    const review = r.json as { apiVersion?: unknown; kind?: unknown; status?: unknown } | undefined;
    if (!review || typeof review !== 'object' || review.kind !== 'SubjectAccessReview') throw new Error('remote did not answer with a SubjectAccessReview');
    // answered in the version it received (spec 001 §4)
    if (review.apiVersion !== apiVersion) throw new Error(`remote answered ${String(review.apiVersion)}, expected ${apiVersion}`);
    const s = review.status;
    if (!s || typeof s !== 'object' || Array.isArray(s)) throw new Error('status is required');
    const { allowed, denied, reason, evaluationError } = s as Record<string, unknown>;
    if (typeof allowed !== 'boolean') throw new Error('status.allowed must be a boolean');
    if (denied !== undefined && typeof denied !== 'boolean') throw new Error('status.denied must be a boolean');
    const why = [reason, evaluationError].filter((x): x is string => typeof x === 'string' && x !== '').join(': ');
    // kube: a deny with the answer's reason and an error (a 500 at the request), cached like any answer
    if (allowed && denied === true) return { decision: 'deny', ...(why ? { reason: why } : {}), errors: ['webhook subject access review returned both allow and deny response'] };
    if (allowed) return { decision: 'allow', reason: why };
    return { decision: denied === true ? 'deny' : 'noOpinion', ...(why ? { reason: why } : {}) };
  }
}
