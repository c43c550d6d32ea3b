// Which Services a pod change concerns, for the Endpoints and EndpointSlice
// controllers (kube's GetServicesToUpdateOnPodChange): the Services of the
// pod's namespace whose selector picks it — before and after, when its
// labels changed — and only when something an endpoint shows changed (IP,
// readiness, deletion, phase, node, hostname), so a status heartbeat or an
// annotation does not resync every Service of the namespace. Also the part
// both controllers share: their loop over the Services and pods informers.

import { type Clock, systemClock } from '../../core/clock.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject } from '../../registry/types.js';
import { ControllerLoop, type Informer, type InformerHandlers, type InformerSource, LABEL_INDEX, LoopController, labelCandidates, labelIndex } from '../runtime/index.js';
import { TriggerTimeTracker, podIps, podReady, selects, serviceSelector } from './pod-endpoints.js';

/** what of a pod its endpoints show (and the Ready transition time, the trigger time) */
function endpointView(pod: ApiObject): string {
  const spec = (pod.spec ?? {}) as { nodeName?: string; hostname?: string; subdomain?: string };
  const status = (pod.status ?? {}) as { phase?: string; conditions?: { type?: string; lastTransitionTime?: string }[] };
  const readyAt = Array.isArray(status.conditions) ? status.conditions.find((c) => c?.type === 'Ready')?.lastTransitionTime : undefined;
  return JSON.stringify([podIps(pod), podReady(pod), readyAt, status.phase, pod.metadata?.deletionTimestamp, spec.nodeName, spec.hostname, spec.subdomain]);
}

const labelsOf = (p: ApiObject): string => JSON.stringify(p.metadata?.labels ?? {});

export class ServicePodIndex {
  constructor(
    private readonly services: () => Informer | undefined,
    private readonly enqueue: (serviceKey: string) => void,
  ) {}

  /** a Service's every change queues it */
  serviceHandlers(): InformerHandlers {
    return {
      add: (_s, key) => this.enqueue(key),
      update: (_o, _s, key) => this.enqueue(key),
      delete: (_s, key) => this.enqueue(key),
    };
  }

  podHandlers(): InformerHandlers {
    return {
      add: (p) => this.queueSelecting(p),
      delete: (p) => this.queueSelecting(p),
      update: (old, p) => {
        if (old.metadata?.resourceVersion === p.metadata?.resourceVersion) return;
        const labelsChanged = labelsOf(old) !== labelsOf(p);
        const podChanged = endpointView(old) !== endpointView(p);
        if (!labelsChanged && !podChanged) return;
        const now = this.selecting(p);
        if (!labelsChanged) {
          for (const k of now) this.enqueue(k);
          return;
        }
        const before = this.selecting(old);
        // labels alone changed: only the Services it joined or left (kube's determineNeededServiceUpdates)
        for (const k of new Set([...now, ...before])) if (podChanged || now.has(k) !== before.has(k)) this.enqueue(k);
      },
    };
  }

  private queueSelecting(p: ApiObject): void {
    for (const k of this.selecting(p)) this.enqueue(k);
  }

  /** the keys of the Services of the pod's namespace whose selector picks it */
  selecting(p: ApiObject): Set<string> {
    const ns = p.metadata?.namespace ?? '';
    const out = new Set<string>();
    for (const svc of this.services()?.inNamespace(ns) ?? []) {
      const sel = serviceSelector(svc);
      if (sel && selects(sel, p)) out.add(`${ns}/${svc.metadata?.name ?? ''}`);
    }
    return out;
  }
}

export interface ServicePodsOptions {
  store: InformerSource;
  services: () => GenericStore;
  pods: () => GenericStore;
  clock?: Clock;
  log?: (msg: string) => void;
}

/** a controller keyed by Service over the Services and pods informers (endpoint, endpointslice) */
export abstract class ServicePodsController extends LoopController {
  protected readonly loop: ControllerLoop;
  protected services: Informer | undefined;
  protected pods: Informer | undefined;
  protected readonly triggers = new TriggerTimeTracker();
  protected readonly index: ServicePodIndex;

  constructor(
    private readonly base: ServicePodsOptions,
    name: string,
  ) {
    super();
    this.loop = new ControllerLoop(base.store, { name, clock: base.clock ?? systemClock, log: base.log, baseDelayMs: 200 });
    this.index = new ServicePodIndex(() => this.services, (key) => this.loop.enqueue(key));
  }

  /** a fresh run: the queue, then the Services and pods informers (the pods indexed by label) */
  protected begin(): void {
    this.stop();
    this.loop.begin((key) => this.sync(key));
    this.services = this.loop.inform(this.base.services().rangeKeys(''), this.index.serviceHandlers());
    this.pods = this.loop.inform(this.base.pods().rangeKeys(''), this.index.podHandlers(), { [LABEL_INDEX]: labelIndex });
  }

  stop(): void {
    this.loop.end();
    this.services = this.pods = undefined;
  }

  /** the pods of `ns` the selector picks (from the label index's smallest bucket) */
  protected selected(ns: string, selector: Record<string, string>): ApiObject[] {
    return (this.pods ? labelCandidates(this.pods, ns, selector) : []).filter((p) => selects(selector, p));
  }

  protected abstract sync(key: string): Promise<void>;
}
