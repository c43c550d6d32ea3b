// The agent's serving certificate: `tlsCertFile`/`tlsPrivateKeyFile` when set,
// else a self-signed pair `nodeagent.crt`/`nodeagent.key` in the cert dir
// (spec 002 §4.2: /var/lib/nodeagent/pki, `--cert-dir`), created once and reused.

import { webcrypto } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { loadX509 } from '../core/x509.js';

/** `now`: ms since the epoch on the agent's clock (clock.ts); a new certificate is valid from five minutes before it */
export async function servingPair(certFile: string, keyFile: string, certDir: string, hosts: string[], now: number): Promise<{ certPem: string; keyPem: string }> {
  if (certFile || keyFile) {
    if (!certFile || !keyFile) throw new Error('tlsCertFile and tlsPrivateKeyFile must be set together');
    return { certPem: await readFile(certFile, 'utf8'), keyPem: await readFile(keyFile, 'utf8') };
  }
  const crt = join(certDir, 'nodeagent.crt');
  const key = join(certDir, 'nodeagent.key');
  try {
    return { certPem: await readFile(crt, 'utf8'), keyPem: await readFile(key, 'utf8') };
  } catch {
    /* create below */
  }
  const x509 = await loadX509();
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const notBefore = new Date(now - 5 * 60_000);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(8))).toString('hex').replace(/^./, '1'),
    name: `CN=${hosts[0]}@${Math.floor(notBefore.getTime() / 1000)}`,
    notBefore,
    notAfter: new Date(notBefore.getTime() + 365 * 86_400_000),
    signingAlgorithm: alg,
    keys: keys as unknown as Parameters<typeof x509.X509CertificateGenerator.createSelfSigned>[0]['keys'],
    extensions: [
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(hosts.map((h) => ({ type: isIP(h) ? ('ip' as const) : ('dns' as const), value: h }))),
    ],
  });
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const keyPem = `-----BEGIN PRIVATE KEY-----\n${der.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n?$/, '\n')}-----END PRIVATE KEY-----\n`;
  const pair = { certPem: cert.toString('pem') + '\n', keyPem };
  await mkdir(certDir, { recursive: true, mode: 0o700 });
  await writeFile(key, pair.keyPem, { mode: 0o600 });
  await writeFile(crt, pair.certPem, { mode: 0o644 });
  return pair;
}
