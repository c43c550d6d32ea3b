// The node lifecycle controller (spec 002 §2.1, §2.2, §3; issue 13 item 1),
// leader only (leader-gate.ts). It follows every Node and node Lease write
// (namespace `orch-node-lease`, kube's with --api-domain k8s.io) and keeps one machine per node (machine.ts):
//
// - no Lease renewal and no new Ready heartbeat for `monitorGracePeriodMs`
//   (`--node-monitor-grace-period`, 50 s) → Ready and the pressure
//   conditions become Unknown (reason NodeStatusUnknown) and the node gets
//   `node.<domain>/unreachable` NoSchedule + NoExecute;
// - Ready=False for `notReadyGracePeriodMs` → `node.<domain>/not-ready`
//   NoExecute (NoSchedule at once, as kube's NoSchedule pass does);
// - the taints go when the node posts Ready=True again.
//
// New NoExecute taints are rate limited per zone (zones.ts): a partition
// that loses many nodes at once does not make every pod go. Pods are evicted
// by the taint eviction controller (eviction.ts), which only reads taints.
//
// Started (a restart, a new leader), every node gets a fresh grace period:
// the machines are new and time heartbeats from now.
//
// The control plane behind (docs/nodeagent.md "Control plane behind"): a node
// whose machine says it has been silent for the grace period is marked only
// by the periodic pass (kube's monitorNodeHealth does the same), after the
// pass has accounted the blind time of the interval: its own timer running
// late (the event loop stalled), the process saturated (`saturated()`), the
// controller's own store writes failing. Blind time is credited to every
// node's silence (at most `maxBlindMs` per silence), so renewals the control
// plane could not read do not look missing; a node whose credit leaves it
// time goes back to Alive (RECHECK).

import { StatusError } from '../../core/errors.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject } from '../../registry/types.js';
import { type Clock, type TimerHandle, systemClock } from '../../core/clock.js';
import { ControllerLoop, LoopController, type Informer, type InformerSource } from '../runtime/index.js';
import type { EventRecorder } from '../event-recorder.js';
import { type NodeHealthActor, type NodeHealthView, type ReadyStatus, heartbeat, startNodeHealth, viewOf } from './machine.js';
import { systemNamespacesOf } from '../../core/product-names.js';
import { BlindTime } from './blind-time.js';
import { planNode, readyOf } from './plan.js';
import { type NodeTaintKeys, nodeTaintKeys } from './taints.js';
import { DEFAULT_ZONE_RULES, TokenBucket, type ZoneRules, type ZoneState, zoneOf, zoneRate, zoneState } from './zones.js';

export const NODE_LIFECYCLE_MANAGER = 'node-lifecycle-controller';

export interface NodeLifecycleOptions {
  store: InformerSource;
  nodes: () => GenericStore;
  /** node Leases (coordination.<domain>/v1); undefined when the API is switched off */
  leases: () => GenericStore | undefined;
  apiDomain: string;
  clock?: Clock;
  /** `--node-monitor-grace-period` (default 50 s) */
  monitorGracePeriodMs?: number;
  /** how long Ready=False lasts before the not-ready NoExecute taint (default: the grace period) */
  notReadyGracePeriodMs?: number;
  /** how often zone states are computed and held-back taints retried (kube's node-monitor-period, 5 s) */
  monitorPeriodMs?: number;
  zoneRules?: Partial<ZoneRules>;
  /** how late a timer of the controller may run before the lateness counts as blind time (default 1 s) */
  blindToleranceMs?: number;
  /** the most blind time credited to one node's silence (default twice the grace period) */
  maxBlindMs?: number;
  /**
   * whether the process was saturated since the last call (asked once per
   * pass): a saturated control plane reads renewals late, so the pass's
   * interval is blind time (node-lifecycle-setup.ts: event-loop utilization)
   */
  saturated?: () => boolean;
  events?: EventRecorder;
  log?: (msg: string) => void;
}

interface NodeRec {
  name: string;
  actor: NodeHealthActor;
  /** the Ready condition's lastHeartbeatTime last seen */
  heartbeat?: string;
  /** the Lease's renewTime last seen */
  renew?: string;
  ready: ReadyStatus;
  zone: string;
  /** what reconciles act on: `unreachable` only once a pass has confirmed the machine's verdict */
  view: NodeHealthView;
  /** a pass confirmed the machine's Unreachable after accounting blind time */
  confirmed: boolean;
  busy: boolean;
  again: boolean;
  /** wants a new NoExecute taint (or a failed write to be retried) */
  held: boolean;
  /** holds a token of its zone's limiter for a new NoExecute taint */
  token: boolean;
}

/** node machines started per turn of the event loop (scheduleStarts) */
const START_SLICE = 250;
/**
 * and for at most this long: a machine's start (XState actor, first
 * reconcile) costs 0.1–0.4 ms, so 250 were 50–100 ms on a loaded host
 * (bench/controller-start.ts, docs/scale.md)
 */
const START_SLICE_MS = 8;
/** node machines stopped per turn (retireInSlices) */
const STOP_SLICE = 500;

/**
 * Stops machines a few hundred per turn: a deposed leader stopping thousands
 * at once stalled its event loop (1.1 s at 2,500 nodes, inside Raft's Ready
 * loop). Their subscriptions already do nothing (startRec's identity check).
 */
function retireInSlices(actors: NodeHealthActor[]): void {
  const step = (): void => {
    const end = performance.now() + START_SLICE_MS;
    for (let i = 0; i < STOP_SLICE && actors.length > 0 && (i === 0 || performance.now() < end); i++) actors.pop()!.stop();
    if (actors.length > 0) setImmediate(step);
  };
  step();
}

const rfc3339 = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

export class NodeLifecycleController extends LoopController {
  private readonly nodes = new Map<string, NodeRec>();
  /** renewTime of Leases whose Node is not known (yet) */
  private readonly orphanRenew = new Map<string, string>();
  private readonly limiters = new Map<string, TokenBucket>();
  private readonly zoneStates = new Map<string, ZoneState>();
  private readonly clock: Clock;
  private readonly graceMs: number;
  private readonly notReadyGraceMs: number;
  private readonly periodMs: number;
  private readonly rules: ZoneRules;
  private readonly keys: NodeTaintKeys;
  private timer?: TimerHandle;
  private stopped = true;
  /** holds the informers of a start (runtime/); the per-node work is driven by the health machines */
  protected readonly loop: ControllerLoop;
  private nodeInformer: Informer | undefined;
  private disrupted = false;
  private readonly blind: BlindTime;
  private readonly maxBlindMs: number;
  /** when the pass last ran and when the next one is due (its lateness is blind time) */
  private lastPassAt = 0;
  private passDueAt = 0;
  /** a write of the controller failed for a reason of the control plane's since the last pass */
  private storeTrouble = false;
  private blindLogged = 0;
  /** writes made and failed (tests and metrics) */
  readonly stats = { writes: 0, markedUnknown: 0, conflicts: 0, errors: 0 };
  /** reconciles started and not finished (settled()) */
  private readonly running = new Set<Promise<void>>();
  /** nodes seen whose machines start in the next slices (scheduleStarts), with their latest object */
  private readonly starting = new Map<string, ApiObject>();
  private startScheduled = false;

  constructor(private readonly o: NodeLifecycleOptions) {
    super();
    this.clock = o.clock ?? systemClock;
    this.loop = new ControllerLoop(o.store, { name: 'node lifecycle', clock: this.clock, log: o.log });
    this.graceMs = o.monitorGracePeriodMs ?? 50_000;
    this.notReadyGraceMs = o.notReadyGracePeriodMs ?? this.graceMs;
    this.periodMs = o.monitorPeriodMs ?? 5_000;
    this.rules = { ...DEFAULT_ZONE_RULES, ...(o.zoneRules ?? {}) };
    this.keys = nodeTaintKeys(o.apiDomain);
    this.blind = new BlindTime(o.blindToleranceMs ?? 1_000);
    this.maxBlindMs = o.maxBlindMs ?? 2 * this.graceMs;
  }

  /** blind time so far (ms): time the controller could not observe heartbeats (tests, metrics) */
  get blindMs(): number {
    return this.blind.total();
  }

  start(): void {
    this.stop();
    this.stopped = false;
    this.lastPassAt = this.clock.now();
    this.loop.begin(async () => {});
    const leaseRange = this.o.leases()?.rangeKeys(systemNamespacesOf(this.o.apiDomain).nodeLease);
    // leases first, so a node's first machine knows its renewTime
    if (leaseRange) this.loop.inform(leaseRange, { add: (lease) => this.onLease(lease), update: (_old, lease) => this.onLease(lease) });
    this.nodeInformer = this.loop.inform(this.o.nodes().rangeKeys(''), {
      add: (node) => this.onNode(node),
      update: (_old, node) => this.onNode(node),
      delete: (_node, name) => this.forget(name),
    });
    this.schedulePass();
    this.o.log?.(`node lifecycle: watching ${this.nodes.size} node(s); each has ${this.graceMs} ms before it is Unknown`);
  }

  stop(): void {
    this.stopped = true;
    this.loop.end();
    this.nodeInformer = undefined;
    this.timer?.cancel();
    this.timer = undefined;
    retireInSlices([...this.nodes.values()].map((r) => r.actor));
    this.nodes.clear();
    this.starting.clear();
    this.orphanRenew.clear();
    this.limiters.clear();
    this.zoneStates.clear();
    this.disrupted = false;
  }

  /** what the controller thinks of a node (tests, debugging) */
  nodeView(name: string): (NodeHealthView & { zone: string }) | undefined {
    const r = this.nodes.get(name);
    return r ? { ...viewOf(r.actor), zone: r.zone } : undefined;
  }

  zoneStateOf(zone: string): ZoneState | undefined {
    return this.zoneStates.get(zone);
  }

  get inFullDisruption(): boolean {
    return this.disrupted;
  }

  private onLease(lease: ApiObject): void {
    const name = lease.metadata?.name ?? '';
    const renew = String((lease.spec as { renewTime?: unknown } | undefined)?.renewTime ?? '');
    const rec = this.nodes.get(name);
    if (!rec) {
      this.orphanRenew.set(name, renew);
      return;
    }
    if (renew !== rec.renew) {
      rec.renew = renew;
      // no transition while Alive: the machine's Liveness notes the time (node-lifecycle.ts)
      heartbeat(rec.actor);
    }
  }

  private onNode(node: ApiObject): void {
    const name = node.metadata?.name ?? '';
    const rec = this.nodes.get(name);
    if (!rec) {
      // its machine starts in a later slice, from the latest object seen by then
      this.starting.set(name, node);
      this.scheduleStarts();
      return;
    }
    const ready = readyOf(node);
    if (ready.heartbeat !== rec.heartbeat) {
      rec.heartbeat = ready.heartbeat;
      heartbeat(rec.actor);
    }
    if (ready.status !== rec.ready) {
      if (rec.ready === 'True') void this.o.events?.event({ apiVersion: 'v1', kind: 'Node', name, uid: node.metadata?.uid }, 'Normal', 'NodeNotReady', `Node ${name} status is now: NodeNotReady`);
      rec.ready = ready.status;
      rec.actor.send({ type: 'REPORT', ready: ready.status });
    }
    rec.zone = zoneOf(node.metadata?.labels);
    rec.view = this.viewFor(rec);
    void this.reconcile(rec);
  }

  /**
   * Machines start in slices of START_SLICE per turn of the event loop: a new
   * leader's first list brings every node at once, and starting thousands of
   * machines in one go stalled the member's event loop for seconds (2.5 s at
   * 2,500 nodes, docs/scale.md), long enough to cost an election. A node's
   * grace period starts with its machine, a few turns later at most.
   */
  private scheduleStarts(): void {
    if (this.startScheduled) return;
    this.startScheduled = true;
    setImmediate(() => {
      this.startScheduled = false;
      if (this.stopped) return;
      let n = 0;
      const end = performance.now() + START_SLICE_MS;
      for (const [name, node] of this.starting) {
        this.starting.delete(name);
        if (!this.nodes.has(name)) this.startRec(name, node);
        if (++n >= START_SLICE || performance.now() >= end) break;
      }
      if (this.starting.size > 0) this.scheduleStarts();
    });
  }

  private startRec(name: string, node: ApiObject): void {
    const ready = readyOf(node);
    const actor = startNodeHealth(this.clock, { graceMs: this.graceMs, notReadyGraceMs: this.notReadyGraceMs, ready: ready.status, blind: this.blind, maxBlindMs: this.maxBlindMs });
    const rec: NodeRec = { name, actor, heartbeat: ready.heartbeat, renew: this.orphanRenew.get(name), ready: ready.status, zone: zoneOf(node.metadata?.labels), view: viewOf(actor), confirmed: false, busy: false, again: false, held: false, token: false };
    this.orphanRenew.delete(name);
    this.nodes.set(name, rec);
    actor.subscribe(() => {
      // a machine of a stopped run (being retired in slices) or of a forgotten node does nothing
      if (this.nodes.get(name) !== rec) return;
      const v = this.viewFor(rec);
      if (v.unreachable !== rec.view.unreachable || v.readiness !== rec.view.readiness) {
        rec.view = v;
        void this.reconcile(rec);
      }
    });
    rec.view = this.viewFor(rec);
    void this.reconcile(rec);
  }

  /** the machine's view, Unreachable only once a pass confirmed it */
  private viewFor(r: NodeRec): NodeHealthView {
    const v = viewOf(r.actor);
    if (!v.unreachable) r.confirmed = false;
    return r.confirmed ? v : { ...v, unreachable: false };
  }

  private forget(name: string): void {
    this.starting.delete(name);
    const r = this.nodes.get(name);
    if (!r) return;
    r.actor.stop();
    this.nodes.delete(name);
  }

  private limiter(zone: string): TokenBucket {
    let l = this.limiters.get(zone);
    if (!l) {
      l = new TokenBucket(this.rules.evictionRate, this.clock.now());
      this.limiters.set(zone, l);
    }
    return l;
  }

  /**
   * Resolves once no reconcile is running, including those the finished ones'
   * writes started (tests on a simulated clock wait for this instead of real time).
   */
  get busy(): boolean {
    return this.running.size > 0 || this.starting.size > 0 || this.listing;
  }

  /** started, and the informers' first lists not all delivered yet (they come in slices) */
  private get listing(): boolean {
    return !this.stopped && !this.loop.hasSynced();
  }

  override async settled(): Promise<void> {
    while (this.running.size > 0 || ((this.starting.size > 0 || this.listing) && !this.stopped)) {
      if (this.running.size > 0) await Promise.all(this.running);
      else await new Promise((r) => setImmediate(r));
    }
  }

  /** one reconcile at a time per node; a change meanwhile runs it again (tracked for settled()) */
  private reconcile(rec: NodeRec): Promise<void> {
    const p = this.reconcileNode(rec).finally(() => this.running.delete(p));
    this.running.add(p);
    return p;
  }

  private async reconcileNode(rec: NodeRec): Promise<void> {
    if (this.stopped) return;
    if (rec.busy) {
      rec.again = true;
      return;
    }
    rec.busy = true;
    try {
      do {
        rec.again = false;
        await this.reconcileOnce(rec);
      } while (rec.again && !this.stopped && this.nodes.get(rec.name) === rec);
    } finally {
      rec.busy = false;
    }
  }

  private async reconcileOnce(rec: NodeRec): Promise<void> {
    const gs = this.o.nodes();
    const node = this.nodeInformer?.get(rec.name);
    if (!node) return;
    const view = rec.view;
    // a new NoExecute taint waits for the periodic pass: it first computes the zone states
    // (so nodes lost together count together) and then hands out the zone's tokens (pass())
    const base = { view, keys: this.keys, heartbeatSeen: rec.heartbeat, disrupted: this.disrupted, mayAddNoExecute: rec.token };
    const first = planNode({ ...base, node, now: rfc3339(this.clock.now()) });
    rec.held = first.heldNoExecute;
    if (!first.next) return;
    let result: { markedUnknown: boolean; addsNoExecute: boolean } = { markedUnknown: false, addsNoExecute: false };
    try {
      await gs.guaranteedUpdate('', rec.name, { dryRun: false, manager: NODE_LIFECYCLE_MANAGER }, (cur) => {
        const p = planNode({ ...base, node: cur!, now: rfc3339(this.clock.now()) });
        result = p;
        return p.next ?? cur!;
      });
      this.stats.writes++;
      if (result.markedUnknown) {
        this.stats.markedUnknown++;
        this.o.log?.(`node lifecycle: node ${rec.name}: conditions set to Unknown`);
      }
      if (result.addsNoExecute) {
        rec.token = false;
        this.o.log?.(`node lifecycle: node ${rec.name}: NoExecute taint added (zone "${rec.zone}")`);
      }
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) return;
      if (e instanceof StatusError && e.code === 409) this.stats.conflicts++;
      else {
        this.stats.errors++;
        // the control plane's own writes fail: the heartbeats' writes likely do too
        this.storeTrouble = true;
      }
      this.o.log?.(`node lifecycle: node ${rec.name}: ${(e as Error).message}`);
      // the periodic pass tries again
      rec.held = true;
    }
  }

  private schedulePass(): void {
    if (this.stopped) return;
    this.passDueAt = this.clock.now() + this.periodMs;
    this.timer = this.clock.setTimeout(() => {
      this.accountBlindTime();
      this.pass();
      this.schedulePass();
    }, this.periodMs);
  }

  /** the blind time of the interval since the last pass: the pass's own lateness, saturation, failing writes */
  private accountBlindTime(): void {
    const now = this.clock.now();
    this.blind.late(this.passDueAt, now);
    const saturated = this.o.saturated?.() ?? false;
    if (saturated || this.storeTrouble) this.blind.add(this.lastPassAt, now);
    this.storeTrouble = false;
    this.lastPassAt = now;
    const total = this.blind.total();
    if (total - this.blindLogged >= this.graceMs / 2) {
      this.o.log?.(`node lifecycle: the control plane was behind (event loop late, saturated or its writes failing) for ${Math.round(total - this.blindLogged)} ms; that time is not counted as node silence`);
      this.blindLogged = total;
    }
  }

  /**
   * Judges the nodes whose machines went Unreachable: with credit left they go back
   * to Alive, the others are confirmed (returned, to be reconciled).
   */
  private judge(): NodeRec[] {
    const out: NodeRec[] = [];
    for (const r of this.nodes.values()) {
      if (r.confirmed || !viewOf(r.actor).unreachable) continue;
      r.actor.send({ type: 'RECHECK' });
      if (!viewOf(r.actor).unreachable) continue;
      r.confirmed = true;
      r.view = this.viewFor(r);
      this.o.log?.(`node lifecycle: node ${r.name} sent no heartbeat for ${this.graceMs} ms`);
      out.push(r);
    }
    return out;
  }

  /** zone states, their eviction rates, full-disruption mode, and retries of held-back taints */
  pass(): void {
    if (this.stopped) return;
    const confirmed = this.judge();
    const zones = new Map<string, { total: number; notReady: number }>();
    for (const r of this.nodes.values()) {
      // a node still registering (no Ready condition, heartbeats arriving) does not count yet
      if (r.ready === 'None' && !r.view.unreachable) continue;
      const z = zones.get(r.zone) ?? { total: 0, notReady: 0 };
      z.total++;
      if (r.view.unreachable || r.ready !== 'True') z.notReady++;
      zones.set(r.zone, z);
    }
    const now = this.clock.now();
    let allFull = zones.size > 0;
    for (const [zone, z] of zones) {
      const state = zoneState(z.total, z.notReady, this.rules.unhealthyZoneThreshold);
      if (state !== 'FullDisruption') allFull = false;
      const before = this.zoneStates.get(zone);
      if (before !== state) {
        this.zoneStates.set(zone, state);
        if (before !== undefined) this.o.log?.(`node lifecycle: zone "${zone}" is now ${state} (${z.notReady} of ${z.total} node(s) not ready)`);
      }
      this.limiter(zone).setRate(zoneRate(state, z.total, this.rules), now);
    }
    for (const zone of [...this.zoneStates.keys()]) if (!zones.has(zone)) this.zoneStates.delete(zone);
    if (allFull !== this.disrupted) {
      this.disrupted = allFull;
      this.o.log?.(
        allFull
          ? 'node lifecycle: every node is not ready; the control plane is likely cut off: no NoExecute taints are added and its own are removed'
          : 'node lifecycle: some node is ready again; NoExecute taints resume',
      );
      for (const r of this.nodes.values()) void this.reconcile(r);
      return;
    }
    for (const r of confirmed) void this.reconcile(r);
    for (const r of this.nodes.values()) {
      if (!r.held) continue;
      if (!r.token && !this.disrupted) r.token = this.limiter(r.zone).tryTake(now);
      void this.reconcile(r);
    }
  }
}
