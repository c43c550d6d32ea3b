// Reads admission needs from the local store: namespace objects (for
// namespaceSelector and `namespaceObject`), parameter objects of policies,
// and the Service/Endpoints a webhook's `service` reference leads to.

import { decodeObject, storageKey, storagePrefix } from '../generic-store.js';
import type { Registry } from '../registry.js';
import type { ApiObject } from '../types.js';
import { type RevisionedStore, prefixEnd } from '../../store/types.js';
import type { AdmissionLookups } from './types.js';
import { type ResolvedService, type ServiceResolver, ServiceResolutionError } from './webhook-client.js';

export function storeLookups(store: RevisionedStore, registry: Registry): AdmissionLookups {
  const read = (key: string): ApiObject | undefined => {
    const kv = store.range({ key }).kvs[0];
    if (!kv) return undefined;
    try {
      return decodeObject(kv);
    } catch {
      return undefined;
    }
  };
  return {
    namespace(name) {
      const def = registry.lookup('', 'v1', 'namespaces');
      return def && name ? read(storageKey(def, '', name)) : undefined;
    },
    objectsOf(apiVersion, kind, namespace) {
      const slash = apiVersion.indexOf('/');
      const group = slash < 0 ? '' : apiVersion.slice(0, slash);
      const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
      const def = registry.lookupKind(group, version, kind);
      if (!def) return undefined;
      return {
        namespaced: def.scope === 'Namespaced',
        list() {
          const p = storagePrefix(def, namespace);
          const out: ApiObject[] = [];
          for (const kv of store.range({ key: p, end: prefixEnd(p) }).kvs) {
            try {
              out.push(decodeObject(kv));
            } catch {
              // an undecodable parameter object is as good as absent
            }
          }
          return out;
        },
      };
    },
  };
}

type Obj = Record<string, unknown>;

/**
 * A webhook's `service` reference → an address (docs/admission.md): the
 * Service's port entry whose `port` is the reference's, then the ready
 * addresses of the Endpoints object of the same name for that port (by port
 * name, or the only port). This server has no service proxy, so a cluster IP
 * would lead nowhere: without endpoints the call fails ("no endpoints
 * available"), as kube's endpoint routing does. ExternalName Services lead to
 * their external name. The certificate is checked for `<name>.<namespace>.svc`.
 */
export function storeServiceResolver(store: RevisionedStore, registry: Registry): ServiceResolver {
  const read = (resource: string, namespace: string, name: string): Obj | undefined => {
    const def = registry.lookup('', 'v1', resource);
    if (!def) return undefined;
    const kv = store.range({ key: storageKey(def, namespace, name) }).kvs[0];
    return kv ? (decodeObject(kv) as Obj) : undefined;
  };
  return (namespace, name, port): ResolvedService => {
    const serverName = `${name}.${namespace}.svc`;
    const svc = read('services', namespace, name);
    if (!svc) throw new ServiceResolutionError('ServiceNotFound', `service "${name}" not found`);
    const spec = (svc.spec ?? {}) as Obj;
    if (spec.type === 'ExternalName' && typeof spec.externalName === 'string') return { host: spec.externalName, port, serverName };
    const ports = (Array.isArray(spec.ports) ? spec.ports : []) as Obj[];
    const sp = ports.find((p) => p.port === port);
    if (!sp) throw new ServiceResolutionError('ServicePortError', `no service port ${port} found for service "${name}"`);
    const ep = read('endpoints', namespace, name);
    if (!ep) throw new ServiceResolutionError('EndpointsNotFound', `no endpoints available for service "${name}"`);
    for (const subset of (Array.isArray(ep?.subsets) ? ep.subsets : []) as Obj[]) {
      const addrs = (Array.isArray(subset.addresses) ? subset.addresses : []) as Obj[];
      const eports = (Array.isArray(subset.ports) ? subset.ports : []) as Obj[];
      const epPort = eports.length === 1 && !sp.name ? eports[0] : eports.find((p) => (p.name ?? '') === (sp.name ?? ''));
      const ip = addrs.find((a) => typeof a.ip === 'string')?.ip;
      if (epPort && typeof epPort.port === 'number' && typeof ip === 'string') return { host: ip, port: epPort.port, serverName };
    }
    throw new ServiceResolutionError('MissingEndpoints', `no endpoints available for service "${name}"`, typeof sp.name === 'string' ? sp.name : '');
  };
}
