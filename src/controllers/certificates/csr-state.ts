// What the certificate controllers read of a CertificateSigningRequest
// (kube's pkg/controller/certificates helpers): its conditions, whether it is
// approved, denied, failed or issued, and the status update they all make.

import { StatusError } from '../../core/errors.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject, JSONValue } from '../../registry/types.js';

export interface CsrCondition {
  type: string;
  status?: string;
  reason?: string;
  message?: string;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
}

type Obj = Record<string, JSONValue>;

export function conditionsOf(csr: ApiObject): CsrCondition[] {
  const c = (csr.status as Obj | undefined)?.conditions;
  return Array.isArray(c) ? (c as unknown as CsrCondition[]) : [];
}

/** a condition of this type with status True (kube's HasTrueCondition; an empty status counts as True, as v1 defaulting makes it) */
export function hasTrue(csr: ApiObject, type: string): boolean {
  return conditionsOf(csr).some((c) => c.type === type && (c.status ?? 'True') === 'True');
}

/** kube's IsCertificateRequestApproved: approved and not denied */
export function isApproved(csr: ApiObject): boolean {
  return hasTrue(csr, 'Approved') && !hasTrue(csr, 'Denied');
}

export function issuedCertificate(csr: ApiObject): string {
  const c = (csr.status as Obj | undefined)?.certificate;
  return typeof c === 'string' ? c : '';
}

export function specOf(csr: ApiObject): { request: string; signerName: string; usages: string[]; expirationSeconds?: number; username: string; uid?: string; groups: string[]; extra?: Record<string, string[]> } {
  const s = (csr.spec ?? {}) as Obj;
  return {
    request: typeof s.request === 'string' ? s.request : '',
    signerName: typeof s.signerName === 'string' ? s.signerName : '',
    usages: Array.isArray(s.usages) ? s.usages.filter((u): u is string => typeof u === 'string') : [],
    ...(typeof s.expirationSeconds === 'number' ? { expirationSeconds: s.expirationSeconds } : {}),
    username: typeof s.username === 'string' ? s.username : '',
    ...(typeof s.uid === 'string' ? { uid: s.uid } : {}),
    groups: Array.isArray(s.groups) ? s.groups.filter((g): g is string => typeof g === 'string') : [],
    ...(s.extra && typeof s.extra === 'object' ? { extra: s.extra as unknown as Record<string, string[]> } : {}),
  };
}

/** RFC 3339 to the second, as metav1.Time */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/**
 * Writes the status `change` makes of the stored request (the /status or
 * /approval update of kube's controllers), unless the request changed since
 * `seen` (its uid) or `change` returns undefined (nothing to do any more).
 * A request deleted meanwhile is no error.
 */
export async function updateCsrStatus(gs: GenericStore, seen: ApiObject, manager: string, subresource: 'status' | 'approval', change: (status: Obj) => Obj | undefined): Promise<boolean> {
  const name = seen.metadata?.name ?? '';
  let changed = false;
  try {
    await gs.guaranteedUpdate('', name, { dryRun: false, manager, subresource }, (cur) => {
      if (!cur || cur.metadata?.uid !== seen.metadata?.uid) throw new StatusError(404, 'NotFound', `certificatesigningrequests "${name}" not found`);
      const next = change(structuredClone((cur.status ?? {}) as Obj));
      if (!next) return cur;
      changed = true;
      return { ...cur, status: next };
    });
  } catch (e) {
    if (e instanceof StatusError && e.code === 404) return false;
    throw e;
  }
  return changed;
}
