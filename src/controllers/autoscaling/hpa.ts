// The HorizontalPodAutoscaler controller (kube-controller-manager's
// `horizontalpodautoscaling`), leader only, on the controller runtime
// (docs/controllers.md "HorizontalPodAutoscaler"). Every autoscaler (read as
// autoscaling/v2, the stored version) is synced when it appears or its spec
// changes and then every 15 s (kube's --horizontal-pod-autoscaler-sync-period),
// as kube's reconcileAutoscaler does:
//   - the target's scale is read through the target kind's `scale` paths
//     (src/registry/scale.ts): unknown kind or object → AbleToScale False
//     `FailedGetScale`;
//   - replicas 0 with minReplicas ≠ 0 → no scaling, ScalingActive False `ScalingDisabled`;
//   - replicas above max or below min → scaled to the bound (`SuccessfulRescale`);
//   - otherwise the metrics propose a count (hpa-metrics.ts: resource metrics
//     through the injected ResourceMetricsClient and replica-calculator.ts;
//     without a client, or for custom/external sources, kube's "no metrics API"
//     failures of hpa-rules.ts), normalized by the stabilization windows, the
//     behavior policies or the default scale-up limit and the bounds
//     (hpa-normalize.ts, history per autoscaler in memory), then written to the
//     target's scale with the event `SuccessfulRescale` "New size: N; reason: …".
// The status is written only when it changed (kube's updateStatusIfNeeded).

import { StatusError } from '../../core/errors.js';
import { type Clock, systemClock } from '../../core/clock.js';
import { isDeepStrictEqual } from 'node:util';
import type { GenericStore } from '../../registry/generic-store.js';
import { scaleOf, setScaleReplicas } from '../../registry/scale.js';
import type { ApiObject, JSONValue, ResourceDefinition } from '../../registry/types.js';
import { isoSeconds } from '../../registry/kinds/pod-eviction.js';
import type { EventRecorder } from '../event-recorder.js';
import { ControllerLoop, LoopController, type Informer, type InformerSource } from '../runtime/index.js';
import type { ResourceMetricsClient } from '../metrics/resource-client.js';
import { computeReplicasForMetrics } from './hpa-metrics.js';
import { ScaleHistory, behaviorOf } from './hpa-normalize.js';
import { DEFAULT_METRICS, type HpaCondition, setCondition } from './hpa-rules.js';
import { type CalculatorSettings, DEFAULT_CALCULATOR_SETTINGS } from './replica-calculator.js';

export const HPA_CONTROLLER = 'horizontalpodautoscaling';
export const HPA_MANAGER = 'kube-controller-manager';
/** kube's --horizontal-pod-autoscaler-sync-period default */
export const HPA_SYNC_PERIOD_MS = 15_000;
/** kube's --horizontal-pod-autoscaler-downscale-stabilization default */
export const HPA_DOWNSCALE_STABILIZATION_MS = 300_000;

type Obj = Record<string, JSONValue>;

/** a scalable kind found by group and kind (kube's REST mapper): its definition and store */
export interface ScaleTarget {
  def: ResourceDefinition;
  store: GenericStore;
}

export interface HpaOptions {
  store: InformerSource;
  /** the autoscaling/v2 HorizontalPodAutoscaler store */
  hpas: () => GenericStore;
  /** the served kind `kind` of `group` that has a scale sub-resource; undefined when there is none */
  scaleTarget: (group: string, kind: string) => ScaleTarget | undefined;
  clock?: Clock;
  events?: EventRecorder;
  log?: (msg: string) => void;
  /** resync period (default 15 s) */
  syncPeriodMs?: number;
  /** kube's GetResourceMetric (src/controllers/metrics/resource-client.ts); absent: no resource metrics API */
  resourceMetrics?: ResourceMetricsClient;
  /** the Pod store: the replica calculator's pods (their readiness and requests) */
  pods?: () => GenericStore;
  /** tolerance, cpu initialization period, initial readiness delay (kube's flags; defaults 0.1, 5 min, 30 s) */
  calculator?: Partial<CalculatorSettings>;
  /** `--horizontal-pod-autoscaler-downscale-stabilization` (default 5 min) */
  downscaleStabilizationMs?: number;
}

/** the parts of one sync that end in the status (kube's hpa.Status being built) */
interface Sync {
  conditions: HpaCondition[];
  now: string;
}

export class HpaController extends LoopController {
  protected readonly loop: ControllerLoop;
  private readonly clock: Clock;
  private hpas: Informer | undefined;
  /** recommendations and scale events per autoscaler key: the leader's memory, as kube's */
  private readonly history: ScaleHistory;
  private readonly settings: CalculatorSettings;
  private readonly downscaleWindowMs: number;

  constructor(private readonly o: HpaOptions) {
    super();
    this.clock = o.clock ?? systemClock;
    this.downscaleWindowMs = o.downscaleStabilizationMs ?? HPA_DOWNSCALE_STABILIZATION_MS;
    this.history = new ScaleHistory(this.downscaleWindowMs);
    this.settings = { ...DEFAULT_CALCULATOR_SETTINGS, ...o.calculator };
    this.loop = new ControllerLoop(o.store, { name: HPA_CONTROLLER, clock: this.clock, log: o.log, baseDelayMs: 200 });
  }

  start(): void {
    this.stop();
    // a new leader starts without history, as a new kube-controller-manager does
    this.history.clear();
    this.loop.begin((key) => this.sync(key));
    this.hpas = this.loop.inform(this.o.hpas().rangeKeys(''), {
      add: (_h, key) => this.loop.enqueue(key),
      // its own status writes do not count: the resync comes every period anyway
      update: (old, h, key) => {
        if (old.metadata?.generation !== h.metadata?.generation) this.loop.enqueue(key);
      },
    });
  }

  stop(): void {
    this.loop.end();
    this.hpas = undefined;
  }

  private async sync(key: string): Promise<void> {
    const hpa = this.hpas?.get(key);
    if (!hpa) {
      this.history.forget(key);
      return;
    }
    try {
      await this.reconcile(hpa, key);
    } finally {
      // every autoscaler comes back each period, whatever this sync did (kube's AddRateLimited)
      this.loop.enqueueAfter(key, this.o.syncPeriodMs ?? HPA_SYNC_PERIOD_MS);
    }
  }

  private async reconcile(hpa: ApiObject, key: string): Promise<void> {
    const spec = (hpa.spec ?? {}) as Obj;
    const status = (hpa.status ?? {}) as Obj;
    const s: Sync = { conditions: ((status.conditions ?? []) as unknown as HpaCondition[]).map((c) => ({ ...c })), now: isoSeconds(this.clock.now()) };
    const ref = (spec.scaleTargetRef ?? {}) as Obj;
    const apiVersion = String(ref.apiVersion ?? '');
    const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
    const kind = String(ref.kind ?? '');
    const name = String(ref.name ?? '');
    const ns = hpa.metadata?.namespace ?? '';

    // the target's scale (kube reads the /scale sub-resource)
    const target = this.o.scaleTarget(group, kind);
    let scale: ApiObject;
    try {
      if (!target?.def.scale) throw new Error(`no matches for kind "${kind}" in group "${group}"`);
      scale = scaleOf(target.def, target.def.scale, await target.store.get(ns, name));
    } catch (e) {
      const msg = (e as Error).message;
      this.event(hpa, 'Warning', 'FailedGetScale', msg);
      this.cond(s, 'AbleToScale', 'False', 'FailedGetScale', `the HPA controller was unable to get the target's current scale: ${msg}`);
      await this.writeStatus(hpa, { ...status, conditions: s.conditions as unknown as JSONValue });
      return;
    }
    this.cond(s, 'AbleToScale', 'True', 'SucceededGetScale', "the HPA controller was able to get the target's current scale");
    const current = Number((scale.spec as Obj | undefined)?.replicas ?? 0);
    const min = typeof spec.minReplicas === 'number' ? spec.minReplicas : 1;
    const max = Number(spec.maxReplicas ?? 0);
    const nowMs = this.clock.now();
    const behavior = behaviorOf(spec, this.downscaleWindowMs);
    this.history.recordInitial(key, current, nowMs);

    let desired = 0;
    let reason = '';
    let rescale = true;
    let metricStatuses: Obj[] | undefined;
    if (current === 0 && min !== 0) {
      rescale = false;
      this.cond(s, 'ScalingActive', 'False', 'ScalingDisabled', 'scaling is disabled since the replica count of the target is zero');
    } else if (current > max) {
      reason = 'Current number of replicas above Spec.MaxReplicas';
      desired = max;
    } else if (current < min) {
      reason = 'Current number of replicas below Spec.MinReplicas';
      desired = min;
    } else {
      const outcome = await computeReplicasForMetrics({
        namespace: ns,
        selector: (scale.status as Obj | undefined)?.selector,
        specReplicas: current,
        metrics: Array.isArray(spec.metrics) && spec.metrics.length > 0 ? (spec.metrics as Obj[]) : DEFAULT_METRICS,
        client: this.o.resourceMetrics,
        listPods: (namespace) => (this.o.pods ? this.o.pods().list(namespace) : Promise.resolve([])),
        settings: this.settings,
        nowMs,
        event: (type, why, message) => this.event(hpa, type, why, message),
      });
      metricStatuses = outcome.statuses;
      const a = outcome.scalingActive;
      this.cond(s, 'ScalingActive', a.status, a.reason, a.message);
      if (outcome.replicas < 0) {
        await this.writeStatus(hpa, this.status(status, s, current, Number(status.desiredReplicas ?? 0), metricStatuses, false));
        this.event(hpa, 'Warning', 'FailedComputeMetricsReplicas', outcome.error ?? '');
        return;
      }
      desired = outcome.replicas;
      if (desired > current) reason = `${outcome.metric} above target`;
      if (desired < current) reason = 'All metrics below target';
      const n = behavior
        ? this.history.normalizeWithBehavior(key, behavior, current, desired, min, max, nowMs)
        : this.history.normalize(key, current, desired, min, max, nowMs);
      this.cond(s, 'AbleToScale', 'True', n.ableToScale.reason, n.ableToScale.message);
      this.cond(s, 'ScalingLimited', n.limited.status, n.limited.reason, n.limited.message);
      desired = n.desired;
      rescale = desired !== current;
    }

    if (rescale) {
      try {
        await target.store.guaranteedUpdate(ns, name, { dryRun: false, manager: HPA_MANAGER, subresource: 'scale' }, (cur) => {
          if (!cur) throw new StatusError(404, 'NotFound', `${target.def.resource} "${name}" not found`);
          setScaleReplicas(target.def.scale!, cur, desired); // target.def.scale was checked when the scale was read
          if (cur.metadata) delete cur.metadata.resourceVersion;
          return cur;
        });
      } catch (e) {
        const msg = (e as Error).message;
        this.event(hpa, 'Warning', 'FailedRescale', `New size: ${desired}; reason: ${reason}; error: ${msg}`);
        this.cond(s, 'AbleToScale', 'False', 'FailedUpdateScale', `the HPA controller was unable to update the target scale: ${msg}`);
        await this.writeStatus(hpa, this.status(status, s, current, Number(status.desiredReplicas ?? 0), metricStatuses, false));
        return;
      }
      this.cond(s, 'AbleToScale', 'True', 'SucceededRescale', `the HPA controller was able to update the target scale to ${desired}`);
      this.event(hpa, 'Normal', 'SuccessfulRescale', `New size: ${desired}; reason: ${reason}`);
      this.history.storeScaleEvent(key, behavior, current, desired, nowMs);
    } else {
      desired = current;
    }
    await this.writeStatus(hpa, this.status(status, s, current, desired, metricStatuses, rescale));
  }

  /** kube's setStatus: lastScaleTime moves on a rescale; the conditions as this sync left them */
  private status(old: Obj, s: Sync, current: number, desired: number, metrics: Obj[] | undefined, rescale: boolean): Obj {
    const out: Obj = { currentReplicas: current, desiredReplicas: desired };
    const last = rescale ? s.now : old.lastScaleTime;
    if (last !== undefined) out.lastScaleTime = last;
    if (metrics) out.currentMetrics = metrics;
    if (s.conditions.length > 0) out.conditions = s.conditions as unknown as JSONValue;
    return out;
  }

  private cond(s: Sync, type: HpaCondition['type'], status: HpaCondition['status'], reason: string, message: string): void {
    s.conditions = setCondition(s.conditions, { type, status, reason, message }, s.now);
  }

  /** the status, written when it differs from what the autoscaler carries (on the version read) */
  private async writeStatus(hpa: ApiObject, status: Obj): Promise<void> {
    if (isDeepStrictEqual(hpa.status ?? {}, status)) return;
    const ns = hpa.metadata?.namespace ?? '';
    const name = hpa.metadata?.name ?? '';
    try {
      await this.o.hpas().guaranteedUpdate(ns, name, { dryRun: false, manager: HPA_MANAGER, subresource: 'status' }, (cur) => {
        if (!cur || cur.metadata?.uid !== hpa.metadata?.uid) throw new StatusError(404, 'NotFound', `horizontalpodautoscalers.autoscaling "${name}" not found`);
        return { ...cur, status };
      });
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) return;
      throw e;
    }
  }

  private event(hpa: ApiObject, type: 'Normal' | 'Warning', reason: string, message: string): void {
    const m = hpa.metadata ?? {};
    // best effort, as kube's recorder: the sync does not wait for the Event
    void this.o.events?.event({ apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', namespace: m.namespace ?? '', name: m.name ?? '', uid: m.uid ?? '' }, type, reason, message);
  }
}
