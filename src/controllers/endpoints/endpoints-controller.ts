// The Endpoints controller (kube-controller-manager's `endpoint`,
// pkg/controller/endpoint, kube 1.32), leader only: every Service with a
// selector gets an Endpoints object of its name listing the pods it selects
// (endpoints-plan.ts); a deleted Service's Endpoints are deleted; a Service
// without a selector (user-managed Endpoints, the API server's `kubernetes`)
// is not touched. At each start, Endpoints whose Service is gone are deleted
// (kube's checkLeftoverEndpoints). docs/controllers.md "Endpoints and EndpointSlices".

import { StatusError, notFound } from '../../core/errors.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject } from '../../registry/types.js';
import type { EventRecorder } from '../event-recorder.js';
import type { Informer } from '../runtime/index.js';
import { CONTROLLER_MANAGER } from '../workloads/writes.js';
import { applyEndpointsWrite, computeSubsets, planEndpoints } from './endpoints-plan.js';
import { serviceSelector } from './pod-endpoints.js';
import { ServicePodsController, type ServicePodsOptions } from './service-pods.js';

export const ENDPOINT_CONTROLLER = 'endpoint';
/** the annotation of an Endpoints object used as a leader-election lock, which the leftover check leaves alone */
const LEADER_ANNOTATION = 'control-plane.alpha.kubernetes.io/leader';

export interface EndpointsControllerOptions extends ServicePodsOptions {
  endpoints: () => GenericStore;
  events?: EventRecorder;
}

const keyOf = (o: ApiObject): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

export class EndpointsController extends ServicePodsController {
  private endpoints: Informer | undefined;

  constructor(private readonly o: EndpointsControllerOptions) {
    super(o, ENDPOINT_CONTROLLER);
  }

  start(): void {
    this.begin();
    // kube re-creates Endpoints deleted under a Service that still selects
    this.endpoints = this.loop.inform(this.o.endpoints().rangeKeys(''), { delete: (_e, key) => this.loop.enqueue(key) });
    const run = this.loop.queue;
    void this.loop.synced().then((ok) => {
      if (!ok || this.loop.queue !== run) return;
      for (const e of this.endpoints?.list() ?? []) {
        if (!this.services?.get(keyOf(e)) && !e.metadata?.annotations?.[LEADER_ANNOTATION]) this.loop.enqueue(keyOf(e));
      }
    });
  }

  override stop(): void {
    super.stop();
    this.endpoints = undefined;
  }

  protected async sync(key: string): Promise<void> {
    const [ns = '', name = ''] = key.split('/');
    const svc = this.services?.get(key);
    if (!svc) {
      this.triggers.forget(key);
      await this.deleteEndpoints(ns, name);
      return;
    }
    const spec = (svc.spec ?? {}) as { type?: string };
    const selector = serviceSelector(svc);
    // ExternalName Services get no endpoints (kube issue 105986); no selector: user-managed
    if (spec.type === 'ExternalName' || !selector) return;
    const pods = this.selected(ns, selector);
    const trigger = this.triggers.compute(key, svc, pods);
    const current = this.endpoints?.get(key);
    if (!current && svc.metadata?.deletionTimestamp) return;
    const write = planEndpoints(svc, computeSubsets(svc, pods), current, trigger);
    if (!write) return;
    const endpoints = this.o.endpoints();
    try {
      if (current) {
        await endpoints.guaranteedUpdate(ns, name, { dryRun: false, manager: CONTROLLER_MANAGER }, (cur) => {
          if (!cur) throw notFound('endpoints', '', name);
          return applyEndpointsWrite(svc, cur, write);
        });
      } else {
        await endpoints.create(ns, applyEndpointsWrite(svc, undefined, write), { dryRun: false, manager: CONTROLLER_MANAGER });
      }
    } catch (e) {
      // a namespace being deleted refuses creates: nothing to retry (kube checks the same)
      if (!current && e instanceof StatusError && e.code === 403 && /being terminated/.test(e.message)) return;
      const [reason, verb] = current ? ['FailedToUpdateEndpoint', 'update'] : ['FailedToCreateEndpoint', 'create'];
      void this.o.events?.event({ apiVersion: 'v1', kind: 'Endpoints', namespace: ns, name, ...(current?.metadata?.uid ? { uid: current.metadata.uid } : {}) }, 'Warning', reason, `Failed to ${verb} endpoint ${key}: ${(e as Error).message}`);
      throw e;
    }
  }

  private async deleteEndpoints(ns: string, name: string): Promise<void> {
    if (!this.endpoints?.get(`${ns}/${name}`)) return;
    try {
      await this.o.endpoints().delete(ns, name, { dryRun: false });
    } catch (e) {
      if (!(e instanceof StatusError && e.code === 404)) throw e;
    }
  }
}
