// The HorizontalPodAutoscaler's recommendation normalization, as
// kube-controller-manager 1.32's horizontal.go does it once the metrics gave a
// count (docs/controllers.md "HorizontalPodAutoscaler"):
//   - without `spec.behavior` (normalizeDesiredReplicas): the highest
//     recommendation of the downscale stabilization window (5 min,
//     `--horizontal-pod-autoscaler-downscale-stabilization`), then the bounds and
//     the scale-up limit max(2 × current, 4);
//   - with it (normalizeDesiredReplicasWithBehaviors): kube's defaults fill what is
//     not given (scaleUp: window 0, Max of 4 pods / 15 s and 100 % / 15 s;
//     scaleDown: window = the flag, Max of 100 % / 15 s), the recommendation is held
//     between the lowest of the scale-up window and the highest of the scale-down
//     window, then limited by the policies over the recorded scale events
//     (selectPolicy Max, Min, Disabled) and the bounds.
// The conditions it sets are AbleToScale (ScaleUpStabilized, ScaleDownStabilized,
// ReadyForNewScale) and ScalingLimited (TooFewReplicas, TooManyReplicas,
// ScaleUpLimit, ScaleDownLimit, DesiredWithinRange). The recommendations and
// scale events live in memory per autoscaler key on the leader, as kube's.

import type { JSONValue } from '../../registry/types.js';

type Obj = Record<string, JSONValue>;

export interface ScalingPolicy {
  type: 'Pods' | 'Percent';
  value: number;
  periodSeconds: number;
}

export interface ScalingRules {
  stabilizationWindowSeconds: number;
  selectPolicy: 'Max' | 'Min' | 'Disabled';
  policies: ScalingPolicy[];
}

export interface Behavior {
  scaleUp: ScalingRules;
  scaleDown: ScalingRules;
}

/** the condition normalization leaves (status True for AbleToScale; ScalingLimited True when the count was limited) */
export interface Normalized {
  desired: number;
  ableToScale: { reason: string; message: string };
  limited: { status: 'True' | 'False'; reason: string; message: string };
}

/** kube's scaleUpLimitFactor and scaleUpLimitMinimum (no behavior) */
const SCALE_UP_FACTOR = 2;
const SCALE_UP_MINIMUM = 4;

const policies = (v: JSONValue | undefined): ScalingPolicy[] | undefined =>
  Array.isArray(v) ? (v as Obj[]).map((p) => ({ type: p.type === 'Pods' ? 'Pods' : 'Percent', value: Number(p.value ?? 0), periodSeconds: Number(p.periodSeconds ?? 0) })) : undefined;
const select = (v: JSONValue | undefined): ScalingRules['selectPolicy'] | undefined => (v === 'Max' || v === 'Min' || v === 'Disabled' ? v : undefined);

/**
 * kube's GenerateHPAScaleUpRules / GenerateHPAScaleDownRules (API defaulting of a given behavior) and
 * maybeInitScaleDownStabilizationWindow (the flag's window for a scale-down without one); undefined without behavior
 */
export function behaviorOf(spec: Obj, downscaleWindowMs: number): Behavior | undefined {
  const b = spec.behavior;
  if (b === undefined || b === null || typeof b !== 'object' || Array.isArray(b)) return undefined;
  const up = (b.scaleUp ?? {}) as Obj;
  const down = (b.scaleDown ?? {}) as Obj;
  return {
    scaleUp: {
      stabilizationWindowSeconds: typeof up.stabilizationWindowSeconds === 'number' ? up.stabilizationWindowSeconds : 0,
      selectPolicy: select(up.selectPolicy) ?? 'Max',
      policies: policies(up.policies) ?? [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }],
    },
    scaleDown: {
      stabilizationWindowSeconds: typeof down.stabilizationWindowSeconds === 'number' ? down.stabilizationWindowSeconds : Math.trunc(downscaleWindowMs / 1000),
      selectPolicy: select(down.selectPolicy) ?? 'Max',
      policies: policies(down.policies) ?? [{ type: 'Percent', value: 100, periodSeconds: 15 }],
    },
  };
}

interface Recommendation {
  replicas: number;
  atMs: number;
}

interface ScaleEvent {
  change: number;
  atMs: number;
  outdated: boolean;
}

const WITHIN_RANGE = { reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' };
const READY = { reason: 'ReadyForNewScale', message: 'recommended size matches current size' };
const DOWN_STABILIZED = { reason: 'ScaleDownStabilized', message: 'recent recommendations were higher than current one, applying the highest recent recommendation' };
const UP_STABILIZED = { reason: 'ScaleUpStabilized', message: 'recent recommendations were lower than current one, applying the lowest recent recommendation' };
const TOO_MANY = { reason: 'TooManyReplicas', message: 'the desired replica count is more than the maximum replica count' };
const TOO_FEW = { reason: 'TooFewReplicas', message: 'the desired replica count is less than the minimum replica count' };
const UP_LIMIT = { reason: 'ScaleUpLimit', message: 'the desired replica count is increasing faster than the maximum scale rate' };
const DOWN_LIMIT = { reason: 'ScaleDownLimit', message: 'the desired replica count is decreasing faster than the maximum scale rate' };

/** the replicas one policy period saw change: the scale events newer than its start */
function changedWithin(periodSeconds: number, events: readonly ScaleEvent[], nowMs: number): number {
  const cutoff = nowMs - periodSeconds * 1000;
  return events.reduce((n, e) => (e.atMs > cutoff ? n + e.change : n), 0);
}

/** kube's calculateScaleUpLimitWithScalingRules / calculateScaleDownLimitWithBehaviors */
export function policyLimit(direction: 'up' | 'down', current: number, ups: readonly ScaleEvent[], downs: readonly ScaleEvent[], rules: ScalingRules, nowMs: number): number {
  if (rules.selectPolicy === 'Disabled') return current;
  // up: Max picks the largest proposal, Min the smallest; down: the other way round
  const largest = (direction === 'up') === (rules.selectPolicy !== 'Min');
  let result = largest ? -Infinity : Infinity;
  for (const p of rules.policies) {
    const periodStart = current - changedWithin(p.periodSeconds, ups, nowMs) + changedWithin(p.periodSeconds, downs, nowMs);
    let proposed: number;
    if (direction === 'up') proposed = p.type === 'Pods' ? periodStart + p.value : Math.ceil(periodStart * (1 + p.value / 100));
    else proposed = p.type === 'Pods' ? periodStart - p.value : Math.trunc(periodStart * (1 - p.value / 100));
    result = largest ? Math.max(result, proposed) : Math.min(result, proposed);
  }
  // no policy: kube's int32 extremes (no limit from policies)
  return Number.isFinite(result) ? result : largest ? -(2 ** 31) : 2 ** 31 - 1;
}

/** kube's in-memory history per autoscaler key (recommendations, scale-up and scale-down events) */
export class ScaleHistory {
  private readonly recommendations = new Map<string, Recommendation[]>();
  private readonly ups = new Map<string, ScaleEvent[]>();
  private readonly downs = new Map<string, ScaleEvent[]>();

  constructor(private readonly downscaleWindowMs: number) {}

  /** kube's recordInitialRecommendation: the current count is the first recommendation */
  recordInitial(key: string, current: number, nowMs: number): void {
    if (!this.recommendations.has(key)) this.recommendations.set(key, [{ replicas: current, atMs: nowMs }]);
  }

  forget(key: string): void {
    this.recommendations.delete(key);
    this.ups.delete(key);
    this.downs.delete(key);
  }

  clear(): void {
    this.recommendations.clear();
    this.ups.clear();
    this.downs.clear();
  }

  /** the recommendation recorded over the oldest one both windows no longer see, or appended */
  private record(key: string, replicas: number, nowMs: number, stale: (r: Recommendation) => boolean): void {
    const recs = this.recommendations.get(key) ?? [];
    let old = -1;
    recs.forEach((r, i) => {
      if (stale(r)) old = i;
    });
    if (old >= 0) recs[old] = { replicas, atMs: nowMs };
    else recs.push({ replicas, atMs: nowMs });
    this.recommendations.set(key, recs);
  }

  /** kube's normalizeDesiredReplicas (no behavior) */
  normalize(key: string, current: number, desired: number, min: number, max: number, nowMs: number): Normalized {
    const cutoff = nowMs - this.downscaleWindowMs;
    let stabilized = desired;
    for (const r of this.recommendations.get(key) ?? []) if (r.atMs >= cutoff && r.replicas > stabilized) stabilized = r.replicas;
    this.record(key, desired, nowMs, (r) => r.atMs < cutoff);
    const ableToScale = stabilized !== desired ? DOWN_STABILIZED : READY;
    const upLimit = Math.max(SCALE_UP_FACTOR * current, SCALE_UP_MINIMUM);
    const [maxAllowed, possible] = max > upLimit ? [upLimit, UP_LIMIT] : [max, TOO_MANY];
    let out = stabilized;
    let why = WITHIN_RANGE;
    if (stabilized < min) (out = min), (why = TOO_FEW);
    else if (stabilized > maxAllowed) (out = maxAllowed), (why = possible);
    return { desired: out, ableToScale, limited: { status: out === stabilized ? 'False' : 'True', ...why } };
  }

  /** kube's normalizeDesiredReplicasWithBehaviors */
  normalizeWithBehavior(key: string, b: Behavior, current: number, desired: number, min: number, max: number, nowMs: number): Normalized {
    const upCutoff = nowMs - b.scaleUp.stabilizationWindowSeconds * 1000;
    const downCutoff = nowMs - b.scaleDown.stabilizationWindowSeconds * 1000;
    let up = desired;
    let down = desired;
    for (const r of this.recommendations.get(key) ?? []) {
      if (r.atMs > upCutoff) up = Math.min(up, r.replicas);
      if (r.atMs > downCutoff) down = Math.max(down, r.replicas);
    }
    const stabilized = Math.min(Math.max(current, up), down);
    this.record(key, desired, nowMs, (r) => r.atMs < upCutoff && r.atMs < downCutoff);
    const ableToScale = stabilized === desired ? READY : desired >= current ? UP_STABILIZED : DOWN_STABILIZED;

    let out = stabilized;
    let why = WITHIN_RANGE;
    const ups = this.ups.get(key) ?? [];
    const downs = this.downs.get(key) ?? [];
    if (stabilized > current) {
      // no scaling up further until earlier events leave the periods
      const limit = Math.max(policyLimit('up', current, ups, downs, b.scaleUp, nowMs), current);
      const [maxAllowed, possible] = max > limit ? [limit, UP_LIMIT] : [max, TOO_MANY];
      if (stabilized > maxAllowed) (out = maxAllowed), (why = possible);
    } else if (stabilized < current) {
      const limit = Math.min(policyLimit('down', current, ups, downs, b.scaleDown, nowMs), current);
      const [minAllowed, possible] = min < limit ? [limit, DOWN_LIMIT] : [min, TOO_FEW];
      if (stabilized < minAllowed) (out = minAllowed), (why = possible);
    }
    return { desired: out, ableToScale, limited: { status: out === stabilized ? 'False' : 'True', ...why } };
  }

  /** kube's storeScaleEvent: only with a behavior; an event older than the longest policy period is reused */
  storeScaleEvent(key: string, b: Behavior | undefined, previous: number, next: number, nowMs: number): void {
    if (!b) return;
    const upward = next > previous;
    const rules = upward ? b.scaleUp : b.scaleDown;
    const map = upward ? this.ups : this.downs;
    const longest = rules.policies.reduce((m, p) => Math.max(m, p.periodSeconds), 0);
    const events = map.get(key) ?? [];
    let old = -1;
    events.forEach((e, i) => {
      if (e.atMs < nowMs - longest * 1000) e.outdated = true;
      if (e.outdated) old = i;
    });
    const event: ScaleEvent = { change: Math.abs(next - previous), atMs: nowMs, outdated: false };
    if (old >= 0) events[old] = event;
    else events.push(event);
    map.set(key, events);
  }
}
