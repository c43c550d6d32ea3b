// core/v1 kinds that real manifests carry besides pods and services:
// ReplicationController, PodTemplate, PersistentVolume(Claim), ResourceQuota,
// LimitRange. Quota and limit ranges are enforced by their admission plugins
// (src/registry/quota/); volumes bound by the persistent volume controllers.

import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { Schema } from '../../machinery/schema/types.js';
import type { ApiObject, FieldError, ResourceDefinition } from '../types.js';
import { column, countOf, get, getArray, getObject, getString } from './columns.js';
import { atomicList, enumOf, int32, mapOf, obj, opaque, proto, ref, str, strMap, time } from '../../machinery/schema/dsl.js';
import { kindSchema } from './meta.js';
import { conditions, defaultPodTemplate, generationSeen, num, replicas, template, templateContainers, validateReplicas } from './workload-shared.js';
import { validateCounters, validatePodTemplate } from './workload-validation.js';
import { forbidden, invalid, notSupported } from './field-errors.js';
import { parseQuantity } from '../../core/quantity.js';
import { ZERO, formatAmount, usageOf } from '../quota/amount.js';
import { validateResourceQuotaSpec } from './quota-validation.js';
import { validatePersistentVolumeClaimUpdate } from './pvc-update-validation.js';
import { persistentVolumeUpdateErrors, resourceQuotaUpdateErrors } from './update-immutability.js';
import { validateVolumeNodeAffinity } from './pod-scheduling-validation.js';
import { validateDataSourceRef } from './required-members.js';
import { POD_TEMPLATE_SHAPE, PVC_SHAPE, SPEC_STATUS_SHAPE, whenPresent } from '../zero-shape.js';

const quantities = (n: SchemaNames, d: string): Schema => mapOf(d, ref(n.quantity));

export function replicationControllerDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: '', version: 'v1', kind: 'ReplicationController', resource: 'replicationcontrollers', singular: 'replicationcontroller', scope: 'Namespaced',
    shortNames: ['rc'], categories: ['all'], subresources: ['status', 'scale'], scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.spec.selector' },
    schema: kindSchema(n, 'ReplicationController represents the configuration of a replication controller.', proto({ spec: 2, status: 3 }, {
      spec: obj('Specification of the desired behaviour of the replication controller.', proto({ replicas: 1, minReadySeconds: 4, selector: 2, template: 3 }, {
        replicas: replicas('Number of desired replicas. Defaults to 1.'),
        minReadySeconds: int32('Minimum seconds a new pod should be ready to be considered available.', { 'x-orch-proto-omit-zero': true }),
        selector: strMap('Label query over pods (equality only); defaults to the template labels.', { 'x-orch-map-type': 'atomic' }),
        template: template(n),
      })),
      status: obj('Most recently observed status of the replication controller.', proto({ replicas: 1, fullyLabeledReplicas: 2, readyReplicas: 4, availableReplicas: 5, observedGeneration: 3, conditions: 6 }, {
        replicas: int32('Most recently observed number of replicas.'),
        fullyLabeledReplicas: int32('Pods whose labels match the template labels.'),
        readyReplicas: int32('Ready replicas.'),
        availableReplicas: int32('Available replicas.'),
        observedGeneration: generationSeen(),
        conditions: conditions(),
      }), ['replicas']),
    })),
    strategy: {
      zeroShape: { spec: { template: whenPresent(POD_TEMPLATE_SHAPE) }, status: { replicas: 0 } },
      // kube's rcStrategy.DefaultGarbageCollectionPolicy: core/v1 orphans the pods, as before server-side GC (no warning)
      defaultDeletePropagation: { policy: 'Orphan' },
      selectableFields: { 'status.replicas': countOf('status', 'replicas') },
      default: (o) => {
        const spec = getObject(o, 'spec');
        if (!spec) return;
        spec.replicas ??= 1;
        const labels = getObject(spec, 'template', 'metadata', 'labels');
        if (spec.selector === undefined && labels) spec.selector = { ...labels };
        if (labels && o.metadata && !o.metadata.labels) o.metadata.labels = { ...(labels as Record<string, string>) };
        defaultPodTemplate(getObject(spec, 'template'));
      },
      validate: validateRC,
      validateUpdate: (o, old) => validateRC(o, old),
      columns: [
        column('Desired', 'integer', (o) => num(o, 'spec', 'replicas')),
        column('Current', 'integer', (o) => num(o, 'status', 'replicas')),
        column('Ready', 'integer', (o) => num(o, 'status', 'readyReplicas')),
        column('Containers', 'string', (o) => templateContainers(o, 'name', 'spec', 'template'), { priority: 1 }),
        column('Images', 'string', (o) => templateContainers(o, 'image', 'spec', 'template'), { priority: 1 }),
      ],
    },
  };
}

function validateRC(o: ApiObject, old?: ApiObject): FieldError[] {
  const errs: FieldError[] = validateReplicas(o);
  const sel = getObject(o, 'spec', 'selector') ?? {};
  const labels = getObject(o, 'spec', 'template', 'metadata', 'labels') ?? {};
  if (Object.keys(sel).length === 0) errs.push({ field: 'spec.selector', type: 'FieldValueRequired', message: 'Required value' });
  else if (Object.entries(sel).some(([k, v]) => labels[k] !== v)) {
    errs.push({ field: 'spec.template.metadata.labels', type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(labels)}: \`selector\` does not match template \`labels\`` });
  }
  const tmpl = getObject(o, 'spec', 'template');
  if (tmpl) errs.push(...validatePodTemplate(tmpl, 'spec.template', 'ReplicationController', getObject(old, 'spec', 'template')));
  errs.push(...validateCounters(o, ['minReadySeconds']));
  return errs;
}

function validatePodTemplateObject(o: ApiObject, old?: ApiObject): FieldError[] {
  const tmpl = getObject(o, 'template');
  return tmpl ? validatePodTemplate(tmpl, 'template', 'PodTemplate', getObject(old, 'template')) : [];
}

export function podTemplateDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: '', version: 'v1', kind: 'PodTemplate', resource: 'podtemplates', singular: 'podtemplate', scope: 'Namespaced',
    schema: kindSchema(n, 'PodTemplate describes a template for creating copies of a predefined pod.', proto({ template: 2 }, { template: template(n, 'Template defines the pods that will be created from this pod template.') })),
    strategy: {
      zeroShape: { template: POD_TEMPLATE_SHAPE },
      default: (o) => defaultPodTemplate(getObject(o, 'template')),
      // kube's ValidatePodTemplate: the template's pod spec as a pod's, at `template.spec`
      validate: (o) => validatePodTemplateObject(o),
      validateUpdate: (o, old) => validatePodTemplateObject(o, old),
      // kube's podTemplateColumnDefinitions have no Age
      exactColumns: true,
      columns: [
        column('Containers', 'string', (o) => templateContainers(o, 'name', 'template')),
        column('Images', 'string', (o) => templateContainers(o, 'image', 'template')),
        column('Pod Labels', 'string', (o) => Object.entries(getObject(o, 'template', 'metadata', 'labels') ?? {}).map(([k, v]) => `${k}=${String(v)}`).join(',')),
      ],
    },
  };
}

/** kube's printers show a claim or volume being deleted as Terminating, whatever its phase */
const storagePhase = (o: ApiObject): string => (o.metadata?.deletionTimestamp ? 'Terminating' : (getString(o, 'status', 'phase') ?? ''));

const accessModes = (o: ApiObject, ...path: string[]): string => getArray(o, ...path)
  .map((m) => ({ ReadWriteOnce: 'RWO', ReadOnlyMany: 'ROX', ReadWriteMany: 'RWX', ReadWriteOncePod: 'RWOP' } as Record<string, string>)[String(m)] ?? String(m)).join(',');

/** kube's supportedAccessModes, as its sorted set lists them */
const CLAIM_ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];

/** kube's ValidatePersistentVolumeClaimSpec: access modes, and a storage request above zero */
function validateClaim(o: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  const modes = getArray(o, 'spec', 'accessModes');
  if (modes.length === 0) errs.push({ field: 'spec.accessModes', type: 'FieldValueRequired', message: 'Required value: at least 1 access mode is required' });
  let oncePod = false;
  let other = false;
  for (const m of modes) {
    if (!CLAIM_ACCESS_MODES.includes(m as string)) errs.push(notSupported('spec.accessModes', m, CLAIM_ACCESS_MODES));
    else if (m === 'ReadWriteOncePod') oncePod = true;
    else other = true;
  }
  if (oncePod && other) errs.push(forbidden('spec.accessModes', 'may not use ReadWriteOncePod with other access modes'));
  const storage = get(o, 'spec', 'resources', 'requests', 'storage');
  if (storage === undefined && !getString(o, 'spec', 'volumeName')) {
    errs.push({ field: 'spec.resources[storage]', type: 'FieldValueRequired', message: 'Required value' });
  } else if (storage !== undefined && !((parseQuantity(storage) ?? 0) > 0)) {
    errs.push(invalid('spec.resources[storage]', storage, 'must be greater than zero'));
  }
  errs.push(...validateDataSourceRef(get(o, 'spec', 'dataSourceRef'), 'spec.dataSourceRef'));
  return errs;
}

export function persistentVolumeClaimDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: '', version: 'v1', kind: 'PersistentVolumeClaim', resource: 'persistentvolumeclaims', singular: 'persistentvolumeclaim', scope: 'Namespaced',
    shortNames: ['pvc'], subresources: ['status'],
    schema: kindSchema(n, "PersistentVolumeClaim is a user's request for and claim to a persistent volume.", proto({ spec: 2, status: 3 }, {
      spec: ref(n.core('PersistentVolumeClaimSpec'), 'The desired characteristics of a volume requested by a pod author.'),
      status: ref(n.core('PersistentVolumeClaimStatus'), 'The current information/status of a persistent volume claim.'),
    })),
    strategy: {
      zeroShape: PVC_SHAPE,
      default: (o) => {
        const spec = getObject(o, 'spec');
        if (spec) spec.volumeMode ??= 'Filesystem';
      },
      prepareForCreate: (o) => {
        o.status = { phase: 'Pending' };
      },
      validate: validateClaim,
      validateUpdate: (o, old, subresource) => [...validateClaim(o), ...validatePersistentVolumeClaimUpdate(o, old, subresource)],
      columns: [
        column('Status', 'string', storagePhase),
        column('Volume', 'string', (o) => getString(o, 'spec', 'volumeName') ?? ''),
        column('Capacity', 'string', (o) => String(get(o, 'status', 'capacity', 'storage') ?? '')),
        column('Access Modes', 'string', (o) => accessModes(o, 'status', 'accessModes')),
        column('StorageClass', 'string', (o) => getString(o, 'spec', 'storageClassName') ?? '<unset>'),
        column('VolumeAttributesClass', 'string', (o) => getString(o, 'spec', 'volumeAttributesClassName') ?? '<unset>'),
        column('VolumeMode', 'string', (o) => getString(o, 'spec', 'volumeMode') ?? '', { priority: 1 }),
      ],
    },
  };
}

export function persistentVolumeDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: '', version: 'v1', kind: 'PersistentVolume', resource: 'persistentvolumes', singular: 'persistentvolume', scope: 'Cluster',
    shortNames: ['pv'], subresources: ['status'],
    schema: kindSchema(n, 'PersistentVolume is a storage resource provisioned by an administrator.', proto({ spec: 2, status: 3 }, {
      spec: ref(n.core('PersistentVolumeSpec'), 'The specification of a persistent volume.'),
      status: obj('Current information/status of a persistent volume.', proto({ phase: 1, message: 2, reason: 3, lastPhaseTransitionTime: 4 }, {
        phase: enumOf('Phase of the volume.', ['Available', 'Bound', 'Failed', 'Pending', 'Released']),
        message: str('Human-readable message about the state.'),
        reason: str('Brief reason for any failure.'),
        lastPhaseTransitionTime: time('When the volume transitioned to its current phase.'),
      })),
    })),
    strategy: {
      zeroShape: SPEC_STATUS_SHAPE,
      default: (o) => {
        const spec = getObject(o, 'spec');
        if (!spec) return;
        spec.persistentVolumeReclaimPolicy ??= 'Retain';
        spec.volumeMode ??= 'Filesystem';
      },
      // kube 1.31+ (PersistentVolumeLastPhaseTransitionTime GA): a new volume is Pending since its creation;
      // strategies have no clock, so the creation timestamp dates it. The controller dates later phases.
      prepareForCreate: (o) => {
        const at = o.metadata?.creationTimestamp;
        o.status = { phase: 'Pending', ...(at ? { lastPhaseTransitionTime: at } : {}) };
      },
      validate: (o) => validateVolumeNodeAffinity(getObject(o, 'spec')),
      validateUpdate: (o, old, sub) => [...persistentVolumeUpdateErrors(o, old, sub), ...(sub ? [] : validateVolumeNodeAffinity(getObject(o, 'spec')))],
      columns: [
        column('Capacity', 'string', (o) => String(get(o, 'spec', 'capacity', 'storage') ?? '')),
        column('Access Modes', 'string', (o) => accessModes(o, 'spec', 'accessModes')),
        column('Reclaim Policy', 'string', (o) => getString(o, 'spec', 'persistentVolumeReclaimPolicy') ?? ''),
        column('Status', 'string', storagePhase),
        column('Claim', 'string', (o) => (getString(o, 'spec', 'claimRef', 'name') ? `${getString(o, 'spec', 'claimRef', 'namespace') ?? ''}/${getString(o, 'spec', 'claimRef', 'name')}` : '')),
        column('StorageClass', 'string', (o) => getString(o, 'spec', 'storageClassName') ?? ''),
        column('VolumeAttributesClass', 'string', (o) => getString(o, 'spec', 'volumeAttributesClassName') ?? '<unset>'),
        column('Reason', 'string', (o) => getString(o, 'status', 'reason') ?? ''),
        column('VolumeMode', 'string', (o) => getString(o, 'spec', 'volumeMode') ?? '', { priority: 1 }),
      ],
    },
  };
}

export function resourceQuotaDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: '', version: 'v1', kind: 'ResourceQuota', resource: 'resourcequotas', singular: 'resourcequota', scope: 'Namespaced',
    shortNames: ['quota'], subresources: ['status'],
    schema: kindSchema(n, 'ResourceQuota sets aggregate quota restrictions enforced per namespace.', proto({ spec: 2, status: 3 }, {
      spec: obj('The desired quota.', proto({ hard: 1, scopes: 2, scopeSelector: 3 }, {
        hard: quantities(n, 'The set of desired hard limits for each named resource.'),
        scopes: atomicList('Filters that must match each object tracked by a quota.', { type: 'string' }),
        scopeSelector: obj('Scope filters by selector.', proto({ matchExpressions: 1 }, {
          matchExpressions: atomicList('Scope selector requirements.', obj('One requirement.', proto({ scopeName: 1, operator: 2, values: 3 }, {
            scopeName: str('The scope.'), operator: str('In, NotIn, Exists or DoesNotExist.'), values: atomicList('Values.', { type: 'string' }),
          }))),
        }), undefined, { 'x-orch-map-type': 'atomic' }),
      })),
      status: obj('The actual enforced quota and its current usage.', proto({ hard: 1, used: 2 }, {
        hard: quantities(n, 'The enforced hard limits.'),
        used: quantities(n, 'The current observed total usage.'),
      })),
    })),
    strategy: {
      zeroShape: SPEC_STATUS_SHAPE,
      validate: validateResourceQuotaSpec,
      validateUpdate: (o, old, subresource) => [...validateResourceQuotaSpec(o), ...(subresource ? [] : resourceQuotaUpdateErrors(o, old))],
      // kube's printResourceQuota: Age first, then `name: used/hard` of status.hard by name, limits.* apart
      columns: [
        column('Age', 'string', () => null),
        column('Request', 'string', (o) => quotaCells(o, false)),
        column('Limit', 'string', (o) => quotaCells(o, true)),
      ],
    },
  };
}

function quotaCells(o: ApiObject, limits: boolean): string {
  const hard = usageOf(getObject(o, 'status', 'hard'));
  const used = usageOf(getObject(o, 'status', 'used'));
  return [...hard.keys()].sort().filter((k) => k.startsWith('limits.') === limits)
    .map((k) => `${k}: ${formatAmount(used.get(k) ?? ZERO)}/${formatAmount(hard.get(k)!)}`).join(', ');
}

export function limitRangeDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: '', version: 'v1', kind: 'LimitRange', resource: 'limitranges', singular: 'limitrange', scope: 'Namespaced',
    shortNames: ['limits'],
    schema: kindSchema(n, 'LimitRange sets resource usage limits for each kind of resource in a namespace.', proto({ spec: 2 }, {
      spec: obj('The limits enforced.', proto({ limits: 1 }, {
        limits: atomicList('Limits that are enforced.', obj('A min/max/default per resource of one kind.', proto({ type: 1, max: 2, min: 3, default: 4, defaultRequest: 5, maxLimitRequestRatio: 6 }, {
          type: str('Type of resource this limit applies to (Pod, Container, PersistentVolumeClaim).'),
          max: quantities(n, 'Maximum usage constraints.'),
          min: quantities(n, 'Minimum usage constraints.'),
          default: quantities(n, 'Default limit when none is specified.'),
          defaultRequest: quantities(n, 'Default request when none is specified.'),
          maxLimitRequestRatio: quantities(n, 'Maximum limit/request ratio.'),
        }), ['type'])),
      }), ['limits']),
    })),
    strategy: { default: defaultLimitRange, zeroShape: { spec: {} } },
  };
}

/**
 * kube's SetDefaults_LimitRangeItem for Container items: the default limit is
 * the max where unset, the default request the default limit, else the min
 */
function defaultLimitRange(obj: ApiObject): void {
  for (const item of getArray(obj, 'spec', 'limits')) {
    if (!item || typeof item !== 'object' || Array.isArray(item)) continue;
    const it = item as Record<string, unknown>;
    if (it.type !== 'Container') continue;
    const map = (k: string): Record<string, unknown> => (it[k] && typeof it[k] === 'object' && !Array.isArray(it[k]) ? (it[k] as Record<string, unknown>) : {});
    const def = { ...map('max'), ...map('default') };
    const req = { ...map('min'), ...def, ...map('defaultRequest') };
    if (Object.keys(def).length > 0) it.default = def;
    if (Object.keys(req).length > 0) it.defaultRequest = req;
  }
}

export const coreExtraFactories = [
  replicationControllerDefinition, podTemplateDefinition, persistentVolumeClaimDefinition, persistentVolumeDefinition, resourceQuotaDefinition, limitRangeDefinition,
];
