// Discovery of the aggregated groups (kube-aggregator's handler_apis.go and
// its aggregated discovery manager): `/apis` lists every aggregated group with
// its Available versions, ordered by the APIServices' priorities, and the
// aggregated form (APIGroupDiscoveryList) carries each version's resources as
// the server itself lists them at `/apis/<group>/<version>`, fetched when an
// APIService becomes Available (and again when it changes). `/apis/<group>`
// and `/apis/<group>/<version>` themselves are proxied to the server.
//
// OpenAPI v3 (kube-aggregator's openapiv3 aggregation): each Available
// version's `/openapi/v3/apis/<group>/<version>` is fetched with its
// discovery document and served from here, listed in `/openapi/v3` under the
// document's hash, so `kubectl explain` and kubectl's field validation see
// the aggregated kinds. A server that serves no such document (404, an error)
// is left out of the index, as kube leaves it out.

import { type Clock, type TimerHandle, every } from '../../core/clock.js';
import type { AggregatedVersion } from '../../endpoints/filters/aggregator.js';
import { type APIGroup, type APIResource, discoveryResources } from '../../registry/discovery.js';
import { openapiHash } from '../../registry/openapi.js';
import type { AggregatedApiIndex } from './apiservice-index.js';

interface Fetched {
  /** what the document was fetched for (a change of the APIService fetches again) */
  key: string;
  resources: APIResource[];
}

/** how the documents are read from an aggregated server (src/server/aggregator/proxy.ts) */
export interface AggregatedDocumentFetchers {
  /** `/apis/<group>/<version>`: the version's APIResourceList */
  discovery: (target: AggregatedVersion) => Promise<string>;
  /** `/openapi/v3/apis/<group>/<version>`; absent: no OpenAPI v3 aggregation */
  openapiV3?: (target: AggregatedVersion) => Promise<string>;
}

/** an aggregated version's OpenAPI v3 document as served: its JSON and kube's hash of it (upper-case hex SHA-512) */
export interface AggregatedOpenAPIDocument {
  json: string;
  hash: string;
}

export class AggregatedDiscovery {
  private readonly docs = new Map<string, Fetched>();
  /** by APIService name, with the document's path (`apis/<group>/<version>`) */
  private readonly openapi = new Map<string, AggregatedOpenAPIDocument & { path: string }>();
  private readonly fetching = new Set<string>();
  private unsubscribe: (() => void) | undefined;
  private timer: TimerHandle | undefined;
  /** changes whenever what discovery lists changes (the documents' cache key) */
  version = 0;

  constructor(
    private readonly index: AggregatedApiIndex,
    private readonly fetch: AggregatedDocumentFetchers,
    clock: Clock,
    private readonly log?: (msg: string) => void,
    refreshMs = 60_000,
  ) {
    this.unsubscribe = index.onChange(() => this.refresh(false));
    this.timer = every(clock, refreshMs, () => this.refresh(true));
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.timer?.cancel();
  }

  /** the aggregated groups of `/apis` (legacy APIGroupList entries), Available versions only */
  groups(): APIGroup[] {
    const out: APIGroup[] = [];
    for (const g of this.index.groups()) {
      const versions = g.ordered.filter((v) => v.available).map((v) => ({ groupVersion: `${g.name}/${v.version}`, version: v.version }));
      if (versions.length > 0) out.push({ name: g.name, versions, preferredVersion: versions[0]! } as APIGroup);
    }
    return out;
  }

  /** an aggregated group's groupPriorityMinimum (the highest of its APIServices); undefined for a group not aggregated */
  groupPriority(group: string): number | undefined {
    return this.index.group(group)?.groupPriority;
  }

  /** the aggregated groups as APIGroupDiscovery items; a version whose document is not fetched yet is `Stale` */
  discoveryItems(): object[] {
    const out: object[] = [];
    for (const g of this.index.groups()) {
      const versions = g.ordered.filter((v) => v.available).map((v) => {
        const doc = this.docs.get(v.name);
        return { version: v.version, resources: discoveryResources(doc?.resources ?? []), freshness: doc ? 'Current' : 'Stale' };
      });
      if (versions.length > 0) out.push({ metadata: { name: g.name, creationTimestamp: null }, versions });
    }
    return out;
  }

  /** the OpenAPI v3 documents of the Available versions, by path (`apis/<group>/<version>`) */
  openapiV3Paths(): Map<string, AggregatedOpenAPIDocument> {
    const out = new Map<string, AggregatedOpenAPIDocument>();
    for (const g of this.index.groups()) {
      for (const v of g.ordered) {
        const doc = v.available ? this.openapi.get(v.name) : undefined;
        if (doc) out.set(doc.path, doc);
      }
    }
    return out;
  }

  /** `again`: fetch every Available version's document, not only new or changed ones (a kept one serves meanwhile) */
  private refresh(again: boolean): void {
    const seen = new Set<string>();
    for (const g of this.index.groups()) {
      for (const v of g.ordered) {
        if (!v.available) continue;
        seen.add(v.name);
        const key = JSON.stringify([v.service, v.caBundle ?? '', v.insecureSkipTLSVerify]);
        if ((!again && this.docs.get(v.name)?.key === key) || this.fetching.has(v.name)) continue;
        this.fetching.add(v.name);
        this.fetch
          .discovery(v)
          .then(async (text) => {
            const list = JSON.parse(text) as { resources?: APIResource[] };
            this.docs.set(v.name, { key, resources: (list.resources ?? []).map((r) => ({ ...r, group: r.group ?? v.group, version: r.version ?? v.version })) });
            if (this.fetch.openapiV3) await this.fetchOpenAPI(v, this.fetch.openapiV3);
          })
          .catch((e: unknown) => this.log?.(`aggregated discovery: ${v.name}: ${(e as Error).message}`))
          .finally(() => {
            this.fetching.delete(v.name);
            this.version++;
          });
      }
    }
    for (const name of this.docs.keys()) if (!seen.has(name)) this.docs.delete(name);
    for (const name of this.openapi.keys()) if (!seen.has(name)) this.openapi.delete(name);
    this.version++;
  }

  /** the version's OpenAPI v3 document, kept only when it is a JSON object; a failure drops an older one */
  private async fetchOpenAPI(v: AggregatedVersion & { name: string }, get: (target: AggregatedVersion) => Promise<string>): Promise<void> {
    try {
      const text = await get(v);
      const doc: unknown = JSON.parse(text);
      if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new Error('the OpenAPI v3 document is not a JSON object');
      const json = JSON.stringify(doc);
      this.openapi.set(v.name, { path: `apis/${v.group}/${v.version}`, json, hash: openapiHash(json) });
    } catch (e) {
      if (this.openapi.delete(v.name) || !/: 404$/.test((e as Error).message)) this.log?.(`aggregated OpenAPI v3: ${v.name}: ${(e as Error).message}`);
    }
  }
}
