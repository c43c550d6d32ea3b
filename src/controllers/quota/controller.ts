// The resource quota controller (kube-controller-manager's `resourcequota`),
// leader only, on the controller runtime (docs/controllers.md): keeps each
// ResourceQuota's status current, `hard` = the spec's and `used` =
// quotaUsage (usage.ts) over the namespace's objects. Queue key: the quota's
// `namespace/name`; every quota of a namespace is synced again when a
// counted object there changes. The status is written only when it differs,
// pinned to the quota version read (a 409 retries on the newer one).
// Admission does not enforce quotas yet (docs/compatibility.md).

import { StatusError } from '../../core/errors.js';
import { type Clock, systemClock } from '../../core/clock.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject, JSONValue } from '../../registry/types.js';
import { ControllerLoop, LoopController, type Informer, type InformerSource, NAMESPACE_INDEX } from '../runtime/index.js';
import { type NamespaceObjects, quotaUsage } from './usage.js';

export const RESOURCE_QUOTA_CONTROLLER = 'resourcequota';
const MANAGER = 'kube-controller-manager';

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
      update: (_old, _o, key) => this.loop.enqueue(key),
      delete: onObject,
    });
    for (const t of TRACKED) {
      this.informers.set(t, this.loop.inform(this.o[t]().rangeKeys(''), { add: onObject, update: (_old, o) => onObject(o), delete: onObject }));
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

/** keys sorted, for comparing a status read with one computed */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]));
  return v;
}
