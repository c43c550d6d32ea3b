// TLS bootstrapping (spec 001 §5.4, spec 002 §4.2; kubelet's
// `--bootstrap-kubeconfig`): when `--kubeconfig` does not exist yet, or its
// client certificate has expired, the agent uses the bootstrap kubeconfig (a
// bootstrap token) to ask for a client certificate — an ECDSA P-256 key and a
// CertificateSigningRequest for O=system:nodes, CN=system:node:<name> to the
// node-agent client signer — waits until it is issued, keeps key and
// certificate in the cert dir (`nodeagent-client-<time>.pem`, linked from
// `nodeagent-client-current.pem`) and writes a kubeconfig that points at them.
// Only the public API is used.

import { createHash, createPublicKey } from 'node:crypto';
import { mkdir, readFile, readlink, rename, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import { signerNamesOf } from '../core/product-names.js';
import { createCertificateRequest } from '../core/x509.js';
import { ApiClient, ApiError, type KubeObject } from './api-client.js';
import type { Clock } from './clock.js';
import { type ApiCredentials, certificateValid, readKubeconfig } from './kubeconfig.js';

/** kubelet's usages for an ECDSA key (key encipherment only with RSA) */
export const CLIENT_USAGES = ['digital signature', 'client auth'];
/** the key of a request still in flight, reused by a restarted agent (kubelet's kubelet-client.key.tmp) */
const PENDING_KEY = 'nodeagent-client.key.tmp';
export const CURRENT_PEM = 'nodeagent-client-current.pem';

export interface RequestCertificateOptions {
  api: ApiClient;
  nodeName: string;
  domain: string;
  keyPem: string;
  clock: Clock;
  /** how long to wait for the certificate (kubelet waits up to an hour) */
  timeoutMs?: number;
  pollMs?: number;
  log: (m: string) => void;
}

/** the request was denied or failed: waiting longer cannot help */
export class RequestRefusedError extends Error {}

/** kubelet's digestedName: the same key and subject give the same request name, so a restart finds its request */
function digestedName(csrPublicKeyDer: Buffer, nodeName: string): string {
  const h = createHash('sha512');
  h.update(csrPublicKeyDer);
  h.update(`system:nodes|system:node:${nodeName}|${CLIENT_USAGES.join('|')}`);
  return `node-csr-${h.digest('base64url')}`;
}

/**
 * Creates (or finds) the request for `keyPem` and waits for its certificate
 * (PEM). A denied or failed request is an error, as for kubelet.
 */
export async function requestClientCertificate(o: RequestCertificateOptions): Promise<string> {
  const { csrPem } = await createCertificateRequest({ commonName: `system:node:${o.nodeName}`, organizations: ['system:nodes'] }, o.keyPem);
  const name = digestedName(publicKeyDer(o.keyPem), o.nodeName);
  const path = `/apis/certificates.${o.domain}/v1/certificatesigningrequests`;
  const request = Buffer.from(csrPem).toString('base64');
  try {
    await o.api.create(path, {
      apiVersion: `certificates.${o.domain}/v1`, kind: 'CertificateSigningRequest', metadata: { name },
      spec: { request, signerName: signerNamesOf(o.domain).kubeletClient, usages: CLIENT_USAGES },
    });
    o.log(`client certificate: created certificate signing request ${name}`);
  } catch (e) {
    if (!(e instanceof ApiError && e.code === 409)) throw e;
    o.log(`client certificate: waiting on the existing certificate signing request ${name}`);
  }
  const deadline = o.clock.now() + (o.timeoutMs ?? 3600_000);
  for (;;) {
    const csr = await o.api.get<KubeObject>(`${path}/${name}`);
    const conds = ((csr.status?.conditions ?? []) as { type: string; reason?: string; message?: string }[]);
    const bad = conds.find((c) => c.type === 'Denied' || c.type === 'Failed');
    if (bad) throw new RequestRefusedError(`certificate signing request ${name} is ${bad.type === 'Denied' ? 'denied' : 'failed'}, reason: ${bad.reason ?? ''}, message: ${bad.message ?? ''}`);
    const cert = csr.status?.certificate;
    if (typeof cert === 'string' && cert !== '') return Buffer.from(cert, 'base64').toString('utf8');
    if (o.clock.now() >= deadline) throw new Error(`timed out waiting for certificate signing request ${name} to be issued`);
    await new Promise((r) => o.clock.setTimeout(r, o.pollMs ?? 1000));
  }
}

/** the SubjectPublicKeyInfo of a PKCS#8 key (throws when the PEM is no key) */
function publicKeyDer(keyPem: string): Buffer {
  return createPublicKey(keyPem).export({ type: 'spki', format: 'der' });
}

/** a fresh ECDSA P-256 key (PKCS#8 PEM) */
export async function newKey(): Promise<string> {
  return (await createCertificateRequest({ commonName: 'key' })).keyPem;
}

/**
 * Writes `<cert-dir>/nodeagent-client-<time>.pem` (certificate then key, mode
 * 0600) and points `nodeagent-client-current.pem` at it (a rename, so readers
 * never see a half-written link). Returns the current path.
 */
export async function storeClientPair(certDir: string, certPem: string, keyPem: string, now: number): Promise<string> {
  await mkdir(certDir, { recursive: true, mode: 0o700 });
  const stamp = new Date(now).toISOString().replace(/\.\d+Z$/, '').replace(/[T:]/g, '-');
  const file = join(certDir, `nodeagent-client-${stamp}.pem`);
  await writeFile(file, `${certPem.trimEnd()}\n${keyPem.trimEnd()}\n`, { mode: 0o600 });
  const current = join(certDir, CURRENT_PEM);
  const tmp = `${current}.tmp-${process.pid}`;
  await rm(tmp, { force: true });
  await symlink(file, tmp);
  await rename(tmp, current);
  return current;
}

export interface BootstrapOptions {
  /** `--kubeconfig`: written when absent or its certificate has expired */
  kubeconfig: string;
  /** `--bootstrap-kubeconfig` */
  bootstrapKubeconfig: string;
  certDir: string;
  nodeName: string;
  domain: string;
  clock: Clock;
  log: (m: string) => void;
  timeoutMs?: number;
  pollMs?: number;
}

/** kubelet's LoadClientCert: a usable kubeconfig is kept; otherwise bootstrap one. */
export async function bootstrapKubeconfig(o: BootstrapOptions): Promise<void> {
  try {
    if (certificateValid(await readKubeconfig(o.kubeconfig), o.clock.now())) return;
    o.log(`tls bootstrap: the client certificate of ${o.kubeconfig} is not valid; bootstrapping`);
  } catch {
    o.log(`tls bootstrap: no usable ${o.kubeconfig}; requesting a client certificate with ${o.bootstrapKubeconfig}`);
  }
  const boot = await readKubeconfig(o.bootstrapKubeconfig);
  await mkdir(o.certDir, { recursive: true, mode: 0o700 });
  const keyFile = join(o.certDir, PENDING_KEY);
  let keyPem: string;
  try {
    keyPem = await readFile(keyFile, 'utf8');
    publicKeyDer(keyPem);
  } catch {
    keyPem = await newKey();
    await writeFile(keyFile, keyPem, { mode: 0o600 });
  }
  const api = new ApiClient(boot);
  let certPem: string;
  try {
    certPem = await requestClientCertificate({ api, nodeName: o.nodeName, domain: o.domain, keyPem, clock: o.clock, log: o.log, timeoutMs: o.timeoutMs, pollMs: o.pollMs });
  } catch (e) {
    // a denied or failed request is final: the next start makes a new key, hence a new request
    if (e instanceof RequestRefusedError) await unlink(keyFile).catch(() => {});
    throw e;
  } finally {
    api.close();
  }
  const current = await storeClientPair(o.certDir, certPem, keyPem, o.clock.now());
  await writeClientKubeconfig(o.kubeconfig, boot, current);
  await unlink(keyFile).catch(() => {});
  o.log(`tls bootstrap: wrote ${o.kubeconfig} for system:node:${o.nodeName} (certificate ${current})`);
}

/** kubelet's kubeconfig: the bootstrap kubeconfig's cluster, the client certificate and key from one file */
async function writeClientKubeconfig(path: string, boot: ApiCredentials, pem: string): Promise<void> {
  const cluster: Record<string, string> = { server: boot.server };
  if (boot.caPem) cluster['certificate-authority-data'] = Buffer.from(boot.caPem).toString('base64');
  if (boot.tlsServerName) cluster['tls-server-name'] = boot.tlsServerName;
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'default-cluster', cluster }],
    contexts: [{ name: 'default-context', context: { cluster: 'default-cluster', namespace: 'default', user: 'default-auth' } }],
    'current-context': 'default-context',
    users: [{ name: 'default-auth', user: { 'client-certificate': pem, 'client-key': pem } }],
    preferences: {},
  };
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  await writeFile(tmp, stringify(doc), { mode: 0o600 });
  await rename(tmp, path);
}

/** where `nodeagent-client-current.pem` points (tests and the rotation log) */
export async function currentClientPem(certDir: string): Promise<string> {
  return readlink(join(certDir, CURRENT_PEM));
}
