// POST pods/{name}/eviction (spec 000 §1, the Eviction virtual resource;
// kube-apiserver's EvictionREST, written from its documented behaviour): a
// delete of the pod that a PodDisruptionBudget (policy/v1) may refuse.
//   - terminal (Succeeded/Failed), Pending or already Terminating pods are
//     deleted without looking at budgets (they are not disrupted further); a
//     conflict there (the scheduler binding a Pending pod) is retried with the
//     pod read again, as kube's EvictionsRetry, unless the caller pinned a version;
//   - no budget selects the pod → deleted, 201 Status Success;
//   - more than one → 500 (kube does not support overlapping budgets);
//   - one: a status not yet computed for the current generation, or no
//     disruption allowed → 429 with a `DisruptionBudget` cause; otherwise
//     `disruptionsAllowed` is decremented and the pod recorded in
//     `status.disruptedPods` (a compare-and-swap on the budget, retried on
//     conflict with the re-read budget), then the pod is deleted.
// An unready pod is deleted without spending the budget under
// `unhealthyPodEvictionPolicy: AlwaysAllow`, or under IfHealthyBudget (the
// default) when the budget is healthy (currentHealthy ≥ desiredHealthy > 0);
// then the delete carries the pod's resourceVersion as a precondition so a
// pod that became ready meanwhile is not deleted (a conflict answers 429).
// Authorization is `create pods/eviction` (the request pipeline's).

import { StatusError, badRequest, forbidden, invalid } from '../../core/errors.js';
import type { Capabilities, CapabilityContext, CapabilityDeleteOptions, CapabilityResult, CapabilityStore } from '../capabilities.js';
import type { ApiObject, JSONValue } from '../types.js';
import { deleteGracePeriod, deleteOptionsErrors, dryRunError } from '../deletion/delete-options.js';
import { matchesLabelSelector } from './workload-shared.js';
import { checkDeletePreconditions } from '../preconditions.js';

/** kube's MaxDisruptedPodSize: more unconfirmed evictions than this and the budget refuses */
export const MAX_DISRUPTED_PODS = 2000;
export const DISRUPTION_BUDGET_CAUSE = 'DisruptionBudget';
/** kube's EvictionsRetry steps: how often a conflicting delete of a budget-free pod is tried */
const EVICTION_ATTEMPTS = 20;
const VIOLATES = "Cannot evict pod as it would violate the pod's disruption budget.";

type Obj = Record<string, JSONValue>;

export interface PdbStatus {
  observedGeneration?: number;
  disruptionsAllowed?: number;
  currentHealthy?: number;
  desiredHealthy?: number;
  expectedPods?: number;
  disruptedPods?: Record<string, string>;
  conditions?: Obj[];
}

export function evictionCapability(): Capabilities {
  return {
    // policy/v1 (kubectl ≥ 1.22) or policy/v1beta1 (older clients); JSON, YAML or protobuf
    body: { kind: { kind: 'Eviction', apiVersions: ['policy/v1', 'policy/v1beta1'] } },
    create: async (ctx, body) => {
      // kube decodes the body before anything else: a deleteOptions value of the wrong type is 400
      deleteOptionsOf(body, ctx);
      // admission of the Eviction itself, as kube's createValidation (webhooks on pods/eviction CREATE)
      const warnings: string[] = [];
      const group = String(body.apiVersion ?? 'policy/v1').split('/');
      const eviction = await ctx.admitCreate(body, { group: group[0] ?? 'policy', version: group[1] ?? 'v1', kind: 'Eviction' }, warnings);
      const r = await evict(ctx, eviction, () => ctx.now());
      return warnings.length > 0 ? { ...r, warnings } : r;
    },
  };
}

async function evict(ctx: CapabilityContext, eviction: ApiObject, now: () => number): Promise<CapabilityResult> {
  // an Eviction without a name does not match either (kube compares with Go's "")
  if ((eviction.metadata?.name ?? '') !== ctx.name) throw badRequest('name in URL does not match name in Eviction object');
  const { opts, refused } = deleteOptionsOf(eviction, ctx);
  const pods = ctx.store();
  const callerPinned = Boolean(opts.preconditions?.resourceVersion);
  let pod: ApiObject;
  for (let attempt = 1; ; attempt++) {
    pod = await pods.get(ctx.namespace, ctx.name);
    if (!canIgnoreBudgets(pod)) break;
    // pinned to the version read, unless the caller pinned one: a pod that became
    // Running meanwhile must be judged against its budget (kube's shouldEnforceResourceVersion)
    const pinned = enforcesResourceVersion(pod) && !callerPinned ? withResourceVersion(opts, pod) : opts;
    try {
      await markAndDelete(pods, ctx, pinned, refused, now);
      return success();
    } catch (e) {
      // kube retries a conflict here (EvictionsRetry) with the pod read again, unless the caller
      // pinned the version: a Pending pod the scheduler binds meanwhile is still evicted, not a 409
      if (callerPinned || !(e instanceof StatusError && e.code === 409) || attempt >= EVICTION_ATTEMPTS) throw e;
    }
  }

  const pdbStore = ctx.storeOf('policy', 'v1', 'poddisruptionbudgets');
  const budgets = pdbStore ? (await pdbStore.list(ctx.namespace)).filter((b) => selects(b, pod)) : [];
  if (budgets.length > 1) {
    return {
      status: 500,
      object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.', code: 500 },
    };
  }
  let unhealthyPass = false;
  if (budgets.length === 1 && pdbStore) {
    const pdb = budgets[0]!;
    const name = pdb.metadata?.name ?? '';
    const st = (pdb.status ?? {}) as PdbStatus;
    if (!podReady(pod)) {
      const policy = (pdb.spec as { unhealthyPodEvictionPolicy?: string } | undefined)?.unhealthyPodEvictionPolicy;
      const healthy = (st.currentHealthy ?? 0) >= (st.desiredHealthy ?? 0) && (st.desiredHealthy ?? 0) > 0;
      // an unready pod does not count toward currentHealthy: deleting it spends nothing
      if (policy === 'AlwaysAllow' || healthy) unhealthyPass = true;
    }
    if (!unhealthyPass) await spendBudget(pdbStore, ctx, name, pod.metadata?.name ?? ctx.name, opts.dryRun, now);
    if (unhealthyPass) {
      const pinned = opts.preconditions?.resourceVersion ? opts : withResourceVersion(opts, pod);
      try {
        await markAndDelete(pods, ctx, pinned, refused, now);
      } catch (e) {
        // the pod changed (it may be ready now): the client retries the eviction
        if (e instanceof StatusError && e.code === 409 && !opts.preconditions?.resourceVersion) throw tooManyRequests(10, `The disruption budget ${name} is still being processed by the server.`);
        throw e;
      }
      return success();
    }
  }
  await markAndDelete(pods, ctx, opts, refused, now);
  return success();
}

/** kube's checkAndDecrement inside a compare-and-swap of the budget (a conflict re-reads it and checks again) */
async function spendBudget(store: CapabilityStore, ctx: CapabilityContext, name: string, pod: string, dryRun: boolean, now: () => number): Promise<void> {
  const check = (pdb: ApiObject): Obj => {
    const st = (pdb.status ?? {}) as PdbStatus;
    if ((st.observedGeneration ?? 0) < (pdb.metadata?.generation ?? 0)) {
      throw tooManyRequests(10, `The disruption budget ${name} is still being processed by the server.`);
    }
    const allowed = st.disruptionsAllowed ?? 0;
    if (allowed < 0) throw budgetForbidden(name, 'pdb disruptions allowed is negative');
    if (Object.keys(st.disruptedPods ?? {}).length > MAX_DISRUPTED_PODS) {
      throw budgetForbidden(name, 'DisruptedPods map too big - too many evictions not confirmed by PDB controller');
    }
    if (allowed === 0) {
      throw tooManyRequests(0, `The disruption budget ${name} needs ${st.desiredHealthy ?? 0} healthy pods and has ${st.currentHealthy ?? 0} currently`);
    }
    const status = structuredClone((pdb.status ?? {}) as Obj);
    status.disruptionsAllowed = allowed - 1;
    if (allowed - 1 === 0) status.conditions = disruptionAllowedCondition((status.conditions as Obj[] | undefined) ?? [], false, 'InsufficientPods', '', st.observedGeneration ?? 0, now());
    status.disruptedPods = { ...(st.disruptedPods ?? {}), [pod]: isoSeconds(now()) };
    return status;
  };
  if (dryRun) {
    check(await store.get(ctx.namespace, name));
    return;
  }
  // the server's own write (kube's eviction handler writes with its loopback identity)
  await store.guaranteedUpdate(ctx.namespace, name, { dryRun: false, subresource: 'status', manager: 'kube-apiserver' }, (cur) => {
    if (!cur) throw new StatusError(404, 'NotFound', `poddisruptionbudgets.policy "${name}" not found`, { name, group: 'policy', kind: 'poddisruptionbudgets' });
    return unpinned({ ...cur, status: check(cur) });
  });
}

/**
 * kube adds the DisruptionTarget condition before deleting (1.31+), so the
 * pod's own status says why it went; the delete's resourceVersion precondition
 * then names the version this write made. `refused`: the options' 422, which
 * kube's delete answers (rest.BeforeDelete) after the condition was written
 */
async function markAndDelete(pods: CapabilityStore, ctx: CapabilityContext, opts: CapabilityDeleteOptions, refused: StatusError | undefined, now: () => number): Promise<void> {
  let del = opts;
  if (!opts.dryRun) {
    const r = await pods.guaranteedUpdate(ctx.namespace, ctx.name, { dryRun: false, subresource: 'status', manager: 'kube-apiserver' }, (cur) => {
      if (!cur) throw new StatusError(404, 'NotFound', `pods "${ctx.name}" not found`, { name: ctx.name, kind: 'pods' });
      // kube's messages for the preconditions, checked before the condition is written
      checkDeletePreconditions({ kind: 'Pod', group: '' }, cur, opts.preconditions);
      const status = (cur.status ??= {}) as { conditions?: Obj[] };
      status.conditions = withDisruptionTarget(status.conditions ?? [], 'EvictionByEvictionAPI', 'Eviction API: evicting', now());
      return unpinned(cur);
    });
    if (opts.preconditions?.resourceVersion) del = { ...opts, preconditions: { ...opts.preconditions, resourceVersion: r.object.metadata?.resourceVersion ?? '' } };
  }
  if (refused) throw refused;
  await pods.delete(ctx.namespace, ctx.name, { ...del, user: ctx.user, requester: ctx.user });
}

type Raw = Record<string, unknown>;
const isRaw = (v: unknown): v is Raw => v !== null && typeof v === 'object' && !Array.isArray(v);
const given = (v: unknown): boolean => v !== undefined && v !== null;

/**
 * The Eviction's deleteOptions, decoded as kube's decoder does (a value of the
 * wrong type is 400) with the request's dryRun (kube's propagateDryRun: the
 * body's list, or the query's when the body has none; two different lists are
 * kube's 500), and `refused`: what kube's ValidateDeleteOptions finds, a 422 on
 * DeleteOptions that the delete answers (markAndDelete). A dryRun list of any
 * values is a dry run (kube's IsDryRun), so nothing is written before that 422.
 */
function deleteOptionsOf(eviction: ApiObject, ctx: CapabilityContext): { opts: CapabilityDeleteOptions; refused?: StatusError } {
  const wrongType = (field: string, struct: string, goType: string, v: unknown): StatusError => decodeError(eviction, field, struct, goType, v);
  const raw = (eviction as { deleteOptions?: unknown }).deleteOptions;
  if (given(raw) && !isRaw(raw)) throw wrongType('deleteOptions', 'Eviction', 'v1.DeleteOptions', raw);
  const d: Raw = isRaw(raw) ? raw : {};
  const field = (name: string, goType: string, ok: (v: unknown) => boolean): unknown => {
    const v = d[name];
    if (given(v) && !ok(v)) throw wrongType(`deleteOptions.${name}`, 'DeleteOptions', goType, v);
    return given(v) ? v : undefined;
  };
  const grace = field('gracePeriodSeconds', 'int64', Number.isInteger) as number | undefined;
  const policy = field('propagationPolicy', 'v1.DeletionPropagation', (v) => typeof v === 'string') as string | undefined;
  const orphan = field('orphanDependents', 'bool', (v) => typeof v === 'boolean') as boolean | undefined;
  const bodyDryRun = (field('dryRun', '[]string', Array.isArray) as unknown[] | undefined) ?? [];
  const bad = bodyDryRun.find((v) => typeof v !== 'string');
  if (bad !== undefined) throw wrongType('deleteOptions.dryRun', 'DeleteOptions', 'string', bad);
  const pre = field('preconditions', 'v1.Preconditions', isRaw) as Raw | undefined;
  const preField = (name: string, goType: string): string | undefined => {
    const v = pre?.[name];
    if (given(v) && typeof v !== 'string') throw wrongType(`deleteOptions.preconditions.${name}`, 'Preconditions', goType, v);
    return typeof v === 'string' && v !== '' ? v : undefined;
  };
  const uid = preField('uid', 'types.UID');
  const resourceVersion = preField('resourceVersion', 'string');

  const query = ctx.dryRun ? ['All'] : [];
  const body = bodyDryRun as string[];
  if (body.length > 0 && query.length > 0 && (body.length !== 1 || body[0] !== 'All')) {
    // a plain error in kube's EvictionREST: 500 without a reason
    throw new StatusError(500, '', `Non-matching dry-run options in request and content: [${query.join(' ')}] and [${body.join(' ')}]`);
  }
  const dryRun = body.length > 0 ? body : query;
  const opts: CapabilityDeleteOptions = {
    dryRun: dryRun.length > 0,
    ...(grace !== undefined ? { gracePeriodSeconds: deleteGracePeriod(grace) } : {}),
    ...(pre ? { preconditions: { ...(uid ? { uid } : {}), ...(resourceVersion ? { resourceVersion } : {}) } } : {}),
    ...(policy !== undefined && deleteOptionsErrors(policy, undefined).length === 0 ? { propagationPolicy: policy as CapabilityDeleteOptions['propagationPolicy'] } : {}),
    ...(orphan !== undefined ? { orphanDependents: orphan } : {}),
  };
  const errors = [...deleteOptionsErrors(policy, orphan)];
  const dryRunErr = dryRunError(dryRun);
  if (dryRunErr) errors.push(dryRunErr);
  return errors.length > 0 ? { opts, refused: invalid('DeleteOptions', `meta.${ctx.apiDomain ?? 'orch.io'}`, '', errors) } : { opts };
}

/** Go's json.UnmarshalTypeError for a deleteOptions value, as kube's decoder answers it (400) */
function decodeError(eviction: ApiObject, field: string, struct: string, goType: string, v: unknown): StatusError {
  const version = String(eviction.apiVersion ?? 'policy/v1').split('/')[1] ?? 'v1';
  const value = Array.isArray(v) ? 'array' : isRaw(v) ? 'object' : typeof v === 'boolean' ? 'bool'
    : typeof v === 'number' ? (goType === 'int64' ? `number ${String(v)}` : 'number') : 'string';
  return badRequest(`Eviction in version "${version}" cannot be handled as a Eviction: json: cannot unmarshal ${value} into Go struct field ${struct}.${field} of type ${goType}`);
}

function withResourceVersion(opts: CapabilityDeleteOptions, pod: ApiObject): CapabilityDeleteOptions {
  return { ...opts, preconditions: { ...(opts.preconditions ?? {}), resourceVersion: pod.metadata?.resourceVersion ?? '' } };
}

function phaseOf(pod: ApiObject): string {
  return (pod.status as { phase?: string } | undefined)?.phase ?? '';
}

/** terminal, pending or Terminating pods are deleted without their budgets (kube's canIgnorePDB) */
function canIgnoreBudgets(pod: ApiObject): boolean {
  const phase = phaseOf(pod);
  return phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || pod.metadata?.deletionTimestamp !== undefined;
}

function enforcesResourceVersion(pod: ApiObject): boolean {
  const phase = phaseOf(pod);
  return !(phase === 'Succeeded' || phase === 'Failed' || pod.metadata?.deletionTimestamp !== undefined);
}

/** the pod's Ready condition is True (kube's IsPodReady) */
export function podReady(pod: ApiObject): boolean {
  const conds = (pod.status as { conditions?: unknown } | undefined)?.conditions;
  return Array.isArray(conds) && conds.some((c) => c !== null && typeof c === 'object' && (c as Obj).type === 'Ready' && (c as Obj).status === 'True');
}

/**
 * policy/v1 semantics: an empty selector selects every pod of the namespace,
 * an absent one none (kube's LabelSelectorAsSelector)
 */
export function budgetSelects(pdb: ApiObject, labels: Record<string, JSONValue>): boolean {
  const sel = (pdb.spec as { selector?: unknown } | undefined)?.selector;
  if (sel === undefined || sel === null || typeof sel !== 'object' || Array.isArray(sel)) return false;
  return matchesLabelSelector(sel as Obj, labels);
}

function selects(pdb: ApiObject, pod: ApiObject): boolean {
  return pdb.metadata?.namespace === pod.metadata?.namespace && budgetSelects(pdb, (pod.metadata?.labels ?? {}) as Record<string, JSONValue>);
}

/**
 * sets the DisruptionAllowed condition as apimachinery's SetStatusCondition
 * does: lastTransitionTime moves only when the status changes
 */
export function disruptionAllowedCondition(conds: Obj[], allowed: boolean, reason: string, message: string, observedGeneration: number, nowMs: number): Obj[] {
  const status = allowed ? 'True' : 'False';
  const old = conds.find((c) => c.type === 'DisruptionAllowed');
  const at = old && old.status === status && typeof old.lastTransitionTime === 'string' ? old.lastTransitionTime : isoSeconds(nowMs);
  const next: Obj = { type: 'DisruptionAllowed', status, observedGeneration, lastTransitionTime: at, reason, message };
  return old ? conds.map((c) => (c === old ? next : c)) : [...conds, next];
}

/**
 * the pod conditions with DisruptionTarget=True for `reason` (kube's
 * UpdatePodCondition: lastTransitionTime kept while the status stays True);
 * set before a pod is deleted by the Eviction API, the taint eviction
 * controller or the scheduler, so its own status says why it went
 */
export function withDisruptionTarget(conds: readonly Record<string, JSONValue>[], reason: string, message: string, nowMs: number): Record<string, JSONValue>[] {
  const old = conds.find((c) => c.type === 'DisruptionTarget');
  const at = old && old.status === 'True' && typeof old.lastTransitionTime === 'string' ? old.lastTransitionTime : isoSeconds(nowMs);
  return [...conds.filter((c) => c.type !== 'DisruptionTarget'), { type: 'DisruptionTarget', status: 'True', lastProbeTime: null, lastTransitionTime: at, reason, message }];
}

export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

/**
 * the object a guaranteedUpdate transform returns without its resourceVersion:
 * one left in is a precondition (a concurrent write would be a 409 instead of
 * a retry on the newer object, whose checks then run again)
 */
export function unpinned(o: ApiObject): ApiObject {
  if (o.metadata?.resourceVersion !== undefined) {
    o.metadata = { ...o.metadata };
    delete o.metadata.resourceVersion;
  }
  return o;
}

function success(): CapabilityResult {
  // kube answers a create that returns a Status with the create's code in it
  return { status: 201, object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 } };
}

function tooManyRequests(retryAfterSeconds: number, cause: string): StatusError {
  const e = new StatusError(429, 'TooManyRequests', VIOLATES, {
    causes: [{ reason: DISRUPTION_BUDGET_CAUSE, message: cause }],
    ...(retryAfterSeconds > 0 ? { retryAfterSeconds } : {}),
  });
  if (retryAfterSeconds > 0) e.headers['Retry-After'] = String(retryAfterSeconds);
  return e;
}

function budgetForbidden(name: string, why: string): StatusError {
  return forbidden(`poddisruptionbudget.policy "${name}" is forbidden: ${why}`, { name, group: 'policy', kind: 'poddisruptionbudget' });
}
