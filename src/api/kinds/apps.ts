// apps/v1: Deployment, ReplicaSet, StatefulSet, DaemonSet, ControllerRevision
// (issue #11 item 4). Stored and served with kube's defaults, validation,
// `status` and `scale` sub-resources and kubectl's columns; no controller
// rolls them out yet (docs/compatibility.md).

import type { SchemaNames } from '../schema/naming.js';
import type { ApiObject, FieldError, ResourceDefinition } from '../types.js';
import { column, get, getString } from './columns.js';
import { atomicList, bool, enumOf, int32, int64, intOrString, obj, opaque, str, strMap } from './dsl.js';
import { kindSchema } from './meta.js';
import { selectorText, withScale } from './scale.js';
import {
  conditions,
  containersCell,
  defaultTemplate,
  immutable,
  labelSelector,
  nonNegative,
  observedGeneration,
  podTemplateSpec,
  ratio,
  replicas,
  setDefault,
  validateSelector,
  validateTemplate,
} from './workload-common.js';

const num = (o: ApiObject, ...p: string[]): number => Number(get(o, ...p) ?? 0);
const wideColumns = [
  column('Containers', 'string', (o) => containersCell(o, 'name', 'spec', 'template'), { priority: 1, description: 'Names of each container in the template.' }),
  column('Images', 'string', (o) => containersCell(o, 'image', 'spec', 'template'), { priority: 1, description: 'Images referenced by each container in the template.' }),
  column('Selector', 'string', (o) => selectorText(get(o, 'spec', 'selector')), { priority: 1, description: 'Label selector of the pods.' }),
];

const SCALE = { specReplicas: ['spec', 'replicas'], statusReplicas: ['status', 'replicas'], labelSelector: ['spec', 'selector'] };

/** a StatefulSet's pods also mount the volumes of its claim templates (kube validates them so) */
function withClaimVolumes(o: ApiObject): ApiObject {
  const claims = get(o, 'spec', 'volumeClaimTemplates');
  const spec = get(o, 'spec', 'template', 'spec');
  if (!Array.isArray(claims) || claims.length === 0 || !spec || typeof spec !== 'object' || Array.isArray(spec)) return o;
  const extra = claims.map((c) => ({ name: String(get(c, 'metadata', 'name') ?? ''), emptyDir: {} }));
  const volumes = [...((spec.volumes as unknown[] | undefined) ?? []), ...extra];
  return { ...o, spec: { ...(o.spec as object), template: { ...(get(o, 'spec', 'template') as object), spec: { ...spec, volumes } } } } as ApiObject;
}

/** what every apps/v1 workload with a template checks */
function workloadValidation(o: ApiObject): FieldError[] {
  return [...validateSelector(o, ['spec', 'selector'], ['spec', 'template']), ...validateTemplate(o, 'spec', 'template'), ...nonNegative(o, 'spec', 'replicas')];
}

function alwaysRestarts(o: ApiObject): FieldError[] {
  const rp = getString(o, 'spec', 'template', 'spec', 'restartPolicy');
  return rp && rp !== 'Always' ? [{ field: 'spec.template.spec.restartPolicy', type: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(rp)}: supported values: "Always"` }] : [];
}

const workloadStatus = (extra: Record<string, ReturnType<typeof int32>> = {}) =>
  obj('Most recently observed status.', {
    observedGeneration: observedGeneration(),
    replicas: int32('Total number of pods targeted.'),
    updatedReplicas: int32('Pods with the desired template.'),
    readyReplicas: int32('Pods with a Ready condition.'),
    availableReplicas: int32('Pods ready for at least minReadySeconds.'),
    unavailableReplicas: int32('Pods still needed for 100% availability.'),
    fullyLabeledReplicas: int32('Pods whose labels match the template labels.'),
    collisionCount: int32('Count of hash collisions.'),
    terminatingReplicas: int32('Pods being terminated.'),
    conditions: conditions('Latest observations of the state.'),
    ...extra,
  });

export function deploymentDefinition(n: SchemaNames): ResourceDefinition {
  const def: ResourceDefinition = {
    group: 'apps',
    version: 'v1',
    kind: 'Deployment',
    resource: 'deployments',
    singular: 'deployment',
    scope: 'Namespaced',
    shortNames: ['deploy'],
    categories: ['all'],
    subresources: ['status'],
    schema: kindSchema(n, 'Deployment enables declarative updates for Pods and ReplicaSets.', {
      spec: obj('Desired behaviour of the Deployment.', {
        replicas: replicas(),
        selector: labelSelector(n, 'Label selector of the pods; must match the template labels. Immutable.'),
        template: podTemplateSpec(n, 'Template of the pods.'),
        strategy: obj('How old pods are replaced by new ones.', {
          type: enumOf('Type of the strategy.', ['Recreate', 'RollingUpdate']),
          rollingUpdate: obj('Rolling update parameters.', {
            maxUnavailable: intOrString('Pods that may be unavailable during the update (number or percentage); default 25%.'),
            maxSurge: intOrString('Pods that may be created above the desired number (number or percentage); default 25%.'),
          }),
        }),
        minReadySeconds: int32('Seconds a new pod must be ready to count as available.', { minimum: 0 }),
        revisionHistoryLimit: int32('Old ReplicaSets to keep for rollback; default 10.', { minimum: 0 }),
        paused: bool('The deployment is paused.'),
        progressDeadlineSeconds: int32('Seconds before a stalled deployment is reported; default 600.'),
      }, ['selector', 'template']),
      status: workloadStatus(),
    }),
    strategy: {
      tracksGeneration: true,
      default(o) {
        setDefault(o, 1, 'spec', 'replicas');
        setDefault(o, 'RollingUpdate', 'spec', 'strategy', 'type');
        if (get(o, 'spec', 'strategy', 'type') === 'RollingUpdate') {
          setDefault(o, '25%', 'spec', 'strategy', 'rollingUpdate', 'maxUnavailable');
          setDefault(o, '25%', 'spec', 'strategy', 'rollingUpdate', 'maxSurge');
        }
        setDefault(o, 10, 'spec', 'revisionHistoryLimit');
        setDefault(o, 600, 'spec', 'progressDeadlineSeconds');
        defaultTemplate(o, 'spec', 'template');
      },
      validate: (o) => [...workloadValidation(o), ...alwaysRestarts(o)],
      validateUpdate: (o, old) => [...workloadValidation(o), ...alwaysRestarts(o), ...immutable(o, old, 'spec', 'selector')],
      columns: [
        column('Ready', 'string', (o) => ratio(o, ['status', 'readyReplicas'], ['spec', 'replicas']), { description: 'Number of the pod with ready state' }),
        column('Up-to-date', 'integer', (o) => num(o, 'status', 'updatedReplicas'), { description: 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.' }),
        column('Available', 'integer', (o) => num(o, 'status', 'availableReplicas'), { description: 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.' }),
        ...wideColumns,
      ],
    },
  };
  return withScale(def, SCALE);
}

export function replicaSetDefinition(n: SchemaNames): ResourceDefinition {
  return withScale(
    {
      group: 'apps',
      version: 'v1',
      kind: 'ReplicaSet',
      resource: 'replicasets',
      singular: 'replicaset',
      scope: 'Namespaced',
      shortNames: ['rs'],
      categories: ['all'],
      subresources: ['status'],
      schema: kindSchema(n, 'ReplicaSet ensures that a specified number of pod replicas are running at any given time.', {
        spec: obj('Desired behaviour of the ReplicaSet.', {
          replicas: replicas(),
          minReadySeconds: int32('Seconds a new pod must be ready to count as available.', { minimum: 0 }),
          selector: labelSelector(n, 'Label selector of the pods; must match the template labels.'),
          template: podTemplateSpec(n, 'Template of the pods.'),
        }, ['selector']),
        status: workloadStatus(),
      }),
      strategy: {
        tracksGeneration: true,
        default(o) {
          setDefault(o, 1, 'spec', 'replicas');
          defaultTemplate(o, 'spec', 'template');
        },
        validate: (o) => [...workloadValidation(o), ...alwaysRestarts(o)],
        validateUpdate: (o, old) => [...workloadValidation(o), ...alwaysRestarts(o), ...immutable(o, old, 'spec', 'selector')],
        columns: [
          column('Desired', 'integer', (o) => num(o, 'spec', 'replicas'), { description: 'Number of desired pods.' }),
          column('Current', 'integer', (o) => num(o, 'status', 'replicas'), { description: 'Number of actually running pods.' }),
          column('Ready', 'integer', (o) => num(o, 'status', 'readyReplicas'), { description: 'Number of pods ready.' }),
          ...wideColumns,
        ],
      },
    },
    SCALE,
  );
}

export function statefulSetDefinition(n: SchemaNames): ResourceDefinition {
  return withScale(
    {
      group: 'apps',
      version: 'v1',
      kind: 'StatefulSet',
      resource: 'statefulsets',
      singular: 'statefulset',
      scope: 'Namespaced',
      shortNames: ['sts'],
      categories: ['all'],
      subresources: ['status'],
      schema: kindSchema(n, 'StatefulSet represents a set of pods with consistent identities.', {
        spec: obj('Desired behaviour of the StatefulSet.', {
          replicas: replicas(),
          selector: labelSelector(n, 'Label selector of the pods; must match the template labels.'),
          template: podTemplateSpec(n, 'Template of the pods.'),
          volumeClaimTemplates: atomicList('Claims each pod gets, named <template>-<set>-<ordinal>.', obj('A PersistentVolumeClaim template.', {
            apiVersion: str('API version of the template.'),
            kind: str('Kind of the template.'),
            metadata: { $ref: n.meta('ObjectMeta') },
            spec: { $ref: n.core('PersistentVolumeClaimSpec') },
            status: opaque('Status of the claim template.'),
          })),
          serviceName: str('Name of the governing headless Service.'),
          podManagementPolicy: enumOf('How pods are created and deleted.', ['OrderedReady', 'Parallel']),
          updateStrategy: obj('How pods are updated.', {
            type: enumOf('Type of the strategy.', ['OnDelete', 'RollingUpdate']),
            rollingUpdate: obj('Rolling update parameters.', { partition: int32('Ordinal at which to partition the update.'), maxUnavailable: intOrString('Pods that may be unavailable during the update.') }),
          }),
          revisionHistoryLimit: int32('Revisions to keep; default 10.'),
          minReadySeconds: int32('Seconds a new pod must be ready to count as available.'),
          persistentVolumeClaimRetentionPolicy: obj('What happens to claims when the set is deleted or scaled down.', {
            whenDeleted: enumOf('On deletion.', ['Delete', 'Retain']),
            whenScaled: enumOf('On scale down.', ['Delete', 'Retain']),
          }),
          ordinals: obj('Ordinals of the replicas.', { start: int32('First ordinal.') }),
        }, ['selector', 'template']),
        status: workloadStatus({ currentReplicas: int32('Pods at the current revision.') }),
      }),
      strategy: {
        tracksGeneration: true,
        default(o) {
          setDefault(o, 1, 'spec', 'replicas');
          setDefault(o, 'OrderedReady', 'spec', 'podManagementPolicy');
          setDefault(o, 'RollingUpdate', 'spec', 'updateStrategy', 'type');
          if (get(o, 'spec', 'updateStrategy', 'type') === 'RollingUpdate') setDefault(o, 0, 'spec', 'updateStrategy', 'rollingUpdate', 'partition');
          setDefault(o, 10, 'spec', 'revisionHistoryLimit');
          setDefault(o, 'Retain', 'spec', 'persistentVolumeClaimRetentionPolicy', 'whenDeleted');
          setDefault(o, 'Retain', 'spec', 'persistentVolumeClaimRetentionPolicy', 'whenScaled');
          defaultTemplate(o, 'spec', 'template');
          const claims = get(o, 'spec', 'volumeClaimTemplates');
          if (Array.isArray(claims)) {
            for (const c of claims) if (c && typeof c === 'object' && !Array.isArray(c)) {
              c.apiVersion ??= 'v1';
              c.kind ??= 'PersistentVolumeClaim';
            }
          }
        },
        validate: (o) => [...workloadValidation(withClaimVolumes(o)), ...alwaysRestarts(o)],
        // kube allows updates only to replicas, template, updateStrategy, minReadySeconds, ordinals and the retention policy
        validateUpdate: (o, old) => [
          ...workloadValidation(withClaimVolumes(o)),
          ...alwaysRestarts(o),
          ...immutable(o, old, 'spec', 'selector'),
          ...immutable(o, old, 'spec', 'serviceName'),
          ...immutable(o, old, 'spec', 'podManagementPolicy'),
          ...immutable(o, old, 'spec', 'volumeClaimTemplates'),
        ],
        columns: [column('Ready', 'string', (o) => ratio(o, ['status', 'readyReplicas'], ['spec', 'replicas']), { description: 'Number of the pod with ready state' }), ...wideColumns.slice(0, 2)],
      },
    },
    SCALE,
  );
}

export function daemonSetDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: 'apps',
    version: 'v1',
    kind: 'DaemonSet',
    resource: 'daemonsets',
    singular: 'daemonset',
    scope: 'Namespaced',
    shortNames: ['ds'],
    categories: ['all'],
    subresources: ['status'],
    schema: kindSchema(n, 'DaemonSet represents the configuration of a daemon set: a pod on every eligible node.', {
      spec: obj('Desired behaviour of the DaemonSet.', {
        selector: labelSelector(n, 'Label selector of the pods; must match the template labels.'),
        template: podTemplateSpec(n, 'Template of the pods.'),
        updateStrategy: obj('How pods are updated.', {
          type: enumOf('Type of the strategy.', ['OnDelete', 'RollingUpdate']),
          rollingUpdate: obj('Rolling update parameters.', { maxUnavailable: intOrString('Pods that may be unavailable.'), maxSurge: intOrString('Pods that may be added.') }),
        }),
        minReadySeconds: int32('Seconds a new pod must be ready to count as available.'),
        revisionHistoryLimit: int32('Revisions to keep; default 10.'),
      }, ['selector', 'template']),
      status: obj('Most recently observed status.', {
        currentNumberScheduled: int32('Nodes running at least one daemon pod that should.'),
        numberMisscheduled: int32('Nodes running a daemon pod that should not.'),
        desiredNumberScheduled: int32('Nodes that should run the daemon pod.'),
        numberReady: int32('Nodes whose daemon pod is ready.'),
        observedGeneration: observedGeneration(),
        updatedNumberScheduled: int32('Nodes running the updated daemon pod.'),
        numberAvailable: int32('Nodes whose daemon pod is available.'),
        numberUnavailable: int32('Nodes whose daemon pod is not available.'),
        collisionCount: int32('Count of hash collisions.'),
        conditions: conditions('Latest observations of the state.'),
      }),
    }),
    strategy: {
      tracksGeneration: true,
      default(o) {
        setDefault(o, 'RollingUpdate', 'spec', 'updateStrategy', 'type');
        if (get(o, 'spec', 'updateStrategy', 'type') === 'RollingUpdate') {
          setDefault(o, 1, 'spec', 'updateStrategy', 'rollingUpdate', 'maxUnavailable');
          setDefault(o, 0, 'spec', 'updateStrategy', 'rollingUpdate', 'maxSurge');
        }
        setDefault(o, 10, 'spec', 'revisionHistoryLimit');
        defaultTemplate(o, 'spec', 'template');
      },
      validate: (o) => [...workloadValidation(o), ...alwaysRestarts(o)],
      validateUpdate: (o, old) => [...workloadValidation(o), ...alwaysRestarts(o), ...immutable(o, old, 'spec', 'selector')],
      columns: [
        column('Desired', 'integer', (o) => num(o, 'status', 'desiredNumberScheduled'), { description: 'The total number of nodes that should be running the daemon pod.' }),
        column('Current', 'integer', (o) => num(o, 'status', 'currentNumberScheduled'), { description: 'The number of nodes running at least one daemon pod.' }),
        column('Ready', 'integer', (o) => num(o, 'status', 'numberReady'), { description: 'The number of nodes that should be running the daemon pod and have one or more running and ready.' }),
        column('Up-to-date', 'integer', (o) => num(o, 'status', 'updatedNumberScheduled'), { description: 'The total number of nodes running the updated daemon pod.' }),
        column('Available', 'integer', (o) => num(o, 'status', 'numberAvailable'), { description: 'The number of nodes running an available daemon pod.' }),
        column('Node Selector', 'string', (o) => Object.entries((get(o, 'spec', 'template', 'spec', 'nodeSelector') as Record<string, string> | undefined) ?? {}).map(([k, v]) => `${k}=${v}`).join(',') || '<none>', { description: 'The node selector of the daemon pods.' }),
        ...wideColumns,
      ],
    },
  };
}

export function controllerRevisionDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: 'apps',
    version: 'v1',
    kind: 'ControllerRevision',
    resource: 'controllerrevisions',
    singular: 'controllerrevision',
    scope: 'Namespaced',
    schema: kindSchema(n, 'ControllerRevision is an immutable snapshot of state data a controller can roll back to.', {
      data: opaque('The serialized state (an object).'),
      revision: int64('The revision this object represents.'),
    }, ['revision']),
    strategy: {
      validateUpdate: (o, old) => immutable(o, old, 'data'),
      columns: [
        column('Controller', 'string', (o) => {
          const owner = (o.metadata?.ownerReferences ?? []).find((r) => r.controller);
          if (!owner) return '<none>';
          const kind = String(owner.kind ?? '').toLowerCase();
          return `${String(owner.apiVersion ?? '').startsWith('apps/') ? `${kind}.apps` : kind}/${String(owner.name ?? '')}`;
        }, { description: 'Controller of the revision.' }),
        column('Revision', 'integer', (o) => num(o, 'revision'), { description: 'Revision number.' }),
      ],
    },
  };
}

export function replicationControllerDefinition(n: SchemaNames): ResourceDefinition {
  return withScale(
    {
      group: '',
      version: 'v1',
      kind: 'ReplicationController',
      resource: 'replicationcontrollers',
      singular: 'replicationcontroller',
      scope: 'Namespaced',
      shortNames: ['rc'],
      categories: ['all'],
      subresources: ['status'],
      schema: kindSchema(n, 'ReplicationController represents the configuration of a replication controller.', {
        spec: obj('Desired behaviour of the controller.', {
          replicas: replicas(),
          minReadySeconds: int32('Seconds a new pod must be ready to count as available.'),
          selector: strMap('Labels of the pods; defaults to the template labels.', { 'x-orch-map-type': 'atomic' }),
          template: podTemplateSpec(n, 'Template of the pods.'),
        }),
        status: workloadStatus(),
      }),
      strategy: {
        tracksGeneration: true,
        default(o) {
          setDefault(o, 1, 'spec', 'replicas');
          const labels = get(o, 'spec', 'template', 'metadata', 'labels');
          if (get(o, 'spec', 'selector') === undefined && labels && typeof labels === 'object') setDefault(o, { ...(labels as object) } as never, 'spec', 'selector');
          defaultTemplate(o, 'spec', 'template');
        },
        validate: (o) => [...validateTemplate(o, 'spec', 'template'), ...nonNegative(o, 'spec', 'replicas'), ...alwaysRestarts(o)],
        columns: [
          column('Desired', 'integer', (o) => num(o, 'spec', 'replicas'), { description: 'Number of desired pods.' }),
          column('Current', 'integer', (o) => num(o, 'status', 'replicas'), { description: 'Number of actually running pods.' }),
          column('Ready', 'integer', (o) => num(o, 'status', 'readyReplicas'), { description: 'Number of pods ready.' }),
        ],
      },
    },
    { specReplicas: ['spec', 'replicas'], statusReplicas: ['status', 'replicas'], labelMap: ['spec', 'selector'] },
  );
}

export function podTemplateDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: '',
    version: 'v1',
    kind: 'PodTemplate',
    resource: 'podtemplates',
    singular: 'podtemplate',
    scope: 'Namespaced',
    schema: kindSchema(n, 'PodTemplate describes a template for creating copies of a predefined pod.', {
      template: podTemplateSpec(n, 'The pod template.'),
    }),
    strategy: {
      default: (o) => defaultTemplate(o, 'template'),
      validate: (o) => validateTemplate(o, 'template'),
      columns: [
        column('Containers', 'string', (o) => containersCell(o, 'name', 'template'), { description: 'Names of the containers.' }),
        column('Images', 'string', (o) => containersCell(o, 'image', 'template'), { description: 'Images of the containers.' }),
        column('Pod Labels', 'string', (o) => Object.entries((get(o, 'template', 'metadata', 'labels') as Record<string, string> | undefined) ?? {}).map(([k, v]) => `${k}=${v}`).join(','), { description: 'Labels of the pods.' }),
      ],
    },
  };
}
