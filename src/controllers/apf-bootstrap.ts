// The leader creates kube's mandatory flow-control objects, the `exempt` and
// `catch-all` PriorityLevelConfigurations and FlowSchemas, when they are
// missing (kube-apiserver's poststarthook/apiserver/bootstrap-system-flowcontrol-configuration),
// so `kubectl get flowschemas` lists them as on kube. An existing object is
// left alone: validation keeps their specs fixed anyway. They are only
// stored; the overload protection's levels are built in (docs/reliability.md).

import { StatusError } from '../core/errors.js';
import type { GenericStore } from '../registry/generic-store.js';
import type { ApiObject } from '../registry/types.js';
import { MANDATORY_FLOW_SCHEMAS, MANDATORY_PRIORITY_LEVELS } from '../registry/kinds/flowcontrol-validation.js';
import { type Clock, systemClock } from '../core/clock.js';
import type { Controller } from './runtime/leader-gate.js';

export interface ApfBootstrapOptions {
  apiDomain: string;
  /** undefined when the group is not served (--runtime-config) */
  priorityLevels: () => GenericStore | undefined;
  flowSchemas: () => GenericStore | undefined;
  clock?: Clock;
  log?: (msg: string) => void;
}

/** the mandatory objects, priority levels first (the schemas name them) */
export function mandatoryFlowControlObjects(apiDomain: string): { kind: 'PriorityLevelConfiguration' | 'FlowSchema'; object: ApiObject }[] {
  const apiVersion = `flowcontrol.apiserver.${apiDomain}/v1`;
  const metadata = (name: string) => ({ name, annotations: { [`apf.${apiDomain}/autoupdate-spec`]: 'true' } });
  const of = <K extends 'PriorityLevelConfiguration' | 'FlowSchema'>(kind: K, specs: Record<string, unknown>) =>
    Object.entries(specs).map(([name, spec]) => ({ kind, object: { apiVersion, kind, metadata: metadata(name), spec: structuredClone(spec) } as ApiObject }));
  return [...of('PriorityLevelConfiguration', MANDATORY_PRIORITY_LEVELS), ...of('FlowSchema', MANDATORY_FLOW_SCHEMAS)];
}

export class ApfBootstrap implements Controller {
  private stopped = false;
  private run: Promise<void> = Promise.resolve();

  constructor(private readonly o: ApfBootstrapOptions) {}

  start(): void {
    this.stopped = false;
    this.run = this.ensure().catch((e: unknown) => {
      // retried, as a failed write is likely a store that is not available yet
      this.o.log?.(`apf bootstrap: ${(e as Error).message}; retrying`);
      (this.o.clock ?? systemClock).setTimeout(() => {
        if (!this.stopped) this.start();
      }, 1000);
    });
  }

  stop(): void {
    this.stopped = true;
  }

  /** resolves once the last start's pass ended (it never rejects) */
  settled(): Promise<void> {
    return this.run;
  }

  private async ensure(): Promise<void> {
    for (const { kind, object } of mandatoryFlowControlObjects(this.o.apiDomain)) {
      if (this.stopped) return;
      const gs = kind === 'FlowSchema' ? this.o.flowSchemas() : this.o.priorityLevels();
      if (!gs) return;
      try {
        await gs.create('', object, { dryRun: false, manager: 'orch-apf-bootstrap' });
      } catch (e) {
        // already there (an earlier start, another member, an operator): kept as it is
        if (!(e instanceof StatusError && e.code === 409)) throw e;
      }
    }
  }
}
