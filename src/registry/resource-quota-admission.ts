// kube's ResourceQuota admission plugin, for creates of the kinds the quota
// controller counts (src/controllers/quota/usage.ts): a create that would
// take a quota's used past its hard is refused 403 (`exceeded quota: q,
// requested: pods=1, used: pods=2, limited: pods=2`), a pod lacking a
// request or limit a quota tracks too (`failed quota: q: must specify
// requests.cpu for: c`), and a quota whose status the controller has not
// written yet refuses what it tracks (`status unknown for quota`). An
// admitted create is charged at once: the quota's status.used is written
// with it added (pinned to the version read, retried on a conflict), so
// creates that follow each other, a ReplicaSet's burst included, see it
// before the controller recounts. Like kube, quota status comes from
// `status.hard`, not the spec; updates are not charged here.

import { forbidden, qualifiedResource, StatusError } from '../core/errors.js';
import { QUOTA_KINDS, addQuantities, evaluatedNames, inScopes, missingComputeNames, type NamespaceObjects, quotaUsage } from '../controllers/quota/usage.js';
import { parseQuantity } from '../core/quantity.js';
import type { GenericStore } from './generic-store.js';
import type { AdmissionCall, WriteHooks } from './write-options.js';
import type { ApiObject, JSONValue } from './types.js';

export const RESOURCE_QUOTA = 'ResourceQuota';

const NONE: NamespaceObjects = { pods: [], services: [], configMaps: [], secrets: [], persistentVolumeClaims: [], replicationControllers: [], resourceQuotas: [] };
const CHARGE_ATTEMPTS = 3;

type List = Record<string, string>;
const list = (v: unknown): List => (v && typeof v === 'object' ? Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, q]) => [k, String(q)])) : {});
const pretty = (l: List, names: string[]): string => [...names].sort().map((n) => `${n}=${l[n] ?? '0'}`).join(',');

export interface ResourceQuotaAdmissionOptions {
  /** the resourcequotas store (read at each create, its status written by the charge) */
  quotas: () => GenericStore;
}

export function resourceQuotaAdmission(o: ResourceQuotaAdmissionOptions): WriteHooks {
  return {
    async validateAdmission(c: AdmissionCall): Promise<void> {
      const kind = c.def.group === '' ? QUOTA_KINDS[c.def.resource] : undefined;
      if (c.operation !== 'CREATE' || !kind || !c.object || c.opts.subresource) return;
      for (let attempt = 1; ; attempt++) {
        const charges = await admit(o, c, kind);
        if (charges.length === 0 || c.opts.dryRun) return;
        try {
          for (const ch of charges) await charge(o, ch);
          return;
        } catch (e) {
          // another create charged the quota meanwhile: decide again on its newer status
          if (!(e instanceof StatusError && e.code === 409) || attempt >= CHARGE_ATTEMPTS) throw e;
        }
      }
    },
  };
}

interface Charge {
  quota: ApiObject;
  used: List;
}

/** the quotas to charge with their new used, or a 403 */
async function admit(o: ResourceQuotaAdmissionOptions, c: AdmissionCall, kind: keyof NamespaceObjects): Promise<Charge[]> {
  const quotas = await o.quotas().list(c.namespace);
  if (quotas.length === 0) return [];
  const obj = c.object!;
  const name = obj.metadata?.name ?? c.name;
  const refuse = (msg: string): never => {
    throw forbidden(`${qualifiedResource(c.def.resource, c.def.group)} "${name}" is forbidden: ${msg}`, { name, kind: c.def.resource });
  };
  const evaluated = evaluatedNames(kind);
  const charges: Charge[] = [];
  for (const q of quotas) {
    const status = (q.status ?? {}) as { hard?: unknown; used?: unknown };
    const hard = list(status.hard);
    const scopes = ((q.spec as { scopes?: unknown } | undefined)?.scopes ?? []) as string[];
    if (scopes.length > 0 && (kind !== 'pods' || !inScopes(obj, scopes))) continue;
    const matching = Object.keys(hard).filter((n) => evaluated.has(n));
    if (matching.length === 0) continue;
    const qname = q.metadata?.name ?? '';
    if (kind === 'pods') {
      const missing = missingComputeNames(obj, matching);
      if (missing.size > 0) refuse(`failed quota: ${qname}: must specify ${[...missing.keys()].sort().map((n) => `${n} for: ${[...new Set(missing.get(n))].sort().join(',')}`).join('; ')}`);
    }
    const used = list(status.used);
    const unknown = matching.filter((n) => used[n] === undefined);
    if (unknown.length > 0) refuse(`status unknown for quota: ${qname}, resources: ${unknown.sort().join(',')}`);
    const requested = Object.fromEntries(Object.entries(quotaUsage(Object.fromEntries(matching.map((n) => [n, hard[n]!])), scopes, { ...NONE, [kind]: [obj] })).filter(([, v]) => (parseQuantity(v) ?? 0) !== 0));
    const names = Object.keys(requested);
    if (names.length === 0) continue;
    const next: List = { ...used };
    for (const n of names) next[n] = addQuantities(used[n] ?? '0', requested[n]!);
    const exceeded = names.filter((n) => (parseQuantity(next[n]) ?? 0) > (parseQuantity(hard[n]) ?? 0));
    if (exceeded.length > 0) refuse(`exceeded quota: ${qname}, requested: ${pretty(requested, exceeded)}, used: ${pretty(used, exceeded)}, limited: ${pretty(hard, exceeded)}`);
    charges.push({ quota: q, used: next });
  }
  return charges;
}

/** the new used, on the quota version the decision read (a 409 when another charge came first) */
async function charge(o: ResourceQuotaAdmissionOptions, ch: Charge): Promise<void> {
  const ns = ch.quota.metadata?.namespace ?? '';
  const name = ch.quota.metadata?.name ?? '';
  await o.quotas().guaranteedUpdate(ns, name, { dryRun: false, subresource: 'status', manager: 'kube-apiserver' }, (cur) => {
    if (!cur) throw new StatusError(409, 'Conflict', `resourcequotas "${name}" changed`);
    const status = (cur.status ?? {}) as Record<string, JSONValue>;
    return { ...cur, metadata: { ...cur.metadata, resourceVersion: ch.quota.metadata?.resourceVersion ?? '' }, status: { ...status, used: ch.used } };
  });
}
