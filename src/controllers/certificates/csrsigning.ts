// The `csrsigning` controller (kube-controller-manager's, spec 001 §5.3/§5.4),
// leader only: an approved, not failed, not yet issued
// CertificateSigningRequest for one of the built-in signers (signer.ts) gets
// `status.certificate` from the cluster CA — the CA whose client certificates
// the API server authenticates, so an issued client certificate logs in as its
// subject. A request that breaks its signer's rules gets kube's `Failed`
// condition (reason `SignerValidationFailure`) and is never signed; other
// signers' requests are left to them.

import { signerNamesOf, type SignerNames } from '../../core/product-names.js';
import type { ApiObject, JSONValue } from '../../registry/types.js';
import { CONTROLLER_MANAGER } from '../workloads/writes.js';
import { CsrController, type CsrControllerOptions, parseRequestOf } from './csr-controller.js';
import { hasTrue, isApproved, issuedCertificate, rfc3339, specOf, updateCsrStatus } from './csr-state.js';
import { DEFAULT_SIGNING_DURATION_MS, type SigningCa, certificateDuration, judgeRequest, signRequest } from './signer.js';

export const CSR_SIGNING_CONTROLLER = 'csrsigning';

export interface CsrSigningOptions extends CsrControllerOptions {
  apiDomain: string;
  /** the cluster CA (src/server/pki.ts) */
  ca: SigningCa;
  /** `--cluster-signing-duration` (default one year) */
  signingDurationMs?: number;
}

export class CsrSigningController extends CsrController {
  private readonly names: SignerNames;

  constructor(private readonly o: CsrSigningOptions) {
    super(CSR_SIGNING_CONTROLLER, o, 200);
    this.names = signerNamesOf(o.apiDomain);
  }

  protected async handle(csr: ApiObject): Promise<void> {
    if (!isApproved(csr) || hasTrue(csr, 'Failed') || issuedCertificate(csr) !== '') return;
    const spec = specOf(csr);
    // the signer name first: another signer's request is not ours to parse
    if (!Object.values(this.names).includes(spec.signerName)) return;
    const parsed = await parseRequestOf(csr);
    const verdict = judgeRequest(this.names, spec.signerName, parsed, spec.usages);
    if (verdict.kind === 'not-ours') return;
    const now = this.clock.now();
    if (verdict.kind === 'invalid') {
      await updateCsrStatus(this.o.csrs(), csr, CONTROLLER_MANAGER, 'status', (st) => {
        if (hasTrue({ status: st }, 'Failed') || st.certificate) return undefined;
        const conditions = Array.isArray(st.conditions) ? st.conditions : [];
        const failed: Record<string, JSONValue> = { type: 'Failed', status: 'True', reason: 'SignerValidationFailure', message: verdict.message, lastUpdateTime: rfc3339(now) };
        return { ...st, conditions: [...conditions, failed] };
      });
      this.o.log?.(`csrsigning: ${csr.metadata?.name ?? ''} failed ${spec.signerName}'s rules: ${verdict.message}`);
      return;
    }
    const pem = await signRequest(this.o.ca, parsed, {
      usages: spec.usages,
      durationMs: certificateDuration(spec.expirationSeconds, this.o.signingDurationMs ?? DEFAULT_SIGNING_DURATION_MS),
      now,
    });
    const wrote = await updateCsrStatus(this.o.csrs(), csr, CONTROLLER_MANAGER, 'status', (st) => {
      // approval withdrawn, failed or issued meanwhile: the update that did it enqueued the key again
      const cur = { status: st };
      if (!isApproved(cur) || hasTrue(cur, 'Failed') || st.certificate) return undefined;
      return { ...st, certificate: Buffer.from(pem).toString('base64') };
    });
    if (wrote) this.o.log?.(`csrsigning: issued a certificate for ${csr.metadata?.name ?? ''} (${spec.signerName})`);
  }
}
