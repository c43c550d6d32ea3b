// Node lifecycle and eviction flags of `orch server` (issue 13), named and
// defaulted as kube-controller-manager's (and, for the default tolerations,
// kube-apiserver's).

import { type Command, InvalidArgumentError, Option } from 'commander';
import { parseGoDuration } from '../core/duration.js';
import type { NodeLifecycleSettings } from '../server/node-lifecycle-setup.js';
import type { DefaultTolerationOptions } from '../registry/default-tolerations.js';

function positiveDuration(v: string): number {
  const ms = /^\d+$/.test(v) ? Number(v) * 1000 : parseGoDuration(v);
  if (ms === undefined || ms <= 0) throw new InvalidArgumentError('must be a duration above 0 such as 50s, 1m0s or 500ms');
  return ms;
}

function rate(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError('must be a number of nodes per second, 0 or more');
  return n;
}

function fraction(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0 || n > 1) throw new InvalidArgumentError('must be a fraction above 0 and at most 1');
  return n;
}

function whole(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('must be a whole number, 0 or more');
  return n;
}

export function addNodeLifecycleFlags(cmd: Command): Command {
  return cmd
    .addOption(new Option('--node-monitor-grace-period <duration>', 'how long a node may send no Lease renewal and no status before it is Unknown and tainted unreachable').argParser(positiveDuration).default(50_000, '50s'))
    .addOption(new Option('--node-monitor-period <duration>', 'how often zone states are computed and rate-limited taints retried').argParser(positiveDuration).default(5_000, '5s'))
    .option('--node-eviction-rate <rate>', 'nodes per second that get a NoExecute taint, per zone, while the zone is healthy', rate, 0.1)
    .option('--secondary-node-eviction-rate <rate>', 'the same while a zone is unhealthy (0 in zones of at most --large-cluster-size-threshold nodes)', rate, 0.01)
    .option('--unhealthy-zone-threshold <fraction>', 'fraction of not-ready nodes (more than 2) that makes a zone unhealthy', fraction, 0.55)
    .option('--large-cluster-size-threshold <n>', 'zones above this many nodes use the secondary rate when unhealthy; smaller ones stop', whole, 50)
    // kube-controller-manager's csrsigning flag, beside the other controller-manager durations
    .addOption(new Option('--cluster-signing-duration <duration>', 'the longest validity of certificates the csrsigning controller issues (a request\'s spec.expirationSeconds may ask for less)').argParser(positiveDuration).default(365 * 24 * 3600_000, '8760h0m0s'))
    .option('--default-not-ready-toleration-seconds <n>', 'tolerationSeconds of the not-ready toleration DefaultTolerationSeconds adds to new pods', whole, 300)
    .option('--default-unreachable-toleration-seconds <n>', 'tolerationSeconds of the unreachable toleration DefaultTolerationSeconds adds to new pods', whole, 300);
}

export function nodeLifecycleOptionsFrom(o: Record<string, unknown>): NodeLifecycleSettings {
  return {
    monitorGracePeriodMs: o['nodeMonitorGracePeriod'] as number,
    monitorPeriodMs: o['nodeMonitorPeriod'] as number,
    zoneRules: {
      evictionRate: o['nodeEvictionRate'] as number,
      secondaryEvictionRate: o['secondaryNodeEvictionRate'] as number,
      unhealthyZoneThreshold: o['unhealthyZoneThreshold'] as number,
      largeClusterSizeThreshold: o['largeClusterSizeThreshold'] as number,
    },
  };
}

export function defaultTolerationOptionsFrom(o: Record<string, unknown>): DefaultTolerationOptions {
  return { notReadySeconds: o['defaultNotReadyTolerationSeconds'] as number, unreachableSeconds: o['defaultUnreachableTolerationSeconds'] as number };
}
