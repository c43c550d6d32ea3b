// What metadata a write to a kind's `/status` may change, as Kubernetes'
// status strategies decide it. Most of them reset only what a status write
// may not touch and keep the rest of the written object: the workload kinds'
// (ReplicaSet, ReplicationController, DaemonSet, StatefulSet, Job, CronJob)
// reset the spec alone, so labels, annotations, finalizers and owner
// references written through `/status` are kept (kube's Job e2e test patches
// an annotation through `/status` and expects it); a Deployment's resets the
// spec and the labels. The other kinds keep orch's stricter rule: a `/status`
// write changes only the status.

import type { ResourceDefinition } from './types.js';

/** 'none': metadata as stored; 'all': as written (system fields carried over by the store); 'all-but-labels': as written, labels as stored */
export type StatusWriteMetadata = 'none' | 'all' | 'all-but-labels';

const BY_RESOURCE: Record<string, StatusWriteMetadata> = {
  'apps/deployments': 'all-but-labels',
  'apps/replicasets': 'all',
  'apps/daemonsets': 'all',
  'apps/statefulsets': 'all',
  '/replicationcontrollers': 'all',
  'batch/jobs': 'all',
  'batch/cronjobs': 'all',
};

export function statusWriteMetadata(def: Pick<ResourceDefinition, 'group' | 'resource'>): StatusWriteMetadata {
  return BY_RESOURCE[`${def.group}/${def.resource}`] ?? 'none';
}
