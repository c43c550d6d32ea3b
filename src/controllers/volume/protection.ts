// The storage object in-use protection controllers (kube-controller-manager's
// `pvc-protection` and `pv-protection`, pkg/controller/volume/pvcprotection
// and pvprotection, kube 1.32), leader only. Each adds its finalizer to every
// object not being deleted (kube's StorageObjectInUseProtection admission
// adds it at creation, src/registry/storage-protection-admission.ts; this
// "add when missing" path covers the plugin turned off) and removes it from an object being
// deleted once nothing uses it:
//   - a claim is in use while a pod scheduled to a node (spec.nodeName) names
//     it in a persistentVolumeClaim volume, whatever the pod's phase (kube's
//     podUsesPVC); the informer's pods, then a live list, are asked;
//   - a volume is in use while its phase is Bound.
// So `kubectl delete pvc` of a claim a pod uses stays Terminating until the
// pod is gone, and a Bound volume until its claim is.

import { type Clock, systemClock } from '../../core/clock.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject, JSONValue } from '../../registry/types.js';
import { ControllerLoop, LoopController, type Informer, type InformerSource } from '../runtime/index.js';
import { CONTROLLER_MANAGER, updateObject } from '../workloads/writes.js';
import { PVC_PROTECTION_FINALIZER, PV_PROTECTION_FINALIZER } from '../../registry/storage-protection-admission.js';

export const PVC_PROTECTION_CONTROLLER = 'pvc-protection';
export const PV_PROTECTION_CONTROLLER = 'pv-protection';
export { PVC_PROTECTION_FINALIZER, PV_PROTECTION_FINALIZER };

type Obj = Record<string, JSONValue>;

interface ProtectionOptions {
  store: InformerSource;
  clock?: Clock;
  log?: (msg: string) => void;
}

const finalizersOf = (o: ApiObject): string[] => (o.metadata?.finalizers ?? []) as string[];
const deleting = (o: ApiObject): boolean => Boolean(o.metadata?.deletionTimestamp);

/** the finalizer's part of a sync: added when missing (not deleting), removed when deleting and unused */
async function protect(store: GenericStore, o: ApiObject, finalizer: string, inUse: () => Promise<boolean>, usedNow: (cur: ApiObject) => boolean = () => false): Promise<void> {
  const has = finalizersOf(o).includes(finalizer);
  if (!deleting(o)) {
    if (has) return;
    await updateObject(store, o, CONTROLLER_MANAGER, (cur) => {
      if (!finalizersOf(cur).includes(finalizer)) cur.metadata!.finalizers = [...finalizersOf(cur), finalizer];
    });
    return;
  }
  if (!has || (await inUse())) return;
  await updateObject(store, o, CONTROLLER_MANAGER, (cur) => {
    if (!usedNow(cur)) cur.metadata!.finalizers = finalizersOf(cur).filter((f) => f !== finalizer);
  });
}

/** the claim names of a pod's persistentVolumeClaim volumes */
export function podClaimNames(pod: ApiObject): string[] {
  const vols = ((pod.spec as Obj | undefined)?.volumes ?? []) as Obj[];
  return vols.map((v) => (v.persistentVolumeClaim as Obj | undefined)?.claimName).filter((n): n is string => typeof n === 'string' && n !== '');
}

/** kube's podUsesPVC: only a scheduled pod counts (the node agent would not start one on a claim being deleted) */
export function podUsesClaim(pod: ApiObject, claimName: string): boolean {
  return Boolean((pod.spec as Obj | undefined)?.nodeName) && podClaimNames(pod).includes(claimName);
}

export class PvcProtectionController extends LoopController {
  protected readonly loop: ControllerLoop;
  private claims: Informer | undefined;
  private pods: Informer | undefined;

  constructor(private readonly o: ProtectionOptions & { claims: () => GenericStore; pods: () => GenericStore }) {
    super();
    const clock = o.clock ?? systemClock;
    this.loop = new ControllerLoop(o.store, { name: PVC_PROTECTION_CONTROLLER, clock, log: o.log, baseDelayMs: 200 });
  }

  start(): void {
    this.stop();
    this.loop.begin((key) => this.sync(key));
    const claim = (c: ApiObject, key: string): void => {
      // kube's needToAddFinalizer || isDeletionCandidate
      if (deleting(c) === finalizersOf(c).includes(PVC_PROTECTION_FINALIZER)) this.loop.enqueue(key);
    };
    this.claims = this.loop.inform(this.o.claims().rangeKeys(''), { add: claim, update: (_old, c, key) => claim(c, key) });
    const pod = (p: ApiObject): void => {
      for (const name of podClaimNames(p)) this.loop.enqueue(`${p.metadata?.namespace ?? ''}/${name}`);
    };
    this.pods = this.loop.inform(this.o.pods().rangeKeys(''), { add: pod, update: (_old, p) => pod(p), delete: pod });
  }

  stop(): void {
    this.loop.end();
    this.claims = this.pods = undefined;
  }

  private async sync(key: string): Promise<void> {
    const claim = this.claims?.get(key);
    if (!claim) return;
    const ns = claim.metadata?.namespace ?? '';
    const name = claim.metadata?.name ?? '';
    await protect(this.o.claims(), claim, PVC_PROTECTION_FINALIZER, async () => {
      if ((this.pods?.inNamespace(ns) ?? []).some((p) => podUsesClaim(p, name))) return true;
      // kube asks the API server too before letting the claim go: the cache may lag a new pod
      return (await this.o.pods().list(ns)).some((p) => podUsesClaim(p, name));
    });
  }
}

export class PvProtectionController extends LoopController {
  protected readonly loop: ControllerLoop;
  private volumes: Informer | undefined;

  constructor(private readonly o: ProtectionOptions & { volumes: () => GenericStore }) {
    super();
    const clock = o.clock ?? systemClock;
    this.loop = new ControllerLoop(o.store, { name: PV_PROTECTION_CONTROLLER, clock, log: o.log, baseDelayMs: 200 });
  }

  start(): void {
    this.stop();
    this.loop.begin((key) => this.sync(key));
    const volume = (v: ApiObject, key: string): void => {
      if (deleting(v) || !finalizersOf(v).includes(PV_PROTECTION_FINALIZER)) this.loop.enqueue(key);
    };
    this.volumes = this.loop.inform(this.o.volumes().rangeKeys(''), { add: volume, update: (_old, v, key) => volume(v, key) });
  }

  stop(): void {
    this.loop.end();
    this.volumes = undefined;
  }

  private async sync(key: string): Promise<void> {
    const pv = this.volumes?.get(key);
    if (!pv) return;
    // kube's isBeingUsed: the volume is Bound (its claim's removal releases it first)
    const bound = (v: ApiObject): boolean => (v.status as Obj | undefined)?.phase === 'Bound';
    await protect(this.o.volumes(), pv, PV_PROTECTION_FINALIZER, () => Promise.resolve(bound(pv)), bound);
  }
}
