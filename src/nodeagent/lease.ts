// The node's Lease heartbeat (spec 002 §2.2, §8): one Lease per node in the
// `orch-node-lease` namespace (`kube-node-lease` on a k8s.io control plane), renewed every `nodeLeaseRenewInterval`
// (10 s default); a failed renewal is retried with exponential back-off from
// 200 ms up to 7 s, then the normal interval resumes.

import { ApiError, type ApiClient, type KubeObject } from './api-client.js';
import { type Clock, rfc3339Micro } from './clock.js';
import { systemNamespacesOf } from '../core/product-names.js';

/** `<product>-node-lease` (spec 002 §2.2; the product word is orch whatever the API domain, as the built-in namespaces) */

export const BACKOFF_START_MS = 200;
export const BACKOFF_MAX_MS = 7_000;

/** the delay before the next attempt after `failures` consecutive failures (0 = success) */
export function nextLeaseDelay(failures: number, intervalMs: number): number {
  if (failures === 0) return intervalMs;
  return Math.min(BACKOFF_MAX_MS, BACKOFF_START_MS * 2 ** (failures - 1));
}

export interface LeaseOptions {
  api: ApiClient;
  clock: Clock;
  /** the API domain: the Lease is coordination.<domain>/v1 */
  domain: string;
  nodeName: string;
  nodeUid?: () => string | undefined;
  durationSeconds: number;
  intervalMs: number;
  log: (m: string) => void;
  onRenewed?: (ok: boolean) => void;
}

export class LeaseHeartbeat {
  private timer: unknown;
  private failures = 0;
  private stopped = false;

  constructor(private readonly o: LeaseOptions) {}

  start(): void {
    void this.tick();
  }

  stop(): void {
    this.stopped = true;
    this.o.clock.clearTimeout(this.timer);
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    let ok = true;
    try {
      await this.renew();
      if (this.failures > 0) this.o.log(`lease renewed after ${this.failures} failed attempt(s)`);
      this.failures = 0;
    } catch (e) {
      ok = false;
      this.failures += 1;
      this.o.log(`lease renewal failed (attempt ${this.failures}, next in ${nextLeaseDelay(this.failures, this.o.intervalMs)} ms): ${(e as Error).message}`);
    }
    this.o.onRenewed?.(ok);
    if (!this.stopped) this.timer = this.o.clock.setTimeout(() => void this.tick(), nextLeaseDelay(this.failures, this.o.intervalMs));
  }

  private async renew(): Promise<void> {
    const { api, domain, nodeName, clock } = this.o;
    const namespace = systemNamespacesOf(domain).nodeLease;
    const path = `/apis/coordination.${domain}/v1/namespaces/${namespace}/leases/${nodeName}`;
    const now = rfc3339Micro(clock.now());
    let lease: KubeObject | undefined;
    try {
      lease = await api.get(path);
    } catch (e) {
      if (!(e instanceof ApiError && e.code === 404)) throw e;
    }
    const uid = this.o.nodeUid?.();
    const owner = uid ? [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid }] : undefined;
    if (!lease) {
      await api.create(path.slice(0, path.lastIndexOf('/')), {
        apiVersion: `coordination.${domain}/v1`,
        kind: 'Lease',
        metadata: { name: nodeName, namespace, ...(owner ? { ownerReferences: owner } : {}) },
        spec: { holderIdentity: nodeName, leaseDurationSeconds: this.o.durationSeconds, renewTime: now },
      });
      return;
    }
    lease.spec = { ...(lease.spec ?? {}), holderIdentity: nodeName, leaseDurationSeconds: this.o.durationSeconds, renewTime: now };
    if (owner && !lease.metadata.ownerReferences?.length) lease.metadata.ownerReferences = owner;
    await api.update(path, lease);
  }
}
