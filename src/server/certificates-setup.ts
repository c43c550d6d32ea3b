// Wires the certificate controllers (src/controllers/certificates/) to the
// store behind leader gates; `--controllers` names them as
// kube-controller-manager does: `csrsigning`, `csrapproving` and `csrcleaner`,
// all on by default. The signer signs with the cluster CA (pki.ts), the CA the
// API server trusts for client certificates, for `--cluster-signing-duration`
// at most; the approver asks the server's authorizer.

import type { Authorizer } from '../auth/authz/types.js';
import { type Controller, runWhileLeader } from '../controllers/leader-gate.js';
import { CSR_APPROVING_CONTROLLER, CsrApprovingController } from '../controllers/certificates/csrapproving.js';
import { CSR_CLEANER_CONTROLLER, CsrCleanerController } from '../controllers/certificates/csrcleaner.js';
import { CSR_SIGNING_CONTROLLER, CsrSigningController } from '../controllers/certificates/csrsigning.js';
import type { SigningCa } from '../controllers/certificates/signer.js';
import { controllerEnabled } from './controllers-flag.js';
import type { LeaderControllerDeps } from './disruption-setup.js';
import type { WorkloadGate } from './workloads-setup.js';

export interface CertificateControllerDeps extends LeaderControllerDeps {
  apiDomain: string;
  /** the cluster CA */
  ca: SigningCa;
  /** the server's authorizer (the approver's SubjectAccessReviews) */
  authorizer?: Authorizer;
  /** `--cluster-signing-duration` */
  signingDurationMs?: number;
}

export function startCertificateControllers(d: CertificateControllerDeps): WorkloadGate[] {
  const def = d.registry.lookup(`certificates.${d.apiDomain}`, 'v1', 'certificatesigningrequests');
  if (!def) return [];
  const csrs = () => d.storeFor(def);
  const out: WorkloadGate[] = [];
  const add = (name: string, controller: Controller): void => {
    out.push({ name, gate: runWhileLeader(d.store, controller, { name, log: d.log }) });
  };
  const common = { store: d.store, csrs, clock: d.clock, log: d.log };
  if (controllerEnabled(d.controllers, CSR_SIGNING_CONTROLLER, true)) {
    add('csrsigning controller', new CsrSigningController({ ...common, apiDomain: d.apiDomain, ca: d.ca, signingDurationMs: d.signingDurationMs }));
  }
  if (d.authorizer && controllerEnabled(d.controllers, CSR_APPROVING_CONTROLLER, true)) {
    add('csrapproving controller', new CsrApprovingController({ ...common, apiDomain: d.apiDomain, authorizer: d.authorizer }));
  }
  if (controllerEnabled(d.controllers, CSR_CLEANER_CONTROLLER, true)) {
    add('csrcleaner controller', new CsrCleanerController(common));
  }
  return out;
}
