// The leader creates kube's mandatory flow-control objects, the `exempt` and
// `catch-all` PriorityLevelConfigurations and FlowSchemas, when they are
// missing (kube-apiserver's poststarthook/apiserver/bootstrap-system-flowcontrol-configuration),
// so `kubectl get flowschemas` lists them as on kube. An existing object is
// left alone: validation keeps their specs fixed anyway. They are only
// stored; the overload protection's levels are built in (docs/reliability.md).

import type { GenericStore } from '../registry/generic-store.js';
import type { ApiObject } from '../registry/types.js';
import { MANDATORY_FLOW_SCHEMAS, MANDATORY_PRIORITY_LEVELS } from '../registry/kinds/flowcontrol-validation.js';
import type { Clock } from '../core/clock.js';
import { BootstrapObjects } from './bootstrap-objects.js';

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

/** the pass that creates the mandatory objects the leader lacks */
export function apfBootstrap(o: ApfBootstrapOptions): BootstrapObjects {
  return new BootstrapObjects({
    name: 'apf bootstrap',
    manager: 'orch-apf-bootstrap',
    objects: () => mandatoryFlowControlObjects(o.apiDomain).map(({ kind, object }) => ({ store: kind === 'FlowSchema' ? o.flowSchemas : o.priorityLevels, object })),
    clock: o.clock,
    log: o.log,
  });
}
