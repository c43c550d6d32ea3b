// Creates the PKI every member of a cluster shares (CA, serving certificate,
// admin client certificate, service-account key, the front-proxy CA and client
// certificate aggregated API servers trust): run once, before the members start, so they do
// not race to create it. Usage: node --import tsx deploy/init-pki.ts <dir> [host...]
import { join } from 'node:path';
import { loadServiceAccountKeys } from '../src/auth/authn/sa-keys.js';
import { ensureFrontProxyPki, ensurePki } from '../src/server/pki.js';

const [dir, ...extra] = process.argv.slice(2);
if (!dir) {
  process.stderr.write('usage: init-pki.ts <pki-dir> [extra-host...]\n');
  process.exit(2);
}
await ensurePki(dir, { hosts: ['localhost', '127.0.0.1', '::1', ...extra] });
// one front proxy for every member: the extension-apiserver-authentication ConfigMap names one CA
await ensureFrontProxyPki(dir, Date.now());
// the service-account signing key too: a token issued by one member must verify on every member
loadServiceAccountKeys({ defaultKeyPath: join(dir, 'sa.key') });
process.stdout.write(`PKI ready in ${dir}\n`);
