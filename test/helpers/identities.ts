// Real identities for authorization tests: client certificates issued by the
// test server's CA (spec 001 §5.3) and kubeconfig files for them or for a
// bearer token, so kubectl runs as that user.

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { type CertificateAndKey, issueClientCertificate, loadPki } from '../../src/server/pki.js';
import type { TestServer } from './server.js';

export async function userCert(t: TestServer, user: string, groups: string[] = []): Promise<CertificateAndKey> {
  const pki = await loadPki(join(t.dataDir, 'pki'));
  return issueClientCertificate(pki, { commonName: user, organizations: groups });
}

/** a kubeconfig in the data dir authenticating with a certificate or a bearer token */
export async function kubeconfigFor(t: TestServer, name: string, cred: CertificateAndKey | { token: string }): Promise<string> {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const user = 'token' in cred ? { token: cred.token } : { 'client-certificate-data': b64(cred.certPem), 'client-key-data': b64(cred.keyPem) };
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'orch', cluster: { server: t.server.url, 'certificate-authority-data': b64(t.server.caPem) } }],
    users: [{ name, user }],
    contexts: [{ name: 'orch', context: { cluster: 'orch', user: name } }],
    'current-context': 'orch',
  };
  const path = join(t.dataDir, `${name.replace(/[^a-z0-9-]/gi, '_')}.kubeconfig`);
  await writeFile(path, stringify(doc), { mode: 0o600 });
  return path;
}
