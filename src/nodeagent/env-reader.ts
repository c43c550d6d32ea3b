// Reads what a container's environment needs (container-env.ts) through the
// public API with the agent's own credentials: the node authorizer lets a node
// read the ConfigMaps and Secrets its pods reference, and services. Read at
// each container start, as kubelet reads at each container creation; a failed
// read fails that start (CreateContainerConfigError) and a later sync retries.

import { ApiError, type ApiClient } from './api-client.js';
import { type ContainerEnv, containerEnv, type EnvInputs, EnvError, type Fetched, refs, type ServiceLike } from './container-env.js';
import type { VolumeReader } from './volumes.js';

export interface EnvReader {
  object(kind: 'configmaps' | 'secrets', ns: string, name: string): Promise<Fetched>;
  /** the services of `ns` and default/kubernetes */
  services(ns: string, links: boolean): Promise<ServiceLike[]>;
}

const enc = encodeURIComponent;

export function apiEnvReader(api: ApiClient): EnvReader {
  return {
    async object(kind, ns, name) {
      try {
        const o = await api.get<{ data?: Record<string, string>; binaryData?: Record<string, string> }>(`/api/v1/namespaces/${enc(ns)}/${kind}/${enc(name)}`);
        return o.binaryData ? { data: o.data ?? {}, binaryData: o.binaryData } : { data: o.data ?? {} };
      } catch (e) {
        if (e instanceof ApiError && e.code === 404) return { notFound: true };
        return { error: (e as Error).message };
      }
    },
    async services(ns, links) {
      const out: ServiceLike[] = [];
      if (links) {
        const items = (await api.get<{ items: ServiceLike[] }>(`/api/v1/namespaces/${enc(ns)}/services`)).items;
        // list items may omit their namespace; serviceEnv tells the namespace's services from default/kubernetes by it
        out.push(...items.map((s) => ({ ...s, metadata: { ...s.metadata, namespace: s.metadata.namespace ?? ns } })));
      }
      if (!links || ns !== 'default') {
        try {
          out.push(await api.get<ServiceLike>('/api/v1/namespaces/default/services/kubernetes'));
        } catch (e) {
          if (!(e instanceof ApiError && e.code === 404)) throw e;
        }
      }
      return out;
    },
  };
}

/** fetch what the container references, then build its environment (throws EnvError) */
export async function readContainerEnv(reader: EnvReader | undefined, i: Omit<EnvInputs, 'services' | 'configMaps' | 'secrets'>): Promise<ContainerEnv> {
  const ns = i.pod.metadata.namespace ?? 'default';
  const { configMaps, secrets } = refs(i.container);
  const fetch = async (kind: 'configmaps' | 'secrets', names: Set<string>) =>
    new Map<string, Fetched>(await Promise.all([...names].map(async (n): Promise<[string, Fetched]> => [n, reader ? await reader.object(kind, ns, n) : { error: `couldn't get ${kind === 'configmaps' ? 'configMap' : 'secret'} ${ns}/${n}, no kubeClient defined` }])));
  let services: ServiceLike[] | undefined;
  try {
    services = reader ? await reader.services(ns, i.pod.spec?.enableServiceLinks ?? true) : undefined;
  } catch (e) {
    throw new EnvError((e as Error).message);
  }
  return containerEnv({ ...i, services, configMaps: await fetch('configmaps', configMaps), secrets: await fetch('secrets', secrets) });
}

/**
 * what volumes read (volumes.ts): the same object reads, and TokenRequests
 * (`authentication.<domain>/v1`) bound to the pod, as kubelet's token manager
 * asks; an API refusal becomes its Status message (kubelet's FailedMount text)
 */
export function apiVolumeReader(api: ApiClient, apiDomain: string): VolumeReader {
  const env = apiEnvReader(api);
  return {
    object: (kind, ns, name) => env.object(kind, ns, name),
    async token(ns, sa, r) {
      const body = {
        apiVersion: `authentication.${apiDomain}/v1`,
        kind: 'TokenRequest',
        spec: { audiences: r.audiences, expirationSeconds: r.expirationSeconds, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: r.pod.name, uid: r.pod.uid } },
      };
      try {
        const out = await api.call<{ status?: { token?: string; expirationTimestamp?: string } }>('POST', `/api/v1/namespaces/${enc(ns)}/serviceaccounts/${enc(sa)}/token`, body);
        const expires = Date.parse(out.status?.expirationTimestamp ?? '');
        if (!out.status?.token || Number.isNaN(expires)) throw new Error('the TokenRequest answer has no token');
        return { token: out.status.token, expiresAtMs: expires };
      } catch (e) {
        if (e instanceof ApiError) throw new Error(e.message.replace(/^\S+ \S+: \d+ /, ''));
        throw e;
      }
    },
  };
}
