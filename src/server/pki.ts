// The cluster's own small public-key infrastructure: one CA, the API server's
// serving certificate and an administrator client certificate.
//
// Client certificates authenticate users by subject: CN = user name, each O =
// a group (spec 001_bdb487117be0ea8a.txt §5.3). The admin certificate is in
// group `system:masters`, the group the default authorizer lets do anything.
//
// Keys are ECDSA P-256 (PKCS#8 PEM): accepted by Go's crypto/tls (kubectl)
// and by OpenSSL (Node). Files are written atomically with mode 0600 inside a
// 0700 directory.
import { X509Certificate as NodeX509Certificate, createPrivateKey, createPublicKey, randomBytes, webcrypto } from 'node:crypto';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isIP } from 'node:net';
import type * as X509 from '@peculiar/x509';
import { loadX509 } from '../core/x509.js';
import { systemClock } from '../core/clock.js';

const KEY_ALGORITHM: webcrypto.EcKeyGenParams = { name: 'ECDSA', namedCurve: 'P-256' };
const SIGNING_ALGORITHM: webcrypto.EcdsaParams = { name: 'ECDSA', hash: 'SHA-256' };
const DAY_MS = 24 * 60 * 60 * 1000;
/** Leaf certificates closer than this to expiry are reissued on start. */
const RENEW_BEFORE_MS = 30 * DAY_MS;
const CA_DAYS = 3650;
const LEAF_DAYS = 365;

export const ADMIN_COMMON_NAME = 'orch-admin';
export const ADMIN_ORGANIZATION = 'system:masters';
export const DEFAULT_SERVING_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '::1'];

/** A certificate and its private key, both PEM. */
export interface CertificateAndKey {
  certPem: string;
  keyPem: string;
}

export interface PkiPaths {
  dir: string;
  caCert: string;
  caKey: string;
  servingCert: string;
  servingKey: string;
  adminCert: string;
  adminKey: string;
  /** the admin bearer token the generated kubeconfig carries (see `ensureAdminToken`) */
  adminToken: string;
}

export interface Pki {
  paths: PkiPaths;
  ca: CertificateAndKey;
  serving: CertificateAndKey;
  admin: CertificateAndKey;
  /** bearer token of the admin identity (`orch-admin` in `system:masters`); '' when the file is absent (loadPki) */
  adminToken: string;
}

export interface EnsurePkiOptions {
  /** DNS names and IP addresses the serving certificate must cover. */
  hosts?: string[];
  /**
   * ms since the epoch from the composition root's clock (src/core/clock.ts): new certificates
   * start from it and a leaf is renewed when it ends within 30 days of it; absent = the system clock
   */
  now?: number;
}

export interface ClientCertificateRequest {
  /** becomes the user name (spec 001 §5.3) */
  commonName: string;
  /** each becomes a group (spec 001 §5.3) */
  organizations?: string[];
  /** validity in days; default 365 */
  days?: number;
  /** ms since the epoch the validity starts from (backdated five minutes); absent = the system clock */
  now?: number;
}

export function pkiPaths(dir: string): PkiPaths {
  return {
    dir,
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    servingCert: join(dir, 'apiserver.crt'),
    servingKey: join(dir, 'apiserver.key'),
    adminCert: join(dir, 'admin.crt'),
    adminKey: join(dir, 'admin.key'),
    adminToken: join(dir, 'admin.token'),
  };
}

/**
 * Create the PKI under `dir` on first start and reuse it afterwards. The CA is
 * never replaced while both of its files exist; leaf certificates are reissued
 * when missing, not issued by the current CA, close to expiry, or (serving
 * certificate) not covering every requested host.
 */
export async function ensurePki(dir: string, opts: EnsurePkiOptions = {}): Promise<Pki> {
  const hosts = opts.hosts && opts.hosts.length > 0 ? opts.hosts : [...DEFAULT_SERVING_HOSTS];
  const paths = pkiPaths(dir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);

  const now = opts.now ?? systemClock.now();
  let ca = await readPair(paths.caCert, paths.caKey);
  let caIsNew = false;
  if (!ca || !pairMatches(ca)) {
    ca = await createCa(now);
    await writePair(paths.caCert, paths.caKey, ca);
    caIsNew = true;
  }
  const caNode = new NodeX509Certificate(ca.certPem);

  let serving = caIsNew ? undefined : await readPair(paths.servingCert, paths.servingKey);
  if (!serving || !leafIsUsable(serving, caNode, now) || !coversHosts(serving.certPem, hosts)) {
    serving = await issueCertificate(ca, {
      subject: [{ CN: ['orch-apiserver'] }],
      days: LEAF_DAYS,
      usage: 'server',
      hosts,
      now,
    });
    await writePair(paths.servingCert, paths.servingKey, serving);
  }

  let admin = caIsNew ? undefined : await readPair(paths.adminCert, paths.adminKey);
  if (!admin || !leafIsUsable(admin, caNode, now)) {
    admin = await issueClientCertificate(
      { ca },
      { commonName: ADMIN_COMMON_NAME, organizations: [ADMIN_ORGANIZATION], days: LEAF_DAYS, now },
    );
    await writePair(paths.adminCert, paths.adminKey, admin);
  }

  return { paths, ca, serving, admin, adminToken: await ensureAdminToken(paths.adminToken) };
}

/**
 * The generated admin kubeconfig authenticates with this bearer token rather than
 * the admin client certificate: a client certificate is presented on every TLS
 * handshake and wins over any token (x509 is tried first, spec 001 §5.1), so with
 * it `kubectl --token=<service-account token>` would still act as the admin. With
 * a token in the kubeconfig, `--token` replaces it. 256 random bits, mode 0600,
 * kept across restarts; shared by the members that share the PKI directory.
 */
async function ensureAdminToken(path: string): Promise<string> {
  const existing = await readAdminToken(path);
  if (existing) return existing;
  const token = randomBytes(32).toString('base64url');
  const tmp = `${path}.tmp-${process.pid}`;
  await writeFile(tmp, `${token}\n`, { mode: 0o600 });
  await rename(tmp, path);
  return token;
}

async function readAdminToken(path: string): Promise<string> {
  try {
    const t = (await readFile(path, 'utf8')).trim();
    return /^[A-Za-z0-9_-]{32,}$/.test(t) ? t : '';
  } catch {
    return '';
  }
}

/** the common name of the generated front-proxy client certificate (kubeadm's `front-proxy-client`) */
export const FRONT_PROXY_CLIENT_NAME = 'front-proxy-client';

/** the aggregator's front-proxy identity: its own CA (requestheader-client-ca-file) and the client certificate it signed */
export interface FrontProxyPki {
  ca: CertificateAndKey;
  client: CertificateAndKey;
}

/**
 * The front-proxy CA and client certificate under `dir` (kubeadm's
 * front-proxy-ca.crt and front-proxy-client.crt), made at first start and
 * reissued as the other leaves are. A CA of its own, as kube's: aggregated API
 * servers trust X-Remote-* headers only from certificates this CA signed.
 */
export function ensureFrontProxyPki(dir: string, now: number): Promise<FrontProxyPki> {
  // members of an in-process cluster (tests) start together on one PKI directory: one makes it, the others wait
  const running = frontProxyMaking.get(dir);
  if (running) return running;
  const making = makeFrontProxyPki(dir, now).finally(() => frontProxyMaking.delete(dir));
  frontProxyMaking.set(dir, making);
  return making;
}

const frontProxyMaking = new Map<string, Promise<FrontProxyPki>>();

async function makeFrontProxyPki(dir: string, now: number): Promise<FrontProxyPki> {
  const caCert = join(dir, 'front-proxy-ca.crt');
  const caKey = join(dir, 'front-proxy-ca.key');
  const clientCert = join(dir, 'front-proxy-client.crt');
  const clientKey = join(dir, 'front-proxy-client.key');
  let ca = await readPair(caCert, caKey);
  let caIsNew = false;
  if (!ca || !pairMatches(ca)) {
    ca = await createCa(now, 'front-proxy-ca');
    await writePair(caCert, caKey, ca);
    caIsNew = true;
  }
  let client = caIsNew ? undefined : await readPair(clientCert, clientKey);
  if (!client || !leafIsUsable(client, new NodeX509Certificate(ca.certPem), now)) {
    client = await issueClientCertificate({ ca }, { commonName: FRONT_PROXY_CLIENT_NAME, days: LEAF_DAYS, now });
    await writePair(clientCert, clientKey, client);
  }
  return { ca, client };
}

/** Read an existing PKI without creating or repairing anything. */
export async function loadPki(dir: string): Promise<Pki> {
  const paths = pkiPaths(dir);
  const [ca, serving, admin] = await Promise.all([
    readPair(paths.caCert, paths.caKey),
    readPair(paths.servingCert, paths.servingKey),
    readPair(paths.adminCert, paths.adminKey),
  ]);
  if (!ca || !serving || !admin) {
    throw new Error(`incomplete PKI in ${dir}: run the server once to create it`);
  }
  return { paths, ca, serving, admin, adminToken: await readAdminToken(paths.adminToken) };
}

/** Issue a client certificate (extended key usage clientAuth) signed by the cluster CA. */
export async function issueClientCertificate(
  pki: Pick<Pki, 'ca'>,
  req: ClientCertificateRequest,
): Promise<CertificateAndKey> {
  if (req.commonName.length === 0) throw new Error('client certificate needs a common name');
  // One RDN per attribute keeps the organizations in the order given.
  const subject: X509.JsonName = [{ CN: [req.commonName] }];
  for (const o of req.organizations ?? []) subject.push({ O: [o] });
  return issueCertificate(pki.ca, { subject, days: req.days ?? LEAF_DAYS, usage: 'client', now: req.now ?? systemClock.now() });
}

// ---------------------------------------------------------------------------

interface IssueParams {
  subject: X509.JsonName;
  days: number;
  usage: 'server' | 'client';
  hosts?: string[];
  now: number;
}

async function createCa(now: number, name = 'orch-ca'): Promise<CertificateAndKey> {
  const x509 = await loadX509();
  const keys = (await webcrypto.subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const notBefore = backdated(now);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: [{ CN: [`${name}@${Math.floor(notBefore.getTime() / 1000)}`] }],
    notBefore,
    notAfter: new Date(notBefore.getTime() + CA_DAYS * DAY_MS),
    signingAlgorithm: SIGNING_ALGORITHM,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem') + '\n', keyPem: await exportKeyPem(keys.privateKey) };
}

async function issueCertificate(ca: CertificateAndKey, p: IssueParams): Promise<CertificateAndKey> {
  const x509 = await loadX509();
  const caCert = new x509.X509Certificate(ca.certPem);
  const caKey = await importKeyPem(ca.keyPem);
  const keys = (await webcrypto.subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const notBefore = backdated(p.now);
  const extensions: X509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    // ECDSA keys only sign (no key encipherment), in TLS 1.2 and 1.3 alike.
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    new x509.ExtendedKeyUsageExtension(
      [p.usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth],
      false,
    ),
    await x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey),
    await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
  ];
  if (p.hosts && p.hosts.length > 0) {
    extensions.push(
      new x509.SubjectAlternativeNameExtension(
        p.hosts.map((h) => ({ type: isIP(h) ? ('ip' as const) : ('dns' as const), value: h })),
        false,
      ),
    );
  }
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: p.subject,
    // The issuer must be the CA's subject exactly as encoded, so that chain
    // building matches it.
    issuer: caCert.subjectName,
    notBefore,
    notAfter: new Date(notBefore.getTime() + p.days * DAY_MS),
    signingAlgorithm: SIGNING_ALGORITHM,
    publicKey: keys.publicKey,
    signingKey: caKey,
    extensions,
  });
  return { certPem: cert.toString('pem') + '\n', keyPem: await exportKeyPem(keys.privateKey) };
}

function leafIsUsable(pair: CertificateAndKey, ca: NodeX509Certificate, now: number): boolean {
  try {
    if (!pairMatches(pair)) return false;
    const cert = new NodeX509Certificate(pair.certPem);
    if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) return false;
    return Date.parse(cert.validTo) - now > RENEW_BEFORE_MS;
  } catch {
    return false;
  }
}

/** The certificate carries the public half of the key (a crash between the two writes could leave them mismatched). */
function pairMatches(pair: CertificateAndKey): boolean {
  try {
    const fromKey = createPublicKey(createPrivateKey(pair.keyPem)).export({ type: 'spki', format: 'der' });
    const fromCert = new NodeX509Certificate(pair.certPem).publicKey.export({ type: 'spki', format: 'der' });
    return fromKey.equals(fromCert);
  } catch {
    return false;
  }
}

function coversHosts(certPem: string, hosts: string[]): boolean {
  const cert = new NodeX509Certificate(certPem);
  return hosts.every((h) =>
    isIP(h) ? cert.checkIP(h) !== undefined : cert.checkHost(h, { subject: 'never' }) !== undefined,
  );
}

/** Five minutes in the past, so that a client whose clock lags a little accepts a fresh certificate. */
function backdated(now: number): Date {
  return new Date(now - 5 * 60 * 1000);
}

function randomSerial(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  // positive INTEGER (RFC 5280 §4.1.2.2); the first byte of 16 always exists
  const top = bytes[0]! & 0x7f;
  bytes[0] = top === 0 ? 1 : top;
  return Buffer.from(bytes).toString('hex');
}

async function exportKeyPem(key: webcrypto.CryptoKey): Promise<string> {
  const x509 = await loadX509();
  const der = await webcrypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY') + '\n';
}

async function importKeyPem(pem: string): Promise<webcrypto.CryptoKey> {
  const x509 = await loadX509();
  const der = x509.PemConverter.decodeFirst(pem);
  return webcrypto.subtle.importKey('pkcs8', der, KEY_ALGORITHM, false, ['sign']);
}

async function readPair(certPath: string, keyPath: string): Promise<CertificateAndKey | undefined> {
  try {
    const [certPem, keyPem] = await Promise.all([readFile(certPath, 'utf8'), readFile(keyPath, 'utf8')]);
    return { certPem, keyPem };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

async function writePair(certPath: string, keyPath: string, pair: CertificateAndKey): Promise<void> {
  // A crash between the two writes leaves a mismatched pair, which the next
  // start detects (pairMatches) and reissues.
  await writeFileAtomic(keyPath, pair.keyPem);
  await writeFileAtomic(certPath, pair.certPem);
}

/** temporary names unique within the process too (two writers of one path in one process must not share one) */
let tmpSeq = 0;

async function writeFileAtomic(path: string, text: string): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}-${++tmpSeq}`;
  await writeFile(tmp, text, { mode: 0o600 });
  await chmod(tmp, 0o600); // mode is masked by umask on create
  await rename(tmp, path);
}
