// The X.509 library, loaded once with what it needs (the server's PKI and the
// node agent's serving certificate both issue certificates with it).
import { webcrypto } from 'node:crypto';
import type * as X509 from '@peculiar/x509';

type X509Module = typeof X509;
let x509Loading: Promise<X509Module> | undefined;

/**
 * @peculiar/x509 depends on tsyringe, which refuses to load unless a
 * `Reflect.getMetadata` polyfill is present (the `reflect-metadata` package,
 * not a dependency of this project). tsyringe only reads constructor
 * parameter metadata, which x509's classes do not have, so a minimal
 * per-target store is enough. The library is loaded lazily, after the shim.
 */
export function loadX509(): Promise<X509Module> {
  x509Loading ??= (async () => {
    installReflectMetadataShim();
    const mod = (await import('@peculiar/x509')) as X509Module;
    // Node's webcrypto is a complete WebCrypto; the library types it as the DOM `Crypto`.
    mod.cryptoProvider.set(webcrypto as unknown as Parameters<typeof mod.cryptoProvider.set>[0]);
    return mod;
  })();
  return x509Loading;
}

function installReflectMetadataShim(): void {
  type MetadataReflect = typeof Reflect & {
    getMetadata?: (key: unknown, target: object) => unknown;
    getOwnMetadata?: (key: unknown, target: object) => unknown;
    defineMetadata?: (key: unknown, value: unknown, target: object) => void;
  };
  const r = Reflect as MetadataReflect;
  if (typeof r.getMetadata === 'function') return;
  const store = new WeakMap<object, Map<unknown, unknown>>();
  r.getOwnMetadata = (key, target) => store.get(target)?.get(key);
  r.defineMetadata = (key, value, target) => {
    let m = store.get(target);
    if (!m) store.set(target, (m = new Map()));
    m.set(key, value);
  };
  r.getMetadata = (key, target) => {
    for (let t: object | null = target; t !== null; t = Object.getPrototypeOf(t) as object | null) {
      const m = store.get(t);
      if (m?.has(key)) return m.get(key);
    }
    return undefined;
  };
}

export interface CertificateRequestParams {
  commonName: string;
  organizations?: string[];
  dnsNames?: string[];
  ipAddresses?: string[];
  emailAddresses?: string[];
}

/**
 * A PKCS#10 request (PEM) and its key (PKCS#8 PEM): `key` — an ECDSA P-256
 * key's PEM to reuse, `'rsa'` for a fresh RSA 2048 key — else a fresh ECDSA
 * P-256 key (kubelet's TLS bootstrap generates ECDSA P-256 keys).
 */
export async function createCertificateRequest(p: CertificateRequestParams, key?: string | 'rsa'): Promise<{ csrPem: string; keyPem: string }> {
  const x509 = await loadX509();
  const rsa = key === 'rsa';
  const alg = rsa
    ? { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', publicExponent: new Uint8Array([1, 0, 1]), modulusLength: 2048 }
    : { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = key && !rsa ? await ecKeyPair(key) : ((await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair);
  const name: X509.JsonName = [{ CN: [p.commonName] }];
  for (const o of p.organizations ?? []) name.push({ O: [o] });
  const sans = [
    ...(p.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(p.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
    ...(p.emailAddresses ?? []).map((value) => ({ type: 'email' as const, value })),
  ];
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name,
    keys: keys as unknown as Parameters<typeof x509.Pkcs10CertificateRequestGenerator.create>[0]['keys'],
    signingAlgorithm: alg,
    extensions: sans.length > 0 ? [new x509.SubjectAlternativeNameExtension(sans)] : [],
  });
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return { csrPem: csr.toString('pem') + '\n', keyPem: x509.PemConverter.encode(der, 'PRIVATE KEY') + '\n' };
}

/** an ECDSA P-256 PKCS#8 PEM as a WebCrypto pair (the public half from the private key's JWK) */
async function ecKeyPair(pem: string): Promise<webcrypto.CryptoKeyPair> {
  const der = Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
  const alg = { name: 'ECDSA', namedCurve: 'P-256' };
  const privateKey = await webcrypto.subtle.importKey('pkcs8', der, alg, true, ['sign']);
  const { d: _d, ...pub } = await webcrypto.subtle.exportKey('jwk', privateKey);
  const publicKey = await webcrypto.subtle.importKey('jwk', { ...pub, key_ops: ['verify'] }, alg, true, ['verify']);
  return { privateKey, publicKey };
}
