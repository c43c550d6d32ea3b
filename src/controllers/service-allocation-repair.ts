// Frees Service cluster IPs and node ports (src/registry/allocators/), leader
// only: when a Service is deleted or stops using a value, and at every start
// a pass over all allocations frees those whose Service is gone or no longer
// uses them (kube's repair loops). A value is freed with a compare on its
// key's mod revision, so a value claimed again meanwhile is never freed.
// Also keeps the `default/kubernetes` Service on the first address, with its
// Endpoints and EndpointSlice naming this member's API address.

import { StatusError } from '../core/errors.js';
import type { GenericStore } from '../registry/generic-store.js';
import { ALLOCATION_PREFIX, type AllocationOwner, allocationKeysOf } from '../registry/allocators/service-allocator.js';
import type { ApiObject } from '../registry/types.js';
import type { Clock } from '../core/clock.js';
import { ControllerLoop, LoopController, type Informer, type InformerSource, type RawEntry, RawRange, type RawSource } from './runtime/index.js';

export interface ServiceAllocationRepairOptions {
  store: InformerSource & RawSource;
  services: () => GenericStore;
  /** the `kubernetes` Service: its cluster IP, the API port and this member's address */
  kubernetesService?: { clusterIP: string; port: number; address: string };
  /** the Endpoints store, when the kind is served */
  endpoints?: () => GenericStore | undefined;
  /** the EndpointSlice store and its apiVersion, when the kind is served */
  endpointSlices?: () => { store: GenericStore; apiVersion: string } | undefined;
  log?: (msg: string) => void;
  clock?: Clock;
}

const decoder = new TextDecoder();

export function allocationOwner(kv: { value: Uint8Array }): AllocationOwner | undefined {
  try {
    const o = JSON.parse(decoder.decode(kv.value)) as Partial<AllocationOwner>;
    return typeof o.uid === 'string' && typeof o.name === 'string' ? { namespace: o.namespace ?? '', name: o.name, uid: o.uid } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The queue's keys are allocation keys. One sync looks at one allocation: it
 * stays while its owner Service (same uid) still uses it, else it is freed.
 * A Service update or delete queues the keys it stopped using; a start queues
 * every allocation (the repair pass).
 */
export class ServiceAllocationRepair extends LoopController {
  protected readonly loop: ControllerLoop;
  private readonly allocations: RawRange;
  private services: Informer | undefined;

  constructor(private readonly o: ServiceAllocationRepairOptions) {
    super();
    this.loop = new ControllerLoop(o.store, { name: 'service allocations', log: o.log, clock: o.clock, baseDelayMs: 200 });
    this.allocations = new RawRange(o.store, ALLOCATION_PREFIX);
  }

  start(): void {
    this.loop.begin((key) => this.sync(key));
    const freed = (before: ApiObject, after: ApiObject | undefined): void => {
      const still = new Set(after ? allocationKeysOf(after) : []);
      for (const k of allocationKeysOf(before)) if (!still.has(k)) this.loop.enqueue(k);
    };
    this.services = this.loop.inform(this.o.services().rangeKeys(''), { update: (before, after) => freed(before, after), delete: (before) => freed(before, undefined) });
    this.repairAll();
    void this.ensureKubernetesService();
  }

  stop(): void {
    this.loop.end();
  }

  /** queues every allocation for a look (kube's repair loop); the number queued */
  repairAll(): number {
    const all = this.allocations.list();
    for (const e of all) this.loop.enqueue(e.key);
    return all.length;
  }

  private async sync(key: string): Promise<void> {
    const entry = this.allocations.get(key);
    if (!entry || this.held(entry)) return;
    if (await this.allocations.deleteIfUnchanged(entry)) this.o.log?.(`service allocations: freed ${key}, held by no Service`);
  }

  /** whether the Service the allocation names (same uid) still uses it */
  private held(entry: RawEntry): boolean {
    const owner = allocationOwner(entry);
    const svc = owner && this.services?.get(owner.namespace ? `${owner.namespace}/${owner.name}` : owner.name);
    return !!svc && svc.metadata?.uid === owner?.uid && allocationKeysOf(svc).includes(entry.key);
  }

  /** the `kubernetes` Service in `default`, on the first address of the range */
  private async ensureKubernetesService(): Promise<void> {
    const k = this.o.kubernetesService;
    // the Services' cache is read below: wait for its list (sliced when large, runtime/informer-factory.ts)
    if (!k || !(await this.loop.synced())) return;
    const services = this.o.services();
    const spec = {
      type: 'ClusterIP',
      clusterIP: k.clusterIP,
      ports: [{ name: 'https', protocol: 'TCP', port: 443, targetPort: k.port }],
      sessionAffinity: 'None',
    };
    try {
      if (!this.services?.get('default/kubernetes')) {
        await services.create(
          'default',
          { apiVersion: 'v1', kind: 'Service', metadata: { name: 'kubernetes', namespace: 'default', labels: { component: 'apiserver', provider: 'orch' } }, spec },
          { dryRun: false, manager: 'orch-apiserver' },
        );
      }
    } catch (e) {
      if (!(e instanceof StatusError && e.code === 409)) this.o.log?.(`kubernetes Service: ${(e as Error).message}`);
    }
    // its Endpoints: the leading member's API address (kube lists every apiserver; see docs/services.md)
    const endpoints = this.o.endpoints?.();
    if (!endpoints || !this.loop.running) return;
    const subsets = [{ addresses: [{ ip: k.address }], ports: [{ name: 'https', port: k.port, protocol: 'TCP' }] }];
    try {
      await endpoints.guaranteedUpdate('default', 'kubernetes', { dryRun: false, manager: 'orch-apiserver', createIfAbsent: true }, (cur) => ({
        ...(cur ?? { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'kubernetes', namespace: 'default', labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } } }),
        subsets,
      }));
    } catch (e) {
      this.o.log?.(`kubernetes Endpoints: ${(e as Error).message}`);
    }
    await this.ensureKubernetesSlice(k);
  }

  /**
   * its EndpointSlice, as kube's apiserver writes it beside the Endpoints
   * (pkg/controlplane/reconcilers/endpointsadapter.go): named `kubernetes`,
   * labelled only with the service name (no managed-by, so the EndpointSlice
   * controller leaves it alone), each address ready
   */
  private async ensureKubernetesSlice(k: { port: number; address: string }): Promise<void> {
    const slices = this.o.endpointSlices?.();
    if (!slices || !this.loop.running) return;
    const body = {
      addressType: k.address.includes(':') ? 'IPv6' : 'IPv4',
      endpoints: [{ addresses: [k.address], conditions: { ready: true } }],
      ports: [{ name: 'https', port: k.port, protocol: 'TCP' }],
    };
    try {
      await slices.store.guaranteedUpdate('default', 'kubernetes', { dryRun: false, manager: 'orch-apiserver', createIfAbsent: true }, (cur) => {
        const base = cur ?? { apiVersion: slices.apiVersion, kind: 'EndpointSlice', metadata: { name: 'kubernetes', namespace: 'default' } };
        return { ...base, metadata: { ...base.metadata, labels: { 'kubernetes.io/service-name': 'kubernetes' } }, ...body };
      });
    } catch (e) {
      this.o.log?.(`kubernetes EndpointSlice: ${(e as Error).message}`);
    }
  }
}
