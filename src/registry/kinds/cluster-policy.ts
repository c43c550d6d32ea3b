// policy/v1 PodDisruptionBudget, autoscaling/v2 and v1
// HorizontalPodAutoscaler, storage.<domain>/v1 StorageClass,
// scheduling.<domain>/v1 PriorityClass, certificates.<domain>/v1
// CertificateSigningRequest. Stored and served; the disruption controller
// (src/controllers/disruption/) writes PodDisruptionBudget status, the
// HorizontalPodAutoscaler controller (src/controllers/autoscaling/) scales
// targets and writes autoscaler status.

import { certificateSigningRequestDefinition } from './csr.js';
import { hpaStorage } from './hpa-conversion.js';
import { formatHpaTargets } from './hpa-targets.js';
import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { Schema } from '../../machinery/schema/types.js';
import type { ApiObject, FieldError, ResourceDefinition } from '../types.js';
import { column, fieldOf, get, getArray, getObject, getString } from './columns.js';
import { atomicList, bool, enumOf, int32, intOrString, mapOf, obj, opaque, proto, ref, str, strMap, time } from '../../machinery/schema/dsl.js';
import { kindSchema } from './meta.js';
import { storageClassUpdateErrors } from './update-immutability.js';
import { validateAllowedTopologies, validateMetaConditions } from './required-members.js';
import { conditions, generationSeen, num, selector } from './workload-shared.js';
import { notMoreThan100, validateIntOrPercent } from './workload-validation.js';
import { type ZeroShape, each, whenPresent } from '../zero-shape.js';

const strings = (d: string): Schema => atomicList(d, { type: 'string' });
const fieldErr = (field: string, type: string, message: string): FieldError => ({ field, type, message });

export function podDisruptionBudgetDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: 'policy', version: 'v1', kind: 'PodDisruptionBudget', resource: 'poddisruptionbudgets', singular: 'poddisruptionbudget', scope: 'Namespaced',
    shortNames: ['pdb'], subresources: ['status'],
    schema: kindSchema(n, 'PodDisruptionBudget limits the number of pods of a replicated application that are down simultaneously from voluntary disruptions.', proto({ spec: 2, status: 3 }, {
      spec: obj('Specification of the desired behaviour of the budget.', proto({ minAvailable: 1, selector: 2, maxUnavailable: 3, unhealthyPodEvictionPolicy: 4 }, {
        minAvailable: intOrString('Pods that must still be available after an eviction (number or percentage).'),
        selector: selector(n, 'Label query over pods whose evictions are managed by the budget.'),
        maxUnavailable: intOrString('Pods that may be unavailable after an eviction (number or percentage).'),
        unhealthyPodEvictionPolicy: enumOf('When unhealthy running pods may be evicted.', ['AlwaysAllow', 'IfHealthyBudget']),
      })),
      status: obj('Most recently observed status of the budget.', proto({ observedGeneration: 1, disruptedPods: 2, disruptionsAllowed: 3, currentHealthy: 4, desiredHealthy: 5, expectedPods: 6, conditions: 7 }, {
        observedGeneration: generationSeen(),
        disruptedPods: mapOf('Pods whose eviction was processed but not yet observed.', time('When the eviction was processed.')),
        disruptionsAllowed: int32('Number of pod disruptions currently allowed.'),
        currentHealthy: int32('Current number of healthy pods.'),
        desiredHealthy: int32('Minimum desired number of healthy pods.'),
        expectedPods: int32('Total number of pods counted by this budget.'),
        conditions: conditions('meta'),
      })),
    })),
    strategy: {
      // metav1.Condition's message has no omitempty: kube writes "" for a condition written without one
      zeroShape: { spec: {}, status: { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0, conditions: each({ message: '' }) } },
      prepareForCreate: (o) => {
        o.status = { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };
      },
      validate: validatePDB,
      // kube's status strategy: ValidatePodDisruptionBudgetStatusAndConditions
      validateUpdate: (o, _old, sub) => (sub === 'status' ? [...validatePDB(o), ...validateMetaConditions(get(o, 'status', 'conditions'), 'status.conditions')] : validatePDB(o)),
      columns: [
        column('Min Available', 'string', (o) => String(get(o, 'spec', 'minAvailable') ?? 'N/A')),
        column('Max Unavailable', 'string', (o) => String(get(o, 'spec', 'maxUnavailable') ?? 'N/A')),
        column('Allowed Disruptions', 'integer', (o) => num(o, 'status', 'disruptionsAllowed')),
      ],
    },
  };
}

function validatePDB(o: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  if (get(o, 'spec', 'minAvailable') !== undefined && get(o, 'spec', 'maxUnavailable') !== undefined) {
    errs.push(fieldErr('spec', 'FieldValueInvalid', 'Invalid value: minAvailable and maxUnavailable cannot be both set'));
  }
  // kube's ValidatePositiveIntOrPercent and IsNotMoreThan100Percent
  for (const f of ['minAvailable', 'maxUnavailable']) {
    const v = get(o, 'spec', f);
    if (v === undefined || v === null) continue;
    errs.push(...validateIntOrPercent(v, `spec.${f}`), ...notMoreThan100(v, `spec.${f}`));
  }
  return errs;
}

function metricTarget(n: SchemaNames): Schema {
  return obj('The target value, average value, or average utilization of a metric.', proto({ type: 1, value: 2, averageValue: 3, averageUtilization: 4 }, {
    type: enumOf('Whether the metric type is Utilization, Value, or AverageValue.', ['AverageValue', 'Utilization', 'Value']),
    value: ref(n.quantity, 'Target value of the metric.'),
    averageValue: ref(n.quantity, 'Target average value of the metric across all pods.'),
    averageUtilization: int32('Target average of the resource metric across all pods, as a percentage of the requested value.'),
  }), ['type']);
}

const crossVersionRef = (d: string): Schema => obj(d, proto({ kind: 1, name: 2, apiVersion: 3 }, {
  kind: str('Kind of the referent.'), name: str('Name of the referent.'), apiVersion: str('API version of the referent.'),
}), ['kind', 'name'], { 'x-orch-map-type': 'atomic' });

function metricIdentifier(n: SchemaNames): Schema {
  return obj('The metric, by name and selector.', proto({ name: 1, selector: 2 }, {
    name: str('Name of the metric.'), selector: ref(n.meta('LabelSelector'), 'Label selector passed to the metrics server.'),
  }), ['name']);
}

function metricValueStatus(n: SchemaNames): Schema {
  return obj('The current value of a metric.', proto({ value: 1, averageValue: 2, averageUtilization: 3 }, {
    value: ref(n.quantity, 'Current value.'), averageValue: ref(n.quantity, 'Current average value across the pods.'),
    averageUtilization: int32('Current average utilization, as a percentage of the requested value.'),
  }));
}

/** autoscaling/v2 MetricSpec (generated.proto numbers: object 2, pods 3, resource 4, external 5, containerResource 7) */
function metricSpec(n: SchemaNames): Schema {
  return obj('A metric to scale on.', proto({ type: 1, object: 2, pods: 3, resource: 4, external: 5, containerResource: 7 }, {
    type: enumOf('Type of metric source.', ['ContainerResource', 'External', 'Object', 'Pods', 'Resource']),
    resource: obj('A resource metric known to Kubernetes (requests and limits).', proto({ name: 1, target: 2 }, { name: str('Name of the resource.'), target: metricTarget(n) }), ['name', 'target']),
    containerResource: obj('A resource metric of one container.', proto({ name: 1, target: 2, container: 3 }, {
      name: str('Name of the resource.'), target: metricTarget(n), container: str('Name of the container.'),
    }), ['name', 'target', 'container']),
    object: obj('A metric describing a single object.', proto({ describedObject: 1, target: 2, metric: 3 }, {
      describedObject: crossVersionRef('The described object.'), target: metricTarget(n), metric: metricIdentifier(n),
    }), ['describedObject', 'target', 'metric']),
    pods: obj('A metric describing each pod (averaged).', proto({ metric: 1, target: 2 }, { metric: metricIdentifier(n), target: metricTarget(n) }), ['metric', 'target']),
    external: obj('A global metric not associated with any Kubernetes object.', proto({ metric: 1, target: 2 }, { metric: metricIdentifier(n), target: metricTarget(n) }), ['metric', 'target']),
  }), ['type']);
}

/**
 * autoscaling/v2 MetricStatus as Go encodes it: each source a pointer, inside it non-pointer
 * structs (`current`, `metric`, `describedObject`) and strings without omitempty (`name`,
 * `container`, a reference's `kind`); kube validates no status metric, so whatever a status
 * write left out comes back zero
 */
const METRIC_STATUS_SHAPE: ZeroShape = {
  type: '',
  object: whenPresent({ metric: { name: '' }, current: {}, describedObject: { kind: '', name: '' } }),
  pods: whenPresent({ metric: { name: '' }, current: {} }),
  resource: whenPresent({ name: '', current: {} }),
  containerResource: whenPresent({ name: '', current: {}, container: '' }),
  external: whenPresent({ metric: { name: '' }, current: {} }),
};

/** autoscaling/v2 MetricStatus, numbered like MetricSpec */
function metricStatus(n: SchemaNames): Schema {
  const current = metricValueStatus(n);
  // the values are listed but not enforced: kube validates no status metric, and its controller
  // writes an empty type for a metric it could not read (src/controllers/autoscaling/hpa.ts)
  const types = enumOf('Type of metric source.', ['ContainerResource', 'External', 'Object', 'Pods', 'Resource']);
  delete types.enum;
  return obj('The last-read state of one metric.', proto({ type: 1, object: 2, pods: 3, resource: 4, external: 5, containerResource: 7 }, {
    type: types,
    object: obj('A metric describing a single object.', proto({ metric: 1, current: 2, describedObject: 3 }, {
      metric: metricIdentifier(n), current, describedObject: crossVersionRef('The described object.'),
    })),
    pods: obj('A metric describing each pod.', proto({ metric: 1, current: 2 }, { metric: metricIdentifier(n), current })),
    resource: obj('A resource metric.', proto({ name: 1, current: 2 }, { name: str('Name of the resource.'), current })),
    containerResource: obj('A resource metric of one container.', proto({ name: 1, current: 2, container: 3 }, {
      name: str('Name of the resource.'), current, container: str('Name of the container.'),
    })),
    external: obj('A global metric.', proto({ metric: 1, current: 2 }, { metric: metricIdentifier(n), current })),
  }), ['type']);
}

function scalingRules(n: SchemaNames, d: string): Schema {
  // kube 1.32's HPAScalingRules (no `tolerance`: 1.33's alpha HPAConfigurableTolerance)
  return obj(d, proto({ stabilizationWindowSeconds: 3, selectPolicy: 1, policies: 2 }, {
    stabilizationWindowSeconds: int32('Seconds past recommendations are considered while scaling.'),
    selectPolicy: enumOf('Which policy is used.', ['Disabled', 'Max', 'Min']),
    policies: atomicList('Potential scaling policies.', obj('A single policy.', proto({ type: 1, value: 2, periodSeconds: 3 }, {
      type: enumOf('The scaling policy.', ['Percent', 'Pods']), value: int32('Amount of change permitted by the policy.'), periodSeconds: int32('Window of time for which the policy holds.'),
    }), ['type', 'value', 'periodSeconds'])),
  }));
}

function hpaSpec(n: SchemaNames, v2: boolean): Schema {
  const target = crossVersionRef('The scaled resource.');
  const common = { scaleTargetRef: target, minReplicas: int32('Lower limit for the number of replicas. Defaults to 1.'), maxReplicas: int32('Upper limit for the number of replicas.') };
  return v2
    ? obj('Specification of the autoscaler.', proto({ scaleTargetRef: 1, minReplicas: 2, maxReplicas: 3, metrics: 4, behavior: 5 }, {
      ...common,
      metrics: atomicList('Metrics used to calculate the desired replica count.', metricSpec(n)),
      behavior: obj('Scaling behaviour in the up and down directions.', proto({ scaleUp: 1, scaleDown: 2 }, {
        scaleUp: scalingRules(n, 'Scaling up policy.'), scaleDown: scalingRules(n, 'Scaling down policy.'),
      })),
    }), ['scaleTargetRef', 'maxReplicas'])
    : obj('Specification of the autoscaler.', proto({ scaleTargetRef: 1, minReplicas: 2, maxReplicas: 3, targetCPUUtilizationPercentage: 4 }, {
      ...common,
      targetCPUUtilizationPercentage: int32('Target average CPU utilization over all the pods.'),
    }), ['scaleTargetRef', 'maxReplicas']);
}

function hpaDefinition(n: SchemaNames, v2: boolean): ResourceDefinition {
  const status: Schema = v2
    ? obj('Current information about the autoscaler.', proto({ observedGeneration: 1, lastScaleTime: 2, currentReplicas: 3, desiredReplicas: 4, currentMetrics: 5, conditions: 6 }, {
      observedGeneration: generationSeen(), lastScaleTime: time('Last time the autoscaler scaled.'),
      currentReplicas: int32('Current number of replicas.'), desiredReplicas: int32('Desired number of replicas.'),
      currentMetrics: atomicList('Last read state of the metrics.', metricStatus(n)), conditions: conditions(),
    }))
    : obj('Current information about the autoscaler.', proto({ observedGeneration: 1, lastScaleTime: 2, currentReplicas: 3, desiredReplicas: 4, currentCPUUtilizationPercentage: 5 }, {
      observedGeneration: generationSeen(), lastScaleTime: time('Last time the autoscaler scaled.'),
      currentReplicas: int32('Current number of replicas.'), desiredReplicas: int32('Desired number of replicas.'),
      currentCPUUtilizationPercentage: int32('Current average CPU utilization.'),
    }));
  return {
    group: 'autoscaling', version: v2 ? 'v2' : 'v1', kind: 'HorizontalPodAutoscaler', resource: 'horizontalpodautoscalers', singular: 'horizontalpodautoscaler', scope: 'Namespaced',
    shortNames: ['hpa'], categories: ['all'], subresources: ['status'],
    // one store for both versions, written as v2 (hpa-conversion.ts)
    storage: hpaStorage(),
    schema: kindSchema(n, 'HorizontalPodAutoscaler is the configuration for a horizontal pod autoscaler, which automatically manages the replica count of any resource implementing the scale subresource based on the metrics specified.', proto({ spec: 2, status: 3 }, {
      spec: hpaSpec(n, v2), status,
    })),
    strategy: {
      zeroShape: {
        spec: { scaleTargetRef: {} },
        // v1's currentReplicas has no omitempty, v2's has
        status: v2 ? { desiredReplicas: 0, currentMetrics: each(METRIC_STATUS_SHAPE) } : { currentReplicas: 0, desiredReplicas: 0 },
      },
      default: (o) => {
        const spec = getObject(o, 'spec');
        if (!spec) return;
        spec.minReplicas ??= 1;
        if (v2 && spec.metrics === undefined) spec.metrics = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }];
      },
      validate: validateHPA,
      validateUpdate: (o) => validateHPA(o),
      columns: [
        column('Reference', 'string', (o) => `${getString(o, 'spec', 'scaleTargetRef', 'kind') ?? ''}/${getString(o, 'spec', 'scaleTargetRef', 'name') ?? ''}`),
        // the metrics against status.currentMetrics, as kube's printer (hpa-targets.ts)
        column('Targets', 'string', (o) => (v2 ? formatHpaTargets(getArray(o, 'spec', 'metrics'), getArray(o, 'status', 'currentMetrics'))
          : `cpu: ${get(o, 'status', 'currentCPUUtilizationPercentage') === undefined ? '<unknown>' : `${String(get(o, 'status', 'currentCPUUtilizationPercentage'))}%`}/${String(get(o, 'spec', 'targetCPUUtilizationPercentage') ?? 80)}%`)),
        column('MinPods', 'string', (o) => String(get(o, 'spec', 'minReplicas') ?? '<unset>')),
        column('MaxPods', 'integer', (o) => num(o, 'spec', 'maxReplicas')),
        column('Replicas', 'integer', (o) => num(o, 'status', 'currentReplicas')),
      ],
    },
  };
}

function validateHPA(o: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  const min = get(o, 'spec', 'minReplicas');
  const max = get(o, 'spec', 'maxReplicas');
  if (typeof min === 'number' && min < 1) errs.push(fieldErr('spec.minReplicas', 'FieldValueInvalid', `Invalid value: ${min}: must be greater than or equal to 1`));
  if (typeof max === 'number' && max < 1) errs.push(fieldErr('spec.maxReplicas', 'FieldValueInvalid', `Invalid value: ${max}: must be greater than 0`));
  if (typeof min === 'number' && typeof max === 'number' && max < min) errs.push(fieldErr('spec.maxReplicas', 'FieldValueInvalid', `Invalid value: ${max}: must be greater than or equal to \`minReplicas\``));
  return errs;
}

export const hpaV2Definition = (n: SchemaNames): ResourceDefinition => hpaDefinition(n, true);
export const hpaV1Definition = (n: SchemaNames): ResourceDefinition => hpaDefinition(n, false);

export function storageClassDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: n.group('storage'), version: 'v1', kind: 'StorageClass', resource: 'storageclasses', singular: 'storageclass', scope: 'Cluster',
    returnDeletedObject: true,
    shortNames: ['sc'],
    schema: kindSchema(n, 'StorageClass describes the parameters for a class of storage for which PersistentVolumes can be dynamically provisioned.', proto({
      provisioner: 2, parameters: 3, reclaimPolicy: 4, mountOptions: 5, allowVolumeExpansion: 6, volumeBindingMode: 7, allowedTopologies: 8,
    }, {
      provisioner: str('The type of the provisioner.'),
      parameters: strMap('Parameters for the provisioner.'),
      reclaimPolicy: enumOf('Reclaim policy of volumes dynamically provisioned by this class. Defaults to Delete.', ['Delete', 'Recycle', 'Retain']),
      mountOptions: strings('Mount options of volumes dynamically provisioned by this class.'),
      allowVolumeExpansion: bool('Whether the class allows volume expansion.'),
      volumeBindingMode: enumOf('How claims should be provisioned and bound. Defaults to Immediate.', ['Immediate', 'WaitForFirstConsumer']),
      allowedTopologies: atomicList('Topologies where volumes can be dynamically provisioned.', obj('A topology selector term.', proto({ matchLabelExpressions: 1 }, {
        matchLabelExpressions: atomicList('Label requirements.', obj('One requirement.', proto({ key: 1, values: 2 }, { key: str('Label key.'), values: atomicList('Values, ORed.', { type: 'string' }) }))),
      }), undefined, { 'x-orch-map-type': 'atomic' })),
    }), ['provisioner']),
    strategy: {
      default: (o) => {
        o.reclaimPolicy ??= 'Delete';
        o.volumeBindingMode ??= 'Immediate';
      },
      validate: (o) => validateAllowedTopologies(get(o, 'allowedTopologies'), 'allowedTopologies'),
      validateUpdate: (o, old) => [...storageClassUpdateErrors(o, old), ...validateAllowedTopologies(get(o, 'allowedTopologies'), 'allowedTopologies')],
      columns: [
        column('Provisioner', 'string', (o) => String(o.provisioner ?? '')),
        column('ReclaimPolicy', 'string', (o) => String(o.reclaimPolicy ?? '')),
        column('VolumeBindingMode', 'string', (o) => String(o.volumeBindingMode ?? '')),
        column('AllowVolumeExpansion', 'string', (o) => String(o.allowVolumeExpansion === true)),
      ],
    },
  };
}

export function priorityClassDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: n.group('scheduling'), version: 'v1', kind: 'PriorityClass', resource: 'priorityclasses', singular: 'priorityclass', scope: 'Cluster',
    shortNames: ['pc'],
    schema: kindSchema(n, 'PriorityClass defines a mapping from a priority class name to the priority integer value.', proto({ value: 2, globalDefault: 3, description: 4, preemptionPolicy: 5 }, {
      value: int32('The integer priority value of pods of this class.'),
      globalDefault: bool('Whether this class is the default for pods without a priorityClassName.', { 'x-orch-proto-omit-zero': true }),
      description: str('When this priority class should be used.'),
      preemptionPolicy: enumOf('Policy for preempting pods with lower priority. Defaults to PreemptLowerPriority.', ['Never', 'PreemptLowerPriority']),
    }), ['value']),
    strategy: {
      default: (o) => {
        o.preemptionPolicy ??= 'PreemptLowerPriority';
      },
      validate: validatePriorityClass,
      validateUpdate: (o, old) => (o.value !== old.value ? [fieldErr('value', 'FieldValueForbidden', 'Forbidden: may not be changed in an update.')] : []),
      // kube 1.32's priorityClassColumnDefinitions: PreemptionPolicy after Age (kubernetes#126529)
      columns: [
        column('Value', 'integer', (o) => (typeof o.value === 'number' ? o.value : 0)),
        column('Global-Default', 'boolean', (o) => o.globalDefault === true),
        column('Age', 'string', () => null),
        column('PreemptionPolicy', 'string', (o) => String(o.preemptionPolicy ?? '')),
      ],
    },
  };
}

/** kube's scheduling.SystemPriorityClasses: the only classes a `system-` name may have */
const SYSTEM_CLASSES: Record<string, number> = { 'system-node-critical': 2_000_001_000, 'system-cluster-critical': 2_000_000_000 };

/** kube's ValidatePriorityClass: `system-` names are reserved for the built-in classes, user values stay ≤ 1e9 */
function validatePriorityClass(o: ApiObject): FieldError[] {
  const name = String(o.metadata?.name ?? '');
  const value = typeof o.value === 'number' ? o.value : 0;
  if (name.startsWith('system-')) {
    const want = SYSTEM_CLASSES[name];
    const why = want === undefined ? `name ${name} is not a known system priority class`
      : value !== want ? `value of ${name} PriorityClass must be ${want}`
        : o.globalDefault === true ? `globalDefault of ${name} PriorityClass must be false` : undefined;
    return why ? [fieldErr('metadata.name', 'FieldValueForbidden', `Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: ${why}`)] : [];
  }
  return value > 1_000_000_000 ? [fieldErr('value', 'FieldValueForbidden', 'Forbidden: maximum allowed value of a user defined priority is 1000000000')] : [];
}

export const clusterPolicyFactories = [
  podDisruptionBudgetDefinition, hpaV2Definition, hpaV1Definition, storageClassDefinition, priorityClassDefinition, certificateSigningRequestDefinition,
];
