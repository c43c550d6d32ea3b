// Wires API aggregation (docs/compatibility.md "API aggregation"): the
// front-proxy client identity (--proxy-client-cert-file/--proxy-client-key-file,
// else generated under the PKI directory), the index of aggregated groups every
// member proxies by, the proxy itself, the leader's availability controller,
// discovery of the aggregated groups and the extension-apiserver-authentication
// ConfigMap.

import { readFileSync } from 'node:fs';
import type { Clock } from '../../core/clock.js';
import type { AggregatedApis } from '../../endpoints/filters/aggregator.js';
import { APIServiceAvailability } from '../../controllers/apiservice-availability.js';
import { type LeaderGate, runWhileLeader } from '../../controllers/runtime/index.js';
import { storeServiceResolver } from '../../registry/admission/lookups.js';
import { type ServiceResolver, WebhookAgents } from '../../registry/admission/webhook-client.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { Registry } from '../../registry/registry.js';
import type { ResourceDefinition } from '../../registry/types.js';
import type { RevisionedStore } from '../../store/types.js';
import type { AuthenticationOptions } from '../authentication-setup.js';
import { type CertificateAndKey, FRONT_PROXY_CLIENT_NAME, ensureFrontProxyPki } from '../pki.js';
import { AggregatedApiIndex } from './apiservice-index.js';
import { AggregatedDiscovery } from './discovery.js';
import { AuthenticationConfigMap, type RequestHeaderTrust } from './authentication-configmap.js';
import { aggregatorProxy, getDiscoveryDocument, getOpenAPIV3Document } from './proxy.js';

export interface AggregatorDeps {
  apiDomain: string;
  pkiDir: string;
  proxyClient?: { certFile: string; keyFile: string };
  requestHeader?: AuthenticationOptions['requestHeader'];
  /** the cluster CA and --client-ca-file, as the client-ca-file key publishes them */
  clientCAPem: string;
  store: RevisionedStore;
  registry: Registry;
  storeFor: (def: ResourceDefinition) => GenericStore;
  resolver?: ServiceResolver;
  clock: Clock;
  log: (msg: string) => void;
}

export interface Aggregator {
  apis: AggregatedApis;
  discovery: AggregatedDiscovery;
  stop(): void;
}

function readPem(file: string, flag: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`${flag}: cannot read ${file}: ${(e as Error).message}`);
  }
}

/** the proxy's client certificate and what aggregated servers are told to trust it by */
async function frontProxyIdentity(d: AggregatorDeps): Promise<{ client: CertificateAndKey; trust?: RequestHeaderTrust }> {
  const rh = d.requestHeader;
  const configured: RequestHeaderTrust | undefined = rh
    ? {
      clientCAPem: readPem(rh.clientCAFile, '--requestheader-client-ca-file'),
      usernameHeaders: rh.usernameHeaders,
      groupHeaders: rh.groupHeaders ?? [],
      extraHeaderPrefixes: rh.extraHeaderPrefixes ?? [],
      allowedNames: rh.allowedNames ?? [],
    }
    : undefined;
  if (d.proxyClient) {
    const client = { certPem: readPem(d.proxyClient.certFile, '--proxy-client-cert-file'), keyPem: readPem(d.proxyClient.keyFile, '--proxy-client-key-file') };
    return { client, trust: configured };
  }
  const generated = await ensureFrontProxyPki(d.pkiDir, d.clock.now());
  return {
    client: generated.client,
    trust: configured ?? {
      clientCAPem: generated.ca.certPem,
      usernameHeaders: ['X-Remote-User'],
      groupHeaders: ['X-Remote-Group'],
      extraHeaderPrefixes: ['X-Remote-Extra-'],
      allowedNames: [FRONT_PROXY_CLIENT_NAME],
    },
  };
}

export async function startAggregator(d: AggregatorDeps): Promise<Aggregator> {
  const { client, trust } = await frontProxyIdentity(d);
  const apiServiceDef = d.registry.lookupKind(`apiregistration.${d.apiDomain}`, 'v1', 'APIService');
  const core = (resource: string) => d.storeFor(d.registry.lookup('', 'v1', resource)!);
  const resolver = d.resolver ?? storeServiceResolver(d.store, d.registry);
  const agents = new WebhookAgents();
  const proxyOpts = { resolver, agents, clientCert: () => client, clock: d.clock, log: d.log };
  const index = new AggregatedApiIndex();
  const discovery = new AggregatedDiscovery(
    index,
    { discovery: (target) => getDiscoveryDocument(target, proxyOpts, d.clock), openapiV3: (target) => getOpenAPIV3Document(target, proxyOpts, d.clock) },
    d.clock,
    d.log,
  );
  let availability: LeaderGate | undefined;
  if (apiServiceDef) {
    const apiServices = d.storeFor(apiServiceDef);
    index.start(d.store, apiServices);
    availability = runWhileLeader(
      d.store,
      new APIServiceAvailability({
        store: d.store,
        apiServices,
        services: core('services'),
        endpoints: core('endpoints'),
        resolver,
        probe: async (api) => {
          const target = AggregatedApiIndex.targetOf(api);
          if (target) await getDiscoveryDocument(target, proxyOpts, d.clock);
        },
        clock: d.clock,
        log: d.log,
      }),
      { name: 'APIService availability', log: d.log },
    );
  }
  const configMap = new AuthenticationConfigMap({ apiDomain: d.apiDomain, configMaps: () => core('configmaps'), clientCAPem: d.clientCAPem, requestHeader: trust, clock: d.clock, log: d.log });
  configMap.start();
  const proxy = aggregatorProxy(proxyOpts);
  return {
    apis: { group: (g) => index.group(g), proxy },
    discovery,
    stop() {
      configMap.stop();
      availability?.stop();
      index.stop();
      discovery.stop();
      agents.close();
    },
  };
}
