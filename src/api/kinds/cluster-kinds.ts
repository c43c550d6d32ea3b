// More kinds real manifests use (issue #11 item 4): policy/v1
// PodDisruptionBudget, autoscaling/v2 HorizontalPodAutoscaler,
// discovery.<domain>/v1 EndpointSlice, core v1 Endpoints, ResourceQuota and
// LimitRange, scheduling.<domain>/v1 PriorityClass, certificates.<domain>/v1
// CertificateSigningRequest. Stored and served; no controller acts on them.

import type { SchemaNames } from '../schema/naming.js';
import type { ApiObject, FieldError, ResourceDefinition } from '../types.js';
import { column, get, getArray, getString } from './columns.js';
import { atomicList, bool, enumOf, int32, mapOf, obj, opaque, ref, str, strMap, time } from './dsl.js';
import { kindSchema } from './meta.js';
import { conditions, immutable, labelSelector, observedGeneration, setDefault } from './workload-common.js';

export function podDisruptionBudgetDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: 'policy',
    version: 'v1',
    kind: 'PodDisruptionBudget',
    resource: 'poddisruptionbudgets',
    singular: 'poddisruptionbudget',
    scope: 'Namespaced',
    shortNames: ['pdb'],
    subresources: ['status'],
    schema: kindSchema(n, 'PodDisruptionBudget limits the number of pods of an application that are down simultaneously from voluntary disruptions.', {
      spec: obj('Desired behaviour of the budget.', {
        minAvailable: { description: 'Pods that must stay available (number or percentage).', 'x-orch-int-or-string': true },
        maxUnavailable: { description: 'Pods that may be unavailable (number or percentage).', 'x-orch-int-or-string': true },
        selector: labelSelector(n, 'Pods the budget covers.'),
        unhealthyPodEvictionPolicy: enumOf('When unhealthy pods may be evicted.', ['AlwaysAllow', 'IfHealthyBudget']),
      }),
      status: obj('Observed state.', {
        observedGeneration: observedGeneration(),
        disruptedPods: strMap('Pods being disrupted.'),
        disruptionsAllowed: int32('Disruptions allowed now.'),
        currentHealthy: int32('Healthy pods.'),
        desiredHealthy: int32('Healthy pods wanted.'),
        expectedPods: int32('Pods counted.'),
        conditions: conditions('Conditions.'),
      }),
    }),
    strategy: {
      tracksGeneration: true,
      validate: (o) =>
        get(o, 'spec', 'minAvailable') !== undefined && get(o, 'spec', 'maxUnavailable') !== undefined
          ? [{ field: 'spec', type: 'FieldValueInvalid', message: 'Invalid value: minAvailable and maxUnavailable cannot be both set' }]
          : [],
      columns: [
        column('Min Available', 'string', (o) => String(get(o, 'spec', 'minAvailable') ?? 'N/A'), { description: 'Minimum available.' }),
        column('Max Unavailable', 'string', (o) => String(get(o, 'spec', 'maxUnavailable') ?? 'N/A'), { description: 'Maximum unavailable.' }),
        column('Allowed Disruptions', 'integer', (o) => Number(get(o, 'status', 'disruptionsAllowed') ?? 0), { description: 'Disruptions allowed.' }),
      ],
    },
  };
}

export function horizontalPodAutoscalerDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: 'autoscaling',
    version: 'v2',
    kind: 'HorizontalPodAutoscaler',
    resource: 'horizontalpodautoscalers',
    singular: 'horizontalpodautoscaler',
    scope: 'Namespaced',
    shortNames: ['hpa'],
    categories: ['all'],
    subresources: ['status'],
    schema: kindSchema(n, 'HorizontalPodAutoscaler automatically manages the replica count of a scalable resource.', {
      spec: obj('Desired behaviour of the autoscaler.', {
        scaleTargetRef: obj('The resource scaled.', { kind: str('Kind of the referent.'), name: str('Name of the referent.'), apiVersion: str('API version of the referent.') }, ['kind', 'name']),
        minReplicas: int32('Lower limit of replicas; default 1.'),
        maxReplicas: int32('Upper limit of replicas.'),
        metrics: atomicList('Metrics used to compute the desired replicas.', opaque('One metric specification.')),
        behavior: opaque('Scaling behaviour up and down.'),
      }, ['scaleTargetRef', 'maxReplicas']),
      status: obj('Observed state.', {
        observedGeneration: observedGeneration(),
        lastScaleTime: time('Last time the autoscaler scaled.'),
        currentReplicas: int32('Current replicas.'),
        desiredReplicas: int32('Desired replicas.'),
        currentMetrics: atomicList('Last read metrics.', opaque('A metric status.')),
        conditions: conditions('Conditions.'),
      }),
    }),
    strategy: {
      tracksGeneration: true,
      default: (o) => setDefault(o, 1, 'spec', 'minReplicas'),
      validate: validateHpa,
      validateUpdate: (o) => validateHpa(o),
      columns: [
        column('Reference', 'string', (o) => `${getString(o, 'spec', 'scaleTargetRef', 'kind') ?? ''}/${getString(o, 'spec', 'scaleTargetRef', 'name') ?? ''}`, { description: 'The target.' }),
        column('Targets', 'string', hpaTargets, { description: 'Current and target metrics.' }),
        column('MinPods', 'string', (o) => String(get(o, 'spec', 'minReplicas') ?? '<unset>'), { description: 'Lower limit.' }),
        column('MaxPods', 'integer', (o) => Number(get(o, 'spec', 'maxReplicas') ?? 0), { description: 'Upper limit.' }),
        column('Replicas', 'integer', (o) => Number(get(o, 'status', 'currentReplicas') ?? 0), { description: 'Current replicas.' }),
      ],
    },
  };
}

function validateHpa(o: ApiObject): FieldError[] {
  const min = get(o, 'spec', 'minReplicas');
  const max = get(o, 'spec', 'maxReplicas');
  const errs: FieldError[] = [];
  if (typeof min === 'number' && min < 1) errs.push({ field: 'spec.minReplicas', type: 'FieldValueInvalid', message: `Invalid value: ${min}: must be greater than or equal to 1` });
  if (typeof max === 'number' && typeof min === 'number' && max < min) errs.push({ field: 'spec.maxReplicas', type: 'FieldValueInvalid', message: `Invalid value: ${max}: must be greater than or equal to \`minReplicas\`` });
  return errs;
}

function hpaTargets(o: ApiObject): string {
  const parts = getArray(o, 'spec', 'metrics').map((m) => {
    const target = get(m, 'resource', 'target') ?? get(m, 'pods', 'target') ?? get(m, 'object', 'target') ?? get(m, 'external', 'target');
    const v = get(target, 'averageUtilization');
    const shown = v !== undefined ? `${String(v)}%` : String(get(target, 'averageValue') ?? get(target, 'value') ?? '');
    return `<unknown>/${shown}`;
  });
  return parts.length > 0 ? parts.join(', ') : '<none>';
}

export function endpointsDefinition(n: SchemaNames): ResourceDefinition {
  const address = obj('An endpoint address.', { ip: str('The IP.'), hostname: str('Host name.'), nodeName: str('Node hosting it.'), targetRef: ref(n.core('ObjectReference'), 'The object providing it.') }, ['ip']);
  return {
    group: '',
    version: 'v1',
    kind: 'Endpoints',
    resource: 'endpoints',
    singular: 'endpoints',
    scope: 'Namespaced',
    shortNames: ['ep'],
    schema: kindSchema(n, 'Endpoints is a collection of endpoints that implement the actual service.', {
      subsets: atomicList('Sets of addresses and ports.', obj('One subset.', {
        addresses: atomicList('Ready addresses.', address),
        notReadyAddresses: atomicList('Addresses not ready.', address),
        ports: atomicList('Ports.', obj('A port.', { name: str('Name.'), port: int32('Port number.'), protocol: enumOf('Protocol.', ['SCTP', 'TCP', 'UDP']), appProtocol: str('Application protocol.') }, ['port'])),
      })),
    }),
    strategy: {
      default(o) {
        for (const s of getArray(o, 'subsets')) for (const p of getArray(s, 'ports')) if (p && typeof p === 'object' && !Array.isArray(p)) p.protocol ??= 'TCP';
      },
      columns: [column('Endpoints', 'string', endpointsCell, { description: 'Endpoints.' })],
    },
  };
}

function endpointsCell(o: ApiObject): string {
  const out: string[] = [];
  for (const s of getArray(o, 'subsets')) {
    const ports = getArray(s, 'ports').map((p) => get(p, 'port'));
    for (const a of getArray(s, 'addresses')) for (const p of ports.length > 0 ? ports : [undefined]) out.push(p === undefined ? String(get(a, 'ip')) : `${String(get(a, 'ip'))}:${String(p)}`);
  }
  if (out.length === 0) return '<none>';
  return out.length > 3 ? `${out.slice(0, 3).join(',')} + ${out.length - 3} more...` : out.join(',');
}

export function endpointSliceDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: n.group('discovery'),
    version: 'v1',
    kind: 'EndpointSlice',
    resource: 'endpointslices',
    singular: 'endpointslice',
    scope: 'Namespaced',
    schema: kindSchema(n, 'EndpointSlice represents a subset of the endpoints that implement a service.', {
      addressType: enumOf('Type of the addresses.', ['FQDN', 'IPv4', 'IPv6']),
      endpoints: atomicList('Endpoints of the slice.', obj('One endpoint.', {
        addresses: atomicList('Addresses.', str('An address.')),
        conditions: obj('Conditions.', { ready: bool('Ready.'), serving: bool('Serving.'), terminating: bool('Terminating.') }),
        hostname: str('Host name.'),
        targetRef: ref(n.core('ObjectReference'), 'The object providing it.'),
        nodeName: str('Node hosting it.'),
        zone: str('Zone.'),
        hints: opaque('Topology hints.'),
      }, ['addresses'])),
      ports: atomicList('Ports.', obj('A port.', { name: str('Name.'), protocol: enumOf('Protocol.', ['SCTP', 'TCP', 'UDP']), port: int32('Port.'), appProtocol: str('Application protocol.') })),
    }, ['addressType', 'endpoints']),
    strategy: {
      tracksGeneration: true,
      validateUpdate: (o, old) => immutable(o, old, 'addressType'),
      columns: [
        column('AddressType', 'string', (o) => getString(o, 'addressType') ?? '', { description: 'Address type.' }),
        column('Ports', 'string', (o) => getArray(o, 'ports').map((p) => String(get(p, 'port') ?? '')).join(',') || '<unset>', { description: 'Ports.' }),
        column('Endpoints', 'string', (o) => getArray(o, 'endpoints').flatMap((e) => getArray(e, 'addresses').map(String)).slice(0, 3).join(',') || '<unset>', { description: 'Addresses.' }),
      ],
    },
  };
}

export function resourceQuotaDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: '',
    version: 'v1',
    kind: 'ResourceQuota',
    resource: 'resourcequotas',
    singular: 'resourcequota',
    scope: 'Namespaced',
    shortNames: ['quota'],
    subresources: ['status'],
    schema: kindSchema(n, 'ResourceQuota sets aggregate quota restrictions enforced per namespace.', {
      spec: obj('Desired quota.', {
        hard: mapOf('Hard limits per resource.', ref(n.quantity, 'A quantity.')),
        scopes: atomicList('Scopes the quota applies to.', str('A scope.')),
        scopeSelector: opaque('Scope selector.'),
      }),
      status: obj('Observed usage.', { hard: mapOf('Enforced limits.', ref(n.quantity, 'A quantity.')), used: mapOf('Current usage.', ref(n.quantity, 'A quantity.')) }),
    }),
    strategy: {
      columns: [
        column('Request', 'string', (o) => Object.entries((get(o, 'spec', 'hard') as Record<string, unknown> | undefined) ?? {}).map(([k, v]) => `${k}: ${String(get(o, 'status', 'used', k) ?? 0)}/${String(v)}`).join(', '), { description: 'Usage and limits.' }),
      ],
    },
  };
}

export function limitRangeDefinition(n: SchemaNames): ResourceDefinition {
  const q = mapOf('Amounts per resource.', ref(n.quantity, 'A quantity.'));
  return {
    group: '',
    version: 'v1',
    kind: 'LimitRange',
    resource: 'limitranges',
    singular: 'limitrange',
    scope: 'Namespaced',
    shortNames: ['limits'],
    schema: kindSchema(n, 'LimitRange sets resource usage limits for each kind of resource in a namespace.', {
      spec: obj('The limits.', {
        limits: atomicList('Limits by object type.', obj('One limit item.', {
          type: str('Type of resource (Pod, Container, PersistentVolumeClaim).'),
          max: q,
          min: q,
          default: q,
          defaultRequest: q,
          maxLimitRequestRatio: q,
        }, ['type'])),
      }, ['limits']),
    }),
    strategy: {},
  };
}

export function priorityClassDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: n.group('scheduling'),
    version: 'v1',
    kind: 'PriorityClass',
    resource: 'priorityclasses',
    singular: 'priorityclass',
    scope: 'Cluster',
    shortNames: ['pc'],
    schema: kindSchema(n, 'PriorityClass defines a mapping from a priority class name to the priority integer value.', {
      value: int32('The priority; higher values take precedence.'),
      globalDefault: bool('The default priority of pods without a class.'),
      description: str('When the class should be used.'),
      preemptionPolicy: enumOf('Preemption policy; default PreemptLowerPriority.', ['Never', 'PreemptLowerPriority']),
    }, ['value']),
    strategy: {
      default: (o) => setDefault(o, 'PreemptLowerPriority', 'preemptionPolicy'),
      validateUpdate: (o, old) => [...immutable(o, old, 'value'), ...immutable(o, old, 'preemptionPolicy')],
      columns: [
        column('Value', 'integer', (o) => Number(get(o, 'value') ?? 0), { description: 'Priority.' }),
        column('Global-Default', 'boolean', (o) => get(o, 'globalDefault') === true, { description: 'Default class.' }),
        column('Preemption-Policy', 'string', (o) => getString(o, 'preemptionPolicy') ?? '', { description: 'Preemption policy.' }),
      ],
    },
  };
}

export function certificateSigningRequestDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: n.group('certificates'),
    version: 'v1',
    kind: 'CertificateSigningRequest',
    resource: 'certificatesigningrequests',
    singular: 'certificatesigningrequest',
    scope: 'Cluster',
    shortNames: ['csr'],
    subresources: ['status'],
    schema: kindSchema(n, 'CertificateSigningRequest objects provide a mechanism to obtain x509 certificates by submitting a certificate signing request.', {
      spec: obj('The request.', {
        request: { type: 'string', format: 'byte', description: 'PEM-encoded PKCS#10 request (base64 in JSON).' },
        signerName: str('Requested signer.'),
        expirationSeconds: int32('Requested duration of the certificate.'),
        usages: atomicList('Requested key usages.', str('A usage.')),
        username: str('Requesting user (set by the server).'),
        uid: str('Requesting user uid (set by the server).'),
        groups: atomicList('Requesting user groups (set by the server).', str('A group.')),
        extra: mapOf('Requesting user extra (set by the server).', atomicList('Values.', str('A value.'))),
      }, ['request', 'signerName']),
      status: obj('Approval and the issued certificate.', {
        conditions: atomicList('Approved, Denied, Failed.', obj('A condition.', {
          type: str('Type.'), status: str('Status.'), reason: str('Reason.'), message: str('Message.'), lastUpdateTime: time('Updated.'), lastTransitionTime: time('Changed.'),
        }, ['type', 'status'])),
        certificate: { type: 'string', format: 'byte', description: 'The issued certificate (PEM, base64 in JSON).' },
      }),
    }),
    strategy: {
      validateUpdate: (o, old) => immutable(o, old, 'spec'),
      columns: [
        column('SignerName', 'string', (o) => getString(o, 'spec', 'signerName') ?? '', { description: 'Signer.' }),
        column('Requestor', 'string', (o) => getString(o, 'spec', 'username') ?? '', { description: 'Requestor.' }),
        column('RequestedDuration', 'string', (o) => (get(o, 'spec', 'expirationSeconds') !== undefined ? `${String(get(o, 'spec', 'expirationSeconds'))}s` : '<none>'), { description: 'Requested duration.' }),
        column('Condition', 'string', (o) => getArray(o, 'status', 'conditions').map((c) => getString(c, 'type') ?? '').join(',') || 'Pending', { description: 'Condition.' }),
      ],
    },
  };
}
