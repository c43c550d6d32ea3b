// The `csrcleaner` controller (kube-controller-manager's cleaner.go), leader
// only: deletes a CertificateSigningRequest once it is of no more use — issued
// and approved an hour ago, denied or failed an hour ago, pending (no
// condition) for a day, or issued with a certificate that has expired. Kube
// polls every hour; here each request is looked at again when its next
// deadline comes (a delayed add on the injected clock), and a start lists
// everything again.

import { StatusError } from '../../core/errors.js';
import type { ApiObject } from '../../registry/types.js';
import { CsrController, type CsrControllerOptions } from './csr-controller.js';
import { conditionsOf, issuedCertificate } from './csr-state.js';
import { certificateNotAfter } from './signer.js';

export const CSR_CLEANER_CONTROLLER = 'csrcleaner';

const HOUR_MS = 3600_000;
export const APPROVED_EXPIRATION_MS = HOUR_MS;
export const DENIED_EXPIRATION_MS = HOUR_MS;
export const FAILED_EXPIRATION_MS = HOUR_MS;
export const PENDING_EXPIRATION_MS = 24 * HOUR_MS;
/** the longest delay a Node timer takes */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * When the request is due for deletion (ms since the epoch), kube's rules
 * (the earliest that applies); undefined when none ever will.
 */
export function cleanupAt(csr: ApiObject): number | undefined {
  const at: number[] = [];
  const t = (s: string | undefined): number | undefined => {
    const ms = s ? Date.parse(s) : NaN;
    return Number.isNaN(ms) ? undefined : ms;
  };
  const conds = conditionsOf(csr);
  const cert = issuedCertificate(csr);
  if (conds.length === 0) {
    const created = t(csr.metadata?.creationTimestamp);
    if (created !== undefined) at.push(created + PENDING_EXPIRATION_MS);
  }
  for (const c of conds) {
    const updated = t(c.lastUpdateTime);
    if (c.type === 'Denied' && updated !== undefined) at.push(updated + DENIED_EXPIRATION_MS);
    if (c.type === 'Failed' && updated !== undefined) at.push(updated + FAILED_EXPIRATION_MS);
    if (c.type === 'Approved' && cert !== '') {
      if (updated !== undefined) at.push(updated + APPROVED_EXPIRATION_MS);
      const end = certificateNotAfter(Buffer.from(cert, 'base64').toString('utf8'));
      if (end !== undefined) at.push(end);
    }
  }
  return at.length > 0 ? Math.min(...at) : undefined;
}

export class CsrCleanerController extends CsrController {
  constructor(o: CsrControllerOptions) {
    super(CSR_CLEANER_CONTROLLER, o, 1000);
  }

  protected async handle(csr: ApiObject, key: string): Promise<void> {
    if (csr.metadata?.deletionTimestamp) return;
    const at = cleanupAt(csr);
    if (at === undefined) return;
    const left = at - this.clock.now();
    if (left >= 0) {
      this.loop.enqueueAfter(key, Math.min(MAX_TIMER_MS, left + 1));
      return;
    }
    try {
      // the uid and resourceVersion checked: a request changed since is looked at again
      await this.base.csrs().delete('', csr.metadata?.name ?? '', {
        dryRun: false, preconditions: { uid: csr.metadata?.uid ?? '', resourceVersion: csr.metadata?.resourceVersion ?? '' },
      });
      this.base.log?.(`csrcleaner: deleted ${csr.metadata?.name ?? ''}`);
    } catch (e) {
      if (e instanceof StatusError && (e.code === 404 || e.code === 409)) return;
      throw e;
    }
  }
}
