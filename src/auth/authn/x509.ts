// Client-certificate authentication (spec 001_bdb487117be0ea8a.txt §5.3):
// the subject Common Name is the user name and each Organization is a group.
// Verification against the `--client-ca-file` bundle happened in the TLS
// terminator (src/gateway/tls-front.ts); here we only read its verdict.
// `system:authenticated` is added by the authenticator chain, not here.
import type { PeerCertificate, UserInfo } from '../types.js';

export type X509AuthenticationResult =
  | { result: 'none' }
  | { result: 'ok'; user: UserInfo }
  | { result: 'error'; message: string };

export function authenticateClientCertificate(peer: PeerCertificate | undefined): X509AuthenticationResult {
  // No certificate: this authenticator does not apply; others (tokens) may.
  if (!peer) return { result: 'none' };
  // A presented but unverified certificate is an authentication failure
  // (401), not a fall-through to anonymous: the client clearly meant to use it.
  if (!peer.verified) {
    return {
      result: 'error',
      message: `client certificate not verified: ${peer.verifyError ?? 'unknown reason'}`,
    };
  }
  if (peer.commonName === '') {
    return { result: 'error', message: 'client certificate has no subject common name' };
  }
  return { result: 'ok', user: { username: peer.commonName, groups: [...peer.organizations] } };
}
