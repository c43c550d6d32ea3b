// The persistent volume controller (kube-controller-manager's
// `persistentvolume-binder`, pkg/controller/volume/persistentvolume
// pv_controller.go, kube 1.32), leader only, static binding: orch has no
// volume plugins and no provisioner. Queue keys `claim:<ns>/<name>` and
// `volume:<name>`, one worker (as kube's claim and volume workers, a claim and
// a volume are never decided at once against each other's stale view).
//
// syncClaim: an unbound claim (no bind-completed annotation) is bound to the
// volume pv-match.ts picks, or to the one it names; without one it stays
// Pending with kube's event. A bound claim whose volume went is Lost.
// syncVolume: a volume without claimRef is Available; one whose claim is gone
// is Released and its reclaim policy runs (Retain: nothing; Delete: the object
// is deleted, there is no plugin to delete the storage; Recycle: Failed, no
// recycler). Writes in kube's order: pv-writes.ts.
//
// kube resyncs every claim and volume every 15 s; here a new or freed volume
// and a StorageClass change enqueue the unbound claims instead.

import { STORAGE_DEFAULT_ANNOTATIONS, defaultClassOf } from '../../registry/default-class-admission.js';
import { type Clock, systemClock } from '../../core/clock.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject, JSONValue } from '../../registry/types.js';
import { StatusError } from '../../core/errors.js';
import type { EventRecorder, InvolvedObject } from '../event-recorder.js';
import { ControllerLoop, LoopController, type Informer, type InformerSource } from '../runtime/index.js';
import {
  ANN_BETA_STORAGE_CLASS, ANN_BETA_STORAGE_PROVISIONER, ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_DEFAULT_CLASS, ANN_SELECTED_NODE,
  ANN_STORAGE_PROVISIONER, claimClass, claimRefOf, findBestMatch, hasAnnotation, isBoundToClaim, volumeMismatch, volumeModeOf,
} from './pv-match.js';
import { PvWriter } from './pv-writes.js';

export const PERSISTENTVOLUME_BINDER_CONTROLLER = 'persistentvolume-binder';
/** pv.kubernetes.io/provisioned-by: a volume a provisioner made for its claim */
const ANN_DYNAMICALLY_PROVISIONED = 'pv.kubernetes.io/provisioned-by';

type Obj = Record<string, JSONValue>;

export interface PvControllerOptions {
  store: InformerSource;
  volumes: () => GenericStore;
  claims: () => GenericStore;
  /** storage.<domain>/v1 StorageClasses, when served */
  classes?: () => GenericStore;
  /** pods, for kube's "waiting for pod X to be scheduled" */
  pods?: () => GenericStore;
  clock?: Clock;
  events?: EventRecorder;
  log?: (msg: string) => void;
}

const CLAIM = 'claim:';
const VOLUME = 'volume:';
const CLAIM_REF_INDEX = 'claimRef';
const nameOf = (o: ApiObject): string => o.metadata?.name ?? '';
const keyOf = (o: ApiObject): string => `${o.metadata?.namespace ?? ''}/${nameOf(o)}`;
const phaseOf = (o: ApiObject): string | undefined => (o.status as Obj | undefined)?.phase as string | undefined;
const specOf = (o: ApiObject): Obj => (o.spec ?? {}) as Obj;

export class PersistentVolumeController extends LoopController {
  protected readonly loop: ControllerLoop;
  private readonly clock: Clock;
  private readonly w: PvWriter;
  private volumes: Informer | undefined;
  private claims: Informer | undefined;
  private classes: Informer | undefined;
  private pods: Informer | undefined;

  constructor(private readonly o: PvControllerOptions) {
    super();
    this.clock = o.clock ?? systemClock;
    this.loop = new ControllerLoop(o.store, { name: PERSISTENTVOLUME_BINDER_CONTROLLER, clock: this.clock, log: o.log, baseDelayMs: 200 });
    this.w = new PvWriter(o.volumes, o.claims, this.clock);
  }

  start(): void {
    this.stop();
    this.loop.begin((key) => this.sync(key));
    const volume = (pv: ApiObject): void => {
      this.loop.enqueue(VOLUME + nameOf(pv));
      const ref = claimRefOf(pv);
      if (ref?.name) this.loop.enqueue(`${CLAIM}${ref.namespace ?? ''}/${ref.name}`);
      else this.enqueueUnbound();
    };
    this.volumes = this.loop.inform(this.o.volumes().rangeKeys(''), {
      add: volume,
      update: (_old, pv) => volume(pv),
      delete: (pv) => {
        const ref = claimRefOf(pv);
        if (ref?.name) this.loop.enqueue(`${CLAIM}${ref.namespace ?? ''}/${ref.name}`);
      },
    }, { [CLAIM_REF_INDEX]: (pv) => (claimRefOf(pv)?.name ? [`${claimRefOf(pv)!.namespace ?? ''}/${claimRefOf(pv)!.name!}`] : []) });
    this.claims = this.loop.inform(this.o.claims().rangeKeys(''), {
      add: (c, key) => this.loop.enqueue(CLAIM + key),
      update: (_old, c, key) => this.loop.enqueue(CLAIM + key),
      // kube's deleteClaim: the volume is looked at (Released, reclaimed)
      delete: (c, key) => {
        const name = specOf(c).volumeName;
        if (typeof name === 'string' && name) this.loop.enqueue(VOLUME + name);
        for (const pv of this.volumes?.byIndex(CLAIM_REF_INDEX, key) ?? []) this.loop.enqueue(VOLUME + nameOf(pv));
      },
    });
    if (this.o.classes) {
      const any = (): void => this.enqueueUnbound();
      this.classes = this.loop.inform(this.o.classes().rangeKeys(''), { add: any, update: any, delete: any });
    }
    if (this.o.pods) this.pods = this.loop.inform(this.o.pods().rangeKeys(''));
  }

  stop(): void {
    this.loop.end();
    this.volumes = this.claims = this.classes = this.pods = undefined;
  }

  private enqueueUnbound(): void {
    for (const key of this.claims?.keys() ?? []) {
      const c = this.claims!.get(key);
      if (c && !hasAnnotation(c, ANN_BIND_COMPLETED)) this.loop.enqueue(CLAIM + key);
    }
  }

  private event(o: ApiObject, kind: string, type: 'Normal' | 'Warning', reason: string, message: string): void {
    const ref: InvolvedObject = { apiVersion: 'v1', kind, name: nameOf(o), uid: o.metadata?.uid ?? '', ...(o.metadata?.namespace ? { namespace: o.metadata.namespace } : {}) };
    void this.o.events?.event(ref, type, reason, message);
  }

  private async sync(key: string): Promise<void> {
    if (key.startsWith(CLAIM)) {
      const claim = this.claims?.get(key.slice(CLAIM.length));
      if (claim) await (hasAnnotation(claim, ANN_BIND_COMPLETED) ? this.syncBoundClaim(claim) : this.syncUnboundClaim(claim));
    } else if (key.startsWith(VOLUME)) {
      const pv = this.volumes?.get(key.slice(VOLUME.length));
      if (pv) await this.syncVolume(pv);
    }
  }

  /** bind: the volume's claimRef, its phase, the claim's volumeName and annotations, its status — kube's order */
  private async bind(pv: ApiObject, claim: ApiObject): Promise<void> {
    pv = await this.w.bindVolume(pv, claim);
    pv = await this.w.volumePhase(pv, 'Bound');
    claim = await this.w.bindClaim(claim, pv);
    await this.w.claimStatus(claim, 'Bound', pv);
  }

  private class(name: string): ApiObject | undefined {
    return name ? this.classes?.get(name) : undefined;
  }

  private async syncUnboundClaim(claim: ApiObject): Promise<void> {
    const volumeName = specOf(claim).volumeName;
    if (typeof volumeName !== 'string' || volumeName === '') {
      // IsDelayBindingMode: the claim's class waits for the first consumer (a missing class does not)
      const delay = (this.class(claimClass(claim))?.volumeBindingMode ?? 'Immediate') === 'WaitForFirstConsumer';
      const pv = findBestMatch(claim, this.volumes?.list() ?? [], delay);
      if (pv) return this.bind(pv, claim);
      if (await this.assignDefaultClass(claim)) return;
      if (delay && !hasAnnotation(claim, ANN_SELECTED_NODE)) {
        this.waitingForConsumer(claim);
      } else if (claimClass(claim) !== '') {
        return this.provision(claim);
      } else {
        this.event(claim, 'PersistentVolumeClaim', 'Normal', 'FailedBinding', 'no persistent volumes available for this claim and no storage class is set');
      }
      await this.w.claimStatus(claim, 'Pending', undefined);
      return;
    }
    const pv = this.volumes?.get(volumeName);
    if (!pv) {
      // the volume it asks for does not exist (yet): Pending, looked at again when it comes
      await this.w.claimStatus(claim, 'Pending', undefined);
      return;
    }
    if (!claimRefOf(pv)) {
      const why = volumeMismatch(pv, claim);
      if (why === undefined) return this.bind(pv, claim);
      this.event(claim, 'PersistentVolumeClaim', 'Warning', 'VolumeMismatch', `Cannot bind to requested volume "${volumeName}": ${why}`);
      await this.w.claimStatus(claim, 'Pending', undefined);
      return;
    }
    if (isBoundToClaim(pv, claim)) return this.bind(pv, claim);
    this.event(claim, 'PersistentVolumeClaim', 'Warning', 'FailedBinding', `volume "${volumeName}" already bound to a different claim.`);
    if (hasAnnotation(claim, ANN_BOUND_BY_CONTROLLER)) {
      // kube: only a removed bind-completed annotation gets here
      throw new Error(`invalid binding of claim "${keyOf(claim)}" to volume "${volumeName}": volume already claimed by "${claimRefOf(pv)?.namespace ?? ''}/${claimRefOf(pv)?.name ?? ''}"`);
    }
    await this.w.claimStatus(claim, 'Pending', undefined);
  }

  /** emitEventForUnboundDelayBindingClaim */
  private waitingForConsumer(claim: ApiObject): void {
    const waiting = (this.pods?.inNamespace(claim.metadata?.namespace ?? '') ?? []).filter((p) => {
      const ps = (p.spec ?? {}) as Obj;
      const phase = phaseOf(p);
      if (phase === 'Succeeded' || phase === 'Failed' || ps.nodeName) return false;
      return ((ps.volumes ?? []) as Obj[]).some((v) => (v.persistentVolumeClaim as Obj | undefined)?.claimName === nameOf(claim));
    }).map(nameOf);
    if (waiting.length === 0) {
      this.event(claim, 'PersistentVolumeClaim', 'Normal', 'WaitForFirstConsumer', 'waiting for first consumer to be created before binding');
    } else {
      const msg = waiting.length > 1 ? `waiting for pods ${waiting.join(',')} to be scheduled` : `waiting for pod ${waiting[0]!} to be scheduled`;
      this.event(claim, 'PersistentVolumeClaim', 'Normal', 'WaitForPodScheduled', msg);
    }
  }

  /**
   * assignDefaultStorageClass (retroactive default class, GA in kube 1.28): a
   * claim with no class at all (not even "") that found no volume gets the
   * default class; true when it was written (the update enqueues it again)
   */
  private async assignDefaultClass(claim: ApiObject): Promise<boolean> {
    if (hasAnnotation(claim, ANN_BETA_STORAGE_CLASS) || specOf(claim).storageClassName != null) return false;
    // GetDefaultClass, as the DefaultStorageClass admission plugin picks it
    const def = defaultClassOf(this.classes?.list() ?? [], STORAGE_DEFAULT_ANNOTATIONS);
    if (!def) return false;
    await this.w.updateClaim(claim, (next) => {
      (next.spec as Obj).storageClassName = nameOf(def);
    });
    return true;
  }

  /**
   * provisionClaim with no volume plugin: a class that is missing, or names an
   * in-tree (`kubernetes.io/…`) provisioner, fails as kube's does when the
   * plugin is not there; any other provisioner is external: the claim gets
   * the provisioner annotations and waits (nothing here provisions)
   */
  private async provision(claim: ApiObject): Promise<void> {
    const name = claimClass(claim);
    const cls = this.class(name);
    if (!cls) {
      this.event(claim, 'PersistentVolumeClaim', 'Warning', 'ProvisioningFailed', `storageclass.storage.k8s.io "${name}" not found`);
      return;
    }
    const provisioner = typeof cls.provisioner === 'string' ? cls.provisioner : '';
    if (provisioner.startsWith('kubernetes.io/')) {
      this.event(claim, 'PersistentVolumeClaim', 'Warning', 'ProvisioningFailed', `no volume plugin matched name: ${provisioner}`);
      return;
    }
    const ann = (claim.metadata?.annotations ?? {}) as Record<string, string>;
    if (ann[ANN_STORAGE_PROVISIONER] !== provisioner || ann[ANN_BETA_STORAGE_PROVISIONER] !== provisioner) {
      claim = await this.w.updateClaim(claim, (next) => {
        next.metadata!.annotations = { ...(next.metadata!.annotations ?? {}), [ANN_STORAGE_PROVISIONER]: provisioner, [ANN_BETA_STORAGE_PROVISIONER]: provisioner };
      });
    }
    this.event(claim, 'PersistentVolumeClaim', 'Normal', 'ExternalProvisioning',
      `Waiting for a volume to be created either by the external provisioner '${provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`);
  }

  private async syncBoundClaim(claim: ApiObject): Promise<void> {
    const volumeName = specOf(claim).volumeName;
    const lost = async (reason: string, message: string): Promise<void> => {
      if (phaseOf(claim) === 'Lost') return;
      await this.w.claimStatus(claim, 'Lost', undefined);
      this.event(claim, 'PersistentVolumeClaim', 'Warning', reason, message);
    };
    if (typeof volumeName !== 'string' || volumeName === '') return lost('ClaimLost', 'Bound claim has lost reference to PersistentVolume. Data on the volume is lost!');
    const pv = this.volumes?.get(volumeName);
    if (!pv) return lost('ClaimLost', 'Bound claim has lost its PersistentVolume. Data on the volume is lost!');
    const ref = claimRefOf(pv);
    // an unbound volume is bound again; a correct binding is finished (a no-op when all is written)
    if (!ref || ref.uid === claim.metadata?.uid) return this.bind(pv, claim);
    return lost('ClaimMisbound', 'Two claims are bound to the same volume, this one is bound incorrectly');
  }

  /** the claim a volume's claimRef names: the cache, then (not yet Released) the store, as kube double-checks */
  private async claimOf(pv: ApiObject): Promise<ApiObject | undefined> {
    const ref = claimRefOf(pv)!;
    const key = `${ref.namespace ?? ''}/${ref.name ?? ''}`;
    let claim = this.claims?.get(key);
    const live = async (): Promise<ApiObject | undefined> => {
      try {
        return await this.o.claims().get(ref.namespace ?? '', ref.name ?? '');
      } catch (e) {
        if (e instanceof StatusError && e.code === 404) return undefined;
        throw e;
      }
    };
    const phase = phaseOf(pv);
    if (!claim && phase !== 'Released' && phase !== 'Failed') claim = await live();
    if (claim && claim.metadata?.uid !== ref.uid) claim = await live();
    return claim && claim.metadata?.uid === ref.uid ? claim : undefined;
  }

  private async syncVolume(pv: ApiObject): Promise<void> {
    const ref = claimRefOf(pv);
    // unused, or reserved for a claim not bound yet (the claim's sync binds it)
    if (!ref || !ref.uid) {
      await this.w.volumePhase(pv, 'Available');
      return;
    }
    const claim = await this.claimOf(pv);
    if (!claim) {
      // the claim was deleted; a Failed volume stays Failed while the reclaim is tried again
      const phase = phaseOf(pv);
      if (phase !== 'Released' && phase !== 'Failed') pv = await this.w.volumePhase(pv, 'Released');
      await this.reclaim(pv);
      return;
    }
    const claimVolume = specOf(claim).volumeName;
    if (typeof claimVolume !== 'string' || claimVolume === '') {
      if (volumeModeOf(pv) !== volumeModeOf(claim)) {
        this.event(pv, 'PersistentVolume', 'Warning', 'VolumeMismatch', `Cannot bind PersistentVolume to requested PersistentVolumeClaim "${nameOf(claim)}" due to incompatible volumeMode.`);
        this.event(claim, 'PersistentVolumeClaim', 'Warning', 'VolumeMismatch', `Cannot bind PersistentVolume "${nameOf(pv)}" to requested PersistentVolumeClaim due to incompatible volumeMode.`);
        return;
      }
      // the binding is half done: the claim's sync finishes it
      this.loop.enqueue(CLAIM + keyOf(claim));
      return;
    }
    if (claimVolume === nameOf(pv)) {
      await this.w.volumePhase(pv, 'Bound');
      return;
    }
    // the claim is bound to another volume
    if (hasAnnotation(pv, ANN_DYNAMICALLY_PROVISIONED) && specOf(pv).persistentVolumeReclaimPolicy === 'Delete') {
      const phase = phaseOf(pv);
      if (phase !== 'Released' && phase !== 'Failed') pv = await this.w.volumePhase(pv, 'Released');
      await this.reclaim(pv);
      return;
    }
    await this.w.unbindVolume(pv);
  }

  /** reclaimVolume, without volume plugins */
  private async reclaim(pv: ApiObject): Promise<void> {
    switch (specOf(pv).persistentVolumeReclaimPolicy ?? 'Retain') {
      case 'Retain':
        return;
      case 'Recycle':
        await this.failVolume(pv, 'VolumeFailedRecycle', 'No recycler plugin found for the volume!');
        return;
      case 'Delete':
        // kube asks the volume's plugin to delete the storage first; orch has none: only the object goes
        await this.w.deleteVolume(pv);
        return;
      default:
        await this.failVolume(pv, 'VolumeUnknownReclaimPolicy', 'Volume has unrecognized PersistentVolumeReclaimPolicy');
    }
  }

  /** updateVolumePhaseWithEvent: Failed, the event only when the phase changes */
  private async failVolume(pv: ApiObject, reason: string, message: string): Promise<void> {
    if (phaseOf(pv) === 'Failed') return;
    await this.w.volumePhase(pv, 'Failed', message);
    this.event(pv, 'PersistentVolume', 'Warning', reason, message);
  }
}
