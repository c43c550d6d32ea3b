// Permissions on certificate signers (spec 001 §5.3; kube's
// pkg/apis/certificates IsAuthorizedForSignerName): a verb (`approve`,
// `sign`) on the `signers` resource named by a request's signerName, or on
// `<domain>/*` for every signer of that domain. The CertificateApproval check
// (src/endpoints/handlers/builtin-kinds.ts) and the CertificateSigning check
// (below) ask it.

import { forbidden } from '../../core/errors.js';
import type { UserInfo } from '../types.js';
import type { Authorizer } from './types.js';

export async function isAuthorizedForSignerName(authorizer: Authorizer, user: UserInfo, verb: 'approve' | 'sign', signerName: string, apiGroup: string): Promise<boolean> {
  const ask = async (name: string) => (await authorizer.authorize({
    user, verb, isResourceRequest: true, path: '', apiGroup, apiVersion: '*', namespace: '', resource: 'signers', subresource: '', name,
  })).decision === 'allow';
  if (await ask(signerName)) return true;
  const slash = signerName.indexOf('/');
  return slash > 0 && ask(`${signerName.slice(0, slash)}/*`);
}

/**
 * kube's CertificateSigning admission plugin: a `/status` update that changes
 * `status.certificate` needs `sign` on the stored request's signer. The
 * server's own writes (no user: the csrsigning controller) are not checked.
 */
export async function checkCertificateSigning(
  authorizer: Authorizer | undefined,
  o: { resource: string; group: string; name: string; user?: UserInfo; subresource?: string },
  certificate: unknown,
  old: { certificate: unknown; signerName: string } | undefined,
): Promise<void> {
  if (!authorizer || !o.user || o.subresource !== 'status' || !old) return;
  if ((certificate ?? '') === (old.certificate ?? '')) return;
  if (await isAuthorizedForSignerName(authorizer, o.user, 'sign', old.signerName, o.group)) return;
  throw forbidden(`${o.resource}.${o.group} ${JSON.stringify(o.name)} is forbidden: user not permitted to sign requests with signerName ${JSON.stringify(old.signerName)}`, {
    name: o.name, group: o.group, kind: o.resource,
  });
}
