// Eviction rate limiting by zone (issue 13 item 2; the rule of
// kube-controller-manager's node lifecycle controller, docs/nodeagent.md
// "Node lifecycle"). What is limited is the addition of a NoExecute taint to
// a node — that is what makes pods go — not the pod deletions that follow.
//
//   zone            = labels topology.kubernetes.io/region + zone ("" when unlabelled)
//   not ready       = Ready is not True (Unknown included)
//   FullDisruption  = every node of the zone is not ready
//   PartialDisruption = more than 2 nodes are not ready and at least
//                     `unhealthyZoneThreshold` (0.55) of them
//   Normal          = otherwise
//   rate            = Normal, FullDisruption: `evictionRate` (0.1 node/s)
//                     PartialDisruption: `secondaryEvictionRate` (0.01/s) when
//                     the zone has more than `largeClusterSizeThreshold` (50)
//                     nodes, else 0 (no new NoExecute taints)
//   every zone in FullDisruption: the control plane is more likely cut off
//                     than every node dead; no NoExecute taints are added and
//                     the controller's own are removed until a node is ready.
// Token bucket per zone, burst 1: the first node goes at once, the next one
// 1/rate later.

export type ZoneState = 'Normal' | 'PartialDisruption' | 'FullDisruption';

export interface ZoneRules {
  evictionRate: number;
  secondaryEvictionRate: number;
  unhealthyZoneThreshold: number;
  largeClusterSizeThreshold: number;
}

export const DEFAULT_ZONE_RULES: ZoneRules = { evictionRate: 0.1, secondaryEvictionRate: 0.01, unhealthyZoneThreshold: 0.55, largeClusterSizeThreshold: 50 };

export function zoneOf(labels: Record<string, string> | undefined): string {
  const region = labels?.['topology.kubernetes.io/region'] ?? '';
  const zone = labels?.['topology.kubernetes.io/zone'] ?? '';
  return region === '' && zone === '' ? '' : `${region}:${zone}`;
}

export function zoneState(total: number, notReady: number, threshold: number): ZoneState {
  if (total > 0 && notReady === total) return 'FullDisruption';
  if (notReady > 2 && notReady / total >= threshold) return 'PartialDisruption';
  return 'Normal';
}

export function zoneRate(state: ZoneState, total: number, r: ZoneRules): number {
  if (state === 'PartialDisruption') return total > r.largeClusterSizeThreshold ? r.secondaryEvictionRate : 0;
  return r.evictionRate;
}

/** a token bucket of burst 1 refilled at `rate` tokens per second; time comes from the caller */
export class TokenBucket {
  private tokens = 1;
  private at: number;

  constructor(
    private rate: number,
    now: number,
  ) {
    this.at = now;
  }

  private refill(now: number): void {
    if (now > this.at) this.tokens = Math.min(1, this.tokens + ((now - this.at) / 1000) * this.rate);
    this.at = Math.max(this.at, now);
  }

  /** a zone that must add no taints (rate 0) loses its saved token too */
  setRate(rate: number, now: number): void {
    this.refill(now);
    this.rate = rate;
    if (rate <= 0) this.tokens = 0;
  }

  tryTake(now: number): boolean {
    this.refill(now);
    if (this.tokens < 1 - 1e-9) return false;
    this.tokens -= 1;
    return true;
  }

  /** ms until a token is available (Infinity at rate 0) */
  waitMs(now: number): number {
    this.refill(now);
    if (this.tokens >= 1 - 1e-9) return 0;
    if (this.rate <= 0) return Infinity;
    return Math.ceil(((1 - this.tokens) / this.rate) * 1000);
  }
}
