// Discovery of the aggregated groups (kube-aggregator's handler_apis.go and
// its aggregated discovery manager): `/apis` lists every aggregated group with
// its Available versions, ordered by the APIServices' priorities, and the
// aggregated form (APIGroupDiscoveryList) carries each version's resources as
// the server itself lists them at `/apis/<group>/<version>`, fetched when an
// APIService becomes Available (and again when it changes). `/apis/<group>`
// and `/apis/<group>/<version>` themselves are proxied to the server.

import { type Clock, type TimerHandle, every } from '../../core/clock.js';
import type { AggregatedVersion } from '../../endpoints/filters/aggregator.js';
import { type APIGroup, type APIResource, discoveryResources } from '../../registry/discovery.js';
import type { AggregatedApiIndex } from './apiservice-index.js';

interface Fetched {
  /** what the document was fetched for (a change of the APIService fetches again) */
  key: string;
  resources: APIResource[];
}

export class AggregatedDiscovery {
  private readonly docs = new Map<string, Fetched>();
  private readonly fetching = new Set<string>();
  private unsubscribe: (() => void) | undefined;
  private timer: TimerHandle | undefined;
  /** changes whenever what discovery lists changes (the documents' cache key) */
  version = 0;

  constructor(
    private readonly index: AggregatedApiIndex,
    private readonly fetch: (target: AggregatedVersion) => Promise<string>,
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
        this.fetch(v)
          .then((text) => {
            const list = JSON.parse(text) as { resources?: APIResource[] };
            this.docs.set(v.name, { key, resources: (list.resources ?? []).map((r) => ({ ...r, group: r.group ?? v.group, version: r.version ?? v.version })) });
          })
          .catch((e: unknown) => this.log?.(`aggregated discovery: ${v.name}: ${(e as Error).message}`))
          .finally(() => {
            this.fetching.delete(v.name);
            this.version++;
          });
      }
    }
    for (const name of this.docs.keys()) if (!seen.has(name)) this.docs.delete(name);
    this.version++;
  }
}
