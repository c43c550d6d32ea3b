// The schema-driven protobuf codec (spec 000 §2.7): round trips for every
// built-in kind, byte vectors derived by hand from the Kubernetes field
// numbers, typed errors for malformed input, and a property test.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { builtinDefinitions, builtinSchemaDefinitions } from '../../src/registry/kinds/index.js';
import { tokenRequestSchema } from '../../src/machinery/protobuf/messages.js';
import { ProtobufCatalog } from '../../src/registry/protobuf-catalog.js';
import { decodeProtobufObject, encodeProtobufObject, encodeProtobufObjectReport } from '../../src/machinery/protobuf/codec.js';
import { decodeEnvelope, encodeEnvelope } from '../../src/machinery/protobuf/envelope.js';
import { ProtobufError } from '../../src/machinery/protobuf/errors.js';
import { Registry } from '../../src/registry/registry.js';
import { SchemaNames } from '../../src/machinery/schema/naming.js';
import type { ResourceDefinition } from '../../src/registry/types.js';

const defs = builtinSchemaDefinitions();
const kinds = builtinDefinitions();
const kind = (k: string, group = ''): ResourceDefinition => kinds.find((d) => d.kind === k && (group === '' ? d.group === '' : d.group.startsWith(group)))!;
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

const meta = {
  name: 'obj',
  namespace: 'team-a',
  uid: '5f0c4c2e-1111-4a4a-9b9b-000000000001',
  resourceVersion: '42',
  generation: 3,
  creationTimestamp: '2024-05-06T07:08:09Z',
  labels: { app: 'web', tier: 'front' },
  annotations: { note: 'hello' },
  finalizers: ['example.com/cleanup'],
  ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: 'u-1', controller: true, blockOwnerDeletion: false }],
  managedFields: [
    { manager: 'kubectl', operation: 'Apply', apiVersion: 'v1', time: '2024-05-06T07:08:09Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:app': {} } } } },
  ],
};

function roundTrip(def: ResourceDefinition, obj: Record<string, unknown>): void {
  const { bytes, skipped } = encodeProtobufObjectReport(obj, def, defs);
  expect(skipped).toEqual([]);
  expect(decodeProtobufObject(bytes, def, defs)).toEqual(obj);
}

describe('round trips of every built-in kind', () => {
  it('Namespace, ConfigMap (bytes), Secret (bytes)', () => {
    roundTrip(kind('Namespace'), {
      metadata: { ...meta, namespace: undefined },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Terminating', conditions: [{ type: 'NamespaceDeletionContentFailure', status: 'False', lastTransitionTime: '2024-01-01T00:00:00Z', reason: 'ContentDeleted', message: 'ok' }] },
    } as Record<string, unknown>);
    roundTrip(kind('ConfigMap'), { metadata: meta, data: { 'a.txt': 'x', empty: '' }, binaryData: { bin: Buffer.from([0, 1, 2, 255]).toString('base64') }, immutable: true });
    roundTrip(kind('Secret'), { metadata: meta, data: { password: Buffer.from('s3cr3t').toString('base64') }, type: 'kubernetes.io/basic-auth', immutable: false });
  });

  it('ServiceAccount, Service (int-or-string), Node (quantities)', () => {
    roundTrip(kind('ServiceAccount'), { metadata: meta, secrets: [{ name: 's', namespace: 'team-a' }], imagePullSecrets: [{ name: 'pull' }], automountServiceAccountToken: false });
    roundTrip(kind('Service'), {
      metadata: meta,
      spec: {
        ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }, { name: 'named', protocol: 'UDP', port: 53, targetPort: 'dns', nodePort: 30053 }],
        selector: { app: 'web' },
        clusterIP: '10.0.0.10',
        clusterIPs: ['10.0.0.10'],
        type: 'NodePort',
        sessionAffinity: 'ClientIP',
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
        ipFamilies: ['IPv4'],
        ipFamilyPolicy: 'SingleStack',
        internalTrafficPolicy: 'Cluster',
        externalTrafficPolicy: 'Local',
        healthCheckNodePort: 31000,
      },
      status: { loadBalancer: { ingress: [{ ip: '1.2.3.4', ports: [{ port: 80, protocol: 'TCP' }] }] } },
    });
    roundTrip(kind('Node'), {
      metadata: { ...meta, namespace: undefined },
      spec: { podCIDR: '10.1.0.0/24', podCIDRs: ['10.1.0.0/24'], unschedulable: true, taints: [{ key: 'k', value: 'v', effect: 'NoSchedule', timeAdded: '2024-02-02T02:02:02Z' }] },
      status: {
        capacity: { cpu: '4', memory: '16Gi', pods: '110' },
        allocatable: { cpu: '3500m', memory: '15Gi' },
        conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: '2024-02-02T02:02:02Z', lastTransitionTime: '2024-02-02T02:00:00Z', reason: 'KubeletReady', message: 'ready' }],
        addresses: [{ type: 'InternalIP', address: '192.168.1.2' }],
        daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
        nodeInfo: { machineID: 'm', systemUUID: 's', bootID: 'b', kernelVersion: '6.1', osImage: 'Linux', containerRuntimeVersion: 'containerd://1.7', kubeletVersion: 'v1.32.0', kubeProxyVersion: 'v1.32.0', operatingSystem: 'linux', architecture: 'amd64' },
        images: [{ names: ['nginx:1.27'], sizeBytes: 73_000_000_000 }],
      },
    } as Record<string, unknown>);
  });

  it('Pod: containers, probes (inlined handler), volumes (inlined source), env selectors, ephemeral containers, status', () => {
    roundTrip(kind('Pod'), {
      metadata: meta,
      spec: {
        volumes: [
          { name: 'cfg', configMap: { name: 'cm', items: [{ key: 'a', path: 'a.txt', mode: 420 }], defaultMode: 420, optional: true } },
          { name: 'scratch', emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } },
          { name: 'proj', projected: { sources: [{ serviceAccountToken: { audience: 'api', expirationSeconds: 3600, path: 'token' } }, { secret: { name: 's', items: [{ key: 'k', path: 'p' }] } }] } },
        ],
        initContainers: [{ name: 'init', image: 'busybox', command: ['sh', '-c', 'true'] }],
        containers: [
          {
            name: 'web',
            image: 'nginx:1.27',
            args: ['-g', 'daemon off;'],
            ports: [{ name: 'http', containerPort: 80, protocol: 'TCP' }],
            env: [
              { name: 'PLAIN', value: 'v' },
              { name: 'FROM_CM', valueFrom: { configMapKeyRef: { name: 'cm', key: 'k', optional: true } } },
              { name: 'FROM_FIELD', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
            ],
            envFrom: [{ prefix: 'X_', secretRef: { name: 's' } }],
            resources: { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '250m' } },
            volumeMounts: [{ name: 'cfg', mountPath: '/etc/cfg', readOnly: true }],
            livenessProbe: { httpGet: { path: '/healthz', port: 'http', scheme: 'HTTP', httpHeaders: [{ name: 'X', value: 'y' }] }, initialDelaySeconds: 3, periodSeconds: 10, failureThreshold: 3 },
            readinessProbe: { tcpSocket: { port: 80 }, timeoutSeconds: 1 },
            startupProbe: { exec: { command: ['cat', '/ready'] } },
            lifecycle: { preStop: { sleep: { seconds: 5 } } },
            securityContext: { runAsUser: 0, runAsNonRoot: false, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } },
            imagePullPolicy: 'IfNotPresent',
            terminationMessagePath: '/dev/termination-log',
            terminationMessagePolicy: 'File',
            stdin: true,
          },
        ],
        ephemeralContainers: [{ name: 'debug', image: 'busybox', targetContainerName: 'web' }],
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 0,
        dnsPolicy: 'ClusterFirst',
        nodeSelector: { disk: 'ssd' },
        serviceAccountName: 'default',
        nodeName: 'node-1',
        securityContext: { fsGroup: 2000, supplementalGroups: [1, 2, 3], sysctls: [{ name: 'net.core.somaxconn', value: '1024' }] },
        tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
        hostAliases: [{ ip: '127.0.0.1', hostnames: ['local'] }],
        priority: 0,
        enableServiceLinks: true,
        dnsConfig: { nameservers: ['1.1.1.1'], options: [{ name: 'ndots', value: '2' }] },
        readinessGates: [{ conditionType: 'example.com/ready' }],
        os: { name: 'linux' },
        schedulerName: 'default-scheduler',
      },
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2024-03-03T03:03:03Z' }],
        hostIP: '192.168.1.2',
        hostIPs: [{ ip: '192.168.1.2' }],
        podIP: '10.1.0.5',
        podIPs: [{ ip: '10.1.0.5' }],
        startTime: '2024-03-03T03:00:00Z',
        qosClass: 'Burstable',
        containerStatuses: [
          {
            name: 'web',
            ready: true,
            restartCount: 0,
            image: 'nginx:1.27',
            imageID: 'sha256:abc',
            containerID: 'containerd://1',
            started: true,
            state: { running: { startedAt: '2024-03-03T03:01:00Z' } },
            lastState: { terminated: { exitCode: -1, signal: 9, reason: 'OOMKilled', startedAt: '2024-03-03T02:00:00Z', finishedAt: '2024-03-03T02:59:59Z' } },
          },
        ],
      },
    });
  });

  it('core Event, events Event (MicroTime), Lease (MicroTime)', () => {
    roundTrip(kind('Event'), {
      metadata: meta,
      involvedObject: { kind: 'Pod', namespace: 'team-a', name: 'p', uid: 'u', apiVersion: 'v1', fieldPath: 'spec.containers{web}' },
      reason: 'Started',
      message: 'Started container',
      source: { component: 'kubelet', host: 'node-1' },
      firstTimestamp: '2024-01-01T00:00:00Z',
      lastTimestamp: '2024-01-01T00:00:05Z',
      count: 2,
      type: 'Normal',
      eventTime: '2024-01-01T00:00:00.123456Z',
      series: { count: 2, lastObservedTime: '2024-01-01T00:00:05.000001Z' },
      reportingComponent: 'kubelet',
      reportingInstance: 'node-1',
    });
    roundTrip(kind('Event', 'events.'), {
      metadata: meta,
      eventTime: '2024-01-01T00:00:00.654321Z',
      series: { count: 3, lastObservedTime: '2024-01-01T00:01:00.000000Z' },
      reportingController: 'orch.io/node-agent',
      reportingInstance: 'agent-1',
      action: 'Pulling',
      reason: 'Pulled',
      regarding: { kind: 'Pod', name: 'p', namespace: 'team-a' },
      note: 'pulled the image',
      type: 'Normal',
    });
    roundTrip(kind('Lease', 'coordination.'), {
      metadata: meta,
      spec: { holderIdentity: 'node-1', leaseDurationSeconds: 40, acquireTime: '2024-01-01T00:00:00.000000Z', renewTime: '2024-01-01T00:00:10.500000Z', leaseTransitions: 0 },
    });
  });

  it('Role, ClusterRole (aggregation), RoleBinding, ClusterRoleBinding', () => {
    const rule = { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'], resourceNames: ['p'] };
    roundTrip(kind('Role', 'rbac.'), { metadata: meta, rules: [rule] });
    roundTrip(kind('ClusterRole', 'rbac.'), {
      metadata: meta,
      rules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }],
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { agg: 'true' }, matchExpressions: [{ key: 'k', operator: 'In', values: ['a', 'b'] }] }] },
    });
    const binding = { metadata: meta, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.orch.io', name: 'alice' }, { kind: 'ServiceAccount', name: 'sa', namespace: 'team-a' }], roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'Role', name: 'r' } };
    roundTrip(kind('RoleBinding', 'rbac.'), binding);
    roundTrip(kind('ClusterRoleBinding', 'rbac.'), binding);
  });

  it('Status, DeleteOptions, lists and TokenRequest', () => {
    const n = new SchemaNames('orch.io');
    const status = defs[n.meta('Status')];
    const s = {
      metadata: { resourceVersion: '7' },
      status: 'Failure',
      message: 'bad',
      reason: 'Invalid',
      details: { name: 'x', group: 'g', kind: 'configmaps', uid: 'u', causes: [{ reason: 'FieldValueInvalid', message: 'm', field: 'data' }], retryAfterSeconds: 3 },
      code: 422,
    };
    expect(decodeProtobufObject(encodeProtobufObject(s, status!, defs), status!, defs)).toEqual(s);
    const del = defs[n.meta('DeleteOptions')];
    const d = { gracePeriodSeconds: 0, preconditions: { uid: 'u', resourceVersion: '5' }, propagationPolicy: 'Foreground', dryRun: ['All'], orphanDependents: false };
    expect(decodeProtobufObject(encodeProtobufObject(d, del!, defs), del!, defs)).toEqual(d);
    const catalog = new ProtobufCatalog(new Registry('orch.io', defs, kinds));
    const list = { apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: '9', continue: 'tok', remainingItemCount: 4 }, items: [{ metadata: { name: 'a' }, data: { k: 'v' } }] };
    const enc = catalog.encodeBody(list)!;
    expect(enc.skipped).toEqual([]);
    expect(catalog.decodeBody(enc.bytes, kind('ConfigMap'), 'ConfigMapList')).toEqual(list);
    const tr = tokenRequestSchema(n);
    const t = { metadata: { name: 'sa' }, spec: { audiences: ['api'], expirationSeconds: 3600, boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p', uid: 'u' } }, status: { token: 'jwt', expirationTimestamp: '2030-01-01T00:00:00Z' } };
    expect(decodeProtobufObject(encodeProtobufObject(t, tr, defs), tr, defs)).toEqual(t);
  });
});

describe('known byte vectors (Kubernetes field numbers)', () => {
  it('a small ConfigMap: metadata = 1 {name = 1, namespace = 3}, data = 2 map entries {key = 1, value = 2}', () => {
    const bytes = encodeProtobufObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'b' }, data: { k: 'v' } }, kind('ConfigMap'), defs);
    expect(hex(bytes)).toBe('0a06' + '0a0161' + '1a0162' + '1206' + '0a016b' + '120176');
  });

  it('a Namespace: creationTimestamp = 8 as Time {seconds = 1}, spec = 2 {finalizers = 1}', () => {
    const bytes = encodeProtobufObject({ metadata: { name: 'n', creationTimestamp: '1970-01-01T00:01:40Z' }, spec: { finalizers: ['kubernetes'] } }, kind('Namespace'), defs);
    expect(hex(bytes)).toBe('0a07' + '0a016e' + '42020864' + '120c' + '0a0a' + Buffer.from('kubernetes').toString('hex'));
  });

  it('binaryData is raw bytes; targetPort is IntOrString {type, intVal, strVal}', () => {
    const cm = encodeProtobufObject({ binaryData: { b: Buffer.from([0xff, 0x00]).toString('base64') } }, kind('ConfigMap'), defs);
    expect(hex(cm)).toBe('1a07' + '0a0162' + '1202ff00');
    const svc = encodeProtobufObject({ spec: { ports: [{ port: 80, targetPort: 8080 }] } }, kind('Service'), defs);
    // spec = 2 { ports = 1 { port = 3: 80, targetPort = 4 { type = 0, intVal = 8080, strVal = "" } } }
    expect(hex(svc)).toBe('120d' + '0a0b' + '1850' + '2207' + '0800' + '10903f' + '1a00');
  });

  it('the envelope: prefix, TypeMeta = 1, raw = 2', () => {
    const raw = Uint8Array.of(0x0a, 0x00);
    const env = encodeEnvelope({ apiVersion: 'v1', kind: 'ConfigMap' }, raw);
    expect(hex(env)).toBe('6b387300' + '0a0f' + '0a027631' + '1209' + Buffer.from('ConfigMap').toString('hex') + '1202' + '0a00');
    expect(decodeEnvelope(env)).toEqual({ typeMeta: { apiVersion: 'v1', kind: 'ConfigMap' }, raw, contentEncoding: '', contentType: '' });
  });

  it('accepts packed and unpacked repeated scalars, skips unknown fields, reads "" as absent', () => {
    const pod = kind('Pod');
    // spec = 2 { securityContext = 14 { supplementalGroups = 4 packed [1, 2] } }
    const packed = Uint8Array.from(Buffer.from('1206' + '7204' + '22020102', 'hex'));
    // same, unpacked, plus an unknown varint field 99 and metadata.namespace = ""
    const unpacked = Uint8Array.from(Buffer.from('0a02' + '1a00' + '1206' + '7204' + '2001' + '2002' + '980607', 'hex'));
    const want = { spec: { securityContext: { supplementalGroups: [1, 2] } } };
    expect(decodeProtobufObject(packed, pod, defs)).toEqual(want);
    expect(decodeProtobufObject(unpacked, pod, defs)).toEqual({ metadata: {}, ...want });
  });
});

describe('malformed input gives typed errors', () => {
  const cm = kind('ConfigMap');
  const reasonOf = (f: () => unknown): string => {
    try {
      f();
    } catch (e) {
      expect(e).toBeInstanceOf(ProtobufError);
      return (e as ProtobufError).reason;
    }
    return 'no error';
  };

  it('bad prefix, truncation, wrong wire type', () => {
    expect(reasonOf(() => decodeEnvelope(Uint8Array.of(0x7b, 0x7d)))).toBe('BadPrefix');
    expect(reasonOf(() => decodeEnvelope(Uint8Array.of(0x6b, 0x38, 0x73, 0x00, 0x12, 0x10, 0x01)))).toBe('Truncated');
    // metadata (field 1) as a varint
    expect(reasonOf(() => decodeProtobufObject(Uint8Array.of(0x08, 0x01), cm, defs))).toBe('WireType');
    // data entry claims 10 bytes, has 2
    expect(reasonOf(() => decodeProtobufObject(Uint8Array.of(0x12, 0x0a, 0x0a, 0x00), cm, defs))).toBe('Truncated');
    // a varint that never ends
    expect(reasonOf(() => decodeProtobufObject(Uint8Array.of(0x20, 0xff, 0xff), cm, defs))).toBe('Truncated');
  });

  it('kind mismatch and kinds without numbers', () => {
    const catalog = new ProtobufCatalog(new Registry('orch.io', defs, kinds));
    const secretBody = encodeEnvelope({ apiVersion: 'v1', kind: 'Secret' }, new Uint8Array(0));
    expect(reasonOf(() => catalog.decodeBody(secretBody, cm, 'ConfigMap'))).toBe('KindMismatch');
    const widget: ResourceDefinition = { ...cm, group: 'example.com', kind: 'Widget', resource: 'widgets', customResource: true };
    const widgetBody = encodeEnvelope({ apiVersion: 'example.com/v1', kind: 'Widget' }, new Uint8Array(0));
    expect(reasonOf(() => catalog.decodeBody(widgetBody, widget))).toBe('Unsupported');
    expect(catalog.supports(widget)).toBe(false);
    expect(catalog.supports(cm)).toBe(true);
  });
});

describe('property: random ConfigMaps round-trip', () => {
  const key = fc.stringMatching(/^[-._a-zA-Z0-9]{1,20}$/);
  const cmArb = fc.record(
    {
      metadata: fc.record({ name: fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/), labels: fc.dictionary(key, fc.string({ minLength: 1 }), { minKeys: 1 }), generation: fc.integer({ min: 1, max: 2 ** 40 }) }, { requiredKeys: ['name'] }),
      // empty maps have no protobuf form (as in Kubernetes): generate non-empty ones
      data: fc.dictionary(key, fc.string({ unit: 'grapheme' }), { minKeys: 1 }),
      binaryData: fc.dictionary(key, fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b).toString('base64')), { minKeys: 1 }),
      immutable: fc.boolean(),
    },
    { requiredKeys: ['metadata'] },
  );
  it('decode(encode(x)) = x', () => {
    fc.assert(
      fc.property(cmArb, (x) => {
        const bytes = encodeProtobufObject(x, kind('ConfigMap'), defs);
        expect(decodeProtobufObject(bytes, kind('ConfigMap'), defs)).toEqual(x);
      }),
      { numRuns: 200 },
    );
  });
});
