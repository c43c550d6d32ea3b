// The CertificateSubjectRestriction admission plugin (kube-apiserver's, on by
// default): a new CertificateSigningRequest for the API server client signer
// may not ask for the `system:masters` group — an approver would otherwise
// mint a certificate that bypasses authorization. Runs on create only, as a
// write hook of the generic store (spec 001 §5.3; the csrsigning controller
// signs such requests once approved).

import { forbidden } from '../core/errors.js';
import { signerNamesOf } from '../core/product-names.js';
import type { WriteHooks } from './generic-store.js';
import { certificateRequestOrganizations } from './kinds/csr-request.js';
import type { ApiObject, ResourceDefinition } from './types.js';

export const CERTIFICATE_SUBJECT_RESTRICTION = 'CertificateSubjectRestriction';

export function certificateSubjectRestrictionHooks(apiDomain: string): Pick<WriteHooks, 'beforeWrite' | 'appliesTo'> {
  const signer = signerNamesOf(apiDomain).apiServerClient;
  const group = `certificates.${apiDomain}`;
  return {
    appliesTo: (def) => def.group === group && def.resource === 'certificatesigningrequests',
    beforeWrite(def: ResourceDefinition, obj: ApiObject, old: ApiObject | undefined) {
      if (old || def.group !== group || def.resource !== 'certificatesigningrequests') return;
      const spec = (obj.spec ?? {}) as { signerName?: unknown; request?: unknown };
      if (spec.signerName !== signer) return;
      const name = obj.metadata?.name ?? '';
      const deny = (why: string): never => {
        throw forbidden(`${def.resource}.${def.group} "${name}" is forbidden: ${why}`, { name, group: def.group, kind: def.resource });
      };
      const orgs = certificateRequestOrganizations(Buffer.from(typeof spec.request === 'string' ? spec.request : '', 'base64').toString('utf8'));
      if (typeof orgs === 'string') deny(`failed to parse CSR: ${orgs}`);
      else if (orgs.includes('system:masters')) deny(`use of ${signer} signer with system:masters group is not allowed`);
    },
  };
}
