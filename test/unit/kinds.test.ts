import { workloadExamples } from '../fixtures/workload-examples.js';
import { describe, expect, it } from 'vitest';
import { builtinDefinitions, builtinSchemaDefinitions } from '../../src/registry/kinds/index.js';
import { podStatusReason } from '../../src/registry/kinds/pod.js';
import { prepareCreate } from '../../src/registry/create-metadata.js';
import { applyDefaults } from '../../src/machinery/schema/defaults.js';
import { validateObjectMeta } from '../../src/machinery/schema/object-meta.js';
import { validateAgainstSchema } from '../../src/machinery/schema/validate.js';
import type { ApiObject, ResourceDefinition } from '../../src/registry/types.js';
import { kindExamples } from '../fixtures/kind-examples.js';

const DOMAIN = 'orch.io';
const kinds = builtinDefinitions(DOMAIN);
const defs = builtinSchemaDefinitions(DOMAIN);

function kind(group: string, k: string): ResourceDefinition {
  const d = kinds.find((x) => x.group === group && x.kind === k);
  if (!d) throw new Error(`no ${group}/${k}`);
  return d;
}

/** the admission pipeline as the store runs it: its create preparation, schema defaults, validation */
function admit(def: ResourceDefinition, obj: ApiObject) {
  prepareCreate(def, obj, Date.now());
  applyDefaults(obj, def.schema, defs);
  const res = validateAgainstSchema(obj, def.schema, defs);
  const meta = validateObjectMeta(obj.metadata, { namespaced: def.scope === 'Namespaced', nameValidation: def.nameValidation });
  const strategy = def.strategy.validate?.(obj) ?? [];
  return { errors: [...res.errors, ...meta, ...strategy], unknownFields: res.unknownFields };
}

const meta = (name: string, namespace?: string) => ({
  name,
  ...(namespace ? { namespace } : {}),
  uid: '6f1c1f0e-2f57-4f4b-9d7a-0d1c0c6d9a10',
  resourceVersion: '42',
  generation: 1,
  creationTimestamp: '2024-05-01T10:00:00Z',
  labels: { app: 'web', 'app.example.com/tier': 'frontend' },
  annotations: { 'example.com/note': 'hello' },
  finalizers: ['example.com/cleanup'],
  ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-abc', uid: '1b2c', controller: true, blockOwnerDeletion: true }],
  managedFields: [{ manager: 'kubectl', operation: 'Apply', apiVersion: 'v1', time: '2024-05-01T10:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': {} } } }],
});

const examples: [string, string, ApiObject][] = [
  ['', 'Namespace', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { env: 'prod' } }, spec: { finalizers: ['kubernetes'] } }],
  ['', 'ConfigMap', { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('settings', 'default'), data: { 'app.properties': 'a=b\n', LOG_LEVEL: 'debug' }, binaryData: { 'logo.png': 'iVBORw0KGgo=' }, immutable: false }],
  ['', 'Secret', { apiVersion: 'v1', kind: 'Secret', metadata: meta('creds', 'default'), type: 'Opaque', data: { password: 'czNjcjN0' }, stringData: { username: 'admin' } }],
  ['', 'ServiceAccount', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta('builder', 'ci'), secrets: [{ name: 'builder-token' }], imagePullSecrets: [{ name: 'registry' }], automountServiceAccountToken: false }],
  [
    '',
    'Pod',
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: meta('web-0', 'default'),
      spec: {
        serviceAccountName: 'builder',
        nodeSelector: { 'disktype': 'ssd' },
        securityContext: { runAsNonRoot: true, runAsUser: 1000, fsGroup: 2000, seccompProfile: { type: 'RuntimeDefault' } },
        initContainers: [{ name: 'migrate', image: 'registry.example.com/app:1.2.3', command: ['/bin/migrate'], args: ['--up'] }],
        containers: [
          {
            name: 'app',
            image: 'registry.example.com/app:1.2.3',
            workingDir: '/srv',
            ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }, { containerPort: 9090 }],
            env: [
              { name: 'MODE', value: 'prod' },
              { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
              { name: 'DB_PASSWORD', valueFrom: { secretKeyRef: { name: 'creds', key: 'password' } } },
              { name: 'CPU_LIMIT', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1m' } } },
            ],
            envFrom: [{ configMapRef: { name: 'settings' } }, { prefix: 'S_', secretRef: { name: 'creds', optional: true } }],
            resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: 0.25, memory: '128Mi' } },
            volumeMounts: [
              { name: 'config', mountPath: '/etc/app', readOnly: true },
              { name: 'cache', mountPath: '/cache' },
              { name: 'token', mountPath: '/var/run/secrets/tokens' },
            ],
            livenessProbe: { httpGet: { path: '/healthz', port: 'http', httpHeaders: [{ name: 'X-Probe', value: '1' }] }, initialDelaySeconds: 5, periodSeconds: 10 },
            readinessProbe: { tcpSocket: { port: 8080 }, failureThreshold: 3 },
            startupProbe: { exec: { command: ['cat', '/tmp/ready'] }, failureThreshold: 30 },
            lifecycle: { preStop: { exec: { command: ['sleep', '5'] } }, postStart: { httpGet: { path: '/warm', port: 8080 } } },
            securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
            imagePullPolicy: 'IfNotPresent',
            terminationMessagePolicy: 'FallbackToLogsOnError',
          },
          { name: 'sidecar', image: 'busybox', command: ['sh', '-c', 'tail -f /dev/null'], stdin: true, tty: true },
        ],
        volumes: [
          { name: 'config', configMap: { name: 'settings', items: [{ key: 'app.properties', path: 'app.properties' }] } },
          { name: 'cache', emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } },
          { name: 'data', persistentVolumeClaim: { claimName: 'data' } },
          { name: 'host', hostPath: { path: '/var/log', type: 'Directory' } },
          { name: 'creds', secret: { secretName: 'creds', defaultMode: 256 } },
          { name: 'info', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
          { name: 'token', projected: { sources: [{ serviceAccountToken: { path: 'token', audience: 'vault', expirationSeconds: 600 } }, { configMap: { name: 'settings' } }] } },
        ],
        tolerations: [{ key: 'node.orch.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
        affinity: {
          nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }] } },
          podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'web' } } } }] },
        },
        priority: 0,
        hostNetwork: false,
        dnsConfig: { options: [{ name: 'ndots', value: '2' }] },
      },
      status: { phase: 'Running', podIP: '10.0.0.5', podIPs: [{ ip: '10.0.0.5' }], hostIP: '192.168.1.10', startTime: '2024-05-01T10:00:01Z', qosClass: 'Burstable', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2024-05-01T10:00:05Z' }], containerStatuses: [{ name: 'app', ready: true, restartCount: 2, image: 'app:1.2.3', imageID: 'sha256:abc', state: { running: { startedAt: '2024-05-01T10:00:02Z' } } }] },
    },
  ],
  [
    '',
    'Service',
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta('web', 'default'),
      spec: {
        type: 'NodePort',
        selector: { app: 'web' },
        ports: [
          { name: 'http', port: 80, targetPort: 'http', nodePort: 30080 },
          { name: 'metrics', port: 9090, protocol: 'TCP', targetPort: 9090 },
        ],
        clusterIP: '10.96.0.10',
        clusterIPs: ['10.96.0.10'],
        ipFamilies: ['IPv4'],
        ipFamilyPolicy: 'SingleStack',
        sessionAffinity: 'ClientIP',
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } },
        externalTrafficPolicy: 'Local',
      },
      status: { loadBalancer: {} },
    },
  ],
  [
    '',
    'Node',
    {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'worker-1', labels: { 'node-role.orch.io/worker': '' } },
      spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'], providerID: 'local://worker-1', unschedulable: false, taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] },
      status: {
        capacity: { cpu: '4', memory: '16Gi', pods: '110' },
        allocatable: { cpu: '3800m', memory: '15Gi', pods: 110 },
        conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: '2024-05-01T10:00:00Z', lastTransitionTime: '2024-05-01T09:00:00Z', reason: 'NodeAgentReady', message: 'ready' }],
        addresses: [{ type: 'InternalIP', address: '192.168.1.10' }, { type: 'Hostname', address: 'worker-1' }],
        daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
        nodeInfo: { machineID: 'm', systemUUID: 's', bootID: 'b', kernelVersion: '6.1.0', osImage: 'Debian 12', containerRuntimeVersion: 'containerd://1.7', kubeletVersion: 'v1.32.0', kubeProxyVersion: '', operatingSystem: 'linux', architecture: 'amd64' },
        images: [{ names: ['busybox:latest'], sizeBytes: 1234 }],
      },
    },
  ],
  [
    '',
    'Event',
    {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'web-0.17c1', namespace: 'default' },
      involvedObject: { kind: 'Pod', namespace: 'default', name: 'web-0', uid: 'u1', apiVersion: 'v1', fieldPath: 'spec.containers{app}' },
      reason: 'Pulled',
      message: 'Successfully pulled image',
      source: { component: 'node-agent', host: 'worker-1' },
      firstTimestamp: '2024-05-01T10:00:00Z',
      lastTimestamp: '2024-05-01T10:05:00Z',
      count: 3,
      type: 'Normal',
      reportingComponent: 'node-agent',
      reportingInstance: 'worker-1',
    },
  ],
  ['coordination.orch.io', 'Lease', { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: meta('worker-1', 'orch-node-lease'), spec: { holderIdentity: 'worker-1', leaseDurationSeconds: 40, acquireTime: '2024-05-01T10:00:00.000000Z', renewTime: '2024-05-01T10:00:30.123456Z', leaseTransitions: 1 } }],
  [
    'events.orch.io',
    'Event',
    {
      apiVersion: 'events.orch.io/v1',
      kind: 'Event',
      metadata: { name: 'web-0.17c2', namespace: 'default' },
      eventTime: '2024-05-01T10:00:00.123456Z',
      reportingController: 'orch.io/node-agent',
      reportingInstance: 'node-agent-worker-1',
      action: 'Pulling',
      reason: 'Pulled',
      regarding: { kind: 'Pod', namespace: 'default', name: 'web-0', uid: 'u1', apiVersion: 'v1' },
      note: 'pulled image',
      type: 'Normal',
      series: { count: 2, lastObservedTime: '2024-05-01T10:01:00.000000Z' },
    },
  ],
  ['rbac.authorization.orch.io', 'Role', { apiVersion: 'rbac.authorization.orch.io/v1', kind: 'Role', metadata: meta('pod-reader', 'default'), rules: [{ apiGroups: [''], resources: ['pods', 'pods/log'], verbs: ['get', 'list', 'watch'], resourceNames: ['web-0'] }] }],
  [
    'rbac.authorization.orch.io',
    'ClusterRole',
    {
      apiVersion: 'rbac.authorization.orch.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'system:monitoring' },
      rules: [{ nonResourceURLs: ['/healthz', '/metrics*'], verbs: ['get'] }, { apiGroups: ['*'], resources: ['*'], verbs: ['list'] }],
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'rbac.example.com/aggregate-to-monitoring': 'true' } }] },
    },
  ],
  [
    'rbac.authorization.orch.io',
    'RoleBinding',
    {
      apiVersion: 'rbac.authorization.orch.io/v1',
      kind: 'RoleBinding',
      metadata: meta('read-pods', 'default'),
      subjects: [
        { kind: 'User', apiGroup: 'rbac.authorization.orch.io', name: 'jane' },
        { kind: 'ServiceAccount', name: 'builder', namespace: 'ci' },
      ],
      roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'Role', name: 'pod-reader' },
    },
  ],
  [
    'rbac.authorization.orch.io',
    'ClusterRoleBinding',
    {
      apiVersion: 'rbac.authorization.orch.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'monitoring' },
      subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.orch.io', name: 'ops' }, { kind: 'ServiceAccount', name: 'prom', namespace: 'monitoring' }],
      roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'ClusterRole', name: 'system:monitoring' },
    },
  ],
  // the two computed or create-only core kinds kube 1.32 still serves (legacy-core-resources.test.ts)
  ['', 'Binding', { apiVersion: 'v1', kind: 'Binding', metadata: meta('web-0', 'default'), target: { kind: 'Node', name: 'node-a' } }],
  ['', 'ComponentStatus', { apiVersion: 'v1', kind: 'ComponentStatus', metadata: { name: 'etcd-0' }, conditions: [{ type: 'Healthy', status: 'True', message: 'ok' }] }],
];

examples.push(...kindExamples);

describe('built-in kinds', () => {
  it('has one realistic example per kind', () => {
    expect(examples.map(([g, k]) => `${g}/${k}`).sort()).toEqual(kinds.map((d) => `${d.group}/${d.kind}`).sort());
  });

  it.each(examples)('%s %s validates with zero errors and zero unknown fields', (group, k, example) => {
    const def = kinds.find((x) => x.group === group && x.kind === k && example.apiVersion === (group ? `${group}/${x.version}` : x.version)) ?? kind(group, k);
    const obj = structuredClone(example);
    const { errors, unknownFields } = admit(def, obj);
    expect(errors).toEqual([]);
    expect(unknownFields).toEqual([]);
  });

  it('every schema carries apiVersion, kind and a $ref to the shared ObjectMeta', () => {
    for (const d of kinds) {
      expect(d.schema.properties?.apiVersion?.type).toBe('string');
      expect(d.schema.properties?.kind?.type).toBe('string');
      expect(d.schema.properties?.metadata?.$ref).toBe('io.orch.apimachinery.pkg.apis.meta.v1.ObjectMeta');
    }
  });

  it('uses Kubernetes names, short names and categories', () => {
    const short = Object.fromEntries(kinds.map((d) => [`${d.group}/${d.resource}`, d.shortNames ?? []]));
    expect(short['/namespaces']).toEqual(['ns']);
    expect(short['/configmaps']).toEqual(['cm']);
    expect(short['/serviceaccounts']).toEqual(['sa']);
    expect(short['/pods']).toEqual(['po']);
    expect(short['/services']).toEqual(['svc']);
    expect(short['/nodes']).toEqual(['no']);
    expect(short['/events']).toEqual(['ev']);
    expect(short['/secrets']).toEqual([]);
    expect(short['coordination.orch.io/leases']).toEqual([]);
    expect(short['rbac.authorization.orch.io/roles']).toEqual([]);
    expect(kind('', 'Pod').categories).toEqual(['all']);
    expect(kind('', 'Service').categories).toEqual(['all']);
  });

  it('the API domain option renames every product group', () => {
    const k8s = builtinDefinitions('k8s.io');
    expect([...new Set(k8s.map((d) => d.group))].sort()).toEqual([
      '', 'apiregistration.k8s.io', 'apps', 'autoscaling', 'batch', 'certificates.k8s.io', 'coordination.k8s.io', 'discovery.k8s.io', 'events.k8s.io',
      'flowcontrol.apiserver.k8s.io', 'networking.k8s.io', 'node.k8s.io', 'policy', 'rbac.authorization.k8s.io', 'scheduling.k8s.io', 'storage.k8s.io',
    ]);
    const sharedK8s = builtinSchemaDefinitions('k8s.io');
    expect(sharedK8s['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta']).toBeDefined();
    expect(sharedK8s['io.k8s.api.core.v1.PodSpec']).toBeDefined();
    expect(k8s.find((d) => d.kind === 'Pod')!.schema.properties!.metadata!.$ref).toBe('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
  });
});

describe('defaults', () => {
  it('fills the PodSpec defaults Kubernetes fills', () => {
    const def = kind('', 'Pod');
    const pod: ApiObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'd' }, spec: { containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 80 }] }, { name: 'd', image: 'nginx:1.25' }] } };
    admit(def, pod);
    const spec = pod.spec as Record<string, any>;
    expect(spec.restartPolicy).toBe('Always');
    expect(spec.terminationGracePeriodSeconds).toBe(30);
    expect(spec.dnsPolicy).toBe('ClusterFirst');
    expect(spec.schedulerName).toBe('default-scheduler');
    expect(spec.securityContext).toEqual({});
    expect(spec.containers[0].ports[0].protocol).toBe('TCP');
    expect(spec.containers[0].imagePullPolicy).toBe('Always');
    expect(spec.containers[1].imagePullPolicy).toBe('IfNotPresent');
    expect(spec.containers[0].terminationMessagePath).toBe('/dev/termination-log');
    expect(pod.status).toEqual({ phase: 'Pending', qosClass: 'BestEffort' });
  });

  it('defaults a fieldRef apiVersion to v1 in env and downward API volumes (kubectl describe prints it)', () => {
    const pod: ApiObject = {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'd' },
      spec: {
        containers: [{ name: 'c', image: 'nginx', env: [{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }] }],
        volumes: [{ name: 'v', downwardAPI: { items: [{ path: 'n', fieldRef: { fieldPath: 'metadata.name' } }] } }],
      },
    };
    admit(kind('', 'Pod'), pod);
    const spec = pod.spec as Record<string, any>;
    expect(spec.containers[0].env[0].valueFrom.fieldRef).toEqual({ apiVersion: 'v1', fieldPath: 'metadata.name' });
    expect(spec.volumes[0].downwardAPI.items[0].fieldRef).toEqual({ apiVersion: 'v1', fieldPath: 'metadata.name' });
  });

  it('defaults Service type, affinity, protocol and targetPort; Namespace phase; Secret type', () => {
    const svc: ApiObject = { metadata: { name: 's', namespace: 'd' }, spec: { ports: [{ port: 80 }] } };
    admit(kind('', 'Service'), svc);
    expect(svc.spec).toMatchObject({ type: 'ClusterIP', sessionAffinity: 'None', ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }] });
    const ns: ApiObject = { metadata: { name: 'n' } };
    admit(kind('', 'Namespace'), ns);
    expect(ns.status).toEqual({ phase: 'Active' });
    const sec: ApiObject = { metadata: { name: 's', namespace: 'd' } };
    admit(kind('', 'Secret'), sec);
    expect(sec.type).toBe('Opaque');
  });
});

describe('strategies', () => {
  it('Secret merges stringData into base64 data and removes it', () => {
    const def = kind('', 'Secret');
    const s: ApiObject = { metadata: { name: 's', namespace: 'd' }, data: { a: 'eA==' }, stringData: { b: 'hello', a: 'over' } };
    admit(def, s);
    expect(s.stringData).toBeUndefined();
    expect(s.data).toEqual({ a: Buffer.from('over').toString('base64'), b: Buffer.from('hello').toString('base64') });
    const upd: ApiObject = { metadata: { name: 's', namespace: 'd' }, data: {}, stringData: { c: 'x' } };
    def.strategy.prepareForUpdate!(upd, s, 0);
    expect(upd.data).toEqual({ c: 'eA==' });
  });

  it('Secret rejects bad base64, changing type, and immutable data changes', () => {
    const def = kind('', 'Secret');
    const bad: ApiObject = { metadata: { name: 's', namespace: 'd' }, data: { a: 'no!' } };
    expect(admit(def, bad).errors).toEqual([{ field: 'data[a]', type: 'FieldValueTypeInvalid', message: 'illegal base64 data at input byte 2' }]);
    const old: ApiObject = { metadata: { name: 's', namespace: 'd' }, type: 'Opaque', immutable: true, data: { a: 'eA==' } };
    const next: ApiObject = { metadata: { name: 's', namespace: 'd' }, type: 'example.com/other', immutable: true, data: { a: 'eQ==' } };
    expect(def.strategy.validateUpdate!(next, old).map((e) => `${e.field}: ${e.message}`)).toEqual([
      'type: Invalid value: "example.com/other": field is immutable',
      'data: Forbidden: field is immutable when `immutable` is set',
    ]);
  });

  it('ConfigMap rejects bad keys and keys in both data and binaryData', () => {
    const errs = kind('', 'ConfigMap').strategy.validate!({ metadata: { name: 'c' }, data: { 'a b': 'x', k: 'v' }, binaryData: { k: 'eA==' } });
    expect(errs.map((e) => e.field)).toEqual(['data[a b]', 'data[k]']);
    expect(errs[0]!.message).toContain("a valid config key must consist of alphanumeric characters, '-', '_' or '.'");
  });

  it('RoleBinding roleRef is required and immutable; rules need verbs', () => {
    const rb = kind('rbac.authorization.orch.io', 'RoleBinding');
    const noRef: ApiObject = { metadata: { name: 'x', namespace: 'd' } };
    expect(admit(rb, noRef).errors).toContainEqual({ field: 'roleRef', type: 'FieldValueRequired', message: 'Required value' });
    const old: ApiObject = { metadata: { name: 'x', namespace: 'd' }, roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'Role', name: 'a' } };
    const changed: ApiObject = { metadata: { name: 'x', namespace: 'd' }, roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'Role', name: 'b' } };
    expect(rb.strategy.validateUpdate!(changed, old).map((e) => e.field)).toEqual(['roleRef']);
    expect(rb.strategy.validateUpdate!(structuredClone(old), old)).toEqual([]);
    const role = kind('rbac.authorization.orch.io', 'Role');
    const r: ApiObject = { metadata: { name: 'r', namespace: 'd' }, rules: [{ apiGroups: [''], resources: ['pods'] }] };
    expect(admit(role, r).errors).toContainEqual({ field: 'rules[0].verbs', type: 'FieldValueRequired', message: 'Required value' });
  });

  it('events/v1 requires reporting fields on creation and forbids deprecated fields', () => {
    const ev = kind('events.orch.io', 'Event');
    const e: ApiObject = { metadata: { name: 'e', namespace: 'd' }, type: 'Normal', deprecatedCount: 3, deprecatedSource: { component: 'x' } };
    const fields = admit(ev, e).errors.map((x) => `${x.field}: ${x.message}`);
    expect(fields).toEqual([
      'eventTime: Required value',
      'reportingController: Required value',
      'reportingInstance: Required value',
      'action: Required value',
      'reason: Required value',
      'regarding: Required value',
      'deprecatedCount: Invalid value: "": needs to be unset',
      'deprecatedSource: Invalid value: "": needs to be unset',
    ]);
    const bad: ApiObject = { metadata: { name: 'e', namespace: 'd' }, type: 'Info' };
    expect(ev.strategy.validateUpdate!(bad, bad).map((x) => x.field)).toEqual(['type']);
  });

  it('Pod rules: duplicate names, unknown volume mounts, immutable spec', () => {
    const def = kind('', 'Pod');
    const p: ApiObject = { metadata: { name: 'p', namespace: 'd' }, spec: { containers: [{ name: 'a', image: 'i', volumeMounts: [{ name: 'nope', mountPath: '/x' }] }, { name: 'a', image: '' }] } };
    expect(admit(def, p).errors.map((e) => `${e.field}: ${e.message}`)).toEqual([
      'spec.containers[0].volumeMounts[0].name: Not found: "nope"',
      'spec.containers[1].name: Duplicate value: "a"',
      'spec.containers[1].image: Required value',
    ]);
    const old: ApiObject = { metadata: { name: 'p', namespace: 'd' }, spec: { containers: [{ name: 'a', image: 'i:1' }] } };
    const imageOnly: ApiObject = { metadata: { name: 'p', namespace: 'd' }, spec: { containers: [{ name: 'a', image: 'i:2' }] } };
    expect(def.strategy.validateUpdate!(imageOnly, old)).toEqual([]);
    const other: ApiObject = { metadata: { name: 'p', namespace: 'd' }, spec: { containers: [{ name: 'a', image: 'i:1', args: ['x'] }] } };
    expect(def.strategy.validateUpdate!(other, old).map((e) => e.field)).toEqual(['spec']);
    // kube's JSON carries a container's `resources: {}` (a Go struct): it equals an absent one
    const emptyResources: ApiObject = { metadata: { name: 'p', namespace: 'd' }, spec: { containers: [{ name: 'a', image: 'i:2', resources: {}, ports: [] }] } };
    expect(def.strategy.validateUpdate!(emptyResources, old)).toEqual([]);
    const realResources: ApiObject = { metadata: { name: 'p', namespace: 'd' }, spec: { containers: [{ name: 'a', image: 'i:1', resources: { limits: { cpu: '1' } } }] } };
    expect(def.strategy.validateUpdate!(realResources, old).map((e) => e.field)).toEqual(['spec']);
  });
});

describe('table columns and selectable fields', () => {
  const cells = (def: ResourceDefinition, o: ApiObject) => Object.fromEntries(def.strategy.columns!.map((c) => [c.name, c.cell(o, Date.parse('2026-01-01T00:00:00Z'))]));

  it('Pod READY/STATUS/RESTARTS like kubectl', () => {
    const [, , example] = examples.find(([, k]) => k === 'Pod')!;
    const c = cells(kind('', 'Pod'), example);
    expect(c).toMatchObject({ Ready: '1/2', Status: 'Running', Restarts: '2', IP: '10.0.0.5' });
    const crash: ApiObject = { status: { phase: 'Running', containerStatuses: [{ name: 'a', ready: false, restartCount: 5, state: { waiting: { reason: 'CrashLoopBackOff' } } }] } };
    expect(podStatusReason(crash)).toBe('CrashLoopBackOff');
    const init: ApiObject = { spec: { initContainers: [{ name: 'i' }, { name: 'j' }] }, status: { phase: 'Pending', initContainerStatuses: [{ name: 'i', state: { terminated: { exitCode: 0 } } }, { name: 'j', state: { running: {} } }] } };
    expect(podStatusReason(init)).toBe('Init:1/2');
    expect(podStatusReason({ metadata: { deletionTimestamp: '2024-01-01T00:00:00Z' }, status: { phase: 'Running' } })).toBe('Terminating');
  });

  it('Service, Node, ConfigMap, Secret, Namespace, Lease columns', () => {
    const svc = examples.find(([, k]) => k === 'Service')![2];
    expect(cells(kind('', 'Service'), svc)).toMatchObject({ Type: 'NodePort', 'Cluster-IP': '10.96.0.10', 'External-IP': '<none>', 'Port(s)': '80:30080/TCP,9090/TCP', Selector: 'app=web' });
    const node = examples.find(([, k]) => k === 'Node')![2];
    expect(cells(kind('', 'Node'), node)).toMatchObject({ Status: 'Ready', Roles: 'worker', Version: 'v1.32.0', 'Internal-IP': '192.168.1.10' });
    expect(cells(kind('', 'ConfigMap'), examples[1]![2])).toEqual({ Data: 3 });
    expect(cells(kind('', 'Secret'), { type: 'Opaque', data: { a: 'eA==' } })).toEqual({ Type: 'Opaque', Data: 1 });
    expect(cells(kind('', 'Namespace'), { status: { phase: 'Active' } })).toEqual({ Status: 'Active' });
    expect(cells(kind('coordination.orch.io', 'Lease'), examples.find(([, k]) => k === 'Lease')![2])).toEqual({ Holder: 'worker-1' });
  });

  it('selectable fields per kind', () => {
    const pod = kind('', 'Pod').strategy.selectableFields!;
    const [, , example] = examples.find(([, k]) => k === 'Pod')!;
    expect(Object.keys(pod)).toEqual(expect.arrayContaining(['spec.nodeName', 'status.phase', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName', 'status.podIP']));
    expect(pod['status.phase']!(example)).toBe('Running');
    expect(pod['spec.nodeName']!(example)).toBe('');
    expect(kind('', 'Secret').strategy.selectableFields!.type!({ type: 'Opaque' })).toBe('Opaque');
    expect(kind('', 'Node').strategy.selectableFields!['spec.unschedulable']!({ spec: { unschedulable: true } })).toBe('true');
    const ev = kind('', 'Event').strategy.selectableFields!;
    const evObj = examples.find(([g, k]) => g === '' && k === 'Event')![2];
    expect(ev['involvedObject.name']!(evObj)).toBe('web-0');
    expect(ev.reason!(evObj)).toBe('Pulled');
    expect(ev.source!(evObj)).toBe('node-agent');
    // no source component: the reporting controller (kube's event ToSelectableFields)
    expect(ev.source!({ reportingComponent: 'test-controller' })).toBe('test-controller');
    expect(ev.source!({ source: { component: '' }, reportingComponent: 'test-controller' })).toBe('test-controller');
    // events/v1 selects on every regarding field (kube's AddFieldLabelConversionsForEvent)
    const evV1 = kind('events.orch.io', 'Event').strategy.selectableFields!;
    const regarding = { regarding: { apiVersion: 'v1', resourceVersion: '7', fieldPath: 'spec.containers{c}' } };
    expect([evV1['regarding.apiVersion']!(regarding), evV1['regarding.resourceVersion']!(regarding), evV1['regarding.fieldPath']!(regarding)]).toEqual(['v1', '7', 'spec.containers{c}']);
    expect(kind('', 'Namespace').strategy.selectableFields!['status.phase']!({ status: { phase: 'Terminating' } })).toBe('Terminating');
    // kube's GetAttrs: counters as decimal integers, 0 when absent
    const svcFields = kind('', 'Service').strategy.selectableFields!;
    expect([svcFields['spec.clusterIP']!({ spec: { clusterIP: '10.96.0.10', type: 'NodePort' } }), svcFields['spec.type']!({ spec: { type: 'NodePort' } })]).toEqual(['10.96.0.10', 'NodePort']);
    for (const [g, k] of [['apps', 'ReplicaSet'], ['', 'ReplicationController']] as const) {
      const f = kind(g, k).strategy.selectableFields!['status.replicas']!;
      expect([f({ status: { replicas: 3 } }), f({})]).toEqual(['3', '0']);
    }
    const succeeded = kind('batch', 'Job').strategy.selectableFields!['status.successful']!;
    expect([succeeded({ status: { succeeded: 2 } }), succeeded({ status: {} })]).toEqual(['2', '0']);
    expect(kind('certificates.orch.io', 'CertificateSigningRequest').strategy.selectableFields!['spec.signerName']!({ spec: { signerName: 'orch.io/kubelet-serving' } })).toBe('orch.io/kubelet-serving');
  });
});
