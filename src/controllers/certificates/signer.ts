// The built-in signers of CertificateSigningRequests (spec 001 §5.3, spec 000's
// CSR row), after kube-controller-manager's csrsigning controller
// (pkg/controller/certificates/signer) and the request rules of
// pkg/apis/certificates/helpers.go: parse the request, check it against the
// signer's rules (usages and subject), and issue a certificate from the
// cluster CA with the requested usages, kube's backdating and duration rules.

import { X509Certificate as NodeX509Certificate, createPrivateKey, webcrypto } from 'node:crypto';
import type * as X509 from '@peculiar/x509';
import { loadX509 } from '../../core/x509.js';
import { type SignerNames, signerNamesOf } from '../../core/product-names.js';

/** what the signer needs of a request, parsed (kube's x509.CertificateRequest) */
export interface ParsedCsr {
  /** the @peculiar/x509 request (signature check, public key) */
  req: X509.Pkcs10CertificateRequest;
  commonName: string;
  organizations: string[];
  dnsNames: string[];
  ipAddresses: string[];
  emailAddresses: string[];
  uris: string[];
}

/** kube's capihelper.ParseCSR: the first PEM block must be a CERTIFICATE REQUEST */
export async function parseCsr(pem: string): Promise<ParsedCsr> {
  const m = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/.exec(pem);
  if (!m || m[1] !== 'CERTIFICATE REQUEST') throw new Error('PEM block type must be CERTIFICATE REQUEST');
  const x509 = await loadX509();
  const req = new x509.Pkcs10CertificateRequest(Buffer.from(m[2]!.replace(/\s+/g, ''), 'base64'));
  const out: ParsedCsr = {
    req,
    commonName: req.subjectName.getField('CN')[0] ?? '',
    organizations: req.subjectName.getField('O'),
    dnsNames: [],
    ipAddresses: [],
    emailAddresses: [],
    uris: [],
  };
  const sanExt = req.getExtension('2.5.29.17'); // subjectAltName
  const san = sanExt ? new x509.SubjectAlternativeNameExtension(sanExt.rawData) : undefined;
  for (const n of san?.names.items ?? []) {
    if (n.type === 'dns') out.dnsNames.push(n.value);
    else if (n.type === 'ip') out.ipAddresses.push(n.value);
    else if (n.type === 'email') out.emailAddresses.push(n.value);
    else if (n.type === 'url') out.uris.push(n.value);
  }
  return out;
}

/** `spec.request` as stored (the base64 of the PEM, a `format: byte` field) */
export function requestPem(request: string): string {
  return Buffer.from(request, 'base64').toString('utf8');
}

const sorted = (s: Iterable<string>): string => `[${[...s].sort().join(' ')}]`;
const sameSet = (a: Set<string>, b: readonly string[]): boolean => a.size === b.length && b.every((x) => a.has(x));

const KUBELET_CLIENT = ['digital signature', 'key encipherment', 'client auth'];
const KUBELET_CLIENT_NO_RSA = ['digital signature', 'client auth'];
const KUBELET_SERVING = ['digital signature', 'key encipherment', 'server auth'];
const KUBELET_SERVING_NO_RSA = ['digital signature', 'server auth'];

/** kube's ValidateKubeletClientCSR; the message is kube's, '' when the request follows the rules */
export function kubeletClientViolation(r: ParsedCsr, usages: readonly string[]): string {
  if (r.organizations.length !== 1 || r.organizations[0] !== 'system:nodes') return 'subject organization is not system:nodes';
  if (r.dnsNames.length > 0) return 'DNS subjectAltNames are not allowed';
  if (r.emailAddresses.length > 0) return 'Email subjectAltNames are not allowed';
  if (r.ipAddresses.length > 0) return 'IP subjectAltNames are not allowed';
  if (r.uris.length > 0) return 'URI subjectAltNames are not allowed';
  if (!r.commonName.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
  const set = new Set(usages);
  if (!sameSet(set, KUBELET_CLIENT) && !sameSet(set, KUBELET_CLIENT_NO_RSA)) return `usages did not match ${sorted(KUBELET_CLIENT)}`;
  return '';
}

/** kube's ValidateKubeletServingCSR */
export function kubeletServingViolation(r: ParsedCsr, usages: readonly string[]): string {
  if (r.organizations.length !== 1 || r.organizations[0] !== 'system:nodes') return 'subject organization is not system:nodes';
  if (r.dnsNames.length === 0 && r.ipAddresses.length === 0) return 'DNS or IP subjectAltName is required';
  if (r.emailAddresses.length > 0) return 'Email subjectAltNames are not allowed';
  if (r.uris.length > 0) return 'URI subjectAltNames are not allowed';
  const set = new Set(usages);
  if (!sameSet(set, KUBELET_SERVING) && !sameSet(set, KUBELET_SERVING_NO_RSA)) return `usages did not match ${sorted(KUBELET_SERVING)}`;
  if (!r.commonName.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
  return '';
}

/** kube's validAPIServerClientUsages: client auth required, digital signature and key encipherment optional */
export function apiServerClientViolation(usages: readonly string[]): string {
  let clientAuth = false;
  for (const u of usages) {
    if (u === 'client auth') clientAuth = true;
    else if (u !== 'digital signature' && u !== 'key encipherment') return `invalid usage for client certificate: ${u}`;
  }
  return clientAuth ? '' : 'missing required usage for client certificate: client auth';
}

export type SignerVerdict = { kind: 'not-ours' } | { kind: 'invalid'; message: string } | { kind: 'sign' };

/**
 * kube's isRequestForSignerFn: a request for one of the built-in signers is
 * signed when it follows that signer's rules and marked Failed when not;
 * any other signer name belongs to someone else.
 */
export function judgeRequest(names: SignerNames, signerName: string, r: ParsedCsr, usages: readonly string[]): SignerVerdict {
  let message: string;
  if (signerName === names.kubeletClient) message = kubeletClientViolation(r, usages);
  else if (signerName === names.kubeletServing) message = kubeletServingViolation(r, usages);
  else if (signerName === names.apiServerClient) message = apiServerClientViolation(usages);
  else if (signerName === names.legacyUnknown) message = '';
  else return { kind: 'not-ours' };
  return message ? { kind: 'invalid', message } : { kind: 'sign' };
}

export function isBuiltinSigner(apiDomain: string, signerName: string): boolean {
  return Object.values(signerNamesOf(apiDomain)).includes(signerName);
}

/** kube-controller-manager's `--cluster-signing-duration` default: one year */
export const DEFAULT_SIGNING_DURATION_MS = 365 * 24 * 3600_000;
/** kube's lower bound on a requested duration (twice the backdate) */
const MIN_DURATION_MS = 10 * 60_000;
const BACKDATE_MS = 5 * 60_000;
/** below this a certificate's end is not backdated (kube's PermissiveSigningPolicy.Short) */
const SHORT_MS = 8 * 3600_000;

/** kube's signer.duration: the requested expirationSeconds, at most the signing duration, at least 10 minutes */
export function certificateDuration(expirationSeconds: number | undefined, maxMs: number): number {
  if (expirationSeconds === undefined) return maxMs;
  const ms = expirationSeconds * 1000;
  return ms > maxMs ? maxMs : ms < MIN_DURATION_MS ? MIN_DURATION_MS : ms;
}

/** the signing CA: the cluster CA's certificate and PKCS#8 key, PEM */
export interface SigningCa {
  certPem: string;
  keyPem: string;
}

export interface SignParams {
  usages: readonly string[];
  /** the certificate's duration (certificateDuration) */
  durationMs: number;
  /** ms since the epoch (the controller's clock) */
  now: number;
}

const KEY_USAGE_BITS: Record<string, keyof typeof X509.KeyUsageFlags> = {
  signing: 'digitalSignature',
  'digital signature': 'digitalSignature',
  'content commitment': 'nonRepudiation',
  'key encipherment': 'keyEncipherment',
  'key agreement': 'keyAgreement',
  'data encipherment': 'dataEncipherment',
  'cert sign': 'keyCertSign',
  'crl sign': 'cRLSign',
  'encipher only': 'encipherOnly',
  'decipher only': 'decipherOnly',
};

/** kube's extended key usages by name (authority/policies.go keyUsagesFromStrings) */
const EXT_KEY_USAGES: Record<string, string> = {
  any: '2.5.29.37.0',
  'server auth': '1.3.6.1.5.5.7.3.1',
  'client auth': '1.3.6.1.5.5.7.3.2',
  'code signing': '1.3.6.1.5.5.7.3.3',
  'email protection': '1.3.6.1.5.5.7.3.4',
  's/mime': '1.3.6.1.5.5.7.3.4',
  'ipsec end system': '1.3.6.1.5.5.7.3.5',
  'ipsec tunnel': '1.3.6.1.5.5.7.3.6',
  'ipsec user': '1.3.6.1.5.5.7.3.7',
  timestamping: '1.3.6.1.5.5.7.3.8',
  'ocsp signing': '1.3.6.1.5.5.7.3.9',
  'microsoft sgc': '1.3.6.1.4.1.311.10.3.3',
  'netscape sgc': '2.16.840.1.113730.4.1',
};

/** every usage name certificates/v1 accepts (spec 000's CSR row: known values only) */
export const KNOWN_USAGES: readonly string[] = [...Object.keys(KEY_USAGE_BITS), ...Object.keys(EXT_KEY_USAGES)];

/**
 * kube's CertificateAuthority.Sign with the PermissiveSigningPolicy: the
 * request's subject, SANs and public key (its signature checked), the given
 * usages, not before now − 5 min, not after now + duration (− 5 min unless
 * shorter than 8 h), never past the CA's own end. Returns the PEM.
 */
export async function signRequest(ca: SigningCa, r: ParsedCsr, p: SignParams): Promise<string> {
  const x509 = await loadX509();
  if (!(await r.req.verify())) throw new Error('unable to verify certificate request signature');
  const caCert = new x509.X509Certificate(ca.certPem);
  const { key, algorithm } = await importCaKey(ca.keyPem);
  const caEnd = caCert.notAfter.getTime();
  const notBefore = p.now - BACKDATE_MS;
  let notAfter = p.durationMs < SHORT_MS ? p.now + p.durationMs : p.now + p.durationMs - BACKDATE_MS;
  if (notAfter >= caEnd) notAfter = caEnd;
  if (notBefore >= caEnd) throw new Error(`the signer has expired: NotAfter=${caCert.notAfter.toISOString()}`);
  if (p.now >= caEnd) throw new Error(`refusing to sign a certificate that expired in the past: NotAfter=${caCert.notAfter.toISOString()}`);

  let bits = 0;
  const ext: string[] = [];
  for (const u of p.usages) {
    const bit = KEY_USAGE_BITS[u];
    if (bit) bits |= x509.KeyUsageFlags[bit];
    else if (EXT_KEY_USAGES[u]) ext.push(EXT_KEY_USAGES[u]);
    else throw new Error(`unrecognized usage: ${u}`);
  }
  const extensions: X509.Extension[] = [];
  // as Go's CreateCertificate: key usage (critical) and extended key usage only when set
  if (bits !== 0) extensions.push(new x509.KeyUsagesExtension(bits, true));
  if (ext.length > 0) extensions.push(new x509.ExtendedKeyUsageExtension(ext, false));
  extensions.push(new x509.BasicConstraintsExtension(false, undefined, true));
  const ski = caCert.getExtension(x509.SubjectKeyIdentifierExtension);
  extensions.push(ski ? new x509.AuthorityKeyIdentifierExtension(ski.keyId) : await x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey));
  const sans = [
    ...r.dnsNames.map((value) => ({ type: 'dns' as const, value })),
    ...r.emailAddresses.map((value) => ({ type: 'email' as const, value })),
    ...r.ipAddresses.map((value) => ({ type: 'ip' as const, value })),
    ...r.uris.map((value) => ({ type: 'url' as const, value })),
  ];
  if (sans.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(sans, false));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: r.req.subjectName,
    issuer: caCert.subjectName,
    notBefore: new Date(notBefore),
    notAfter: new Date(notAfter),
    signingAlgorithm: algorithm,
    publicKey: r.req.publicKey,
    signingKey: key,
    extensions,
  });
  return cert.toString('pem') + '\n';
}

/** the CA key as WebCrypto wants it: ECDSA on its curve, or RSA PKCS#1 v1.5, both with SHA-256 */
async function importCaKey(pem: string): Promise<{ key: webcrypto.CryptoKey; algorithm: webcrypto.EcdsaParams | webcrypto.Algorithm }> {
  const node = createPrivateKey(pem);
  const der = node.export({ type: 'pkcs8', format: 'der' });
  if (node.asymmetricKeyType === 'ec') {
    const curve = { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' }[node.asymmetricKeyDetails?.namedCurve ?? ''];
    if (!curve) throw new Error(`unsupported CA key curve ${node.asymmetricKeyDetails?.namedCurve ?? ''}`);
    const key = await webcrypto.subtle.importKey('pkcs8', der, { name: 'ECDSA', namedCurve: curve }, false, ['sign']);
    return { key, algorithm: { name: 'ECDSA', hash: curve === 'P-256' ? 'SHA-256' : curve === 'P-384' ? 'SHA-384' : 'SHA-512' } };
  }
  if (node.asymmetricKeyType === 'rsa') {
    const algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
    return { key: await webcrypto.subtle.importKey('pkcs8', der, algorithm, false, ['sign']), algorithm };
  }
  throw new Error(`unsupported CA key type ${node.asymmetricKeyType ?? ''}`);
}

function randomSerial(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0]! & 0x7f) || 1; // a positive INTEGER (RFC 5280 §4.1.2.2)
  return Buffer.from(bytes).toString('hex');
}

/** when an issued certificate (PEM) ends, ms since the epoch; undefined when it does not parse */
export function certificateNotAfter(pem: string): number | undefined {
  try {
    return Date.parse(new NodeX509Certificate(pem).validTo);
  } catch {
    return undefined;
  }
}
