// The pod manager's admission step (kubelet's HandlePodAdditions and
// rejectPod, pkg/kubelet/kubelet.go): each pod the node has not seen is
// admitted or rejected before it is first run (admission.ts decides), one pod
// at a time in the order they come — a list's pods sorted by creation time —
// so two pods after the same host port are decided one after the other and
// the first one wins. A rejected pod gets a Warning Event with the handler's
// reason and message once, its status is written once (phase Failed,
// `Pod was rejected: …`), and it is never started; deleted, it is removed from
// the API at once (it holds nothing on the node).

import type { KubeObject } from './api-client.js';
import { type Admission, type AdmissionNode, admitPod, holdsNode, isTerminal, REJECTED_PREFIX, rejectedStatus, wasRejected } from './admission.js';
import { type Clock, rfc3339 } from './clock.js';
import { podRef } from './events/kubelet-events.js';
import { type EventSink, noEvents } from './events/recorder.js';
import type { PodSyncer } from './pod-sync.js';

/** where admission learns about the node (agent.ts) */
export interface AdmissionSource {
  /** the node as last seen */
  node(): AdmissionNode;
  /** the node read again from the API: a refusal for its labels or taints is checked once more against it */
  refresh?(): Promise<AdmissionNode | undefined>;
}

type Rejection = Extract<Admission, { admit: false }>;
/** a decision, and for a rejection whether its status is written and the runtime checked */
type Decision = { admit: true } | (Rejection & { written: boolean; cleaned: boolean });

export interface PodAdmitterOptions {
  source?: AdmissionSource;
  events?: EventSink;
  clock: Clock;
  log: (m: string) => void;
  /** the pod of that uid the agent knows (API or static), undefined once gone */
  pod(uid: string): KubeObject | undefined;
  isStatic(uid: string): boolean;
  /** the pod has been decided: sync it */
  decided(uid: string): void;
  stopped(): boolean;
}

/** the reasons a stale view of the Node may give; the Node is read again before they stand */
const NODE_REASONS = new Set(['NodeAffinity', 'TaintToleration']);

const created = (p: KubeObject): string => p.metadata.creationTimestamp ?? '';

export class PodAdmitter {
  /** by uid, in the order decided (the admitted pods are counted in that order) */
  private readonly decisions = new Map<string, Decision>();
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly o: PodAdmitterOptions) {}

  decision(uid: string): Decision | undefined {
    return this.decisions.get(uid);
  }

  forget(uid: string): void {
    this.decisions.delete(uid);
  }

  /** decides the pods not decided yet, oldest first (a stable sort: equal times keep their order), after those already queued */
  admitInOrder(pods: readonly KubeObject[]): void {
    const batch = [...pods].sort((a, b) => (created(a) < created(b) ? -1 : created(a) > created(b) ? 1 : 0)).map((p) => p.metadata.uid!);
    this.chain = this.chain
      .then(async () => {
        for (const uid of batch) {
          if (this.o.stopped()) return;
          const pod = this.o.pod(uid);
          if (!pod) continue;
          if (!this.decisions.has(uid)) this.decisions.set(uid, await this.decide(uid, pod));
          this.o.decided(uid);
        }
      })
      .catch((e: unknown) => this.o.log(`admission: ${(e as Error).message}`));
  }

  /** the admitted pods that still hold the node, in admission order */
  private admitted(except: string): KubeObject[] {
    const out: KubeObject[] = [];
    for (const [uid, d] of this.decisions) {
      const p = uid === except || !d.admit ? undefined : this.o.pod(uid);
      if (p && holdsNode(p)) out.push(p);
    }
    return out;
  }

  private async decide(uid: string, pod: KubeObject): Promise<Decision> {
    // rejected before (by this agent before a restart): left as it is
    if (wasRejected(pod)) {
      const message = String(pod.status?.message ?? '').slice(REJECTED_PREFIX.length);
      return { admit: false, reason: String(pod.status?.reason ?? ''), message, written: true, cleaned: false };
    }
    // kubelet does not admit a pod already finished, nor one this agent is stopping
    const source = this.o.source;
    if (!source || isTerminal(pod) || pod.metadata.deletionTimestamp) return { admit: true };
    const facts = { static: this.o.isStatic(uid) };
    let d = admitPod(source.node(), this.admitted(uid), pod, facts);
    if (!d.admit && NODE_REASONS.has(d.reason) && source.refresh) {
      const fresh = await source.refresh().catch((e: unknown) => void this.o.log(`admission: reading the node again: ${(e as Error).message}`));
      if (fresh) d = admitPod(fresh, this.admitted(uid), pod, facts);
    }
    if (d.admit) return d;
    this.o.log(`pod ${pod.metadata.namespace ?? 'default'}/${pod.metadata.name} rejected: ${d.reason}: ${d.message}`);
    // kubelet's rejectPod: a Warning with the handler's reason and message
    (this.o.events ?? noEvents).event(podRef(pod), 'Warning', d.reason, d.message);
    return { ...d, written: false, cleaned: false };
  }

  /**
   * a rejected pod's sync: once, anything of it in the runtime is removed (a
   * pod rejected when the agent restarted may have run before); its status
   * is written until the API holds it; deleted, it goes at once
   */
  async settleRejected(pod: KubeObject, d: Decision, io: { syncer: PodSyncer; write(status: Record<string, unknown>): Promise<boolean>; delete(): Promise<void> }): Promise<void> {
    if (d.admit) return;
    const uid = pod.metadata.uid!;
    if (!d.cleaned) {
      await io.syncer.kill(uid, 0, pod);
      await io.syncer.remove(uid);
      d.cleaned = true;
    }
    if (pod.metadata.deletionTimestamp) return io.delete();
    if (!d.written) d.written = await io.write(rejectedStatus(pod, d, rfc3339(this.o.clock.now())));
  }
}
