// The agent's pods: those bound to this node (`spec.nodeName`), learned by a
// list then a watch of the API (no polling of the API), and the static pods
// of `staticPodPath`. Each pod's work is serialized (one sync at a time per
// uid; a request arriving meanwhile runs once more after it). The runtime is
// relisted every `runtimeRelistPeriod` to notice exits and restart containers.
// Deleted pods are stopped with their grace period, their status written and
// then removed from the API with a zero-grace delete (docs/deletion.md).
// A pod is admitted before it is first run (admission.ts, kubelet's
// canAdmitPod), one at a time in creation order; a rejected pod is never run
// (pod-admitter.ts writes its Failed status).
// The status the agent computed for a pod is the truth for that pod's status
// until the API is known to hold it (kubelet's status manager): an object from
// the API that is older than what the agent knows is not taken in (see take).

import { ApiError, type ApiClient, type KubeObject, type WatchHandle } from './api-client.js';
import { statusPatch, withOthersConditions } from './pod-conditions.js';
import type { Clock } from './clock.js';
import type { EventSink } from './events/recorder.js';
import { type AdmissionSource, PodAdmitter } from './pod-admitter.js';
import type { PodSyncer } from './pod-sync.js';
import { annotations, mirrorOf, readStaticPods } from './static-pods.js';

export interface PodManagerOptions {
  api?: ApiClient;
  syncer: PodSyncer;
  nodeName: string;
  nodeUid: () => string | undefined;
  domain: string;
  staticPodPath: string;
  relistMs: number;
  clock: Clock;
  log: (m: string) => void;
  /** the node as admission sees it; without it every pod is admitted */
  admission?: AdmissionSource;
  /** kubelet's Events (the rejection of a pod) */
  events?: EventSink;
}

/**
 * Whether resourceVersion `a` is newer than `b`: false when equal; undefined when it cannot be told.
 * resourceVersions are opaque to clients in Kubernetes, but orch's are the store's revision (one
 * committed log entry each, docs/architecture.md), decimal integers that grow with every write, as
 * etcd's revisions: this agent, which only ever talks to orch, compares two of them as integers. Any
 * other form is left undecided and the agent falls back on the watch's order (see take).
 */
export function newerVersion(a: string | undefined, b: string | undefined): boolean | undefined {
  if (a === undefined || b === undefined) return undefined;
  if (a === b) return false;
  if (/^\d+$/.test(a) && /^\d+$/.test(b)) return BigInt(a) > BigInt(b);
  return undefined;
}

/** the status the agent computed for an API pod, and the resourceVersion its write gave the pod (none until written) */
interface OwnStatus {
  status: Record<string, unknown>;
  rv?: string;
}

const podPath = (p: KubeObject) => `/api/v1/namespaces/${p.metadata.namespace ?? 'default'}/pods/${p.metadata.name}`;

export class PodManager {
  private readonly apiPods = new Map<string, KubeObject>();
  private readonly staticPods = new Map<string, KubeObject>();
  /** mirror pods in the API by their static pod's hash */
  private readonly mirrors = new Map<string, KubeObject>();
  /** static pod hashes whose mirror the API refused as invalid (422): not posted again, logged once */
  private readonly mirrorsRefused = new Set<string>();
  private readonly lastWritten = new Map<string, string>();
  /** by uid, for API pods: the status the agent computed, kept as the pod's until the API is seen holding it */
  private readonly ownStatus = new Map<string, OwnStatus>();
  /** by uid, the newest resourceVersion the list or the watch brought (a write's response not counted) */
  private readonly apiSeen = new Map<string, string>();
  private readonly running = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  private watch?: WatchHandle;
  private relistTimer: unknown;
  private stopped = false;
  private listed = false;
  private readonly admitter: PodAdmitter;

  constructor(private readonly o: PodManagerOptions) {
    this.admitter = new PodAdmitter({
      source: o.admission,
      events: o.events,
      clock: o.clock,
      log: o.log,
      pod: (uid) => this.apiPods.get(uid) ?? this.staticPods.get(uid),
      isStatic: (uid) => this.staticPods.has(uid),
      decided: (uid) => this.schedule(uid),
      stopped: () => this.stopped,
    });
  }

  start(): void {
    if (this.o.api) void this.watchLoop(this.o.api);
    void this.relist();
  }

  stop(): void {
    this.stopped = true;
    this.watch?.stop();
    this.o.clock.clearTimeout(this.relistTimer);
  }

  /** the pods this agent runs (API pods and static pods), for the checkpoint endpoint */
  knownPods(): KubeObject[] {
    return [...this.apiPods.values(), ...this.staticPods.values()];
  }

  /** settle every pod sync in progress (shutdown) */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.running.values()]);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((r) => this.o.clock.setTimeout(() => r(), ms));
  }

  private isMirror(p: KubeObject): boolean {
    return !!p.metadata.annotations?.[annotations(this.o.domain).mirror];
  }

  private async watchLoop(api: ApiClient): Promise<void> {
    const selector = `fieldSelector=${encodeURIComponent(`spec.nodeName=${this.o.nodeName}`)}`;
    let failures = 0;
    while (!this.stopped) {
      try {
        const list = await api.get<{ metadata: { resourceVersion: string }; items: KubeObject[] }>(`/api/v1/pods?${selector}`);
        const seen = new Set<string>();
        this.mirrors.clear();
        const listed: KubeObject[] = [];
        for (const p of list.items) {
          p.apiVersion = 'v1';
          p.kind = 'Pod';
          if (this.isMirror(p)) this.mirrors.set(p.metadata.annotations![annotations(this.o.domain).mirror]!, p);
          else {
            seen.add(p.metadata.uid!);
            this.take(p, 'api');
            listed.push(this.apiPods.get(p.metadata.uid!)!);
          }
        }
        for (const uid of [...this.apiPods.keys()]) if (!seen.has(uid)) this.forget(uid);
        // kubelet's HandlePodAdditions: the pods of one batch are admitted in creation order
        this.admitter.admitInOrder(listed);
        this.listed = true;
        failures = 0;
        let rv = list.metadata.resourceVersion;
        let gone = false;
        while (!this.stopped && !gone) {
          this.watch = api.watch(`/api/v1/pods?${selector}&watch=1&allowWatchBookmarks=true&resourceVersion=${rv}`, (ev) => {
            if (ev.type === 'ERROR') {
              gone = true; // 410 Gone or another error: list again
              return;
            }
            rv = ev.object.metadata.resourceVersion ?? rv;
            if (ev.type !== 'BOOKMARK') this.onEvent(ev.type, ev.object);
          });
          await this.watch.done;
          if (!this.stopped && !gone) await this.sleep(500);
        }
      } catch (e) {
        failures += 1;
        const delay = Math.min(7_000, 200 * 2 ** (failures - 1));
        this.o.log(`pods: list failed, retrying in ${delay} ms: ${(e as Error).message}`);
        await this.sleep(delay);
      }
    }
  }

  private onEvent(type: 'ADDED' | 'MODIFIED' | 'DELETED', p: KubeObject): void {
    p.apiVersion = 'v1';
    p.kind = 'Pod';
    if (this.isMirror(p)) {
      const hash = p.metadata.annotations![annotations(this.o.domain).mirror]!;
      if (type === 'DELETED') this.mirrors.delete(hash);
      else this.mirrors.set(hash, p);
      return;
    }
    const uid = p.metadata.uid!;
    if (type === 'DELETED') this.forget(uid);
    else {
      // an event older than the pod the agent knows (its own status write's response came first) is no news
      if (!this.take(p, 'api')) return;
      // a pod seen before goes straight to its sync; a new one is admitted first
      if (this.admitter.decision(uid)) this.schedule(uid);
      else this.admitter.admitInOrder([this.apiPods.get(uid)!]);
    }
  }

  /**
   * Takes in an API pod, from the list or the watch ('api') or the response of the agent's status write
   * ('write'): the agent's copy becomes it when it is newer than the copy, else it is left (false). Its
   * status is the agent's own as long as the API is not seen holding that — kubelet's status manager:
   * generateAPIPodStatus starts from the status manager's cached status (GetPodStatus), the API's
   * pod.Status only when there is none, and pods from the API update spec and metadata. So a watch
   * event delivered after the agent wrote Succeeded, with the Running of an earlier revision, neither
   * rolls the status back nor reads as a new spec. The API is seen holding the agent's status once the
   * list or the watch brings the pod at the write's resourceVersion or later: the watch is ordered,
   * so with resourceVersions that cannot be compared (newerVersion) its event of that very revision
   * still tells it, and until then the agent's status stands. A write's response is not such proof
   * (it may come before the watch's older events).
   */
  private take(p: KubeObject, from: 'api' | 'write'): boolean {
    const uid = p.metadata.uid!;
    const cur = this.apiPods.get(uid);
    if (from === 'write' && !cur) return false; // deleted while the status was written
    const rv = p.metadata.resourceVersion;
    if (from === 'api' && rv !== undefined) {
      const seen = this.apiSeen.get(uid);
      if (seen === undefined || (newerVersion(rv, seen) ?? true)) this.apiSeen.set(uid, rv);
    }
    this.settleOwnStatus(uid);
    // undecided: an event follows what the watch brought before it; a write's response is not placed
    const newer = cur ? (newerVersion(rv, cur.metadata.resourceVersion) ?? from === 'api') : true;
    if (!newer) return false;
    // the agent's own conditions from its status, anyone else's (a readiness gate's) from the newer pod
    const own = this.ownStatus.get(uid)?.status;
    const status = own ? withOthersConditions(own, p.status) : (p.status ?? cur?.status);
    this.apiPods.set(uid, status === p.status ? p : { ...p, status });
    return true;
  }

  /** the agent's status stops standing for the API's once the list or the watch brought the pod at its write's resourceVersion or later */
  private settleOwnStatus(uid: string): void {
    const own = this.ownStatus.get(uid);
    const seen = this.apiSeen.get(uid);
    if (own?.rv !== undefined && seen !== undefined && (seen === own.rv || newerVersion(seen, own.rv))) this.ownStatus.delete(uid);
  }

  private forget(uid: string): void {
    this.apiPods.delete(uid);
    this.lastWritten.delete(uid);
    this.ownStatus.delete(uid);
    this.apiSeen.delete(uid);
    this.admitter.forget(uid);
    this.schedule(uid);
  }

  schedule(uid: string): void {
    if (this.stopped) return;
    if (this.running.has(uid)) {
      this.again.add(uid);
      return;
    }
    const run = this.syncPod(uid)
      .catch((e: unknown) => this.o.log(`pod ${uid}: ${(e as Error).message}`))
      .finally(() => {
        this.running.delete(uid);
        if (this.again.delete(uid)) this.schedule(uid);
      });
    this.running.set(uid, run);
  }

  private async syncPod(uid: string): Promise<void> {
    const { syncer } = this.o;
    const pod = this.apiPods.get(uid) ?? this.staticPods.get(uid);
    if (!pod) {
      await syncer.kill(uid, 0);
      await syncer.remove(uid);
      return;
    }
    const decision = this.admitter.decision(uid);
    if (!decision) return; // the admitter schedules the pod once it has decided
    if (!decision.admit) return this.admitter.settleRejected(pod, decision, { syncer, write: (status) => this.writeStatus(pod, status), delete: () => this.deleteFromApi(pod) });
    if (pod.metadata.deletionTimestamp) return this.terminate(pod);
    await syncer.sync(pod);
    await this.writeStatus(pod, await syncer.status(pod));
  }

  private async terminate(pod: KubeObject): Promise<void> {
    const uid = pod.metadata.uid!;
    const spec = pod.spec as { terminationGracePeriodSeconds?: number };
    const grace = pod.metadata.deletionGracePeriodSeconds ?? spec.terminationGracePeriodSeconds ?? 30;
    // kubelet's status manager writes while the containers stop: a readiness probe that fails during the grace
    // period (its files removed on SIGTERM) shows as Ready=False before the pod is gone (kube's e2e "should mark
    // readiness on pods to false while pod is in progress of terminating")
    let stopped = false;
    const killing = this.o.syncer.kill(uid, grace, pod).finally(() => (stopped = true));
    while (!stopped) {
      await Promise.race([killing, this.sleep(this.o.relistMs)]);
      if (!stopped) await this.writeStatus(pod, await this.o.syncer.status(pod));
    }
    await killing;
    await this.writeStatus(pod, await this.o.syncer.status(pod));
    await this.deleteFromApi(pod);
    await this.o.syncer.remove(uid);
  }

  /** the last step of a pod's deletion: the zero-grace delete, on this uid only */
  private async deleteFromApi(pod: KubeObject): Promise<void> {
    if (!this.o.api) return;
    try {
      await this.o.api.delete(podPath(pod), { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid } });
    } catch (e) {
      if (!(e instanceof ApiError && (e.code === 404 || e.code === 409))) throw e;
    }
  }

  /** writes the status when it changed; true once the API (or the mirror pod) holds it */
  private async writeStatus(pod: KubeObject, status: Record<string, unknown>): Promise<boolean> {
    pod.status = status;
    const uid = pod.metadata.uid!;
    const text = JSON.stringify(status);
    if (this.lastWritten.get(uid) === text) return true;
    const cur = this.apiPods.get(uid);
    const own: OwnStatus | undefined = cur ? { status } : undefined;
    if (cur && own) {
      // what the agent computed is the pod's status from now on, written or not (kubelet's SetPodStatus), in
      // the copy the next sync starts from even if an event replaced it meanwhile
      this.ownStatus.set(uid, own);
      if (cur !== pod) this.apiPods.set(uid, { ...cur, status });
    }
    if (!this.o.api) return false;
    let target: KubeObject | undefined = pod;
    if (this.staticPods.has(uid)) target = this.mirrors.get(pod.metadata.annotations?.[annotations(this.o.domain).hash] ?? '');
    if (!target) return false;
    try {
      // strategic: the conditions merge by type, so the agent's write keeps the ones others set (pod-conditions.ts)
      const written = await this.o.api.strategicPatch<KubeObject>(`${podPath(target)}/status`, { status: statusPatch(status) });
      this.lastWritten.set(uid, text);
      if (own && this.ownStatus.get(uid) === own && written?.metadata?.uid === uid) {
        own.rv = written.metadata.resourceVersion;
        written.apiVersion = 'v1';
        written.kind = 'Pod';
        // the response may bring news of the pod (a deletion) whose events, older, are then passed over
        if (this.take(written, 'write')) this.schedule(uid);
      }
      return true;
    } catch (e) {
      if (e instanceof ApiError && e.code === 404) return false;
      throw e;
    }
  }

  /** runtime relist + static pod scan + mirror pods + orphans, every relistMs */
  private async relist(): Promise<void> {
    if (this.stopped) return;
    try {
      await this.scanStatic();
      if (this.o.api && this.listed) await this.syncMirrors(this.o.api);
      for (const uid of [...this.apiPods.keys(), ...this.staticPods.keys()]) this.schedule(uid);
      if (this.listed || !this.o.api) {
        const inRuntime = await this.o.syncer.runtimePods();
        for (const uid of inRuntime) {
          if (!this.apiPods.has(uid) && !this.staticPods.has(uid)) this.schedule(uid);
        }
        // volume directories of pods gone while the agent was down (docs/nodeagent.md "Volumes")
        await this.o.syncer.volumes.removeOrphans((uid) => this.apiPods.has(uid) || this.staticPods.has(uid) || inRuntime.has(uid) || this.running.has(uid));
      }
    } catch (e) {
      this.o.log(`relist: ${(e as Error).message}`);
    }
    if (!this.stopped) this.relistTimer = this.o.clock.setTimeout(() => void this.relist(), this.o.relistMs);
  }

  private async scanStatic(): Promise<void> {
    const pods = await readStaticPods(this.o.staticPodPath, this.o.nodeName, this.o.domain, this.o.log);
    const now = new Set(pods.map((p) => p.metadata.uid!));
    const added = pods.filter((p) => !this.staticPods.has(p.metadata.uid!));
    for (const p of added) this.staticPods.set(p.metadata.uid!, p);
    this.admitter.admitInOrder(added);
    for (const uid of [...this.staticPods.keys()]) {
      if (!now.has(uid)) {
        this.staticPods.delete(uid);
        this.admitter.forget(uid);
        this.schedule(uid);
      }
    }
  }

  private async syncMirrors(api: ApiClient): Promise<void> {
    const nodeUid = this.o.nodeUid();
    if (!nodeUid) return;
    const a = annotations(this.o.domain);
    const wanted = new Map([...this.staticPods.values()].map((p) => [p.metadata.annotations![a.hash]!, p]));
    for (const [hash, m] of this.mirrors) {
      if (!wanted.has(hash) || m.metadata.deletionTimestamp) {
        // a mirror of a removed manifest, or deleted by a user: remove it (it is recreated below if wanted)
        await api.delete(podPath(m), { gracePeriodSeconds: 0, preconditions: { uid: m.metadata.uid } }).catch(() => {});
        this.mirrors.delete(hash);
      }
    }
    for (const hash of this.mirrorsRefused) if (!wanted.has(hash)) this.mirrorsRefused.delete(hash);
    for (const [hash, p] of wanted) {
      if (this.mirrors.has(hash) || this.mirrorsRefused.has(hash)) continue;
      try {
        const created = await api.create<KubeObject>(`/api/v1/namespaces/${p.metadata.namespace}/pods`, mirrorOf(p, this.o.domain, { name: this.o.nodeName, uid: nodeUid }));
        this.mirrors.set(hash, created);
        this.lastWritten.delete(p.metadata.uid!);
      } catch (e) {
        // an invalid mirror stays invalid until its manifest changes (a new hash): no retry every relist
        if (e instanceof ApiError && e.code === 422) this.mirrorsRefused.add(hash);
        if (!(e instanceof ApiError && e.code === 409)) this.o.log(`mirror pod ${p.metadata.name}: ${(e as Error).message}${e instanceof ApiError && e.code === 422 ? ' (not retried until the manifest changes)' : ''}`);
      }
    }
  }
}
