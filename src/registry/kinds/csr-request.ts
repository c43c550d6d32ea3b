// kube's validateCSR for `spec.request` at create (pkg/apis/certificates/
// validation): the first PEM block must be a CERTIFICATE REQUEST, its DER a
// PKCS#10 CertificationRequest, and its signature must verify with the key it
// carries. Synchronous, with a small DER reader and node:crypto (the strategy
// hooks are synchronous; the signer parses the request fully itself).

import { createPublicKey, verify } from 'node:crypto';

interface Tlv {
  tag: number;
  /** where the element's header starts */
  start: number;
  /** where its content starts and ends */
  body: number;
  end: number;
}

function tlv(buf: Buffer, pos: number, limit: number): Tlv {
  if (pos + 2 > limit) throw new Error('malformed');
  const tag = buf[pos]!;
  let len = buf[pos + 1]!;
  let body = pos + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || body + n > limit) throw new Error('malformed');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[body + i]!;
    body += n;
  }
  if (body + len > limit) throw new Error('malformed');
  return { tag, start: pos, body, end: body + len };
}

function oid(bytes: Buffer): string {
  const arcs: number[] = [];
  let v = 0;
  for (const b of bytes) {
    v = v * 128 + (b & 0x7f);
    if (!(b & 0x80)) {
      if (arcs.length === 0) arcs.push(v < 80 ? Math.floor(v / 40) : 2, v < 80 ? v % 40 : v - 80);
      else arcs.push(v);
      v = 0;
    }
  }
  return arcs.join('.');
}

/** signature algorithm OID → node:crypto digest (null: the key decides, Ed25519) */
const DIGESTS: Record<string, string | null> = {
  '1.2.840.10045.4.3.2': 'sha256',
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
  '1.2.840.113549.1.1.5': 'sha1',
  '1.2.840.113549.1.1.11': 'sha256',
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
  '1.3.101.112': null,
};

interface RequestParts {
  der: Buffer;
  info: Tlv;
  subject: Tlv;
  spki: Tlv;
  algorithm: string;
  signature: Buffer;
}

const PEM_BLOCK = /-----BEGIN ([^-\r\n]+)-----\r?\n([\s\S]*?)-----END \1-----/;

/** the first PEM block as a PKCS#10 request's parts, or kube's problem with it */
function requestParts(pemText: string): RequestParts | string {
  const m = PEM_BLOCK.exec(pemText);
  if (!m || m[1] !== 'CERTIFICATE REQUEST') return 'PEM block type must be CERTIFICATE REQUEST';
  const der = Buffer.from(m[2]!.replace(/\s+/g, ''), 'base64');
  try {
    const outer = tlv(der, 0, der.length);
    if (outer.tag !== 0x30) throw new Error('malformed');
    const info = tlv(der, outer.body, outer.end);
    const version = tlv(der, info.body, info.end);
    const subject = tlv(der, version.end, info.end);
    const spki = tlv(der, subject.end, info.end);
    const alg = tlv(der, info.end, outer.end);
    const algOid = tlv(der, alg.body, alg.end);
    const sig = tlv(der, alg.end, outer.end);
    if (info.tag !== 0x30 || subject.tag !== 0x30 || spki.tag !== 0x30 || algOid.tag !== 0x06 || sig.tag !== 0x03) throw new Error('malformed');
    return { der, info, subject, spki, algorithm: oid(der.subarray(algOid.body, algOid.end)), signature: der.subarray(sig.body + 1, sig.end) };
  } catch {
    return 'asn1: structure error: malformed certificate request';
  }
}

/** the request's problem with kube's wording, '' when it parses and its signature verifies */
export function certificateRequestProblem(pemText: string): string {
  const p = requestParts(pemText);
  if (typeof p === 'string') return p;
  const digest = DIGESTS[p.algorithm];
  if (digest === undefined) return 'x509: cannot verify signature: algorithm unimplemented';
  try {
    const key = createPublicKey({ key: p.der.subarray(p.spki.start, p.spki.end), format: 'der', type: 'spki' });
    if (!verify(digest, p.der.subarray(p.info.start, p.info.end), key, p.signature)) return `x509: ${key.asymmetricKeyType === 'rsa' ? 'RSA' : key.asymmetricKeyType === 'ec' ? 'ECDSA' : 'Ed25519'} verification failure`;
  } catch (e) {
    return `x509: cannot verify signature: ${(e as Error).message}`;
  }
  return '';
}

/** the subject's organizations (O, 2.5.4.10) in order; a string: why the request does not parse */
export function certificateRequestOrganizations(pemText: string): string[] | string {
  const p = requestParts(pemText);
  if (typeof p === 'string') return p;
  const out: string[] = [];
  try {
    // Name ::= SEQUENCE OF SET OF SEQUENCE { type OID, value ANY (a string) }
    for (let rdn = p.subject.body; rdn < p.subject.end; ) {
      const set = tlv(p.der, rdn, p.subject.end);
      for (let at = set.body; at < set.end; ) {
        const atv = tlv(p.der, at, set.end);
        const type = tlv(p.der, atv.body, atv.end);
        const value = tlv(p.der, type.end, atv.end);
        const bytes = p.der.subarray(value.body, value.end);
        // a BMPString is UTF-16 big-endian; the other string types are read as UTF-8
        if (oid(p.der.subarray(type.body, type.end)) === '2.5.4.10') out.push(value.tag === 0x1e ? Buffer.from(bytes).swap16().toString('utf16le') : bytes.toString('utf8'));
        at = atv.end;
      }
      rdn = set.end;
    }
  } catch {
    return 'asn1: structure error: malformed subject';
  }
  return out;
}
