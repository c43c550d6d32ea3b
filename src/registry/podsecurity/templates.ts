// Where a write's pod (or pod template) is: pods themselves, and the pod
// templates of the workload kinds kube's PodSecurity plugin warns about.

import type { ApiObject } from '../types.js';
import type { PodMeta, PodSpec } from './pod-view.js';

export interface PodView {
  meta: PodMeta;
  spec: PodSpec;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined);

/** where each workload kind keeps its pod template, by `group/resource` */
const TEMPLATE_PATHS: Record<string, string[]> = {
  '/replicationcontrollers': ['spec', 'template'],
  '/podtemplates': ['template'],
  'apps/replicasets': ['spec', 'template'],
  'apps/deployments': ['spec', 'template'],
  'apps/statefulsets': ['spec', 'template'],
  'apps/daemonsets': ['spec', 'template'],
  'batch/jobs': ['spec', 'template'],
  'batch/cronjobs': ['spec', 'jobTemplate', 'spec', 'template'],
};

export function isWorkload(group: string, resource: string): boolean {
  return `${group}/${resource}` in TEMPLATE_PATHS;
}

export function podOf(pod: ApiObject): PodView {
  return { meta: (pod.metadata ?? {}) as PodMeta, spec: (obj(pod.spec) ?? {}) as PodSpec };
}

/** the workload's pod template; undefined when it has none (an optional template left out) */
export function templateOf(group: string, resource: string, o: ApiObject): PodView | undefined {
  let cur: Json | undefined = o as unknown as Json;
  for (const k of TEMPLATE_PATHS[`${group}/${resource}`] ?? []) cur = obj(cur?.[k]);
  if (!cur) return undefined;
  return { meta: (obj(cur.metadata) ?? {}) as PodMeta, spec: (obj(cur.spec) ?? {}) as PodSpec };
}
