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
