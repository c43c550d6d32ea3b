// The `csrapproving` controller (kube-controller-manager's sarapprove.go),
// leader only: a pending request for the node-agent client signer whose
// request follows that signer's rules is approved when its requester may
// `create` `certificatesigningrequests/selfnodeclient` (the request is for the
// requester itself: renewal by a node) or `…/nodeclient` (any node: a
// bootstrap token), asked of the authorizer as a SubjectAccessReview would
// (spec 001 §5.4 TLS bootstrapping). A request no rule lets through stays
// pending, for a person to approve or deny.

import type { Authorizer } from '../../auth/authz/types.js';
import { type Clock, systemClock } from '../../core/clock.js';
import { signerNamesOf } from '../../core/product-names.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject, JSONValue } from '../../registry/types.js';
import { ControllerLoop, LoopController, type Informer, type InformerSource } from '../runtime/index.js';
import { CONTROLLER_MANAGER } from '../workloads/writes.js';
import { hasTrue, issuedCertificate, rfc3339, specOf, updateCsrStatus } from './csr-state.js';
import { type ParsedCsr, kubeletClientViolation, parseCsr, requestPem } from './signer.js';

export const CSR_APPROVING_CONTROLLER = 'csrapproving';

export interface CsrApprovingOptions {
  store: InformerSource;
  csrs: () => GenericStore;
  apiDomain: string;
  authorizer: Authorizer;
  clock?: Clock;
  log?: (msg: string) => void;
}

interface Recognizer {
  subresource: 'selfnodeclient' | 'nodeclient';
  recognize(csr: ApiObject, r: ParsedCsr): boolean;
  message: string;
}

export class CsrApprovingController extends LoopController {
  protected readonly loop: ControllerLoop;
  private readonly clock: Clock;
  private readonly recognizers: Recognizer[];
  private csrs: Informer | undefined;

  constructor(private readonly o: CsrApprovingOptions) {
    super();
    this.clock = o.clock ?? systemClock;
    this.loop = new ControllerLoop(o.store, { name: CSR_APPROVING_CONTROLLER, clock: this.clock, log: o.log, baseDelayMs: 200 });
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

  start(): void {
    this.stop();
    this.loop.begin((key) => this.sync(key));
    const consider = (o: ApiObject, key: string): void => {
      if (pending(o)) this.loop.enqueue(key);
    };
    this.csrs = this.loop.inform(this.o.csrs().rangeKeys(''), { add: consider, update: (_old, o, key) => consider(o, key) });
  }

  stop(): void {
    this.loop.end();
    this.csrs = undefined;
  }

  private async sync(key: string): Promise<void> {
    const csr = this.csrs?.get(key);
    if (!csr || !pending(csr)) return;
    const spec = specOf(csr);
    let parsed: ParsedCsr;
    try {
      parsed = await parseCsr(requestPem(spec.request));
    } catch (e) {
      throw new Error(`unable to parse csr "${csr.metadata?.name ?? ''}": ${(e as Error).message}`);
    }
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
