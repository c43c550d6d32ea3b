// What metadata a write to a kind's `/status` takes from the written object,
// as Kubernetes' status strategies decide it (their BeforeUpdate keeps the
// written metadata but for what the strategy resets):
// - the workload kinds (ReplicaSet, ReplicationController, DaemonSet,
//   StatefulSet, Job, CronJob) reset the spec alone: all of it (labels,
//   annotations, finalizers, owner references; kube's Job e2e test patches an
//   annotation through `/status` and expects it);
// - a Deployment's strategy resets the spec and the labels: all but the labels;
// - the other built-in kinds: the labels and annotations (the e2e "should apply
//   changes to a namespace status" patches an annotation with the conditions);
// - a custom resource's `/status` keeps all of the stored metadata (the CRD
//   status strategy copies the old object).
// The store carries the system fields (uid, creationTimestamp, …) over.

import type { ObjectMeta, ResourceDefinition } from './types.js';

/** 'all': every written field but `except`; 'some': only `fields` */
export type StatusWriteMetadata = { take: 'all'; except: (keyof ObjectMeta)[] } | { take: 'some'; fields: (keyof ObjectMeta)[] };

const ALL: StatusWriteMetadata = { take: 'all', except: [] };
const BY_RESOURCE: Record<string, StatusWriteMetadata> = {
  'apps/deployments': { take: 'all', except: ['labels'] },
  'apps/replicasets': ALL,
  'apps/daemonsets': ALL,
  'apps/statefulsets': ALL,
  '/replicationcontrollers': ALL,
  'batch/jobs': ALL,
  'batch/cronjobs': ALL,
};
const LABELS_AND_ANNOTATIONS: StatusWriteMetadata = { take: 'some', fields: ['labels', 'annotations'] };
const NONE: StatusWriteMetadata = { take: 'some', fields: [] };

export function statusWriteMetadata(def: Pick<ResourceDefinition, 'group' | 'resource' | 'customResource'>): StatusWriteMetadata {
  if (def.customResource) return NONE;
  return BY_RESOURCE[`${def.group}/${def.resource}`] ?? LABELS_AND_ANNOTATIONS;
}

/** the metadata of a `/status` write: `stored` with what the rule takes from `written` */
export function statusWriteMeta(rule: StatusWriteMetadata, stored: ObjectMeta, written: ObjectMeta): ObjectMeta {
  const out: ObjectMeta = rule.take === 'all' ? { ...written } : { ...stored };
  const fromStored = rule.take === 'all';
  for (const f of rule.take === 'all' ? rule.except : rule.fields) {
    const v = fromStored ? stored[f] : written[f];
    if (v === undefined) delete out[f];
    else (out as Record<string, unknown>)[f] = v;
  }
  return out;
}

/** the metadata a server-side apply to `/status` may own: the labels and annotations the rule takes */
export function statusApplyMetadataFields(rule: StatusWriteMetadata): ('labels' | 'annotations')[] {
  const both = ['labels', 'annotations'] as const;
  return rule.take === 'all' ? both.filter((f) => !rule.except.includes(f)) : both.filter((f) => rule.fields.includes(f));
}
