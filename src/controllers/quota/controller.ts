// The resource quota controller (kube-controller-manager's `resourcequota`),
// leader only, on the controller runtime (docs/controllers.md): keeps each
// ResourceQuota's status current, `hard` = the spec's and `used` =
// quotaUsage (usage.ts) over the namespace's objects. Queue key: the quota's
// `namespace/name`. As kube's: a quota is synced when it is added or its
// spec changes (not on status writes: the admission plugin's charges,
// src/registry/resource-quota-admission.ts, are written there before the
// object is stored), its namespace's quotas when a counted object goes or
// changes what it counts for (replenishment; creates were charged at
// admission), and each quota every 5 minutes (kube's
// --resource-quota-sync-period), which also returns what a failed create
// was charged. The status is written only when it differs, pinned to the
// quota version read (a 409 retries on the newer one).

import { StatusError } from '../../core/errors.js';
import { type Clock, systemClock } from '../../core/clock.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject, JSONValue } from '../../registry/types.js';
import { ControllerLoop, LoopController, type Informer, type InformerSource, NAMESPACE_INDEX } from '../runtime/index.js';
import { type NamespaceObjects, podCounts, quotaUsage } from './usage.js';

export const RESOURCE_QUOTA_CONTROLLER = 'resourcequota';
const MANAGER = 'kube-controller-manager';
const RESYNC_MS = 5 * 60_000;

export interface QuotaStores {
  resourceQuotas: () => GenericStore;
  pods: () => GenericStore;
  services: () => GenericStore;
  configMaps: () => GenericStore;
  secrets: () => GenericStore;
  persistentVolumeClaims: () => GenericStore;
  replicationControllers: () => GenericStore;
}

export interface QuotaOptions extends QuotaStores {
  store: InformerSource;
  clock?: Clock;
  log?: (msg: string) => void;
}

type Tracked = Exclude<keyof NamespaceObjects, 'resourceQuotas'>;
const TRACKED: Tracked[] = ['pods', 'services', 'configMaps', 'secrets', 'persistentVolumeClaims', 'replicationControllers'];

export class ResourceQuotaController extends LoopController {
  protected readonly loop: ControllerLoop;
  private quotas: Informer | undefined;
  private readonly informers = new Map<Tracked, Informer>();
  /** status writes made (tests) */
  writes = 0;

  constructor(private readonly o: QuotaOptions) {
    super();
    this.loop = new ControllerLoop(o.store, { name: 'resourcequota', clock: o.clock ?? systemClock, log: o.log, baseDelayMs: 200 });
  }

  start(): void {
    this.stop();
    this.loop.begin((key) => this.sync(key));
    const onObject = (o: ApiObject): void => this.enqueueNamespace(o.metadata?.namespace ?? '');
    this.quotas = this.loop.inform(this.o.resourceQuotas().rangeKeys(''), {
      add: (o, key) => {
        this.loop.enqueue(key);
        onObject(o);
      },
      update: (old, o, key) => {
        if (JSON.stringify(old.spec ?? {}) !== JSON.stringify(o.spec ?? {})) this.loop.enqueue(key);
      },
      delete: onObject,
    });
    for (const t of TRACKED) {
      const update = (old: ApiObject, o: ApiObject): void => {
        if (countsChanged(t, old, o)) onObject(o);
      };
      this.informers.set(t, this.loop.inform(this.o[t]().rangeKeys(''), { update, delete: onObject }));
    }
  }

  stop(): void {
    this.loop.end();
    this.quotas = undefined;
    this.informers.clear();
  }

  private enqueueNamespace(ns: string): void {
    for (const key of this.quotas?.indexKeys(NAMESPACE_INDEX, ns) ?? []) this.loop.enqueue(key);
  }

  private async sync(key: string): Promise<void> {
    const quota = this.quotas?.get(key);
    if (!quota) return;
    const ns = quota.metadata?.namespace ?? '';
    const spec = (quota.spec ?? {}) as { hard?: Record<string, JSONValue>; scopes?: unknown };
    const hard = spec.hard ?? {};
    const scopes = Array.isArray(spec.scopes) ? spec.scopes.filter((s): s is string => typeof s === 'string') : [];
    const inNs = (t: Tracked): ApiObject[] => this.informers.get(t)?.inNamespace(ns) ?? [];
    const objects: NamespaceObjects = {
      pods: inNs('pods'),
      services: inNs('services'),
      configMaps: inNs('configMaps'),
      secrets: inNs('secrets'),
      persistentVolumeClaims: inNs('persistentVolumeClaims'),
      replicationControllers: inNs('replicationControllers'),
      resourceQuotas: this.quotas?.inNamespace(ns) ?? [],
    };
    const status: Record<string, JSONValue> = { hard: { ...hard }, used: quotaUsage(hard, scopes, objects) };
    this.loop.enqueueAfter(key, RESYNC_MS);
    if (JSON.stringify(canonical(quota.status)) === JSON.stringify(canonical(status))) return;
    const name = quota.metadata?.name ?? '';
    try {
      await this.o.resourceQuotas().guaranteedUpdate(ns, name, { dryRun: false, subresource: 'status', manager: MANAGER }, (cur) => {
        if (!cur) throw new StatusError(404, 'NotFound', `resourcequotas "${name}" not found`);
        return { ...cur, metadata: { ...cur.metadata, resourceVersion: quota.metadata?.resourceVersion ?? '' }, status };
      });
      this.writes++;
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) return;
      throw e;
    }
  }
}

/** an update that changes what the object counts for: a pod turning terminal, a service's type or ports, a claim's request */
function countsChanged(kind: Tracked, old: ApiObject, o: ApiObject): boolean {
  const spec = (x: ApiObject) => (x.spec ?? {}) as Record<string, unknown>;
  if (kind === 'pods') return podCounts(old) !== podCounts(o);
  if (kind === 'services') return spec(old).type !== spec(o).type || JSON.stringify(spec(old).ports) !== JSON.stringify(spec(o).ports);
  if (kind === 'persistentVolumeClaims') return JSON.stringify(spec(old).resources) !== JSON.stringify(spec(o).resources);
  return false;
}

/** keys sorted, for comparing a status read with one computed */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]));
  return v;
}
