// The `csrapproving` controller (kube-controller-manager's sarapprove.go),
// leader only: a pending request for the node-agent client signer whose
// request follows that signer's rules is approved when its requester may
// `create` `certificatesigningrequests/selfnodeclient` (the request is for the
// requester itself: renewal by a node) or `…/nodeclient` (any node: a
// bootstrap token), asked of the authorizer as a SubjectAccessReview would
// (spec 001 §5.4 TLS bootstrapping). A request no rule lets through stays
// pending, for a person to approve or deny.

import type { Authorizer } from '../../auth/authz/types.js';
import { signerNamesOf } from '../../core/product-names.js';
import type { ApiObject, JSONValue } from '../../registry/types.js';
import { CONTROLLER_MANAGER } from '../workloads/writes.js';
import { CsrController, type CsrControllerOptions, parseRequestOf } from './csr-controller.js';
import { hasTrue, issuedCertificate, rfc3339, specOf, updateCsrStatus } from './csr-state.js';
import { type ParsedCsr, kubeletClientViolation } from './signer.js';

export const CSR_APPROVING_CONTROLLER = 'csrapproving';

export interface CsrApprovingOptions extends CsrControllerOptions {
  apiDomain: string;
  authorizer: Authorizer;
}

interface Recognizer {
  subresource: 'selfnodeclient' | 'nodeclient';
  recognize(csr: ApiObject, r: ParsedCsr): boolean;
  message: string;
}

export class CsrApprovingController extends CsrController {
  private readonly recognizers: Recognizer[];

  constructor(private readonly o: CsrApprovingOptions) {
    super(CSR_APPROVING_CONTROLLER, o, 200);
    const signer = signerNamesOf(o.apiDomain).kubeletClient;
    const nodeClient = (csr: ApiObject, r: ParsedCsr): boolean => {
      const s = specOf(csr);
      return s.signerName === signer && kubeletClientViolation(r, s.usages) === '';
    };
    // kube's order: a node renewing its own certificate first, then any node client request
    this.recognizers = [
      { subresource: 'selfnodeclient', recognize: (csr, r) => specOf(csr).username === r.commonName && nodeClient(csr, r), message: 'Auto approving self kubelet client certificate after SubjectAccessReview.' },
      { subresource: 'nodeclient', recognize: nodeClient, message: 'Auto approving kubelet client certificate after SubjectAccessReview.' },
    ];
  }

  protected override wants(csr: ApiObject): boolean {
    return pending(csr);
  }

  protected async handle(csr: ApiObject): Promise<void> {
    if (!pending(csr)) return;
    const spec = specOf(csr);
    const parsed = await parseRequestOf(csr);
    const tried: string[] = [];
    for (const r of this.recognizers) {
      if (!r.recognize(csr, parsed)) continue;
      tried.push(r.subresource);
      if (!(await this.allowed(csr, r.subresource))) continue;
      const now = rfc3339(this.clock.now());
      const approved = await updateCsrStatus(this.o.csrs(), csr, CONTROLLER_MANAGER, 'approval', (st) => {
        if (!pending({ status: st })) return undefined;
        const conditions = Array.isArray(st.conditions) ? st.conditions : [];
        const cond: Record<string, JSONValue> = { type: 'Approved', status: 'True', reason: 'AutoApproved', message: r.message, lastUpdateTime: now };
        return { ...st, conditions: [...conditions, cond] };
      });
      if (approved) this.o.log?.(`csrapproving: approved ${csr.metadata?.name ?? ''} for ${spec.username} (${r.subresource})`);
      return;
    }
    // kube's IgnorableError: recognized but not allowed stays pending, without retries
    if (tried.length > 0) this.o.log?.(`csrapproving: recognized csr "${csr.metadata?.name ?? ''}" as [${tried.join(' ')}] but subject access review was not approved`);
  }

  /** the SubjectAccessReview kube's approver creates, for the request's requester */
  private async allowed(csr: ApiObject, subresource: string): Promise<boolean> {
    const s = specOf(csr);
    const d = await this.o.authorizer.authorize({
      user: { username: s.username, ...(s.uid ? { uid: s.uid } : {}), groups: s.groups, ...(s.extra ? { extra: s.extra } : {}) },
      verb: 'create',
      isResourceRequest: true,
      path: '',
      apiGroup: `certificates.${this.o.apiDomain}`,
      apiVersion: '*',
      namespace: '',
      resource: 'certificatesigningrequests',
      subresource,
      name: '',
    });
    return d.decision === 'allow';
  }
}

/** neither approved nor denied, nor issued (kube's GetCertApprovalCondition) */
function pending(csr: ApiObject): boolean {
  return !hasTrue(csr, 'Approved') && !hasTrue(csr, 'Denied') && issuedCertificate(csr) === '';
}
