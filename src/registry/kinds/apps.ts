// apps/v1 Deployment, ReplicaSet, StatefulSet, DaemonSet, ControllerRevision.
// Stored and served with Kubernetes' defaulting and validation; no controller
// acts on them yet (docs/compatibility.md "Kinds served"). The `apps` group
// has no domain suffix in Kubernetes, whatever --api-domain is.

import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { Schema } from '../../machinery/schema/types.js';
import type { ApiObject, FieldError, JSONValue, ResourceDefinition } from '../types.js';
import { column, countOf, get, getArray, getObject, getString } from './columns.js';
import { bool, enumOf, int32, int64, intOrString, obj, opaque, proto, ref, str } from '../../machinery/schema/dsl.js';
import { kindSchema } from './meta.js';
import { statefulSetUpdateErrors } from './update-immutability.js';
import { deepEqual } from '../../machinery/meta.js';
import { invalid } from './field-errors.js';
import { validateCounters, validateDeploymentRollout, validateRollingUpdateDaemonSet } from './workload-validation.js';
import {
  conditions, defaultPodTemplate, generationSeen, num, replicas, selector, selectorText, template, templateContainers,
  validateSelectorAndTemplate, validateSelectorUnchanged,
} from './workload-shared.js';
import { POD_TEMPLATE_SHAPE, each } from '../zero-shape.js';

const SUBRESOURCES = ['status', 'scale'];
const SCALE = { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.spec.selector' };
/** Go's non-pointer `omitempty` fields: a protobuf client always sends their zero, kube's JSON leaves it out */
const GO_ZERO = { 'x-orch-proto-omit-zero': true } as const;

const wide = () => [
  column('Containers', 'string', (x) => templateContainers(x, 'name', 'spec', 'template'), { priority: 1, description: 'Names of each container in the template.' }),
  column('Images', 'string', (x) => templateContainers(x, 'image', 'spec', 'template'), { priority: 1, description: 'Images referenced by each container in the template.' }),
  column('Selector', 'string', (x) => selectorText(x, 'spec', 'selector'), { priority: 1, description: 'Label selector for the pods.' }),
];

const rollingUpdate = (d: string): Schema => obj(d, proto({ maxUnavailable: 1, maxSurge: 2 }, {
  maxUnavailable: intOrString('Maximum number (or percentage) of pods that can be unavailable during the update.'),
  maxSurge: intOrString('Maximum number (or percentage) of pods that can be scheduled above the desired number.'),
}));

function setDefault(o: ApiObject, path: string[], key: string, v: number | string | boolean | Record<string, never>): void {
  const parent = getObject(o, ...path);
  if (parent && parent[key] === undefined) parent[key] = v;
}

export function deploymentDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: 'apps', version: 'v1', kind: 'Deployment', resource: 'deployments', singular: 'deployment', scope: 'Namespaced',
    shortNames: ['deploy'], categories: ['all'], subresources: SUBRESOURCES, scale: SCALE,
    schema: kindSchema(n, 'Deployment enables declarative updates for Pods and ReplicaSets.', proto({ spec: 2, status: 3 }, {
      spec: obj('Specification of the desired behaviour of the Deployment.', proto({
        replicas: 1, selector: 2, template: 3, strategy: 4, minReadySeconds: 5, revisionHistoryLimit: 6, paused: 7, progressDeadlineSeconds: 9,
      }, {
        replicas: replicas('Number of desired pods. Defaults to 1.'),
        selector: selector(n),
        template: template(n),
        strategy: obj('The deployment strategy to use to replace existing pods with new ones.', proto({ type: 1, rollingUpdate: 2 }, {
          type: enumOf('Type of deployment. Default is RollingUpdate.', ['Recreate', 'RollingUpdate']),
          rollingUpdate: rollingUpdate('Rolling update config params. Present only if type = RollingUpdate.'),
          // retainKeys as in Kubernetes: a client-side apply to Recreate clears the defaulted rollingUpdate
        }), undefined, { 'x-orch-patch-strategy': 'retainKeys' }),
        minReadySeconds: int32('Minimum seconds a new pod should be ready without any of its containers crashing to be available.', GO_ZERO),
        revisionHistoryLimit: int32('Number of old ReplicaSets to retain to allow rollback. Defaults to 10.'),
        paused: bool('Indicates that the deployment is paused.', GO_ZERO),
        progressDeadlineSeconds: int32('Maximum time in seconds for a deployment to make progress before it is considered failed. Defaults to 600.'),
      }), ['selector', 'template']),
      status: obj('Most recently observed status of the Deployment.', proto({
        observedGeneration: 1, replicas: 2, updatedReplicas: 3, readyReplicas: 7, availableReplicas: 4, unavailableReplicas: 5, terminatingReplicas: 9, conditions: 6, collisionCount: 8,
      }, {
        observedGeneration: generationSeen(),
        replicas: int32('Total number of non-terminating pods targeted by this deployment.'),
        updatedReplicas: int32('Non-terminating pods that have the desired template spec.'),
        readyReplicas: int32('Pods targeted by this Deployment with a Ready condition.'),
        availableReplicas: int32('Available pods (ready for at least minReadySeconds).'),
        unavailableReplicas: int32('Unavailable pods targeted by this deployment.'),
        terminatingReplicas: int32('Terminating pods targeted by this deployment.'),
        conditions: conditions('deployment'),
        collisionCount: int32('Count of hash collisions for the Deployment.'),
      })),
    })),
    strategy: {
      zeroShape: { spec: { template: POD_TEMPLATE_SHAPE, strategy: {} }, status: {} },
      default: (o) => {
        setDefault(o, ['spec'], 'replicas', 1);
        const spec = getObject(o, 'spec');
        if (spec) {
          spec.strategy ??= {};
          const s = getObject(spec, 'strategy')!;
          s.type ??= 'RollingUpdate';
          if (s.type === 'RollingUpdate') {
            s.rollingUpdate ??= {};
            setDefault(o, ['spec', 'strategy', 'rollingUpdate'], 'maxUnavailable', '25%');
            setDefault(o, ['spec', 'strategy', 'rollingUpdate'], 'maxSurge', '25%');
          }
          spec.revisionHistoryLimit ??= 10;
          spec.progressDeadlineSeconds ??= 600;
          defaultPodTemplate(getObject(spec, 'template'));
        }
      },
      validate: (o) => [...validateSelectorAndTemplate(o), ...validateDeploymentRollout(o)],
      validateUpdate: (o, old) => [...validateSelectorAndTemplate(o, 'spec', { old }), ...validateDeploymentRollout(o), ...validateSelectorUnchanged(o, old)],
      columns: [
        column('Ready', 'string', (o) => `${num(o, 'status', 'readyReplicas')}/${num(o, 'spec', 'replicas')}`, { description: 'Number of the pod with ready state' }),
        column('Up-to-date', 'string', (o) => String(num(o, 'status', 'updatedReplicas')), { description: 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.' }),
        column('Available', 'string', (o) => String(num(o, 'status', 'availableReplicas')), { description: 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.' }),
        ...wide(),
      ],
    },
  };
}

export function replicaSetDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: 'apps', version: 'v1', kind: 'ReplicaSet', resource: 'replicasets', singular: 'replicaset', scope: 'Namespaced',
    shortNames: ['rs'], categories: ['all'], subresources: SUBRESOURCES, scale: SCALE,
    schema: kindSchema(n, 'ReplicaSet ensures that a specified number of pod replicas are running at any given time.', proto({ spec: 2, status: 3 }, {
      spec: obj('Specification of the desired behaviour of the ReplicaSet.', proto({ replicas: 1, minReadySeconds: 4, selector: 2, template: 3 }, {
        replicas: replicas('Number of desired pods. Defaults to 1.'),
        minReadySeconds: int32('Minimum seconds a new pod should be ready to be considered available.', GO_ZERO),
        selector: selector(n),
        template: template(n),
      }), ['selector']),
      status: obj('Most recently observed status of the ReplicaSet.', proto({
        replicas: 1, fullyLabeledReplicas: 2, readyReplicas: 4, availableReplicas: 5, terminatingReplicas: 7, observedGeneration: 3, conditions: 6,
      }, {
        replicas: int32('Most recently observed number of non-terminating pods.'),
        fullyLabeledReplicas: int32('Pods whose labels match the template labels.'),
        readyReplicas: int32('Pods with a Ready condition.'),
        availableReplicas: int32('Available pods.'),
        terminatingReplicas: int32('Terminating pods.'),
        observedGeneration: generationSeen(),
        conditions: conditions(),
      }), ['replicas']),
    })),
    strategy: {
      zeroShape: { spec: { template: POD_TEMPLATE_SHAPE }, status: { replicas: 0 } },
      selectableFields: { 'status.replicas': countOf('status', 'replicas') },
      default: (o) => {
        setDefault(o, ['spec'], 'replicas', 1);
        defaultPodTemplate(getObject(o, 'spec', 'template'));
      },
      validate: (o) => [...validateSelectorAndTemplate(o), ...validateCounters(o, ['minReadySeconds'])],
      validateUpdate: (o, old) => [...validateSelectorAndTemplate(o, 'spec', { old }), ...validateCounters(o, ['minReadySeconds']), ...validateSelectorUnchanged(o, old)],
      columns: [
        column('Desired', 'integer', (o) => num(o, 'spec', 'replicas'), { description: 'Number of desired pods.' }),
        column('Current', 'integer', (o) => num(o, 'status', 'replicas'), { description: 'Most recently observed number of replicas.' }),
        column('Ready', 'integer', (o) => num(o, 'status', 'readyReplicas'), { description: 'Number of pods with a Ready condition.' }),
        ...wide(),
      ],
    },
  };
}

export function statefulSetDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: 'apps', version: 'v1', kind: 'StatefulSet', resource: 'statefulsets', singular: 'statefulset', scope: 'Namespaced',
    shortNames: ['sts'], categories: ['all'], subresources: SUBRESOURCES, scale: SCALE,
    // kube defaults a StatefulSet decoded from storage too: one stored before the claim templates'
    // default reads (and is compared on update) as kube's would
    readDefaults: (o) => {
      if (getArray(o, 'spec', 'volumeClaimTemplates').every((t) => pendingPhase(t) !== undefined)) return o;
      const copy = structuredClone(o);
      defaultClaimTemplates(copy);
      return copy;
    },
    schema: kindSchema(n, 'StatefulSet represents a set of pods with consistent identities and stable storage.', proto({ spec: 2, status: 3 }, {
      spec: obj('The desired identities of pods in this set.', proto({
        replicas: 1, selector: 2, template: 3, volumeClaimTemplates: 4, serviceName: 5, podManagementPolicy: 6, updateStrategy: 7,
        revisionHistoryLimit: 8, minReadySeconds: 9, persistentVolumeClaimRetentionPolicy: 10, ordinals: 11,
      }, {
        replicas: replicas('Desired number of replicas. Defaults to 1.'),
        selector: selector(n),
        template: template(n),
        // a whole PersistentVolumeClaim, as kube's []v1.PersistentVolumeClaim: apiVersion and kind are kept
        // as written (TypeMeta, not in protobuf), status defaults to Pending (SetDefaults_PersistentVolumeClaim)
        volumeClaimTemplates: { type: 'array', description: 'Claims pods may reference; every claim gets a unique name per pod.', items: obj('A claim template.', {
          apiVersion: str('Versioned schema of this representation.'),
          kind: str('Kind of this object.'),
          ...proto({ metadata: 1, spec: 2, status: 3 }, {
            metadata: ref(n.meta('ObjectMeta'), "The claim's metadata."),
            spec: ref(n.core('PersistentVolumeClaimSpec'), 'The desired claim.'),
            status: ref(n.core('PersistentVolumeClaimStatus'), 'The status of the claim.'),
          }),
        }), 'x-orch-list-type': 'atomic' },
        serviceName: str('Name of the governing headless service.'),
        podManagementPolicy: enumOf('How pods are created during initial scale up and scale down.', ['OrderedReady', 'Parallel']),
        updateStrategy: obj('Strategy used to update pods when the template changes.', proto({ type: 1, rollingUpdate: 2 }, {
          type: enumOf('Type of StatefulSet update. Default is RollingUpdate.', ['OnDelete', 'RollingUpdate']),
          rollingUpdate: obj('Used when type is RollingUpdate.', proto({ partition: 1, maxUnavailable: 2 }, {
            partition: int32('Ordinal at which the StatefulSet is partitioned for updates.'),
            maxUnavailable: intOrString('Maximum pods that can be unavailable during the update.'),
          })),
        })),
        revisionHistoryLimit: int32('Maximum number of revisions kept in the history. Defaults to 10.'),
        minReadySeconds: int32('Minimum seconds a new pod should be ready to be considered available.', GO_ZERO),
        persistentVolumeClaimRetentionPolicy: obj('Lifecycle of claims created from volumeClaimTemplates.', proto({ whenDeleted: 1, whenScaled: 2 }, {
          whenDeleted: enumOf('What happens to claims when the StatefulSet is deleted.', ['Delete', 'Retain']),
          whenScaled: enumOf('What happens to claims when the StatefulSet is scaled down.', ['Delete', 'Retain']),
        })),
        ordinals: obj('Ordinal numbering of replicas.', proto({ start: 1 }, { start: int32('Number of the first replica index.') })),
      }), ['selector', 'template']),
      status: obj('The current status of pods in this set.', proto({
        observedGeneration: 1, replicas: 2, readyReplicas: 3, currentReplicas: 4, updatedReplicas: 5, currentRevision: 6, updateRevision: 7, collisionCount: 9, conditions: 10, availableReplicas: 11,
      }, {
        observedGeneration: generationSeen(),
        replicas: int32('Number of pods created by the controller.'),
        readyReplicas: int32('Pods with a Ready condition.'),
        currentReplicas: int32('Pods at currentRevision.'),
        updatedReplicas: int32('Pods at updateRevision.'),
        currentRevision: str('Version of the set used for pods in [0, currentReplicas).'),
        updateRevision: str('Version of the set used for pods in [replicas-updatedReplicas, replicas).'),
        collisionCount: int32('Count of hash collisions.'),
        conditions: conditions(),
        availableReplicas: int32('Available pods.'),
      }), ['replicas']),
    })),
    strategy: {
      zeroShape: {
        spec: { template: POD_TEMPLATE_SHAPE, updateStrategy: {}, volumeClaimTemplates: each({ metadata: {}, spec: { resources: {} }, status: {} }) },
        status: { replicas: 0, availableReplicas: 0 },
      },
      default: (o) => {
        setDefault(o, ['spec'], 'replicas', 1);
        setDefault(o, ['spec'], 'podManagementPolicy', 'OrderedReady');
        setDefault(o, ['spec'], 'revisionHistoryLimit', 10);
        setDefault(o, ['spec'], 'updateStrategy', {});
        setDefault(o, ['spec', 'updateStrategy'], 'type', 'RollingUpdate');
        if (getString(o, 'spec', 'updateStrategy', 'type') === 'RollingUpdate') {
          setDefault(o, ['spec', 'updateStrategy'], 'rollingUpdate', {});
          setDefault(o, ['spec', 'updateStrategy', 'rollingUpdate'], 'partition', 0);
        }
        setDefault(o, ['spec'], 'persistentVolumeClaimRetentionPolicy', {});
        setDefault(o, ['spec', 'persistentVolumeClaimRetentionPolicy'], 'whenDeleted', 'Retain');
        setDefault(o, ['spec', 'persistentVolumeClaimRetentionPolicy'], 'whenScaled', 'Retain');
        defaultPodTemplate(getObject(o, 'spec', 'template'));
        defaultClaimTemplates(o);
      },
      validate: (o) => validateStatefulSet(o),
      validateUpdate: (o, old, subresource) => [...validateStatefulSet(o), ...(subresource ? [] : statefulSetUpdateErrors(o, old))],
      columns: [
        column('Ready', 'string', (o) => `${num(o, 'status', 'readyReplicas')}/${num(o, 'spec', 'replicas')}`, { description: 'Number of the pod with ready state' }),
        column('Containers', 'string', (x) => templateContainers(x, 'name', 'spec', 'template'), { priority: 1 }),
        column('Images', 'string', (x) => templateContainers(x, 'image', 'spec', 'template'), { priority: 1 }),
      ],
    },
  };
}

/** a claim template's status.phase, when set */
function pendingPhase(t: JSONValue): string | undefined {
  const phase = get(t, 'status', 'phase');
  return typeof phase === 'string' && phase !== '' ? phase : undefined;
}

/** kube's SetDefaults_PersistentVolumeClaim on each claim template: status.phase Pending */
function defaultClaimTemplates(o: ApiObject): void {
  for (const t of getArray(o, 'spec', 'volumeClaimTemplates')) {
    if (t === null || typeof t !== 'object' || Array.isArray(t) || pendingPhase(t) !== undefined) continue;
    const status = t.status !== null && typeof t.status === 'object' && !Array.isArray(t.status) ? t.status : (t.status = {});
    status.phase = 'Pending';
  }
}

/** the DaemonSet's deprecated template generation annotation (daemon pods carry it as `pod-template-generation`) */
export const TEMPLATE_GENERATION = 'deprecated.daemonset.template.generation';

function setTemplateGeneration(o: ApiObject, generation: number): void {
  o.metadata = { ...(o.metadata ?? {}), annotations: { ...(o.metadata?.annotations ?? {}), [TEMPLATE_GENERATION]: String(generation) } };
}

export function daemonSetDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: 'apps', version: 'v1', kind: 'DaemonSet', resource: 'daemonsets', singular: 'daemonset', scope: 'Namespaced',
    shortNames: ['ds'], categories: ['all'], subresources: ['status'],
    schema: kindSchema(n, 'DaemonSet represents the configuration of a daemon set.', proto({ spec: 2, status: 3 }, {
      spec: obj('The desired behaviour of this daemon set.', proto({ selector: 1, template: 2, updateStrategy: 3, minReadySeconds: 4, revisionHistoryLimit: 6 }, {
        selector: selector(n),
        template: template(n),
        updateStrategy: obj('Strategy to replace existing DaemonSet pods with new pods.', proto({ type: 1, rollingUpdate: 2 }, {
          type: enumOf('Type of daemon set update. Default is RollingUpdate.', ['OnDelete', 'RollingUpdate']),
          rollingUpdate: rollingUpdate('Rolling update config params.'),
        })),
        minReadySeconds: int32('Minimum seconds a new pod should be ready to be considered available.', GO_ZERO),
        revisionHistoryLimit: int32('Number of old history entries to retain. Defaults to 10.'),
      }), ['selector', 'template']),
      status: obj('The current status of this daemon set.', proto({
        currentNumberScheduled: 1, numberMisscheduled: 2, desiredNumberScheduled: 3, numberReady: 4, observedGeneration: 5, updatedNumberScheduled: 6, numberAvailable: 7, numberUnavailable: 8, collisionCount: 9, conditions: 10,
      }, {
        currentNumberScheduled: int32('Nodes running at least one daemon pod that are supposed to.'),
        numberMisscheduled: int32('Nodes running the daemon pod that are not supposed to.'),
        desiredNumberScheduled: int32('Nodes that should be running the daemon pod.'),
        numberReady: int32('Nodes whose daemon pod is ready.'),
        observedGeneration: generationSeen(),
        updatedNumberScheduled: int32('Nodes running the updated daemon pod.'),
        numberAvailable: int32('Nodes whose daemon pod is available.'),
        numberUnavailable: int32('Nodes whose daemon pod is not available.'),
        collisionCount: int32('Count of hash collisions.'),
        conditions: conditions(),
      })),
    })),
    strategy: {
      zeroShape: {
        spec: { template: POD_TEMPLATE_SHAPE, updateStrategy: {} },
        status: { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 },
      },
      default: (o) => {
        setDefault(o, ['spec'], 'updateStrategy', {});
        setDefault(o, ['spec', 'updateStrategy'], 'type', 'RollingUpdate');
        if (getString(o, 'spec', 'updateStrategy', 'type') === 'RollingUpdate') {
          setDefault(o, ['spec', 'updateStrategy'], 'rollingUpdate', {});
          setDefault(o, ['spec', 'updateStrategy', 'rollingUpdate'], 'maxUnavailable', 1);
          setDefault(o, ['spec', 'updateStrategy', 'rollingUpdate'], 'maxSurge', 0);
        }
        setDefault(o, ['spec'], 'revisionHistoryLimit', 10);
        defaultPodTemplate(getObject(o, 'spec', 'template'));
      },
      // kube's TemplateGeneration, served in apps/v1 as this annotation: 1 at create, +1 when the template changes
      prepareForCreate: (o) => setTemplateGeneration(o, Math.max(1, Number(o.metadata?.annotations?.[TEMPLATE_GENERATION] ?? 1) || 1)),
      prepareForUpdate: (o, old) => {
        const prev = Number(old.metadata?.annotations?.[TEMPLATE_GENERATION] ?? 1) || 1;
        setTemplateGeneration(o, deepEqual(getObject(o, 'spec', 'template'), getObject(old, 'spec', 'template')) ? prev : prev + 1);
      },
      validate: (o) => validateDaemonSet(o),
      validateUpdate: (o, old) => [...validateDaemonSet(o, old), ...validateSelectorUnchanged(o, old)],
      columns: [
        column('Desired', 'integer', (o) => num(o, 'status', 'desiredNumberScheduled')),
        column('Current', 'integer', (o) => num(o, 'status', 'currentNumberScheduled')),
        column('Ready', 'integer', (o) => num(o, 'status', 'numberReady')),
        column('Up-to-date', 'integer', (o) => num(o, 'status', 'updatedNumberScheduled')),
        column('Available', 'integer', (o) => num(o, 'status', 'numberAvailable')),
        column('Node Selector', 'string', (o) => Object.entries(getObject(o, 'spec', 'template', 'spec', 'nodeSelector') ?? {}).map(([k, v]) => `${k}=${String(v)}`).join(',') || '<none>'),
        ...wide(),
      ],
    },
  };
}

export function controllerRevisionDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: 'apps', version: 'v1', kind: 'ControllerRevision', resource: 'controllerrevisions', singular: 'controllerrevision', scope: 'Namespaced',
    schema: kindSchema(n, 'ControllerRevision is an immutable snapshot of state data (used by StatefulSet and DaemonSet rollbacks).', proto({ data: 2, revision: 3 }, {
      data: { ...opaque('The serialized representation of the state.'), 'x-orch-proto-type': 'RawExtension' },
      revision: int64('The revision this object represents.'),
    }), ['revision']),
    strategy: {
      validateUpdate: (o, old) => JSON.stringify(o.data ?? null) === JSON.stringify(old.data ?? null)
        ? [] : [{ field: 'data', type: 'FieldValueInvalid', message: 'Invalid value: field is immutable' }],
      columns: [
        column('Controller', 'string', (o) => {
          const owner = (o.metadata?.ownerReferences ?? []).find((r) => r.controller === true);
          return owner ? `${String(owner.kind ?? '').toLowerCase()}.${String(owner.apiVersion ?? '').split('/')[0]}/${String(owner.name ?? '')}` : '<none>';
        }),
        column('Revision', 'integer', (o) => num(o, 'revision')),
      ],
    },
  };
}

export const appsFactories = [deploymentDefinition, replicaSetDefinition, statefulSetDefinition, daemonSetDefinition, controllerRevisionDefinition];

function validateStatefulSet(o: ApiObject): FieldError[] {
  const errs = [...validateSelectorAndTemplate(o, 'spec', { owner: 'StatefulSet' }), ...validateCounters(o, ['minReadySeconds', 'revisionHistoryLimit'])];
  const partition = get(o, 'spec', 'updateStrategy', 'rollingUpdate', 'partition');
  if (typeof partition === 'number' && partition < 0) errs.push(invalid('spec.updateStrategy.rollingUpdate.partition', partition, 'must be greater than or equal to 0'));
  return errs;
}

function validateDaemonSet(o: ApiObject, old?: ApiObject): FieldError[] {
  const errs = [...validateSelectorAndTemplate(o, 'spec', { owner: 'DaemonSet', old }), ...validateCounters(o, ['minReadySeconds', 'revisionHistoryLimit'])];
  const ru = getObject(o, 'spec', 'updateStrategy', 'rollingUpdate');
  if (getString(o, 'spec', 'updateStrategy', 'type') === 'RollingUpdate' && ru) errs.push(...validateRollingUpdateDaemonSet(ru, 'spec.updateStrategy.rollingUpdate'));
  return errs;
}
