// The EndpointSlice controller (kube-controller-manager's `endpointslice`,
// pkg/controller/endpointslice, kube 1.32), leader only: every Service with a
// selector (not ExternalName, not being deleted) gets EndpointSlices of the
// pods it selects (slice-plan.ts), owned by the Service, so the garbage
// collector deletes them with it. It acts only on slices labelled
// managed-by endpointslice-controller.k8s.io; a change or deletion of one
// queues its Service again. A node's zone label feeds the endpoints' zone.
// docs/controllers.md "Endpoints and EndpointSlices".

import { StatusError, conflict, notFound } from '../../core/errors.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject } from '../../registry/types.js';
import type { EventRecorder } from '../event-recorder.js';
import type { Informer } from '../runtime/index.js';
import { CONTROLLER_MANAGER } from '../workloads/writes.js';
import { serviceSelector } from './pod-endpoints.js';
import { ServicePodsController, type ServicePodsOptions } from './service-pods.js';
import { ENDPOINTSLICE_CONTROLLER_NAME, type EndpointSlice, MANAGED_BY_LABEL, SERVICE_NAME_LABEL, desiredGroups, planSlices } from './slice-plan.js';

export const ENDPOINTSLICE_CONTROLLER = 'endpointslice';
/** kube's v1.LabelTopologyZone */
export const ZONE_LABEL = 'topology.kubernetes.io/zone';
const BY_SERVICE = 'service';

export interface EndpointSliceControllerOptions extends ServicePodsOptions {
  nodes?: () => GenericStore;
  slices: () => GenericStore;
  /** `discovery.<api-domain>/v1` */
  sliceApiVersion: string;
  /** --max-endpoints-per-slice (default 100) */
  maxEndpointsPerSlice?: number;
  events?: EventRecorder;
}

/** the Service a slice this controller manages belongs to, as `namespace/name` */
function managedServiceKey(s: ApiObject): string | undefined {
  const labels = (s.metadata?.labels ?? {}) as Record<string, string>;
  const svc = labels[SERVICE_NAME_LABEL];
  return svc && labels[MANAGED_BY_LABEL] === ENDPOINTSLICE_CONTROLLER_NAME ? `${s.metadata?.namespace ?? ''}/${svc}` : undefined;
}

const keyOf = (o: ApiObject): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
const zoneOfNode = (n: ApiObject | undefined): string | undefined => (n?.metadata?.labels as Record<string, string> | undefined)?.[ZONE_LABEL];

export class EndpointSliceController extends ServicePodsController {
  private nodes: Informer | undefined;
  private slices: Informer | undefined;
  /** the slices this controller is updating or deleting right now (their events are its own) */
  private readonly writing = new Set<string>();

  constructor(private readonly o: EndpointSliceControllerOptions) {
    super(o, ENDPOINTSLICE_CONTROLLER);
  }

  start(): void {
    this.begin();
    const slice = (s: ApiObject, old?: ApiObject): void => {
      // a slice whose labels were edited away from this controller still concerns its Service
      const k = managedServiceKey(s) ?? (old && managedServiceKey(old));
      // our own write comes back as an event: no sync for it (kube's endpointSliceTracker)
      if (k && !this.writing.has(keyOf(s))) this.loop.enqueue(k);
    };
    this.slices = this.loop.inform(this.o.slices().rangeKeys(''), { update: (old, s) => slice(s, old), delete: (s) => slice(s) }, {
      [BY_SERVICE]: (s) => {
        const k = managedServiceKey(s);
        return k ? [k] : [];
      },
    });
    if (this.o.nodes) {
      // a node's zone moved: the Services with pods on it (rare; kube leaves them until their next sync)
      this.nodes = this.loop.inform(this.o.nodes().rangeKeys(''), {
        update: (old, n) => {
          if (zoneOfNode(old) !== zoneOfNode(n)) this.queueServicesOnNode(n.metadata?.name ?? '');
        },
      });
    }
  }

  override stop(): void {
    super.stop();
    this.nodes = this.slices = undefined;
  }

  /** runs a write of slice `s` with its events marked as this controller's own */
  private async own<T>(s: ApiObject, write: () => Promise<T>): Promise<T> {
    const k = keyOf(s);
    this.writing.add(k);
    try {
      return await write();
    } finally {
      this.writing.delete(k);
    }
  }

  private requeue(s: ApiObject): void {
    const k = managedServiceKey(s);
    if (k) this.loop.enqueue(k);
  }

  private queueServicesOnNode(node: string): void {
    for (const p of this.pods?.list() ?? []) {
      if ((p.spec as { nodeName?: string } | undefined)?.nodeName === node) for (const k of this.index.selecting(p)) this.loop.enqueue(k);
    }
  }

  protected async sync(key: string): Promise<void> {
    const svc = this.services?.get(key);
    if (!svc) {
      // its slices go with it: the garbage collector follows their owner reference (as kube)
      this.triggers.forget(key);
      return;
    }
    const selector = serviceSelector(svc);
    if ((svc.spec as { type?: string } | undefined)?.type === 'ExternalName' || !selector || svc.metadata?.deletionTimestamp) return;
    const ns = svc.metadata?.namespace ?? '';
    const pods = this.selected(ns, selector);
    const trigger = this.triggers.compute(key, svc, pods);
    const groups = desiredGroups(svc, pods, (node) => zoneOfNode(this.nodes?.get(node)));
    const existing = this.slices?.byIndex(BY_SERVICE, key) ?? [];
    const plan = planSlices(svc, existing, groups, trigger, { apiVersion: this.o.sliceApiVersion, max: this.o.maxEndpointsPerSlice });
    try {
      await this.write(ns, plan.create, plan.update, plan.delete);
    } catch (e) {
      void this.o.events?.event({ apiVersion: 'v1', kind: 'Service', namespace: ns, name: svc.metadata?.name ?? '', uid: svc.metadata?.uid ?? '' }, 'Warning', 'FailedToUpdateEndpointSlices', `Error updating Endpoint Slices for Service ${key}: ${(e as Error).message}`);
      throw e;
    }
  }

  /** kube's order: creates, updates, deletes; a slice changed or gone meanwhile fails the sync, which retries */
  private async write(ns: string, create: EndpointSlice[], update: EndpointSlice[], del: EndpointSlice[]): Promise<void> {
    const store = this.o.slices();
    const opts = { dryRun: false, manager: CONTROLLER_MANAGER };
    for (const s of create) {
      try {
        await store.create(ns, s, opts);
      } catch (e) {
        // a namespace being deleted refuses creates: its Services go too
        if (e instanceof StatusError && e.code === 403 && /being terminated/.test(e.message)) return;
        throw e;
      }
    }
    for (const s of update) {
      const name = s.metadata?.name ?? '';
      // the plan was made on the cached version: another version means plan again (kube's update conflicts)
      const written = await this.own(s, () =>
        store.guaranteedUpdate(ns, name, opts, (cur) => {
          if (!cur || cur.metadata?.uid !== s.metadata?.uid) throw notFound('endpointslices', 'discovery', name);
          if (cur.metadata?.resourceVersion !== s.metadata?.resourceVersion) throw conflict('endpointslices', 'discovery', name, 'the object has been modified; please apply your changes to the latest version and try again');
          return { ...s, metadata: { ...s.metadata } };
        }),
      );
      // another writer's change that came while ours was in flight: look again
      if (this.slices?.get(keyOf(s))?.metadata?.resourceVersion !== written.object.metadata?.resourceVersion) this.requeue(s);
    }
    for (const s of del) {
      try {
        await this.own(s, () => store.delete(ns, s.metadata?.name ?? '', { dryRun: false, preconditions: { uid: s.metadata?.uid ?? '' } }));
      } catch (e) {
        if (!(e instanceof StatusError && e.code === 404)) throw e;
      }
    }
  }
}
