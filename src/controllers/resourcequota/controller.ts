// The resource quota controller (kube-controller-manager's `resourcequota`),
// leader only, on the controller runtime (docs/controllers.md): it keeps every
// ResourceQuota's `status.hard` equal to `spec.hard` and `status.used` equal to
// what the namespace holds, which the ResourceQuota admission plugin
// (src/registry/quota/admission.ts) charges against. Queue key: the quota's
// `namespace/name`. A quota is synced when it is created or its spec changes,
// when something it counts is deleted or stops costing (a pod turning
// terminal: kube's replenishment), and every `resyncMs` (kube's
// `--resource-quota-sync-period`, 5 min), which also corrects charges of writes
// that failed after admission. Pods, Services and claims are measured from
// their informers; other kinds are counted in the store. The status is written
// pinned to the quota read, so a charge made by admission meanwhile is a 409
// and the key is synced again on the newer quota.

import { StatusError } from '../../core/errors.js';
import { type Clock, systemClock } from '../../core/clock.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject } from '../../registry/types.js';
import { type Usage, ZERO, addUsage, maskUsage, usageOf, usageToJSON } from '../../registry/quota/amount.js';
import { evaluatorFor, isTerminatingPod, quotaMatches } from '../../registry/quota/evaluators.js';
import { ControllerLoop, LoopController, type Informer, type InformerSource, NAMESPACE_INDEX } from '../runtime/index.js';

export const RESOURCE_QUOTA_CONTROLLER = 'resourcequota';
const MANAGER = 'kube-controller-manager';

/** a served namespaced resource: its store (for informers and counting) */
export type ResourceStores = (group: string, resource: string) => GenericStore | undefined;

export interface ResourceQuotaOptions {
  store: InformerSource;
  quotas: () => GenericStore;
  /** the store of a served namespaced resource, undefined when it is not served */
  storeOf: ResourceStores;
  /** the number of objects of a resource in a namespace (a count in the store, nothing decoded) */
  count: (gs: GenericStore, namespace: string) => number;
  clock?: Clock;
  log?: (msg: string) => void;
  /** full resync of every quota (default 5 min) */
  resyncMs?: number;
  retryMs?: number;
}

/** the kinds measured object by object (their evaluators read the objects) */
const MEASURED = [['', 'pods'], ['', 'services'], ['', 'persistentvolumeclaims']] as const;
const LEGACY: Record<string, string> = { configmaps: '', secrets: '', replicationcontrollers: '', resourcequotas: '' };

/** the (group, resource) a count name stands for: `count/deployments.apps`, `count/pods`, or a legacy name */
export function countedResource(name: string): { group: string; resource: string } | undefined {
  if (name in LEGACY) return { group: '', resource: name };
  if (!name.startsWith('count/')) return undefined;
  const rest = name.slice('count/'.length);
  const dot = rest.indexOf('.');
  return dot < 0 ? { group: '', resource: rest } : { group: rest.slice(dot + 1), resource: rest.slice(0, dot) };
}

export class ResourceQuotaController extends LoopController {
  protected readonly loop: ControllerLoop;
  private readonly clock: Clock;
  private quotas: Informer | undefined;
  private readonly measured = new Map<string, Informer>();
  /** kinds counted for some quota, informed for their deletions (kube's replenishment), by `group/resource` */
  private readonly counted = new Set<string>();
  /** status writes made (tests) */
  writes = 0;

  constructor(private readonly o: ResourceQuotaOptions) {
    super();
    this.clock = o.clock ?? systemClock;
    this.loop = new ControllerLoop(o.store, { name: 'resourcequota', clock: this.clock, log: o.log, baseDelayMs: o.retryMs ?? 200 });
  }

  start(): void {
    this.stop();
    this.loop.begin((key) => this.sync(key));
    this.quotas = this.loop.inform(this.o.quotas().rangeKeys(''), {
      add: (_q, key) => this.loop.enqueue(key),
      update: (old, q, key) => {
        if (JSON.stringify(old.spec ?? {}) !== JSON.stringify(q.spec ?? {}) || this.needsSync(q)) this.loop.enqueue(key);
      },
    });
    for (const [group, resource] of MEASURED) {
      const gs = this.o.storeOf(group, resource);
      if (!gs) continue;
      this.measured.set(resource, this.loop.inform(gs.rangeKeys(''), {
        update: (old, obj) => {
          if (resource !== 'pods' || stopsCosting(old, obj) || changesScope(old, obj)) this.enqueueNamespace(obj.metadata?.namespace ?? '');
        },
        delete: (obj) => this.enqueueNamespace(obj.metadata?.namespace ?? ''),
      }));
    }
  }

  stop(): void {
    this.loop.end();
    this.quotas = undefined;
    this.measured.clear();
    this.counted.clear();
  }

  /** every quota of the namespace, as kube's replenishment enqueues them */
  private enqueueNamespace(ns: string): void {
    for (const key of this.quotas?.indexKeys(NAMESPACE_INDEX, ns) ?? []) this.loop.enqueue(key);
  }

  /** replenishment for a counted kind: its deletions resync the namespace's quotas */
  private informCounted(group: string, resource: string, gs: GenericStore): void {
    const id = `${group}/${resource}`;
    if (this.counted.has(id) || MEASURED.some(([g, r]) => g === group && r === resource)) return;
    this.counted.add(id);
    this.loop.inform(gs.rangeKeys(''), { delete: (obj) => this.enqueueNamespace(obj.metadata?.namespace ?? '') });
  }

  /**
   * a quota whose status does not answer for its spec yet: other hard limits,
   * or no usage for a name that is measured (a name nothing measures never
   * gets one, so it would resync after every admission charge)
   */
  private needsSync(q: ApiObject): boolean {
    const hard = ((q.spec ?? {}) as { hard?: object }).hard ?? {};
    const status = (q.status ?? {}) as { hard?: object; used?: object };
    if (normalized({ hard }) !== normalized({ hard: status.hard ?? {} })) return true;
    const used = status.used ?? {};
    return Object.keys(hard).some((k) => !(k in used) && this.measurable(k));
  }

  private measurable(name: string): boolean {
    if (MEASURED.some(([g, r]) => evaluatorFor(g, r)!.matchingResources([name]).length > 0)) return true;
    const r = countedResource(name);
    return r !== undefined && this.o.storeOf(r.group, r.resource) !== undefined;
  }

  private async sync(key: string): Promise<void> {
    const quota = this.quotas?.get(key);
    if (!quota) return;
    const ns = quota.metadata?.namespace ?? '';
    const hardSpec = ((quota.spec ?? {}) as { hard?: Record<string, string> }).hard ?? {};
    const used = this.measure(quota, ns, [...usageOf(hardSpec).keys()]);
    const status = { hard: { ...hardSpec }, used: usageToJSON(used) };
    if (normalized(quota.status) !== normalized(status)) await this.write(ns, quota, status);
    this.loop.enqueueAfter(key, this.o.resyncMs ?? 5 * 60_000);
  }

  /**
   * kube's CalculateUsage: each name an evaluator measures starts at zero and
   * gets what the namespace holds; a name nothing measures (an unserved kind's
   * count, an unknown name) gets no entry
   */
  private measure(quota: ApiObject, ns: string, names: string[]): Usage {
    let used: Usage = new Map();
    const now = this.clock.now();
    const handled = new Set<string>();
    for (const [group, resource] of MEASURED) {
      const ev = evaluatorFor(group, resource)!;
      const matched = ev.matchingResources(names);
      if (matched.length === 0) continue;
      for (const n of matched) {
        handled.add(n);
        used.set(n, ZERO);
      }
      const informer = this.measured.get(resource);
      for (const obj of informer?.inNamespace(ns) ?? []) {
        if (!quotaMatches(ev, names, quota, obj)) continue;
        used = addUsage(used, maskUsage(ev.usage(obj, now), matched));
      }
    }
    for (const n of names) {
      if (handled.has(n)) continue;
      const r = countedResource(n);
      const gs = r && this.o.storeOf(r.group, r.resource);
      if (!r || !gs) continue;
      this.informCounted(r.group, r.resource, gs);
      used.set(n, { nano: BigInt(this.o.count(gs, ns)) * 1_000_000_000n, binary: false });
    }
    return used;
  }

  private async write(ns: string, quota: ApiObject, status: { hard: Record<string, string>; used: Record<string, string> }): Promise<void> {
    const name = quota.metadata?.name ?? '';
    const rv = quota.metadata?.resourceVersion ?? '';
    try {
      await this.o.quotas().guaranteedUpdate(ns, name, { dryRun: false, subresource: 'status', manager: MANAGER }, (cur) => {
        if (!cur) throw new StatusError(404, 'NotFound', `resourcequotas "${name}" not found`);
        return { ...cur, metadata: { ...cur.metadata, resourceVersion: rv }, status };
      });
      this.writes++;
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) return;
      throw e;
    }
  }
}


/** a pod that stops costing compute: terminal, or marked for deletion */
function stopsCosting(old: ApiObject, pod: ApiObject): boolean {
  const phase = (o: ApiObject) => ((o.status ?? {}) as { phase?: string }).phase;
  const terminal = (p: string | undefined) => p === 'Succeeded' || p === 'Failed';
  return (terminal(phase(pod)) && !terminal(phase(old))) || (!!pod.metadata?.deletionTimestamp && !old.metadata?.deletionTimestamp);
}

/**
 * a pod moved into or out of the Terminating scope: admission charged the quotas of its new
 * scope (and left the old scope's usage high, as kube overcounts); a recount gives it back
 */
function changesScope(old: ApiObject, pod: ApiObject): boolean {
  return isTerminatingPod(old) !== isTerminatingPod(pod);
}

/** a status compared by value: quantities canonical, keys sorted */
function normalized(status: unknown): string {
  const s = (status ?? {}) as { hard?: unknown; used?: unknown };
  return JSON.stringify({ hard: usageToJSON(usageOf(s.hard)), used: usageToJSON(usageOf(s.used)) });
}
