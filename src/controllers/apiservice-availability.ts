// kube-aggregator's remote availability controller, leader only: for every
// APIService with `spec.service`, the Service must exist and listen on the
// port, its Endpoints must have an address, and a GET of the server's
// `/apis/<group>/<version>` must answer 2xx/3xx; the Available condition says
// which check failed with kube's reasons (ServiceNotFound, ServicePortError,
// EndpointsNotFound, MissingEndpoints, FailedDiscoveryCheck) or `Passed`.
// Checked on every change of the APIService, its Service or its Endpoints,
// and again every `resyncMs` on the injected clock (kube resyncs every 30 s).

import { type Clock, type TimerHandle, every } from '../core/clock.js';
import { deepEqual, nowTimestamp } from '../machinery/meta.js';
import type { GenericStore } from '../registry/generic-store.js';
import { type ServiceResolver, ServiceResolutionError } from '../registry/admission/webhook-client.js';
import type { ApiObject } from '../registry/types.js';
import { type InformerSource, type InformerUse, sharedInformers } from './runtime/index.js';

export const AVAILABILITY_MANAGER = 'orch-apiservice-availability';

export interface ServiceReference {
  namespace: string;
  name: string;
  port: number;
}

export interface AvailabilityOptions {
  store: InformerSource;
  apiServices: GenericStore;
  services: GenericStore;
  endpoints: GenericStore;
  /** the webhook client's Service resolution (src/registry/admission/lookups.ts) */
  resolver: ServiceResolver;
  /** GETs the server's discovery document; rejects with kube's FailedDiscoveryCheck message */
  probe(apiService: ApiObject): Promise<void>;
  clock: Clock;
  resyncMs?: number;
  log?: (msg: string) => void;
}

interface Condition {
  type: 'Available';
  status: 'True' | 'False';
  reason: string;
  message: string;
  lastTransitionTime?: string;
}

function serviceOf(o: ApiObject): ServiceReference | undefined {
  const s = (o.spec as { service?: { namespace?: string; name?: string; port?: number } } | undefined)?.service;
  if (!s) return undefined;
  return { namespace: s.namespace ?? '', name: s.name ?? '', port: s.port ?? 443 };
}

/** kube's messages for a Service that cannot be reached */
function resolutionCondition(e: ServiceResolutionError, s: ServiceReference): Omit<Condition, 'type' | 'status'> {
  const where = `service/${s.name} in "${s.namespace}"`;
  switch (e.reason) {
    case 'ServiceNotFound':
      return { reason: e.reason, message: `${where} is not present` };
    case 'ServicePortError':
      return { reason: e.reason, message: `${where} is not listening on port ${s.port}` };
    case 'EndpointsNotFound':
      return { reason: e.reason, message: `cannot find endpoints for ${where}` };
    case 'MissingEndpoints':
      return { reason: e.reason, message: `endpoints for ${where} have no addresses with port name "${e.portName}"` };
  }
}

export class APIServiceAvailability {
  private uses: InformerUse[] = [];
  private resync: TimerHandle | undefined;
  private readonly queued = new Set<string>();
  private draining = false;
  private running = false;

  constructor(private readonly o: AvailabilityOptions) {}

  start(): void {
    this.running = true;
    const informers = sharedInformers(this.o.store);
    const apis = informers.use(this.o.apiServices.rangeKeys(''), {
      add: (o) => this.enqueueApi(o),
      update: (_old, o) => this.enqueueApi(o),
    });
    // a change of a Service or its Endpoints re-checks the APIServices that name it
    const byService = {
      add: (o: ApiObject) => this.enqueueFor(o),
      update: (_old: ApiObject, o: ApiObject) => this.enqueueFor(o),
      delete: (o: ApiObject) => this.enqueueFor(o),
    };
    this.uses = [apis, informers.use(this.o.services.rangeKeys(''), byService), informers.use(this.o.endpoints.rangeKeys(''), byService)];
    this.resync = every(this.o.clock, this.o.resyncMs ?? 30_000, () => {
      for (const o of apis.informer.list()) this.enqueueApi(o);
    });
  }

  stop(): void {
    this.running = false;
    this.resync?.cancel();
    for (const u of this.uses) u.release();
    this.uses = [];
    this.queued.clear();
  }

  hasSynced(): boolean {
    return this.uses.every((u) => u.hasSynced());
  }

  private enqueueApi(o: ApiObject): void {
    if (serviceOf(o)) this.enqueue(o.metadata?.name ?? '');
  }

  private enqueueFor(svc: ApiObject): void {
    const ns = svc.metadata?.namespace;
    const name = svc.metadata?.name;
    for (const api of this.uses[0]?.informer.list() ?? []) {
      const s = serviceOf(api);
      if (s && s.namespace === ns && s.name === name) this.enqueue(api.metadata?.name ?? '');
    }
  }

  private enqueue(name: string): void {
    this.queued.add(name);
    if (this.draining) return;
    this.draining = true;
    // off the informer's stack: a first replay hands objects over inside `use`, before the informers are kept
    queueMicrotask(() => void this.drain());
  }

  /** one check at a time; a name queued again while checked is checked again */
  private async drain(): Promise<void> {
    try {
      while (this.running && this.queued.size > 0) {
        const name = this.queued.values().next().value as string;
        this.queued.delete(name);
        try {
          await this.check(name);
        } catch (e) {
          this.o.log?.(`apiservice availability: ${name}: ${(e as Error).message}`);
        }
      }
    } finally {
      this.draining = false;
    }
  }

  private async check(name: string): Promise<void> {
    const api = this.uses[0]?.informer.list().find((o) => o.metadata?.name === name);
    const svc = api && serviceOf(api);
    if (!api || !svc) return;
    const want = await this.condition(api, svc);
    await this.o.apiServices.guaranteedUpdate('', name, { dryRun: false, subresource: 'status', manager: AVAILABILITY_MANAGER }, (cur) => {
      const c = cur!;
      if (!serviceOf(c)) return c;
      const conds = ((c.status as { conditions?: Condition[] } | undefined)?.conditions ?? []);
      const prev = conds.find((x) => x.type === 'Available');
      const next: Condition = { type: 'Available', status: want.status, lastTransitionTime: prev?.status === want.status && prev.lastTransitionTime ? prev.lastTransitionTime : nowTimestamp(this.o.clock.now()), reason: want.reason, message: want.message };
      if (prev && deepEqual(prev, next)) return c;
      if (prev?.status !== next.status) this.o.log?.(`apiservice ${name}: Available ${prev?.status ?? 'Unknown'} → ${next.status} (${next.reason}: ${next.message})`);
      const others = conds.filter((x) => x.type !== 'Available');
      return { ...c, status: { ...((c.status ?? {}) as Record<string, unknown>), conditions: [...others, next] } } as unknown as ApiObject;
    });
  }

  private async condition(api: ApiObject, svc: ServiceReference): Promise<Omit<Condition, 'type'>> {
    try {
      this.o.resolver(svc.namespace, svc.name, svc.port);
    } catch (e) {
      if (e instanceof ServiceResolutionError) return { status: 'False', ...resolutionCondition(e, svc) };
      throw e;
    }
    try {
      await this.o.probe(api);
    } catch (e) {
      return { status: 'False', reason: 'FailedDiscoveryCheck', message: (e as Error).message };
    }
    return { status: 'True', reason: 'Passed', message: 'all checks passed' };
  }
}
