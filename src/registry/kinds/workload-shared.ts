// Schema pieces and strategy helpers shared by the workload kinds (apps/v1,
// batch/v1, core/v1 ReplicationController and PodTemplate): the pod template,
// label selectors, status conditions, replica columns. Kubernetes' own
// definitions share the same pieces (PodTemplateSpec, LabelSelector).

import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { Definitions, Schema } from '../../machinery/schema/types.js';
import type { ApiObject, FieldError, JSONValue } from '../types.js';
import { get, getObject, getString } from './columns.js';
import { aliasServiceAccount, defaultProbeZeros, defaultVolumeSources } from './pod-resources.js';
import { type TemplateOwner, validatePodTemplate } from './workload-validation.js';
import { validateLabelSelector } from '../admission/matching.js';
import { validateLabelsAndAnnotations } from '../../machinery/schema/object-meta.js';
import { atomicList, enumOf, int32, int64, listMap, mapOf, obj, opaque, proto, ref, str, time } from '../../machinery/schema/dsl.js';

export function workloadDefinitions(n: SchemaNames): Definitions {
  return {
    [n.core('PodTemplateSpec')]: obj('Describes the data a pod should have when created from a template.', proto({ metadata: 1, spec: 2 }, {
      metadata: ref(n.meta('ObjectMeta'), "Standard object's metadata of the pods created from this template."),
      spec: ref(n.core('PodSpec'), 'Specification of the desired behaviour of the pod.'),
    })),
    [n.core('PersistentVolumeClaimSpec')]: obj('The desired characteristics of a volume claim.', proto({
      accessModes: 1, selector: 4, resources: 2, volumeName: 3, storageClassName: 5, volumeMode: 6, dataSource: 7, dataSourceRef: 8, volumeAttributesClassName: 9,
    }, {
      accessModes: atomicList('Desired access modes of the volume.', { type: 'string' }),
      selector: ref(n.meta('LabelSelector'), 'Label query over volumes to consider for binding.'),
      resources: obj('Minimum resources the volume should have.', proto({ limits: 1, requests: 2 }, {
        limits: mapOf('Maximum amount of compute resources allowed.', ref(n.quantity)),
        requests: mapOf('Minimum amount of compute resources required.', ref(n.quantity)),
      })),
      volumeName: str('Binding reference to the PersistentVolume backing this claim.'),
      storageClassName: str('Name of the StorageClass required by the claim.'),
      // kube's SetDefaults_PersistentVolumeClaimSpec: claims, StatefulSet and ephemeral volume claim templates alike
      volumeMode: enumOf('What type of volume is required by the claim.', ['Block', 'Filesystem'], { default: 'Filesystem' }),
      dataSource: ref(n.core('TypedLocalObjectReference'), 'An existing object to populate the volume from.'),
      dataSourceRef: obj('The object from which to populate the volume with data.', proto({ apiGroup: 1, kind: 2, name: 3, namespace: 4 }, {
      apiGroup: str('Group of the referenced resource; empty for the core group.'),
      kind: str('Kind of the referenced resource.'),
      name: str('Name of the referenced resource.'),
      namespace: str('Namespace of the referenced resource.'),
    })),
      volumeAttributesClassName: str('The VolumeAttributesClass used by this claim.'),
    })),
    [n.core('PersistentVolumeClaimStatus')]: obj('The current information/status of a persistent volume claim.', proto({
      phase: 1, accessModes: 2, capacity: 3, conditions: 4, allocatedResources: 5, allocatedResourceStatuses: 7, currentVolumeAttributesClassName: 8, modifyVolumeStatus: 9,
    }, {
      phase: enumOf('The current phase of the claim.', ['Bound', 'Lost', 'Pending']),
      accessModes: atomicList('The actual access modes the volume backing the claim has.', { type: 'string' }),
      capacity: mapOf('The actual resources of the underlying volume.', ref(n.quantity)),
      conditions: conditions('probed'),
      allocatedResources: mapOf('The resources allocated to the claim (volume expansion).', ref(n.quantity)),
      allocatedResourceStatuses: { ...mapOf('The status of each resource being resized.', { type: 'string' }), 'x-orch-map-type': 'granular' },
      currentVolumeAttributesClassName: str('The VolumeAttributesClass the claim is using.'),
      modifyVolumeStatus: obj('The status of a volume modification (VolumeAttributesClass).', proto({ targetVolumeAttributesClassName: 1, status: 2 }, {
        targetVolumeAttributesClassName: str('The VolumeAttributesClass being reconciled.'),
        status: str('Pending, InProgress or Infeasible.'),
      }), ['status']),
    })),
    [n.core('TypedLocalObjectReference')]: obj('A reference to a typed object in the same namespace.', proto({ apiGroup: 1, kind: 2, name: 3 }, {
      apiGroup: str('Group of the resource being referenced; empty for the core group.'),
      kind: str('Type of resource being referenced.'),
      name: str('Name of resource being referenced.'),
    }), ['kind', 'name'], { 'x-orch-map-type': 'atomic' }),
  };
}

export const template = (n: SchemaNames, d = 'Template of the pods this object creates.'): Schema => ref(n.core('PodTemplateSpec'), d);
export const selector = (n: SchemaNames, d = 'Label query over pods; must match the pod template labels.'): Schema => ref(n.meta('LabelSelector'), d);

/**
 * The field numbers of each kind's condition message (spec 000 §2.7), from
 * Kubernetes' generated.proto: ReplicaSet/StatefulSet/DaemonSet/RC/HPA
 * conditions number lastTransitionTime 3; DeploymentCondition keeps 3 free and
 * puts lastUpdateTime at 6, lastTransitionTime at 7; PVC and Job conditions
 * carry lastProbeTime at 3; metav1.Condition (PDB) observedGeneration at 3.
 */
export type ConditionShape = 'workload' | 'deployment' | 'probed' | 'meta';

const CONDITION_NUMBERS: Record<ConditionShape, Record<string, number>> = {
  workload: { type: 1, status: 2, lastTransitionTime: 3, reason: 4, message: 5 },
  deployment: { type: 1, status: 2, lastUpdateTime: 6, lastTransitionTime: 7, reason: 4, message: 5 },
  probed: { type: 1, status: 2, lastProbeTime: 3, lastTransitionTime: 4, reason: 5, message: 6 },
  meta: { type: 1, status: 2, observedGeneration: 3, lastTransitionTime: 4, reason: 5, message: 6 },
};

/** one status condition, with the properties and numbers of its kind's message */
export function condition(shape: ConditionShape): Schema {
  const all: Record<string, Schema> = {
    type: str('Type of condition.'),
    status: str('Status of the condition, one of True, False, Unknown.'),
    observedGeneration: int64('The .metadata.generation the condition was set based upon.'),
    lastProbeTime: time('Last time the condition was probed.'),
    lastUpdateTime: time('The last time this condition was updated.'),
    lastTransitionTime: time('Last time the condition transitioned from one status to another.'),
    reason: str("The reason for the condition's last transition."),
    message: str('A human readable message indicating details about the transition.'),
  };
  const numbers = CONDITION_NUMBERS[shape];
  const props = Object.fromEntries(Object.entries(all).filter(([k]) => k in numbers));
  return obj('A condition of the object.', proto(numbers, props), ['type', 'status']);
}

/** the `status.conditions` list every workload carries */
export function conditions(shape: ConditionShape = 'workload', d = 'Latest available observations of the current state.'): Schema {
  return listMap(d, condition(shape), ['type'], 'type');
}

// no schema minimum: kube's OpenAPI has none, and its message is the handwritten one (validateReplicas)
export const replicas = (d: string): Schema => int32(d);

/** kube's ValidateNonnegativeField for spec.replicas */
export function validateReplicas(o: ApiObject, at = 'spec'): FieldError[] {
  const v = get(o, ...at.split('.'), 'replicas');
  return typeof v === 'number' && v < 0 ? [invalid(`${at}.replicas`, v, 'must be greater than or equal to 0')] : [];
}
export const generationSeen = (): Schema => int64('The generation observed by the controller.');

const required = (field: string): FieldError => ({ field, type: 'FieldValueRequired', message: 'Required value' });
const invalid = (field: string, value: unknown, m: string): FieldError => ({ field, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(value)}: ${m}` });

/**
 * Kubernetes' ValidatePodTemplateSpecForReplicaSet and friends: a selector is
 * required, not empty, and selects the template's labels.
 */
export function validateSelectorAndTemplate(o: ApiObject, at = 'spec', opts: { templatePath?: string[]; selectorOptional?: boolean; owner?: TemplateOwner; old?: ApiObject } = {}): FieldError[] {
  const errs: FieldError[] = [];
  const spec = getObject(o, ...at.split('.'));
  if (!spec) return [required(at)];
  const tpath = opts.templatePath ?? ['template'];
  const tmpl = getObject(spec, ...tpath);
  const sel = getObject(spec, 'selector');
  const tLabels = (getObject(tmpl, 'metadata', 'labels') ?? {}) as Record<string, JSONValue>;
  // kube's ValidateLabelSelector first; a selector it refuses is not matched against the template
  const selectorErrs = sel ? validateLabelSelector(sel, `${at}.selector`) : [];
  errs.push(...selectorErrs);
  if (!sel) {
    if (!opts.selectorOptional) errs.push(required(`${at}.selector`));
  } else if (Object.keys(getObject(sel, 'matchLabels') ?? {}).length === 0 && (get(sel, 'matchExpressions') as JSONValue[] | undefined ?? []).length === 0) {
    errs.push(invalid(`${at}.selector`, sel, 'empty selector is invalid for deployment'));
  } else if (selectorErrs.length === 0 && tmpl && !matchesLabelSelector(sel, tLabels)) {
    errs.push(invalid(`${at}.${tpath.join('.')}.metadata.labels`, tLabels, '`selector` does not match template `labels`'));
  }
  const tmeta = getObject(tmpl, 'metadata');
  if (tmeta) errs.push(...validateLabelsAndAnnotations(tmeta as { labels?: Record<string, string>; annotations?: Record<string, string> }, `${at}.${tpath.join('.')}.metadata`));
  if (!tmpl) errs.push(required(`${at}.${tpath.join('.')}`));
  else if (!getObject(tmpl, 'spec')) errs.push(required(`${at}.${tpath.join('.')}.spec`));
  else if (!Array.isArray(get(tmpl, 'spec', 'containers')) || (get(tmpl, 'spec', 'containers') as JSONValue[]).length === 0) {
    errs.push(required(`${at}.${tpath.join('.')}.spec.containers`));
  } else errs.push(...validatePodTemplate(tmpl, `${at}.${tpath.join('.')}`, opts.owner ?? 'ReplicaSet', getObject(opts.old, ...at.split('.'), ...tpath)));
  if (opts.owner !== 'Job') errs.unshift(...validateReplicas(o, at));
  return errs;
}

/** the selector is immutable after create on apps/v1 kinds (Kubernetes' ValidateDeploymentUpdate and others) */
export function validateSelectorUnchanged(o: ApiObject, old: ApiObject): FieldError[] {
  const a = JSON.stringify(get(o, 'spec', 'selector') ?? null);
  const b = JSON.stringify(get(old, 'spec', 'selector') ?? null);
  return a === b ? [] : [invalid('spec.selector', get(o, 'spec', 'selector'), 'field is immutable')];
}

/** template-level pod defaults Kubernetes applies inside templates (restartPolicy, dnsPolicy, …) */
export function defaultPodTemplate(tmpl: Record<string, JSONValue> | undefined, restartPolicy = 'Always'): void {
  const spec = getObject(tmpl, 'spec');
  if (!spec) return;
  spec.restartPolicy ??= restartPolicy;
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.schedulerName ??= 'default-scheduler';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.securityContext ??= {};
  aliasServiceAccount(spec);
  defaultVolumeSources(spec);
  defaultProbeZeros(spec);
  for (const field of ['containers', 'initContainers'] as const) {
    const list = spec[field];
    if (!Array.isArray(list)) continue;
    for (const c of list) {
      if (c === null || typeof c !== 'object' || Array.isArray(c)) continue;
      c.terminationMessagePath ??= '/dev/termination-log';
      c.terminationMessagePolicy ??= 'File';
      if (c.imagePullPolicy === undefined && typeof c.image === 'string') {
        const last = c.image.slice(c.image.lastIndexOf('/') + 1);
        const tag = last.includes('@') ? 'digest' : last.includes(':') ? last.slice(last.lastIndexOf(':') + 1) : 'latest';
        c.imagePullPolicy = tag === 'latest' ? 'Always' : 'IfNotPresent';
      }
      const ports = c.ports;
      if (Array.isArray(ports)) for (const p of ports) if (p && typeof p === 'object' && !Array.isArray(p)) p.protocol ??= 'TCP';
    }
  }
}

/** kubectl's `Selector` wide column text */
export function selectorText(o: ApiObject, ...path: string[]): string {
  const sel = getObject(o, ...path);
  if (!sel) return '<none>';
  const parts: string[] = [];
  for (const [k, v] of Object.entries(getObject(sel, 'matchLabels') ?? {})) parts.push(`${k}=${String(v)}`);
  for (const e of (get(sel, 'matchExpressions') as JSONValue[] | undefined) ?? []) {
    const key = getString(e, 'key') ?? '';
    const op = getString(e, 'operator') ?? '';
    const values = ((get(e, 'values') as JSONValue[] | undefined) ?? []).map(String).join(',');
    parts.push(op === 'Exists' ? key : op === 'DoesNotExist' ? `!${key}` : `${key} ${op.toLowerCase()} (${values})`);
  }
  return parts.length ? parts.join(',') : '<none>';
}

/** container names and images of a template, as kubectl's wide output shows them */
export function templateContainers(o: ApiObject, what: 'name' | 'image', ...path: string[]): string {
  const cs = get(o, ...path, 'spec', 'containers');
  return Array.isArray(cs) ? cs.map((c) => getString(c, what) ?? '').join(',') : '';
}

export const num = (o: ApiObject, ...path: string[]): number => {
  const v = get(o, ...path);
  return typeof v === 'number' ? v : 0;
};

/** does a metav1.LabelSelector (matchLabels + matchExpressions) select these labels? */
export function matchesLabelSelector(sel: Record<string, JSONValue>, labels: Record<string, JSONValue>): boolean {
  for (const [k, v] of Object.entries(getObject(sel, 'matchLabels') ?? {})) if (labels[k] !== v) return false;
  for (const e of (get(sel, 'matchExpressions') as JSONValue[] | undefined) ?? []) {
    const key = getString(e, 'key') ?? '';
    const values = ((get(e, 'values') as JSONValue[] | undefined) ?? []).map(String);
    const has = Object.prototype.hasOwnProperty.call(labels, key);
    switch (getString(e, 'operator')) {
      case 'In': if (!has || !values.includes(String(labels[key]))) return false; break;
      case 'NotIn': if (has && values.includes(String(labels[key]))) return false; break;
      case 'Exists': if (!has) return false; break;
      case 'DoesNotExist': if (has) return false; break;
      default: return false;
    }
  }
  return true;
}
