// The `extension-apiserver-authentication` ConfigMap in the system namespace
// (kube's ClusterAuthenticationTrustController): what an aggregated API server
// reads to trust this server's clients and its front proxy — the client CA,
// the requestheader CA, header names and allowed names, lists as JSON arrays
// as kube writes them. Written at start and re-asserted every `resyncMs` on
// the injected clock (a deleted or edited one comes back).

import { type Clock, type TimerHandle, every } from '../../core/clock.js';
import { StatusError } from '../../core/errors.js';
import { systemNamespacesOf } from '../../core/product-names.js';
import type { GenericStore } from '../../registry/generic-store.js';
// the name kube's bootstrap Role `extension-apiserver-authentication-reader` grants reading
import { EXTENSION_APISERVER_AUTHENTICATION as AUTHENTICATION_CONFIGMAP } from '../../auth/authz/rbac/namespace-policy.js';

export { AUTHENTICATION_CONFIGMAP };

export interface RequestHeaderTrust {
  clientCAPem: string;
  usernameHeaders: string[];
  groupHeaders: string[];
  extraHeaderPrefixes: string[];
  allowedNames: string[];
}

export interface AuthenticationConfigMapOptions {
  apiDomain: string;
  configMaps: () => GenericStore;
  /** the CAs whose client certificates authenticate (the cluster CA and --client-ca-file) */
  clientCAPem: string;
  /** absent when the front proxy's CA is not known (--proxy-client-cert-file without --requestheader-client-ca-file) */
  requestHeader?: RequestHeaderTrust;
  clock: Clock;
  resyncMs?: number;
  log?: (msg: string) => void;
}

/** the ConfigMap's data, with kube's keys */
export function authenticationConfigMapData(o: Pick<AuthenticationConfigMapOptions, 'clientCAPem' | 'requestHeader'>): Record<string, string> {
  const data: Record<string, string> = { 'client-ca-file': o.clientCAPem };
  const rh = o.requestHeader;
  if (rh) {
    data['requestheader-client-ca-file'] = rh.clientCAPem;
    data['requestheader-username-headers'] = JSON.stringify(rh.usernameHeaders);
    data['requestheader-group-headers'] = JSON.stringify(rh.groupHeaders);
    data['requestheader-extra-headers-prefix'] = JSON.stringify(rh.extraHeaderPrefixes);
    data['requestheader-allowed-names'] = JSON.stringify(rh.allowedNames);
  }
  return data;
}

export class AuthenticationConfigMap {
  private timer: TimerHandle | undefined;

  constructor(private readonly o: AuthenticationConfigMapOptions) {}

  start(): void {
    void this.sync();
    this.timer = every(this.o.clock, this.o.resyncMs ?? 60_000, () => void this.sync());
  }

  stop(): void {
    this.timer?.cancel();
  }

  /** creates the ConfigMap or brings its data back to what this server publishes */
  async sync(): Promise<void> {
    const gs = this.o.configMaps();
    const namespace = systemNamespacesOf(this.o.apiDomain).system;
    const data = authenticationConfigMapData(this.o);
    const opts = { dryRun: false, manager: 'orch-apiserver' } as const;
    try {
      const cur = await gs.get(namespace, AUTHENTICATION_CONFIGMAP).catch((e: unknown) => {
        if (e instanceof StatusError && e.code === 404) return undefined;
        throw e;
      });
      if (!cur) {
        await gs.create(namespace, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: AUTHENTICATION_CONFIGMAP, namespace }, data }, opts);
        return;
      }
      if (JSON.stringify(cur.data) === JSON.stringify(data)) return;
      await gs.guaranteedUpdate(namespace, AUTHENTICATION_CONFIGMAP, opts, (c) => ({ ...c!, data }));
    } catch (e) {
      // another member wrote it first, or the store is not ready: the next pass tries again
      if (!(e instanceof StatusError && e.code === 409)) this.o.log?.(`${AUTHENTICATION_CONFIGMAP}: ${(e as Error).message}`);
    }
  }
}
