// The webhook admission plugins (kube's MutatingAdmissionWebhook and
// ValidatingAdmissionWebhook): for each configured webhook that matches the
// request — rules, namespaceSelector, objectSelector, then matchConditions —
// send an AdmissionReview v1 and act on the answer. Mutating webhooks run one
// after another (configurations by name, webhooks in order), their JSONPatch
// responses applied in turn; IfNeeded webhooks are called once more when a
// later webhook changed the object. Validating webhooks run in parallel.
// Spec 000 §4.7: with dryRun=All a webhook whose sideEffects are not None or
// NoneOnDryRun refuses the request (400) instead of being called.

import type { Clock } from '../../core/clock.js';
import { StatusError, badRequest, internalError } from '../../core/errors.js';
import { applyJsonPatch } from '../../machinery/patch/index.js';
import type { ApiObject, JSONValue } from '../types.js';
import { namespaceSelectorMatches, objectSelectorMatches, ruleMatches } from './matching.js';
import type { AdmissionLookups, AdmissionRequest, MutatingPlugin, ValidatingPlugin } from './types.js';
import { type ServiceResolver, type WebhookAgents, postReview } from './webhook-client.js';
import type { CompiledWebhook } from './webhook-config.js';

export interface WebhookEnvironment {
  apiDomain: string;
  /** the compiled webhooks of every configuration of one type, in call order */
  webhooks(): readonly CompiledWebhook[];
  lookups: AdmissionLookups;
  resolver: ServiceResolver;
  /** other served versions of a group/resource (matchPolicy Equivalent) */
  versionsOf(group: string, resource: string): readonly string[];
  agents: WebhookAgents;
  /** each call's deadline (timeoutSeconds) runs on it */
  clock: Clock;
  /** counts calls, denials and failures (metrics); optional */
  observe?(w: CompiledWebhook, outcome: 'allowed' | 'denied' | 'error' | 'skipped-error', seconds: number): void;
}

/** webhooks never see the admission configuration kinds, so a bad webhook cannot lock its own fix out (kube does the same) */
export function exemptFromWebhooks(req: AdmissionRequest, apiDomain: string): boolean {
  return req.def.group === `admissionregistration.${apiDomain}`;
}

/** the `request` of an AdmissionReview v1 (also the `request` CEL variable) */
export function reviewRequest(req: AdmissionRequest, apiDomain: string): Record<string, unknown> {
  const kind = req.kind ?? { group: req.def.group, version: req.def.version, kind: req.def.kind };
  const resource = { group: req.def.group, version: req.def.version, resource: req.def.resource };
  const optionsKind = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions', CONNECT: undefined }[req.operation];
  const options = req.options ?? (optionsKind ? { apiVersion: `meta.${apiDomain}/v1`, kind: optionsKind } : undefined);
  return {
    uid: req.uid,
    kind,
    resource,
    ...(req.subresource ? { subResource: req.subresource } : {}),
    requestKind: kind,
    requestResource: resource,
    ...(req.subresource ? { requestSubResource: req.subresource } : {}),
    name: req.name,
    ...(req.namespace ? { namespace: req.namespace } : {}),
    operation: req.operation,
    userInfo: {
      username: req.user.username,
      ...(req.user.uid ? { uid: req.user.uid } : {}),
      groups: req.user.groups,
      ...(req.user.extra ? { extra: req.user.extra } : {}),
    },
    object: req.object ?? null,
    oldObject: req.oldObject ?? null,
    dryRun: req.dryRun,
    options: options ?? null,
  };
}

type Decision = { call: true } | { call: false } | { error: string };

/** rules, selectors and matchConditions: call the webhook, skip it, or an error for the failure policy */
function decide(w: CompiledWebhook, req: AdmissionRequest, env: WebhookEnvironment, reviewReq: Record<string, unknown>): Decision {
  const versions = w.matchPolicy === 'Equivalent' ? env.versionsOf(req.def.group, req.def.resource) : [req.def.version];
  const vs = versions.includes(req.def.version) ? versions : [req.def.version, ...versions];
  if (!w.rules.some((r) => ruleMatches(r, req, vs))) return { call: false };
  const nsLabels = (n: string) => env.lookups.namespace(n)?.metadata?.labels;
  if (!namespaceSelectorMatches(w.namespaceSelector, req, nsLabels)) return { call: false };
  if (!objectSelectorMatches(w.objectSelector, req)) return { call: false };
  // matchConditions: any false skips; an error with none false follows the failure policy
  let error: string | undefined;
  const vars = { object: req.object ?? null, oldObject: req.oldObject ?? null, request: reviewReq };
  for (const c of w.matchConditions) {
    try {
      const v = c.expr.evaluate(vars);
      if (v === false) return { call: false };
      if (v !== true) error ??= `matchCondition ${JSON.stringify(c.name)} did not evaluate to a bool`;
    } catch (e) {
      error ??= `matchCondition ${JSON.stringify(c.name)} failed: ${(e as Error).message}`;
    }
  }
  if (error) return { error };
  return { call: true };
}

/**
 * the denial a webhook answered, as kube 1.32's ToStatusErr (the version orch serves): its
 * code, or 400 when it gave none below 400; its reason as given; its message, or its reason
 * when it has no message (as agnhost's configmap webhook of kube's e2e tests answers)
 */
function denial(w: CompiledWebhook, status: Record<string, unknown> | undefined): StatusError {
  const code = typeof status?.code === 'number' && status.code >= 400 && status.code < 600 ? status.code : 400;
  const text = (v: unknown): string => (typeof v === 'string' ? v : '');
  const explanation = text(status?.message) || text(status?.reason);
  const msg = explanation ? `: ${explanation}` : ' without explanation';
  const details = status?.details && typeof status.details === 'object' ? (status.details as Record<string, unknown>) : undefined;
  return new StatusError(code, text(status?.reason), `admission webhook ${JSON.stringify(w.name)} denied the request${msg}`, details);
}

class WebhookFailure extends Error {}

/** one call: the validated response, or WebhookFailure for the failure policy */
async function call(w: CompiledWebhook, req: AdmissionRequest, env: WebhookEnvironment, reviewReq: Record<string, unknown>): Promise<Record<string, unknown>> {
  if (w.broken) throw new WebhookFailure(`the webhook configuration cannot be used: ${w.broken}`);
  const apiVersion = `admission.${env.apiDomain}/v1`;
  let answer: unknown;
  try {
    answer = await postReview(w.clientConfig, { apiVersion, kind: 'AdmissionReview', request: reviewReq }, { resolver: env.resolver, timeoutMs: w.timeoutMs, agents: env.agents, clock: env.clock });
  } catch (e) {
    throw new WebhookFailure((e as Error).message);
  }
  const a = answer as { apiVersion?: unknown; kind?: unknown; response?: Record<string, unknown> } | null;
  if (a === null || typeof a !== 'object' || Array.isArray(a)) throw new WebhookFailure('received invalid webhook response: expected an AdmissionReview object');
  if (a.apiVersion !== apiVersion || a.kind !== 'AdmissionReview') {
    throw new WebhookFailure(`received invalid webhook response: expected webhook response of ${apiVersion}, Kind=AdmissionReview, got ${String(a.apiVersion)}, Kind=${String(a.kind)}`);
  }
  const r = a.response;
  if (!r || typeof r !== 'object') throw new WebhookFailure('received invalid webhook response: webhook response was absent');
  if (r.uid !== req.uid) throw new WebhookFailure(`received invalid webhook response: expected response.uid=${JSON.stringify(req.uid)}, got ${JSON.stringify(r.uid ?? '')}`);
  if (typeof r.allowed !== 'boolean') throw new WebhookFailure('received invalid webhook response: response.allowed must be a boolean');
  return r;
}

/** warnings as kube keeps them: strings, trimmed, non-empty */
function addWarnings(req: AdmissionRequest, r: Record<string, unknown>): void {
  if (!Array.isArray(r.warnings)) return;
  for (const w of r.warnings) if (typeof w === 'string' && w.trim() !== '') req.warnings.push(w.trim().slice(0, 4096));
}

function failedOpen(req: AdmissionRequest, w: CompiledWebhook, kind: 'mutating' | 'validating', apiDomain: string, index: number, why: string): void {
  req.auditAnnotations[`failed-open.${kind}.webhook.admission.${apiDomain}/round_0_index_${index}`] = w.name;
  void why;
}

/** the failure policy applied to a failed call: Fail → 500 InternalError naming the webhook; Ignore → skipped */
function onFailure(w: CompiledWebhook, why: string): StatusError | undefined {
  if (w.failurePolicy === 'Ignore') return undefined;
  return internalError(`failed calling webhook ${JSON.stringify(w.name)}: ${why}`);
}

function dryRunCheck(w: CompiledWebhook, req: AdmissionRequest): void {
  if (req.dryRun && w.sideEffects !== 'None' && w.sideEffects !== 'NoneOnDryRun') {
    throw badRequest(`admission webhook ${JSON.stringify(w.name)} does not support dry run`);
  }
}

const now = (): number => performance.now();

export class MutatingWebhooks implements MutatingPlugin {
  readonly name = 'MutatingAdmissionWebhook';
  constructor(private readonly env: WebhookEnvironment) {}

  async admit(req: AdmissionRequest): Promise<ApiObject | undefined> {
    const hooks = this.env.webhooks();
    if (hooks.length === 0 || exemptFromWebhooks(req, this.env.apiDomain)) return req.object;
    // what each IfNeeded webhook last saw come out of its own call
    const lastOutput = new Map<number, string>();
    const runOne = async (w: CompiledWebhook, i: number): Promise<void> => {
      const reviewReq = reviewRequest(req, this.env.apiDomain);
      const d = decide(w, req, this.env, reviewReq);
      if ('error' in d) {
        const err = onFailure(w, d.error);
        if (err) throw err;
        failedOpen(req, w, 'mutating', this.env.apiDomain, i, d.error);
        return;
      }
      if (!d.call) return;
      dryRunCheck(w, req);
      const t0 = now();
      let r: Record<string, unknown>;
      try {
        r = await call(w, req, this.env, reviewReq);
      } catch (e) {
        if (!(e instanceof WebhookFailure)) throw e;
        const err = onFailure(w, e.message);
        this.env.observe?.(w, err ? 'error' : 'skipped-error', (now() - t0) / 1000);
        if (err) throw err;
        failedOpen(req, w, 'mutating', this.env.apiDomain, i, e.message);
        return;
      }
      addWarnings(req, r);
      if (!r.allowed) {
        this.env.observe?.(w, 'denied', (now() - t0) / 1000);
        throw denial(w, r.status as Record<string, unknown> | undefined);
      }
      this.env.observe?.(w, 'allowed', (now() - t0) / 1000);
      if (r.patch !== undefined && r.patch !== null && req.object !== undefined && req.operation !== 'DELETE') {
        req.object = applyWebhookPatch(w, r, req.object);
      }
      if (w.reinvocationPolicy === 'IfNeeded') lastOutput.set(i, JSON.stringify(req.object ?? null));
    };
    for (let i = 0; i < hooks.length; i++) await runOne(hooks[i]!, i);
    // reinvocation (kube: at most once): an IfNeeded webhook whose output a later webhook changed is called again
    for (const [i, seen] of [...lastOutput].sort((a, b) => a[0] - b[0])) {
      if (JSON.stringify(req.object ?? null) !== seen) await runOne(hooks[i]!, i);
    }
    return req.object;
  }
}

/** base64 JSONPatch → the patched object; a bad patch is the webhook's failure (500 naming it), not the client's */
function applyWebhookPatch(w: CompiledWebhook, r: Record<string, unknown>, obj: ApiObject): ApiObject {
  const fail = (why: string): never => {
    throw internalError(`failed calling webhook ${JSON.stringify(w.name)}: ${why}`);
  };
  if (r.patchType !== 'JSONPatch') fail(`received invalid webhook response: patchType ${JSON.stringify(r.patchType ?? '')} is not supported; expected "JSONPatch"`);
  if (typeof r.patch !== 'string') fail('received invalid webhook response: patch must be base64 text');
  let ops: JSONValue;
  try {
    ops = JSON.parse(Buffer.from(r.patch as string, 'base64').toString('utf8')) as JSONValue;
  } catch (e) {
    return fail(`received invalid webhook response: the patch is not JSON: ${(e as Error).message}`);
  }
  let out: JSONValue;
  try {
    out = applyJsonPatch(JSON.parse(JSON.stringify(obj)) as JSONValue, ops);
  } catch (e) {
    return fail(`the JSON patch could not be applied: ${(e as Error).message}`);
  }
  if (out === null || typeof out !== 'object' || Array.isArray(out)) return fail('the JSON patch did not produce an object');
  const o = out as ApiObject;
  if (o.apiVersion !== obj.apiVersion || o.kind !== obj.kind) fail('the JSON patch must not change apiVersion or kind');
  return o;
}

export class ValidatingWebhooks implements ValidatingPlugin {
  readonly name = 'ValidatingAdmissionWebhook';
  constructor(private readonly env: WebhookEnvironment) {}

  async validate(req: AdmissionRequest): Promise<void> {
    const hooks = this.env.webhooks();
    if (hooks.length === 0 || exemptFromWebhooks(req, this.env.apiDomain)) return;
    const reviewReq = reviewRequest(req, this.env.apiDomain);
    const calls: { i: number; w: CompiledWebhook }[] = [];
    for (let i = 0; i < hooks.length; i++) {
      const w = hooks[i]!;
      const d = decide(w, req, this.env, reviewReq);
      if ('error' in d) {
        const err = onFailure(w, d.error);
        if (err) throw err;
        failedOpen(req, w, 'validating', this.env.apiDomain, i, d.error);
        continue;
      }
      if (!d.call) continue;
      dryRunCheck(w, req);
      calls.push({ i, w });
    }
    if (calls.length === 0) return;
    // in parallel; the first problem in configuration order is the answer
    const results = await Promise.all(
      calls.map(async ({ i, w }): Promise<StatusError | undefined> => {
        const t0 = now();
        try {
          const r = await call(w, req, this.env, reviewReq);
          addWarnings(req, r);
          this.env.observe?.(w, r.allowed ? 'allowed' : 'denied', (now() - t0) / 1000);
          return r.allowed ? undefined : denial(w, r.status as Record<string, unknown> | undefined);
        } catch (e) {
          if (!(e instanceof WebhookFailure)) throw e;
          const err = onFailure(w, e.message);
          this.env.observe?.(w, err ? 'error' : 'skipped-error', (now() - t0) / 1000);
          if (!err) failedOpen(req, w, 'validating', this.env.apiDomain, i, e.message);
          return err;
        }
      }),
    );
    const first = results.find((r) => r !== undefined);
    if (first) throw first;
  }
}

