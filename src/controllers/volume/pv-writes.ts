// The persistent volume controller's writes, each one object and one step of
// kube's bind (pv_controller.go bindVolumeToClaim, updateVolumePhase,
// bindClaimToVolume, updateClaimStatus, unbindVolume): the volume's claimRef
// first, then its phase, then the claim's volumeName and annotations, then its
// status, so a crash between two writes leaves a state the next sync finishes.
// Each write is an update of the version the sync read (kube's Update with the
// cached resourceVersion): a newer version fails with a conflict and the key is
// synced again.

import { StatusError } from '../../core/errors.js';
import type { Clock } from '../../core/clock.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject, JSONValue } from '../../registry/types.js';
import { CONTROLLER_MANAGER } from '../workloads/writes.js';
import { ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, type ClaimRef, accessModesOf, claimRefOf, hasAnnotation, isBoundToClaim } from './pv-match.js';

type Obj = Record<string, JSONValue>;

/** the object changed since the sync read it (kube: a 409 from the Update) */
export class StaleObject extends Error {}

const clone = (o: ApiObject): ApiObject => structuredClone(o);
const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

export class PvWriter {
  constructor(
    private readonly volumes: () => GenericStore,
    private readonly claims: () => GenericStore,
    private readonly clock: Clock,
  ) {}

  /** replaces `o` (main resource or status) with `next` if it is still the version read */
  private async write(store: GenericStore, o: ApiObject, next: ApiObject, subresource?: 'status'): Promise<ApiObject> {
    const rv = o.metadata?.resourceVersion;
    try {
      const out = await store.guaranteedUpdate(o.metadata?.namespace ?? '', o.metadata?.name ?? '', { dryRun: false, manager: CONTROLLER_MANAGER, ...(subresource ? { subresource } : {}) }, (cur) => {
        if (!cur || cur.metadata?.uid !== o.metadata?.uid || cur.metadata?.resourceVersion !== rv) throw new StaleObject(`${o.kind ?? ''} ${o.metadata?.name ?? ''} changed`);
        return next;
      });
      return out.object;
    } catch (e) {
      if (e instanceof StatusError && (e.code === 404 || e.code === 409)) throw new StaleObject(e.message);
      throw e;
    }
  }

  /** bindVolumeToClaim: claimRef set to the claim, bound-by-controller when the volume was not pre-bound to it */
  async bindVolume(pv: ApiObject, claim: ApiObject): Promise<ApiObject> {
    const next = clone(pv);
    let dirty = false;
    const ref = claimRefOf(pv);
    if (!ref || ref.name !== claim.metadata?.name || ref.namespace !== claim.metadata?.namespace || ref.uid !== claim.metadata?.uid) {
      const claimRef: ClaimRef = {
        kind: 'PersistentVolumeClaim', namespace: claim.metadata?.namespace ?? '', name: claim.metadata?.name ?? '',
        uid: claim.metadata?.uid ?? '', apiVersion: 'v1', resourceVersion: claim.metadata?.resourceVersion ?? '',
      };
      (next.spec as Obj).claimRef = claimRef as Obj;
      dirty = true;
    }
    if (!isBoundToClaim(pv, claim) && !hasAnnotation(next, ANN_BOUND_BY_CONTROLLER)) {
      next.metadata!.annotations = { ...(next.metadata!.annotations ?? {}), [ANN_BOUND_BY_CONTROLLER]: 'yes' };
      dirty = true;
    }
    return dirty ? this.write(this.volumes(), pv, next) : pv;
  }

  /** updateVolumePhase: the phase and message; lastPhaseTransitionTime moves with the phase (kube's registry sets it) */
  async volumePhase(pv: ApiObject, phase: string, message = ''): Promise<ApiObject> {
    const st = (pv.status ?? {}) as Obj;
    if (st.phase === phase) return pv;
    const status: Obj = { ...st, phase, lastPhaseTransitionTime: rfc3339(this.clock.now()) };
    if (message) status.message = message;
    else delete status.message;
    return this.write(this.volumes(), pv, { ...clone(pv), status }, 'status');
  }

  /** bindClaimToVolume: volumeName, bound-by-controller when the claim did not name the volume, bind-completed */
  async bindClaim(claim: ApiObject, pv: ApiObject): Promise<ApiObject> {
    const next = clone(claim);
    const spec = next.spec as Obj;
    const name = pv.metadata?.name ?? '';
    const ann: Record<string, string> = { ...((next.metadata!.annotations ?? {}) as Record<string, string>) };
    let dirty = false;
    if (spec.volumeName !== name) {
      if (ann[ANN_BOUND_BY_CONTROLLER] === undefined) ann[ANN_BOUND_BY_CONTROLLER] = 'yes';
      spec.volumeName = name;
      dirty = true;
    }
    if (ann[ANN_BIND_COMPLETED] === undefined) {
      ann[ANN_BIND_COMPLETED] = 'yes';
      dirty = true;
    }
    if (!dirty) return claim;
    next.metadata!.annotations = ann;
    return this.write(this.claims(), claim, next);
  }

  /** updateClaimStatus: phase, and the volume's access modes and capacity (capacity only as the claim becomes bound) */
  async claimStatus(claim: ApiObject, phase: string, pv: ApiObject | undefined): Promise<ApiObject> {
    const st = (claim.status ?? {}) as Obj;
    const status: Obj = { ...st, phase };
    if (!pv) {
      delete status.accessModes;
      delete status.capacity;
    } else {
      status.accessModes = accessModesOf(pv);
      const cap = ((pv.spec as Obj).capacity ?? {}) as Obj;
      if (st.phase !== phase) status.capacity = cap;
    }
    if (JSON.stringify(status) === JSON.stringify(st)) return claim;
    return this.write(this.claims(), claim, { ...clone(claim), status }, 'status');
  }

  /** unbindVolume: a controller binding is undone; a user's pre-binding keeps its name and loses only the uid */
  async unbindVolume(pv: ApiObject): Promise<ApiObject> {
    const next = clone(pv);
    if (hasAnnotation(pv, ANN_BOUND_BY_CONTROLLER)) {
      delete (next.spec as Obj).claimRef;
      const ann = { ...(next.metadata!.annotations ?? {}) };
      delete ann[ANN_BOUND_BY_CONTROLLER];
      if (Object.keys(ann).length > 0) next.metadata!.annotations = ann;
      else delete next.metadata!.annotations;
    } else {
      const ref = { ...((next.spec as Obj).claimRef as Obj) };
      delete ref.uid;
      (next.spec as Obj).claimRef = ref;
    }
    return this.volumePhase(await this.write(this.volumes(), pv, next), 'Available');
  }

  /** a claim's spec with `change` applied (the default class, the provisioner annotations) */
  async updateClaim(claim: ApiObject, change: (next: ApiObject) => void): Promise<ApiObject> {
    const next = clone(claim);
    change(next);
    return this.write(this.claims(), claim, next);
  }

  /** the Delete policy without a volume plugin: only the object goes (its uid as precondition) */
  async deleteVolume(pv: ApiObject): Promise<void> {
    try {
      await this.volumes().delete('', pv.metadata?.name ?? '', { dryRun: false, preconditions: { uid: pv.metadata?.uid ?? '' } });
    } catch (e) {
      if (e instanceof StatusError && (e.code === 404 || e.code === 409)) return;
      throw e;
    }
  }
}
