// Local APIServices (kube-aggregator's autoregister and crdregistration
// controllers), leader only: one `version.group` APIService, without
// spec.service, for every group/version the registry serves — built-in ones
// labelled `kube-aggregator.kubernetes.io/automanaged: onstart` with kube's
// priorities, custom resources' `true` with kube's 1000/100 — made at start
// and whenever the served set changes; an automanaged one whose group/version
// is no longer served is deleted. APIServices users create are left alone.
// As kube's autoregister table: `onstart` ones are created or updated by the
// first pass of a start only (one deleted later stays deleted until the next
// start); `true` ones are kept continuously, so one deleted is made again.

import { StatusError } from '../core/errors.js';
import type { GenericStore } from '../registry/generic-store.js';
import type { Registry } from '../registry/registry.js';
import { builtInPriority, CUSTOM_PRIORITY, type APIServicePriority } from '../registry/group-priorities.js';
import type { ApiObject } from '../registry/types.js';
import { type InformerSource, type InformerUse, sharedInformers } from './runtime/index.js';

export const AUTOMANAGED = 'kube-aggregator.kubernetes.io/automanaged';

export interface LocalAPIServicesOptions {
  registry: Registry;
  apiDomain: string;
  apiServices: () => GenericStore | undefined;
  /** the store's applied feed: an automanaged `true` APIService deleted is made again */
  store?: InformerSource;
  log?: (msg: string) => void;
}

export class LocalAPIServices {
  private unsubscribe: (() => void) | undefined;
  private running = false;
  private pending: Promise<void> = Promise.resolve();
  private synced = false;
  /** this start's first pass is done: `onstart` APIServices are left alone from then on */
  private startPassDone = false;
  private deletions: InformerUse | undefined;

  constructor(private readonly o: LocalAPIServicesOptions) {}

  start(): void {
    this.running = true;
    this.startPassDone = false;
    this.unsubscribe = this.o.registry.onChange(() => this.queue());
    const gs = this.o.apiServices();
    if (this.o.store && gs) {
      this.deletions = sharedInformers(this.o.store).use(gs.rangeKeys(''), {
        delete: (o) => {
          if (o.metadata?.labels?.[AUTOMANAGED] === 'true') this.queue();
        },
      });
    }
    this.queue();
  }

  stop(): void {
    this.running = false;
    this.unsubscribe?.();
    this.deletions?.release();
    this.deletions = undefined;
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

  private priorityOf(group: string, version: string, custom: boolean): APIServicePriority {
    if (custom) return CUSTOM_PRIORITY;
    return builtInPriority(group, version, this.o.apiDomain) ?? { group: 1000, version: 15 };
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
      // one a user pointed at a Service (metrics-server's manifest applied over v1beta1.metrics.<domain>): aggregated now, kept
      if (cur && (cur.spec as { service?: unknown } | undefined)?.service) continue;
      // kube's `onstart`: synced by the first pass of a start only
      if (this.startPassDone && want.metadata?.labels?.[AUTOMANAGED] === 'onstart') continue;
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
      if (served.has(name) || cur.metadata?.labels?.[AUTOMANAGED] === undefined || (cur.spec as { service?: unknown } | undefined)?.service) continue;
      try {
        await gs.delete('', name, opts);
      } catch (e) {
        if (!(e instanceof StatusError && e.code === 404)) this.o.log?.(`local APIServices: ${name}: ${(e as Error).message}`);
      }
    }
    this.startPassDone = true;
    this.synced = true;
  }
}
