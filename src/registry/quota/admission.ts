// The ResourceQuota admission plugin (kube-apiserver's, on by default; the
// last of the validating steps): a create or update that would take a
// namespace past a quota's `status.hard` is refused with 403, and an admitted
// one is charged to `status.used` before the object is written, so two
// concurrent writes cannot both take the last unit. The charge is a
// compare-and-swap on the quota (pinned to the resourceVersion read); on a
// conflict the namespace's quotas are read again and the check repeats, three
// times as kube does. A write that fails after its charge leaves usage high
// until the resourcequota controller recounts (src/controllers/resourcequota/),
// as in kube. Dry-run writes are checked but not charged.

import { StatusError, forbidden, qualifiedResource } from '../../core/errors.js';
import type { Clock } from '../../core/clock.js';
import type { AdmissionCall, WriteHooks } from '../write-options.js';
import type { ApiObject } from '../types.js';
import { type Usage, addUsage, maskUsage, printUsage, subtractUsageNonNegative, usageOf, usageToJSON } from './amount.js';
import { type QuotaEvaluator, evaluatorFor, quotaMatches } from './evaluators.js';

export const RESOURCE_QUOTA = 'ResourceQuota';

/** how the plugin reads and charges quotas (the composition root provides the resourcequotas store) */
export interface QuotaAccess {
  /** the namespace's quotas as this member holds them (cheap: every namespaced write asks) */
  list(namespace: string): ApiObject[];
  /** the same, after catching up with the latest committed state (after a conflict) */
  listFresh(namespace: string): Promise<ApiObject[]>;
  /** writes `status.used`, pinned to the quota's resourceVersion; a 409 StatusError when it moved */
  writeUsed(quota: ApiObject, used: Record<string, string>): Promise<void>;
}

const RETRIES = 3;

export function resourceQuotaAdmission(access: QuotaAccess, clock: Clock): Required<Pick<WriteHooks, 'validateAdmission'>> {
  return {
    async validateAdmission(c) {
      if (c.operation === 'DELETE' || !c.namespace || !c.object) return;
      // on the write path of every namespaced write: a namespace without quotas costs one empty range read
      let quotas = access.list(c.namespace);
      if (quotas.length === 0) return;
      const ev = evaluatorFor(c.def.group, c.def.resource);
      if (!ev?.handles(c.operation, c.opts.subresource, c.object, c.oldObject)) return;
      let lastError: unknown;
      for (let attempt = 0; attempt <= RETRIES; attempt++) {
        const charges = checkRequest(quotas, c, ev, clock.now());
        if (charges.length === 0 || c.opts.dryRun) return;
        const failed: string[] = [];
        for (const { quota, used } of charges) {
          try {
            await access.writeUsed(quota, usageToJSON(used));
          } catch (e) {
            if (!(e instanceof StatusError && e.code === 409)) throw e;
            failed.push(quota.metadata?.name ?? '');
            lastError = e;
          }
        }
        if (failed.length === 0) return;
        // only the quotas whose charge failed are checked again (the others hold this write's charge)
        quotas = (await access.listFresh(c.namespace)).filter((q) => failed.includes(q.metadata?.name ?? ''));
        if (quotas.length === 0) return;
      }
      throw lastError;
    },
  };
}

function refuse(c: AdmissionCall, message: string): StatusError {
  const group = c.def.group || undefined;
  return forbidden(`${qualifiedResource(c.def.resource, c.def.group)} "${c.name}" is forbidden: ${message}`, { name: c.name, group, kind: c.def.resource });
}

/**
 * kube's CheckRequest: the quotas this write is charged to, each with its new
 * `used`; throws 403 when a quota's constraint, status or limit refuses it
 */
export function checkRequest(quotas: ApiObject[], c: AdmissionCall, ev: QuotaEvaluator, nowMs: number): { quota: ApiObject; used: Usage }[] {
  const obj = c.object!;
  const interesting: { quota: ApiObject; hard: Usage; used: Usage; names: string[] }[] = [];
  for (const quota of quotas) {
    const status = (quota.status ?? {}) as { hard?: unknown; used?: unknown };
    const hard = usageOf(status.hard);
    const names = [...hard.keys()];
    if (!quotaMatches(ev, names, quota, obj)) continue;
    const restricted = ev.matchingResources(names);
    const name = quota.metadata?.name ?? '';
    const why = ev.constraints(restricted, obj);
    if (why) throw refuse(c, `failed quota: ${name}: ${why}`);
    const used = usageOf(status.used);
    if (restricted.some((r) => !used.has(r))) throw refuse(c, `status unknown for quota: ${name}, resources: ${[...restricted].sort().join(',')}`);
    interesting.push({ quota, hard, used, names });
  }
  if (interesting.length === 0) return [];
  const input = ev.usage(obj, nowMs);
  const negative = [...input].filter(([, v]) => v.nano < 0n).map(([k]) => k);
  if (negative.length > 0) throw refuse(c, `quota usage is negative for resource(s): ${negative.sort().join(',')}`);
  // an update is charged what it adds, to the quotas that already counted the old object
  const prev = c.operation === 'UPDATE' && c.oldObject?.metadata?.resourceVersion ? c.oldObject : undefined;
  const prevDelta = prev ? subtractUsageNonNegative(input, ev.usage(prev, nowMs)) : undefined;
  const out: { quota: ApiObject; used: Usage }[] = [];
  for (const q of interesting) {
    const delta = prevDelta && quotaMatches(ev, q.names, q.quota, prev!) ? prevDelta : input;
    const requested = removeZeros(maskUsage(delta, q.names));
    if (requested.size === 0) continue;
    const used = addUsage(q.used, requested);
    if (c.opts.subresource !== 'status') {
      const exceeded = [...requested.keys()].filter((k) => used.get(k)!.nano > q.hard.get(k)!.nano);
      if (exceeded.length > 0) {
        throw refuse(c, `exceeded quota: ${q.quota.metadata?.name ?? ''}, requested: ${printUsage(maskUsage(requested, exceeded))}, used: ${printUsage(maskUsage(q.used, exceeded))}, limited: ${printUsage(maskUsage(q.hard, exceeded))}`);
      }
    }
    out.push({ quota: q.quota, used });
  }
  return out;
}

function removeZeros(u: Usage): Usage {
  return new Map([...u].filter(([, v]) => v.nano !== 0n));
}
