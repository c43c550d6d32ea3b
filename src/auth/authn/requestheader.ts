// The authenticating proxy (spec 001 §5.8): a front proxy authenticates the
// user and passes the identity in headers. The headers are trusted only on a
// connection whose client certificate is signed by the requestheader CA
// (`--requestheader-client-ca-file`) and, when `--requestheader-allowed-names`
// is set, has one of those Common Names. Header names are case-insensitive;
// extra keys are the header name minus the prefix, lowercased and
// percent-decoded.

import { X509Certificate } from 'node:crypto';
import type { UserInfo } from '../types.js';
import type { Authenticator, AuthnRequest, AuthnResult } from './chain.js';

export interface RequestHeaderOptions {
  /** the wall clock the proxy certificate's validity is checked against */
  now: () => number;
  usernameHeaders: string[];
  groupHeaders: string[];
  extraHeaderPrefixes: string[];
  /** PEM bundle of the requestheader CA */
  clientCAPem: string;
  allowedNames: string[];
}

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

export class RequestHeaderAuthenticator implements Authenticator {
  readonly name = 'requestheader';
  private readonly cas: X509Certificate[];
  private readonly o: RequestHeaderOptions;

  constructor(o: RequestHeaderOptions) {
    if (o.usernameHeaders.length === 0) throw new Error('--requestheader-username-headers is required with --requestheader-client-ca-file');
    this.cas = [...o.clientCAPem.matchAll(PEM_CERT)].map((m) => new X509Certificate(m[0]));
    if (this.cas.length === 0) throw new Error('--requestheader-client-ca-file: no PEM certificate found');
    this.o = {
      ...o,
      usernameHeaders: o.usernameHeaders.map((h) => h.toLowerCase()),
      groupHeaders: o.groupHeaders.map((h) => h.toLowerCase()),
      extraHeaderPrefixes: o.extraHeaderPrefixes.map((h) => h.toLowerCase()),
    };
  }

  /** the proxy's certificate is signed by one of our CAs and currently valid */
  private trusted(raw: Uint8Array): X509Certificate | undefined {
    let leaf: X509Certificate;
    try {
      leaf = new X509Certificate(Buffer.from(raw));
    } catch {
      return undefined;
    }
    const now = this.o.now();
    if (now < Date.parse(leaf.validFrom) || now > Date.parse(leaf.validTo)) return undefined;
    return this.cas.some((ca) => leaf.checkIssued(ca) && leaf.verify(ca.publicKey)) ? leaf : undefined;
  }

  authenticate(req: AuthnRequest): AuthnResult {
    if (!req.peer || req.peer.raw.length === 0) return { result: 'none' };
    const username = this.o.usernameHeaders.map((h) => req.headers.get(h)?.trim() ?? '').find((v) => v !== '');
    if (username === undefined) return { result: 'none' };
    const leaf = this.trusted(req.peer.raw);
    // headers from a connection we do not trust are ignored, not believed
    if (!leaf) return { result: 'none' };
    if (this.o.allowedNames.length > 0 && !this.o.allowedNames.includes(req.peer.commonName)) {
      return { result: 'error', message: `requestheader: client certificate common name ${JSON.stringify(req.peer.commonName)} is not allowed` };
    }
    const split = (v: string | undefined): string[] => (v === undefined ? [] : v.split(/,\s*/).map((s) => s.trim()).filter((s) => s !== ''));
    const groups = this.o.groupHeaders.flatMap((h) => split(req.headers.get(h)));
    const extra: Record<string, string[]> = {};
    for (const [name, value] of req.headers) {
      for (const p of this.o.extraHeaderPrefixes) {
        if (!name.startsWith(p) || name.length === p.length) continue;
        let key: string;
        try {
          key = decodeURIComponent(name.slice(p.length)).toLowerCase();
        } catch {
          return { result: 'error', message: `requestheader: bad percent-encoding in header ${name}` };
        }
        extra[key] = [...(extra[key] ?? []), ...split(value)];
      }
    }
    const user: UserInfo = { username, groups, ...(Object.keys(extra).length > 0 ? { extra } : {}) };
    return { result: 'ok', user };
  }
}
