// The APIServices that name a Service, as the proxy and discovery need them:
// group → its aggregated versions, kept from an informer over the
// APIServices on every member (each member proxies). Versions are ordered as
// kube-aggregator orders them: by versionPriority, highest first, then by
// kube's version order (handler_apis.go, apiservice_controller.go).

import { compareVersions } from '../../registry/discovery.js';
import { byGroupPriority } from '../../registry/group-priorities.js';
import type { AggregatedGroup, AggregatedVersion } from '../../endpoints/filters/aggregator.js';
import type { ApiObject } from '../../registry/types.js';
import type { GenericStore } from '../../registry/generic-store.js';
import { type InformerSource, type InformerUse, sharedInformers } from '../../controllers/runtime/index.js';

/** an aggregated group as discovery lists it */
export interface AggregatedGroupEntry extends AggregatedGroup {
  name: string;
  /** the highest groupPriorityMinimum of its APIServices */
  groupPriority: number;
  /** every version, preferred first */
  ordered: AggregatedVersion[];
}

interface Entry extends AggregatedVersion {
  groupPriority: number;
  versionPriority: number;
}

function entryOf(o: ApiObject): Entry | undefined {
  const spec = (o.spec ?? {}) as Record<string, unknown>;
  const svc = spec.service as Record<string, unknown> | undefined;
  if (!svc || typeof spec.group !== 'string' || typeof spec.version !== 'string') return undefined;
  const status = o.status as { conditions?: { type?: string; status?: string }[] } | undefined;
  return {
    name: o.metadata?.name ?? '',
    group: spec.group,
    version: spec.version,
    service: { namespace: String(svc.namespace ?? ''), name: String(svc.name ?? ''), port: typeof svc.port === 'number' ? svc.port : 443 },
    caBundle: typeof spec.caBundle === 'string' && spec.caBundle !== '' ? spec.caBundle : undefined,
    insecureSkipTLSVerify: spec.insecureSkipTLSVerify === true,
    available: (status?.conditions ?? []).some((c) => c.type === 'Available' && c.status === 'True'),
    groupPriority: typeof spec.groupPriorityMinimum === 'number' ? spec.groupPriorityMinimum : 0,
    versionPriority: typeof spec.versionPriority === 'number' ? spec.versionPriority : 0,
  };
}

export class AggregatedApiIndex {
  private byGroup = new Map<string, AggregatedGroupEntry>();
  private readonly entries = new Map<string, Entry>();
  private use: InformerUse | undefined;
  private readonly listeners = new Set<() => void>();

  /** where one APIService's group/version is served; undefined for a local one */
  static targetOf(o: ApiObject): AggregatedVersion | undefined {
    return entryOf(o);
  }

  /** one map lookup (the request path's whole cost, issue 14) */
  group(name: string): AggregatedGroupEntry | undefined {
    return this.byGroup.get(name);
  }

  /** every aggregated group, highest groupPriorityMinimum first, then by name */
  groups(): AggregatedGroupEntry[] {
    const order = byGroupPriority((name) => this.byGroup.get(name)?.groupPriority ?? 0);
    return [...this.byGroup.values()].sort((a, b) => order(a.name, b.name));
  }

  /** called after every change of the aggregated set (discovery's cached documents) */
  onChange(f: () => void): () => void {
    this.listeners.add(f);
    return () => this.listeners.delete(f);
  }

  start(store: InformerSource, apiServices: GenericStore): void {
    this.use = sharedInformers(store).use(apiServices.rangeKeys(''), {
      add: (o, k) => this.put(k, o),
      update: (_old, o, k) => this.put(k, o),
      delete: (_o, k) => this.put(k, undefined),
    });
  }

  stop(): void {
    this.use?.release();
    this.use = undefined;
  }

  /** tests and the server: set one APIService directly */
  put(key: string, o: ApiObject | undefined): void {
    const e = o && entryOf(o);
    const before = this.entries.get(key);
    if (!e && !before) return;
    if (e) this.entries.set(key, e);
    else this.entries.delete(key);
    this.rebuild();
  }

  private rebuild(): void {
    const grouped = new Map<string, Entry[]>();
    for (const e of this.entries.values()) {
      const list = grouped.get(e.group);
      if (list) list.push(e);
      else grouped.set(e.group, [e]);
    }
    const next = new Map<string, AggregatedGroupEntry>();
    for (const [name, list] of grouped) {
      const ordered = list.sort((a, b) => b.versionPriority - a.versionPriority || compareVersions(a.version, b.version));
      next.set(name, {
        name,
        versions: new Map(ordered.map((v) => [v.version, v])),
        preferred: ordered[0]!,
        ordered,
        groupPriority: Math.max(...ordered.map((v) => v.groupPriority)),
      });
    }
    this.byGroup = next;
    for (const f of this.listeners) f();
  }
}
