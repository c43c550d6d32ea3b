// Frees Service cluster IPs and node ports (src/registry/allocators/), leader
// only: when a Service is deleted or stops using a value, and at every start
// a pass over all allocations frees those whose Service is gone or no longer
// uses them (kube's repair loops). A value is freed with a compare on its
// key's mod revision, so a value claimed again meanwhile is never freed.
// Also keeps the `default/kubernetes` Service on the first address.

import { StatusError } from '../core/errors.js';
import { decodeObject, type GenericStore } from '../registry/generic-store.js';
import { ALLOCATION_PREFIX, type AllocationOwner, allocationKeysOf } from '../registry/allocators/service-allocator.js';
import type { ApiObject } from '../registry/types.js';
import { type KeyValue, type RevisionedStore, prefixEnd } from '../store/types.js';

export interface ServiceAllocationRepairOptions {
  store: RevisionedStore;
  services: () => GenericStore;
  /** the `kubernetes` Service: its cluster IP, the API port and this member's address */
  kubernetesService?: { clusterIP: string; port: number; address: string };
  /** the Endpoints store, when the kind is served */
  endpoints?: () => GenericStore | undefined;
  log?: (msg: string) => void;
}

const decoder = new TextDecoder();

export function allocationOwner(kv: KeyValue): AllocationOwner | undefined {
  try {
    const o = JSON.parse(decoder.decode(kv.value)) as Partial<AllocationOwner>;
    return typeof o.uid === 'string' && typeof o.name === 'string' ? { namespace: o.namespace ?? '', name: o.name, uid: o.uid } : undefined;
  } catch {
    return undefined;
  }
}

export class ServiceAllocationRepair {
  private unsubscribe?: () => void;
  private stopped = true;

  constructor(private readonly o: ServiceAllocationRepairOptions) {}

  start(): void {
    this.unsubscribe?.();
    this.stopped = false;
    const { key, end } = this.o.services().rangeKeys('');
    this.unsubscribe = this.o.store.onApplied((w) => {
      for (const ev of w.events) {
        if (ev.kv.key < key || ev.kv.key >= end || !ev.prevKv) continue;
        const before = safeDecode(ev.prevKv);
        if (!before) continue;
        const after = ev.type === 'put' ? safeDecode(ev.kv) : undefined;
        const still = new Set(after ? allocationKeysOf(after) : []);
        const freed = allocationKeysOf(before).filter((k) => !still.has(k));
        if (freed.length > 0) void this.free(freed, before.metadata?.uid ?? '');
      }
    });
    void this.repairAll().then(() => this.ensureKubernetesService());
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** frees the keys that `uid` holds */
  private async free(keys: string[], uid: string): Promise<void> {
    for (const key of keys) {
      const kv = this.o.store.range({ key }).kvs[0];
      if (!kv || allocationOwner(kv)?.uid !== uid) continue;
      await this.release(kv);
    }
  }

  private async release(kv: KeyValue): Promise<void> {
    try {
      await this.o.store.txn({ compare: [{ key: kv.key, target: 'mod', op: '=', value: kv.modRevision }], success: [{ type: 'delete', key: kv.key }], failure: [] });
    } catch (e) {
      this.o.log?.(`service allocations: cannot free ${kv.key}: ${(e as Error).message}`);
    }
  }

  /** one pass over every allocation: free what no Service holds */
  async repairAll(): Promise<number> {
    let freed = 0;
    const services = this.o.services();
    for (const kv of this.o.store.range({ key: ALLOCATION_PREFIX, end: prefixEnd(ALLOCATION_PREFIX) }).kvs) {
      if (this.stopped) break;
      const owner = allocationOwner(kv);
      const svcKv = owner ? services.readRaw(owner.namespace, owner.name) : undefined;
      const svc = svcKv ? safeDecode(svcKv) : undefined;
      if (svc && svc.metadata?.uid === owner?.uid && allocationKeysOf(svc).includes(kv.key)) continue;
      await this.release(kv);
      freed++;
    }
    if (freed > 0) this.o.log?.(`service allocations: freed ${freed} held by no Service`);
    return freed;
  }

  /** the `kubernetes` Service in `default`, on the first address of the range */
  private async ensureKubernetesService(): Promise<void> {
    const k = this.o.kubernetesService;
    if (!k || this.stopped) return;
    const services = this.o.services();
    const spec = {
      type: 'ClusterIP',
      clusterIP: k.clusterIP,
      ports: [{ name: 'https', protocol: 'TCP', port: 443, targetPort: k.port }],
      sessionAffinity: 'None',
    };
    try {
      if (!services.readRaw('default', 'kubernetes')) {
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
    if (!endpoints || this.stopped) return;
    const subsets = [{ addresses: [{ ip: k.address }], ports: [{ name: 'https', port: k.port, protocol: 'TCP' }] }];
    try {
      await endpoints.guaranteedUpdate('default', 'kubernetes', { dryRun: false, manager: 'orch-apiserver', createIfAbsent: true }, (cur) => ({
        ...(cur ?? { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'kubernetes', namespace: 'default', labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } } }),
        subsets,
      }));
    } catch (e) {
      this.o.log?.(`kubernetes Endpoints: ${(e as Error).message}`);
    }
  }
}

function safeDecode(kv: KeyValue): ApiObject | undefined {
  try {
    return decodeObject(kv);
  } catch {
    return undefined;
  }
}
