// Documents that are not resources: /version, discovery (/api, /apis, …) and
// OpenAPI (/openapi/v2, /openapi/v3, /openapi/v3/<group-version>). All are
// derived from the registry, so custom resources appear as soon as they register.

import { createHash } from 'node:crypto';
import * as discovery from '../registry/discovery.js';
import { byGroupPriority } from '../registry/group-priorities.js';
import type { Registry } from '../registry/registry.js';
import { OpenAPIDocuments, openapiHash } from '../registry/openapi.js';
import { OPENAPI_V2_PROTOBUF, OPENAPI_V2_PROTOBUF_ACCEPT, encodeOpenAPIV2 } from '../machinery/schema/openapi-proto.js';
import type { NonResourceDoc, NonResourceHandler } from '../endpoints/chain.js';
import type { ServerMetrics } from './metrics.js';
import { ORCH_VERSION, versionInfo } from './version.js';
import { type Clock, systemClock } from '../core/clock.js';

/** what discovery needs of the aggregated groups (src/server/aggregator/discovery.ts) */
export interface AggregatedGroupsSource {
  /** changes whenever the lists below change */
  readonly version: number;
  groups(): discovery.APIGroup[];
  discoveryItems(): object[];
  /** an aggregated group's groupPriorityMinimum (the highest of its APIServices) */
  groupPriority(group: string): number | undefined;
  /** the aggregated versions' OpenAPI v3 documents by path (`apis/<group>/<version>`) */
  openapiV3Paths(): ReadonlyMap<string, { json: string; hash: string }>;
}

export function nonResourceHandler(
  registry: Registry,
  metrics?: ServerMetrics,
  extra?: (path: string) => NonResourceDoc | undefined,
  clock: Clock = systemClock,
  /** host:port clients reach this server at, for `/api`'s serverAddressByClientCIDRs (kube's ExternalAddress) */
  serverAddress: () => string = () => '',
  /** the aggregated groups (APIServices with a Service) `/apis` lists besides the registry's */
  aggregatedGroups?: AggregatedGroupsSource,
): NonResourceHandler {
  const openapi = new OpenAPIDocuments(registry, { title: 'orch', version: `v1.32.0+orch.${ORCH_VERSION}` });
  // the protobuf form of /openapi/v2, encoded once per document version
  let v2pb: { hash: string; bytes: Uint8Array } | undefined;
  // aggregated discovery documents (/api or /apis, v2 or v2beta1) of the registry's current version
  const aggregated = new Map<string, { json: string; etag: string }>();
  let aggregatedVersion = '';
  // /openapi/v3 with the aggregated versions' documents, for the local index's hash and the aggregated version
  let v3Index: { key: string; doc: { json: string; hash: string } } | undefined;
  const openapiV3Index = (): { json: string; hash: string } => {
    const local = openapi.v3Index();
    const extra = aggregatedGroups?.openapiV3Paths();
    if (!extra || extra.size === 0) return local;
    const key = `${local.hash}|${aggregatedGroups!.version}`;
    if (v3Index?.key !== key) {
      const paths: Record<string, unknown> = { ...(local.doc.paths as Record<string, unknown>) };
      // a group served here is not shadowed by an aggregated one (kube's local APIServices win)
      for (const [path, doc] of extra) paths[path] ??= { serverRelativeURL: `/openapi/v3/${path}?hash=${doc.hash}` };
      const json = JSON.stringify({ paths: Object.fromEntries(Object.keys(paths).sort().map((k) => [k, paths[k]])) });
      v3Index = { key, doc: { json, hash: openapiHash(json) } };
    }
    return v3Index.doc;
  };
  return (path, query, _accept, headers) => {
    const p = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    // documents of other components (service-account issuer discovery, spec 001 §5.5)
    const own = extra?.(p);
    if (own) return own;
    if (p === '/version') return { status: 200, body: versionInfo() };
    if (p === '/metrics' && metrics) {
      return metrics.render().then((text) => ({ status: 200, body: null, raw: { contentType: 'text/plain; version=0.0.4; charset=utf-8', text } }));
    }
    if (p === '/openapi/v2') {
      const doc = openapi.v2();
      if (wantsProtobufV2(headers?.get('accept'))) {
        if (v2pb?.hash !== doc.hash) v2pb = { hash: doc.hash, bytes: encodeOpenAPIV2(doc.doc) };
        // one ETag per document version, whatever its form (kube-openapi hashes the JSON)
        return cached(headers, `"${doc.hash}"`, OPENAPI_V2_PROTOBUF, v2pb.bytes);
      }
      return cached(headers, `"${doc.hash}"`, 'application/json', doc.json);
    }
    if (p === '/openapi/v3') {
      const doc = openapiV3Index();
      return cached(headers, `"${doc.hash}"`, 'application/json', doc.json);
    }
    if (p.startsWith('/openapi/v3/')) {
      const gv = p.slice('/openapi/v3/'.length);
      const doc = openapi.v3(gv) ?? aggregatedGroups?.openapiV3Paths().get(gv);
      if (!doc) return undefined;
      const hash = query.get('hash');
      // kube-openapi's handler3: a stale or wrong hash is 301 Moved Permanently to the
      // current one (Go's http.Redirect body), so a client's cached index finds the new document
      if (hash && hash !== doc.hash) return movedTo(`/openapi/v3/${gv}?hash=${doc.hash}`, `"${doc.hash}"`);
      // a request naming the current hash may be cached for good (Kubernetes' immutable v3 documents)
      return cached(headers, `"${doc.hash}"`, 'application/json', doc.json, hash === doc.hash ? clock.now() : undefined);
    }
    if (p === '/api' || p === '/apis') {
      const v = discovery.acceptsAggregated(headers?.get('accept'));
      if (v !== undefined) {
        const current = `${registry.version}|${aggregatedGroups?.version ?? 0}`;
        if (aggregatedVersion !== current) {
          aggregated.clear();
          aggregatedVersion = current;
        }
        const key = `${p}|${v}`;
        let doc = aggregated.get(key);
        if (!doc) {
          const list = discovery.aggregatedDiscovery(registry.all(), p === '/api' ? 'api' : 'apis', v, registry.apiDomain) as { items: { metadata: { name?: string } }[] };
          if (p === '/apis' && aggregatedGroups) {
            const extra = aggregatedGroups.discoveryItems() as { metadata: { name?: string } }[];
            if (extra.length > 0) list.items = inGroupOrder([...list.items, ...extra], (i) => i.metadata.name ?? '', registry, aggregatedGroups);
          }
          const json = JSON.stringify(list);
          doc = { json, etag: `"${createHash('sha256').update(json).digest('hex').toUpperCase()}"` };
          aggregated.set(key, doc);
        }
        return cached(headers, doc.etag, `application/json;g=apidiscovery.k8s.io;v=${v};as=APIGroupDiscoveryList`, doc.json);
      }
    }
    const d = discovery.serveDiscovery(registry, p, serverAddress());
    if (p === '/apis' && d && aggregatedGroups) {
      const extra = aggregatedGroups.groups();
      if (extra.length > 0) return { status: 200, body: { ...d, groups: inGroupOrder([...(d as { groups: discovery.APIGroup[] }).groups, ...extra], (g) => g.name, registry, aggregatedGroups) } };
    }
    return d === undefined ? undefined : { status: 200, body: d };
  };
}

/** served and aggregated groups together in kube's order; an aggregated group by its APIServices' priority */
function inGroupOrder<T>(items: T[], nameOf: (item: T) => string, registry: Registry, aggregated: AggregatedGroupsSource): T[] {
  const served = discovery.groupPriorityOf(registry.all(), registry.apiDomain);
  const priority = new Map(items.map((item) => [nameOf(item), aggregated.groupPriority(nameOf(item)) ?? served(nameOf(item))]));
  const order = byGroupPriority((g) => priority.get(g) ?? 0);
  return [...items].sort((a, b) => order(nameOf(a), nameOf(b)));
}

/** does the Accept header prefer (or allow only) the gnostic protobuf form of /openapi/v2? */
function wantsProtobufV2(accept: string | undefined): boolean {
  if (!accept) return false;
  for (const part of accept.split(',')) {
    const [type = '', ...params] = part.split(';').map((x) => x.trim().toLowerCase()); // split returns at least one part
    const q = params.find((x) => x.startsWith('q='));
    if (q && Number(q.slice(2)) === 0) continue;
    // kubectl lists the protobuf type first, then application/json
    if (OPENAPI_V2_PROTOBUF_ACCEPT.includes(type)) return true;
    if (type === 'application/json' || type === '*/*' || type === 'application/*') return false;
  }
  return false;
}

/** Go's http.Redirect answer to a GET, with the ETag and Vary kube-openapi set before redirecting */
function movedTo(location: string, etag: string): NonResourceDoc {
  const headers: [string, string][] = [['Location', location], ['ETag', etag], ['Vary', 'Accept'], ['Cache-Control', 'no-cache, private']];
  return { status: 301, body: null, raw: { contentType: 'text/html; charset=utf-8', text: `<a href="${location}">Moved Permanently</a>.\n\n`, headers } };
}

/**
 * OpenAPI documents carry an ETag (their SHA-512) and answer a matching
 * If-None-Match with 304 Not Modified and no body, as kube-apiserver does.
 */
function cached(headers: Map<string, string> | undefined, etag: string, contentType: string, body: string | Uint8Array, immutableAt?: number): NonResourceDoc {
  const out: [string, string][] = [['ETag', etag], ['Vary', 'Accept']];
  if (immutableAt !== undefined) {
    // kube sets Expires a year from the request with the immutable Cache-Control
    const expires = new Date(immutableAt);
    expires.setUTCFullYear(expires.getUTCFullYear() + 1);
    out.push(['Cache-Control', 'public, immutable'], ['Expires', expires.toUTCString()]);
  }
  const inm = headers?.get('if-none-match');
  if (inm && inm.split(',').some((t) => t.trim() === etag || t.trim() === '*')) {
    return { status: 304, body: null, raw: { contentType, text: '', headers: out } };
  }
  return { status: 200, body: null, raw: { contentType, text: body, headers: out } };
}
