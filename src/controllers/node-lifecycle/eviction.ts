// Taint-based eviction (spec 002 §3 third row; issue 13 item 2), leader only:
// a pod bound to a node with a NoExecute taint it does not tolerate is
// deleted (gracefully: a pod bound to a node is marked Terminating with its
// grace period, docs/deletion.md); a toleration with `tolerationSeconds`
// delays that until so long after the taint's `timeAdded`; a toleration
// without it lets the pod stay. kube's NoExecuteTaintManager, written here
// from its documented behaviour. The controller reads taints only: adding
// them (and rate-limiting that) is the node lifecycle controller's job.

import { StatusError } from '../../core/errors.js';
import { type GenericStore, decodeObject } from '../../registry/generic-store.js';
import type { ApiObject } from '../../registry/types.js';
import { type Clock, type TimerHandle, systemClock } from '../../core/clock.js';
import type { AppliedWrite, KeyValue, RevisionedStore } from '../../store/types.js';
import type { EventRecorder } from '../event-recorder.js';
import { type Taint, type Toleration, evictionDue } from './taints.js';

export interface TaintEvictionOptions {
  store: RevisionedStore;
  nodes: () => GenericStore;
  pods: () => GenericStore;
  clock?: Clock;
  events?: EventRecorder;
  log?: (msg: string) => void;
  /** how long a failed delete waits before it is tried again (default 1 s) */
  retryMs?: number;
}

interface PodRec {
  namespace: string;
  name: string;
  uid: string;
  node: string;
  tolerations: Toleration[];
}

export const TAINT_EVICTION_MANAGER = 'taint-eviction-controller';

export class TaintEvictionController {
  /** NoExecute taints per node */
  private readonly taints = new Map<string, Taint[]>();
  /** when a taint without timeAdded was first seen: node|key|effect → ms */
  private readonly firstSeen = new Map<string, number>();
  private readonly pods = new Map<string, PodRec>();
  private readonly byNode = new Map<string, Set<string>>();
  private readonly timers = new Map<string, TimerHandle>();
  private readonly clock: Clock;
  private unsubscribe?: () => void;
  private stopped = true;
  /** pods deleted (tests and metrics) */
  evicted = 0;

  constructor(private readonly o: TaintEvictionOptions) {
    this.clock = o.clock ?? systemClock;
  }

  start(): void {
    this.stop();
    this.stopped = false;
    const nodeRange = this.o.nodes().rangeKeys('');
    const podRange = this.o.pods().rangeKeys('');
    const inRange = (k: string, r: { key: string; end: string }) => k >= r.key && k < r.end;
    this.unsubscribe = this.o.store.onApplied((w: AppliedWrite) => {
      for (const ev of w.events) {
        const k = ev.kv.key;
        if (inRange(k, podRange)) {
          if (ev.type === 'put') this.onPod(ev.kv);
          else this.dropPod(k.slice(podRange.key.length));
        } else if (inRange(k, nodeRange)) {
          const name = k.slice(nodeRange.key.length);
          this.onNode(name, ev.type === 'put' ? ev.kv : undefined);
        }
      }
    });
    for (const kv of this.o.store.range(podRange).kvs) this.onPod(kv, false);
    for (const kv of this.o.store.range(nodeRange).kvs) this.onNode(kv.key.slice(nodeRange.key.length), kv);
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    for (const t of this.timers.values()) t.cancel();
    this.timers.clear();
    this.taints.clear();
    this.firstSeen.clear();
    this.pods.clear();
    this.byNode.clear();
  }

  /** pods with an eviction scheduled (tests) */
  get scheduled(): number {
    return this.timers.size;
  }

  private onNode(name: string, kv: KeyValue | undefined): void {
    let taints: Taint[] = [];
    if (kv) {
      try {
        const t = (decodeObject(kv).spec as { taints?: unknown } | undefined)?.taints;
        if (Array.isArray(t)) taints = (t as Taint[]).filter((x) => x && x.effect === 'NoExecute');
      } catch {
        return;
      }
    }
    const before = this.taints.get(name) ?? [];
    const same = before.length === taints.length && before.every((t, i) => t.key === taints[i]!.key && t.value === taints[i]!.value && t.timeAdded === taints[i]!.timeAdded);
    if (same) return;
    if (taints.length === 0) this.taints.delete(name);
    else this.taints.set(name, taints);
    const now = this.clock.now();
    for (const t of taints) {
      const k = `${name}|${t.key}|${t.effect}`;
      if (!t.timeAdded && !this.firstSeen.has(k)) this.firstSeen.set(k, now);
    }
    for (const k of [...this.firstSeen.keys()]) if (k.startsWith(`${name}|`) && !taints.some((t) => k === `${name}|${t.key}|${t.effect}`)) this.firstSeen.delete(k);
    for (const key of this.byNode.get(name) ?? []) this.process(key);
  }

  private onPod(kv: KeyValue, process = true): void {
    let pod: ApiObject;
    try {
      pod = decodeObject(kv);
    } catch {
      return;
    }
    const namespace = pod.metadata?.namespace ?? '';
    const name = pod.metadata?.name ?? '';
    const key = `${namespace}/${name}`;
    const spec = (pod.spec ?? {}) as { nodeName?: string; tolerations?: Toleration[] };
    // a pod being deleted or not bound is none of this controller's business
    if (!spec.nodeName || pod.metadata?.deletionTimestamp) {
      this.dropPod(key);
      return;
    }
    const prev = this.pods.get(key);
    if (prev && prev.node !== spec.nodeName) this.byNode.get(prev.node)?.delete(key);
    this.pods.set(key, { namespace, name, uid: pod.metadata?.uid ?? '', node: spec.nodeName, tolerations: Array.isArray(spec.tolerations) ? spec.tolerations : [] });
    let set = this.byNode.get(spec.nodeName);
    if (!set) this.byNode.set(spec.nodeName, (set = new Set()));
    set.add(key);
    if (process) this.process(key);
  }

  private dropPod(key: string): void {
    const p = this.pods.get(key);
    if (!p) return;
    this.pods.delete(key);
    const set = this.byNode.get(p.node);
    set?.delete(key);
    if (set?.size === 0) this.byNode.delete(p.node);
    this.cancel(key);
  }

  private cancel(key: string): void {
    this.timers.get(key)?.cancel();
    this.timers.delete(key);
  }

  private process(key: string): void {
    if (this.stopped) return;
    const p = this.pods.get(key);
    if (!p) return;
    const taints = this.taints.get(p.node) ?? [];
    const due = taints.length === 0 ? undefined : evictionDue(taints, p.tolerations, (t) => (t.timeAdded ? Date.parse(t.timeAdded) : (this.firstSeen.get(`${p.node}|${t.key}|${t.effect}`) ?? this.clock.now())));
    const hadTimer = this.timers.has(key);
    this.cancel(key);
    if (due === undefined) {
      if (hadTimer) void this.o.events?.event({ apiVersion: 'v1', kind: 'Pod', namespace: p.namespace, name: p.name, uid: p.uid }, 'Normal', 'TaintManagerEviction', `Cancelling deletion of Pod ${key}`);
      return;
    }
    const wait = due - this.clock.now();
    if (wait <= 0) {
      void this.evict(p);
      return;
    }
    this.timers.set(key, this.clock.setTimeout(() => {
      this.timers.delete(key);
      this.process(key);
    }, wait));
  }

  private async evict(p: PodRec): Promise<void> {
    const key = `${p.namespace}/${p.name}`;
    try {
      await this.o.pods().delete(p.namespace, p.name, { dryRun: false, manager: TAINT_EVICTION_MANAGER, preconditions: { uid: p.uid } });
      this.evicted++;
      this.o.log?.(`taint eviction: deleting pod ${key} from node ${p.node}`);
      void this.o.events?.event({ apiVersion: 'v1', kind: 'Pod', namespace: p.namespace, name: p.name, uid: p.uid }, 'Normal', 'TaintManagerEviction', `Marking for deletion Pod ${key}`);
    } catch (e) {
      if (e instanceof StatusError && (e.code === 404 || e.code === 409)) return;
      this.o.log?.(`taint eviction: pod ${key}: ${(e as Error).message}`);
      if (this.stopped || this.pods.get(key) !== p) return;
      this.timers.set(key, this.clock.setTimeout(() => {
        this.timers.delete(key);
        this.process(key);
      }, this.o.retryMs ?? 1000));
    }
  }
}
