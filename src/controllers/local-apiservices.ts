// Local APIServices (kube-aggregator's autoregister and crdregistration
// controllers), leader only: one `version.group` APIService, without
// spec.service, for every group/version the registry serves — built-in ones
// labelled `kube-aggregator.kubernetes.io/automanaged: onstart` with kube's
// priorities, custom resources' `true` with kube's 1000/100 — made at start
// and whenever the served set changes; an automanaged one whose group/version
// is no longer served is deleted. APIServices users create are left alone.

import { StatusError } from '../core/errors.js';
import type { GenericStore } from '../registry/generic-store.js';
import type { Registry } from '../registry/registry.js';
import type { ApiObject } from '../registry/types.js';

export const AUTOMANAGED = 'kube-aggregator.kubernetes.io/automanaged';

/** kube-apiserver 1.32's group priorities (controlplane DefaultGenericAPIServicePriorities), keyed by the group's first words */
const PRIORITIES: Record<string, { group: number; version: number }> = {
  '': { group: 18000, version: 1 },
  apps: { group: 17800, version: 15 },
  events: { group: 17750, version: 15 },
  authentication: { group: 17700, version: 15 },
  authorization: { group: 17600, version: 15 },
  autoscaling: { group: 17500, version: 15 },
  batch: { group: 17400, version: 15 },
  certificates: { group: 17300, version: 15 },
  networking: { group: 17200, version: 15 },
  policy: { group: 17100, version: 15 },
  'rbac.authorization': { group: 17000, version: 15 },
  storage: { group: 16800, version: 15 },
  apiextensions: { group: 16700, version: 15 },
  admissionregistration: { group: 16700, version: 15 },
  scheduling: { group: 16600, version: 15 },
  coordination: { group: 16500, version: 15 },
  node: { group: 16300, version: 15 },
  discovery: { group: 16200, version: 15 },
  'flowcontrol.apiserver': { group: 16100, version: 21 },
  apiregistration: { group: 18000, version: 15 },
};
/** kube's version priorities where a group serves more than one version */
const VERSION_PRIORITY: Record<string, number> = { 'autoscaling/v2': 30, 'autoscaling/v1': 15 };

export interface LocalAPIServicesOptions {
  registry: Registry;
  apiDomain: string;
  apiServices: () => GenericStore | undefined;
  log?: (msg: string) => void;
}

export class LocalAPIServices {
  private unsubscribe: (() => void) | undefined;
  private running = false;
  private pending: Promise<void> = Promise.resolve();
  private synced = false;

  constructor(private readonly o: LocalAPIServicesOptions) {}

  start(): void {
    this.running = true;
    this.unsubscribe = this.o.registry.onChange(() => this.queue());
    this.queue();
  }

  stop(): void {
    this.running = false;
    this.unsubscribe?.();
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** one pass at a time, in order; the last change is always seen */
  private queue(): void {
    this.pending = this.pending.then(() => (this.running ? this.sync() : undefined)).catch((e: unknown) => this.o.log?.(`local APIServices: ${(e as Error).message}`));
  }

  /** the APIService one served group/version should have */
  desired(group: string, version: string, custom: boolean): ApiObject {
    const p = this.priorityOf(group, version, custom);
    return {
      apiVersion: `apiregistration.${this.o.apiDomain}/v1`,
      kind: 'APIService',
      metadata: { name: `${version}.${group}`, labels: { [AUTOMANAGED]: custom ? 'true' : 'onstart' } },
      spec: { group, version, groupPriorityMinimum: p.group, versionPriority: p.version },
    };
  }

  private priorityOf(group: string, version: string, custom: boolean): { group: number; version: number } {
    if (custom) return { group: 1000, version: 100 };
    const suffix = `.${this.o.apiDomain}`;
    const key = group.endsWith(suffix) ? group.slice(0, -suffix.length) : group;
    const p = PRIORITIES[key] ?? { group: 1000, version: 15 };
    return { group: p.group, version: VERSION_PRIORITY[`${key}/${version}`] ?? p.version };
  }

  private async sync(): Promise<void> {
    const gs = this.o.apiServices();
    if (!gs) return;
    const served = new Map<string, ApiObject>();
    for (const def of this.o.registry.all()) {
      const name = `${def.version}.${def.group}`;
      if (!served.has(name)) served.set(name, this.desired(def.group, def.version, def.customResource === true));
    }
    const have = new Map((await gs.list('')).map((o) => [o.metadata?.name ?? '', o]));
    const opts = { dryRun: false, manager: 'orch-apiserver' } as const;
    for (const [name, want] of served) {
      const cur = have.get(name);
      if (cur && cur.metadata?.labels?.[AUTOMANAGED] === undefined) continue; // a user's own, kept as is
      if (cur && JSON.stringify(cur.spec) === JSON.stringify(want.spec)) continue;
      try {
        if (cur) await gs.guaranteedUpdate('', name, opts, (c) => ({ ...(c ?? want), spec: want.spec }));
        else await gs.create('', want, opts);
      } catch (e) {
        // one refusal does not hold back the others; the next change tries again
        if (!(e instanceof StatusError && e.code === 409)) this.o.log?.(`local APIServices: ${name}: ${(e as Error).message}`);
      }
    }
    for (const [name, cur] of have) {
      if (served.has(name) || cur.metadata?.labels?.[AUTOMANAGED] === undefined) continue;
      try {
        await gs.delete('', name, opts);
      } catch (e) {
        if (!(e instanceof StatusError && e.code === 404)) this.o.log?.(`local APIServices: ${name}: ${(e as Error).message}`);
      }
    }
    this.synced = true;
  }
}
