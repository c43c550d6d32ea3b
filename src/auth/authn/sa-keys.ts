// Service-account signing and verification keys (spec 001 §5.5:
// `--service-account-key-file`, PEM RSA or ECDSA private or public keys or
// certificates, may repeat). Key ids are Kubernetes': base64url of the
// SHA-256 of the DER public key, so JWKS consumers see stable ids.

import { type KeyObject, X509Certificate, createHash, createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

export interface VerificationKey {
  kid: string;
  alg: string;
  key: KeyObject;
  jwk: Record<string, unknown>;
}

export interface ServiceAccountKeys {
  signing: { kid: string; alg: string; key: KeyObject } | undefined;
  verify: VerificationKey[];
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/** every public key in a PEM file (private keys give their public half); error names the file */
export function readPublicKeys(path: string): KeyObject[] {
  const text = readPem(path);
  const out: KeyObject[] = [];
  for (const m of text.matchAll(PEM_BLOCK)) {
    const type = m[1]!;
    try {
      if (type === 'CERTIFICATE') out.push(new X509Certificate(m[0]).publicKey);
      else if (type.includes('PRIVATE KEY')) out.push(createPublicKey(createPrivateKey(m[0])));
      else if (type.includes('PUBLIC KEY')) out.push(createPublicKey(m[0]));
    } catch (e) {
      throw new Error(`--service-account-key-file: ${path}: cannot parse ${type}: ${(e as Error).message}`);
    }
  }
  if (out.length === 0) throw new Error(`--service-account-key-file: ${path}: no PEM public key, private key or certificate found`);
  for (const k of out) algorithmFor(k, path);
  return out;
}

export function readPrivateKey(path: string, flag = '--service-account-signing-key-file'): KeyObject {
  const text = readPem(path, flag);
  for (const m of text.matchAll(PEM_BLOCK)) {
    if (!m[1]!.includes('PRIVATE KEY')) continue;
    try {
      const k = createPrivateKey(m[0]);
      algorithmFor(k, path);
      return k;
    } catch (e) {
      throw new Error(`${flag}: ${path}: ${(e as Error).message}`);
    }
  }
  throw new Error(`${flag}: ${path}: no PEM private key found`);
}

function readPem(path: string, flag = '--service-account-key-file'): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`${flag}: cannot read ${path}: ${(e as Error).message}`);
  }
}

/** RS256 for RSA, ES256/384/512 by curve (the JOSE algorithm of a key) */
export function algorithmFor(key: KeyObject, where = 'key'): string {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve === 'prime256v1') return 'ES256';
    if (curve === 'secp384r1') return 'ES384';
    if (curve === 'secp521r1') return 'ES512';
    throw new Error(`${where}: unsupported EC curve ${curve ?? '?'}`);
  }
  throw new Error(`${where}: unsupported key type ${key.asymmetricKeyType ?? '?'} (RSA or ECDSA expected)`);
}

export function keyId(publicKey: KeyObject): string {
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('base64url');
}

function verificationKey(pub: KeyObject): VerificationKey {
  const alg = algorithmFor(pub);
  const kid = keyId(pub);
  return { kid, alg, key: pub, jwk: { ...(pub.export({ format: 'jwk' }) as Record<string, unknown>), kid, alg, use: 'sig' } };
}

/**
 * The signing key is `signingKeyFile` or, when not given, a P-256 key kept in
 * `defaultKeyPath` (created on first start so tokens survive restarts).
 * Verification keys are the signing key's public half plus every key of
 * `keyFiles`.
 */
export function loadServiceAccountKeys(opts: { keyFiles?: string[]; signingKeyFile?: string; defaultKeyPath: string }): ServiceAccountKeys {
  let priv: KeyObject;
  if (opts.signingKeyFile) priv = readPrivateKey(opts.signingKeyFile);
  else {
    if (!existsSync(opts.defaultKeyPath)) {
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
      writeFileSync(opts.defaultKeyPath, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    }
    priv = readPrivateKey(opts.defaultKeyPath);
  }
  const pub = createPublicKey(priv);
  const verify = [verificationKey(pub)];
  for (const f of opts.keyFiles ?? []) {
    for (const k of readPublicKeys(f)) {
      const v = verificationKey(k);
      if (!verify.some((x) => x.kid === v.kid)) verify.push(v);
    }
  }
  return { signing: { kid: verify[0]!.kid, alg: algorithmFor(priv), key: priv }, verify };
}
