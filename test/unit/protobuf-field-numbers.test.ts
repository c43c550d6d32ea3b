// Pins the protobuf field numbers of the built-in kinds independently of the
// schema code (spec 000 §2.7; docs/protobuf.md "Audit against generated.proto").
// The .proto text below restates, for a sample of messages, the numbers of
// Kubernetes 1.32's generated.proto (k8s.io/api core, apps, batch, networking,
// policy, certificates; apimachinery meta/v1), Go-inlined structs written as the
// nested messages they are on the wire. protobufjs encodes hand-built messages
// with it; orch must decode them to the expected JSON, and orch's encoding must
// decode back through protobufjs to the same message. A wrong number in a kind
// schema fails here even when orch's own round trip is consistent.

import protobuf from 'protobufjs';
import { describe } from 'vitest';
import { builtinDefinitions, builtinSchemaDefinitions } from '../../src/registry/kinds/index.js';
import type { ResourceDefinition } from '../../src/registry/types.js';
import { type AuditCase, auditCases, builtinKind } from '../helpers/proto-audit.js';

const K8S_PROTO = `
syntax = "proto2";
package k8s;

message Time { optional int64 seconds = 1; optional int32 nanos = 2; }
message IntOrString { optional int64 type = 1; optional int32 intVal = 2; optional string strVal = 3; }
message Quantity { optional string string = 1; }
message ObjectMeta {
  optional string name = 1; optional string generateName = 2; optional string namespace = 3; optional string uid = 5;
  optional string resourceVersion = 6; optional int64 generation = 7; optional Time creationTimestamp = 8;
  map<string, string> labels = 11; map<string, string> annotations = 12; repeated string finalizers = 14;
}
message LabelSelectorRequirement { optional string key = 1; optional string operator = 2; repeated string values = 3; }
message LabelSelector { map<string, string> matchLabels = 1; repeated LabelSelectorRequirement matchExpressions = 2; }
message Condition {
  optional string type = 1; optional string status = 2; optional int64 observedGeneration = 3;
  optional Time lastTransitionTime = 4; optional string reason = 5; optional string message = 6;
}

// core/v1
message LocalObjectReference { optional string name = 1; }
message KeyToPath { optional string key = 1; optional string path = 2; optional int32 mode = 3; }
message ConfigMapVolumeSource { optional LocalObjectReference localObjectReference = 1; repeated KeyToPath items = 2; optional int32 defaultMode = 3; optional bool optional = 4; }
message EmptyDirVolumeSource { optional string medium = 1; optional Quantity sizeLimit = 2; }
message PersistentVolumeClaimVolumeSource { optional string claimName = 1; optional bool readOnly = 2; }
message VolumeSource { optional EmptyDirVolumeSource emptyDir = 2; optional PersistentVolumeClaimVolumeSource persistentVolumeClaim = 10; optional ConfigMapVolumeSource configMap = 19; }
message Volume { optional string name = 1; optional VolumeSource volumeSource = 2; }
message SecretKeySelector { optional LocalObjectReference localObjectReference = 1; optional string key = 2; optional bool optional = 3; }
message EnvVarSource { optional SecretKeySelector secretKeyRef = 4; }
message EnvVar { optional string name = 1; optional string value = 2; optional EnvVarSource valueFrom = 3; }
message ContainerPort { optional string name = 1; optional int32 containerPort = 3; optional string protocol = 4; }
message HTTPGetAction { optional string path = 1; optional IntOrString port = 2; optional string scheme = 4; }
message ProbeHandler { optional HTTPGetAction httpGet = 2; }
message Probe { optional ProbeHandler handler = 1; optional int32 initialDelaySeconds = 2; optional int32 periodSeconds = 4; }
message ResourceRequirements { map<string, Quantity> limits = 1; map<string, Quantity> requests = 2; }
message VolumeDevice { optional string name = 1; optional string devicePath = 2; }
message ContainerResizePolicy { optional string resourceName = 1; optional string restartPolicy = 2; }
message Container {
  optional string name = 1; optional string image = 2; repeated string args = 4; repeated ContainerPort ports = 6; repeated EnvVar env = 7;
  optional ResourceRequirements resources = 8; optional Probe readinessProbe = 11; optional string imagePullPolicy = 14; repeated VolumeDevice volumeDevices = 21;
  repeated ContainerResizePolicy resizePolicy = 23; optional string restartPolicy = 24;
}
message NodeSelectorRequirement { optional string key = 1; optional string operator = 2; repeated string values = 3; }
message NodeSelectorTerm { repeated NodeSelectorRequirement matchExpressions = 1; repeated NodeSelectorRequirement matchFields = 2; }
message NodeSelector { repeated NodeSelectorTerm nodeSelectorTerms = 1; }
message PreferredSchedulingTerm { optional int32 weight = 1; optional NodeSelectorTerm preference = 2; }
message NodeAffinity { optional NodeSelector requiredDuringSchedulingIgnoredDuringExecution = 1; repeated PreferredSchedulingTerm preferredDuringSchedulingIgnoredDuringExecution = 2; }
message PodAffinityTerm { optional LabelSelector labelSelector = 1; repeated string namespaces = 2; optional string topologyKey = 3; optional LabelSelector namespaceSelector = 4; repeated string matchLabelKeys = 5; }
message WeightedPodAffinityTerm { optional int32 weight = 1; optional PodAffinityTerm podAffinityTerm = 2; }
message PodAffinity { repeated PodAffinityTerm requiredDuringSchedulingIgnoredDuringExecution = 1; repeated WeightedPodAffinityTerm preferredDuringSchedulingIgnoredDuringExecution = 2; }
message Affinity { optional NodeAffinity nodeAffinity = 1; optional PodAffinity podAffinity = 2; optional PodAffinity podAntiAffinity = 3; }
message TopologySpreadConstraint {
  optional int32 maxSkew = 1; optional string topologyKey = 2; optional string whenUnsatisfiable = 3; optional LabelSelector labelSelector = 4;
  optional int32 minDomains = 5; optional string nodeAffinityPolicy = 6; optional string nodeTaintsPolicy = 7; repeated string matchLabelKeys = 8;
}
message AppArmorProfile { optional string type = 1; optional string localhostProfile = 2; }
message WindowsSecurityContextOptions { optional string gmsaCredentialSpecName = 1; optional string runAsUserName = 3; optional bool hostProcess = 4; }
message PodSecurityContext { optional int64 runAsUser = 2; optional WindowsSecurityContextOptions windowsOptions = 8; optional AppArmorProfile appArmorProfile = 11; }
message PodResourceClaim { optional string name = 1; optional string resourceClaimName = 3; optional string resourceClaimTemplateName = 4; }
message PodSpec {
  repeated Volume volumes = 1; repeated Container containers = 2; optional string restartPolicy = 3; optional string nodeName = 10; optional PodSecurityContext securityContext = 14;
  optional Affinity affinity = 18; repeated Container initContainers = 20; repeated TopologySpreadConstraint topologySpreadConstraints = 33; repeated PodResourceClaim resourceClaims = 39;
}
message PodTemplateSpec { optional ObjectMeta metadata = 1; optional PodSpec spec = 2; }
message Pod { optional ObjectMeta metadata = 1; optional PodSpec spec = 2; }
message ServicePort { optional string name = 1; optional string protocol = 2; optional int32 port = 3; optional IntOrString targetPort = 4; optional int32 nodePort = 5; }
message ServiceSpec { repeated ServicePort ports = 1; map<string, string> selector = 2; optional string clusterIP = 3; optional string type = 4; repeated string clusterIPs = 18; }
message Service { optional ObjectMeta metadata = 1; optional ServiceSpec spec = 2; }
message NodeRuntimeHandlerFeatures { optional bool recursiveReadOnlyMounts = 1; optional bool userNamespaces = 2; }
message NodeRuntimeHandler { optional string name = 1; optional NodeRuntimeHandlerFeatures features = 2; }
message NodeFeatures { optional bool supplementalGroupsPolicy = 1; }
message NodeStatus { map<string, Quantity> capacity = 1; repeated NodeRuntimeHandler runtimeHandlers = 12; optional NodeFeatures features = 13; }
message Node { optional ObjectMeta metadata = 1; optional NodeStatus status = 3; }
message PersistentVolumeClaimCondition {
  optional string type = 1; optional string status = 2; optional Time lastProbeTime = 3; optional Time lastTransitionTime = 4; optional string reason = 5; optional string message = 6;
}
message PersistentVolumeClaimStatus { optional string phase = 1; repeated string accessModes = 2; map<string, Quantity> capacity = 3; repeated PersistentVolumeClaimCondition conditions = 4; }
message PersistentVolumeClaim { optional ObjectMeta metadata = 1; optional PersistentVolumeClaimStatus status = 3; }

// apps/v1
message RollingUpdateDeployment { optional IntOrString maxUnavailable = 1; optional IntOrString maxSurge = 2; }
message DeploymentStrategy { optional string type = 1; optional RollingUpdateDeployment rollingUpdate = 2; }
message DeploymentSpec { optional int32 replicas = 1; optional LabelSelector selector = 2; optional PodTemplateSpec template = 3; optional DeploymentStrategy strategy = 4; optional int32 progressDeadlineSeconds = 9; }
message DeploymentCondition {
  optional string type = 1; optional string status = 2; optional Time lastUpdateTime = 6; optional Time lastTransitionTime = 7; optional string reason = 4; optional string message = 5;
}
message DeploymentStatus { optional int64 observedGeneration = 1; optional int32 replicas = 2; optional int32 availableReplicas = 4; repeated DeploymentCondition conditions = 6; optional int32 readyReplicas = 7; }
message Deployment { optional ObjectMeta metadata = 1; optional DeploymentSpec spec = 2; optional DeploymentStatus status = 3; }
message ReplicaSetCondition { optional string type = 1; optional string status = 2; optional Time lastTransitionTime = 3; optional string reason = 4; optional string message = 5; }
message ReplicaSetStatus { optional int32 replicas = 1; optional int64 observedGeneration = 3; optional int32 readyReplicas = 4; repeated ReplicaSetCondition conditions = 6; }
message ReplicaSet { optional ObjectMeta metadata = 1; optional ReplicaSetStatus status = 3; }

// batch/v1
message JobCondition {
  optional string type = 1; optional string status = 2; optional Time lastProbeTime = 3; optional Time lastTransitionTime = 4; optional string reason = 5; optional string message = 6;
}
message UncountedTerminatedPods { repeated string succeeded = 1; repeated string failed = 2; }
message JobStatus {
  repeated JobCondition conditions = 1; optional Time startTime = 2; optional Time completionTime = 3; optional int32 succeeded = 5;
  optional UncountedTerminatedPods uncountedTerminatedPods = 8; optional int32 ready = 9; optional int32 terminating = 11;
}
message Job { optional ObjectMeta metadata = 1; optional JobStatus status = 3; }

// networking/v1 (IngressRuleValue is Go-inlined in IngressRule at 2)
message ServiceBackendPort { optional string name = 1; optional int32 number = 2; }
message IngressServiceBackend { optional string name = 1; optional ServiceBackendPort port = 2; }
message IngressBackend { optional IngressServiceBackend service = 4; }
message HTTPIngressPath { optional string path = 1; optional IngressBackend backend = 2; optional string pathType = 3; }
message HTTPIngressRuleValue { repeated HTTPIngressPath paths = 1; }
message IngressRuleValue { optional HTTPIngressRuleValue http = 1; }
message IngressRule { optional string host = 1; optional IngressRuleValue ingressRuleValue = 2; }
message IngressTLS { repeated string hosts = 1; optional string secretName = 2; }
message IngressSpec { optional IngressBackend defaultBackend = 1; repeated IngressTLS tls = 2; repeated IngressRule rules = 3; optional string ingressClassName = 4; }
message IngressPortStatus { optional int32 port = 1; optional string protocol = 2; optional string error = 3; }
message IngressLoadBalancerIngress { optional string ip = 1; optional string hostname = 2; repeated IngressPortStatus ports = 4; }
message IngressLoadBalancerStatus { repeated IngressLoadBalancerIngress ingress = 1; }
message IngressStatus { optional IngressLoadBalancerStatus loadBalancer = 1; }
message Ingress { optional ObjectMeta metadata = 1; optional IngressSpec spec = 2; optional IngressStatus status = 3; }

// policy/v1 (metav1.Condition)
message PodDisruptionBudgetSpec { optional IntOrString minAvailable = 1; optional LabelSelector selector = 2; optional IntOrString maxUnavailable = 3; }
message PodDisruptionBudgetStatus {
  optional int64 observedGeneration = 1; map<string, Time> disruptedPods = 2; optional int32 disruptionsAllowed = 3; optional int32 currentHealthy = 4;
  optional int32 desiredHealthy = 5; optional int32 expectedPods = 6; repeated Condition conditions = 7;
}
message PodDisruptionBudget { optional ObjectMeta metadata = 1; optional PodDisruptionBudgetSpec spec = 2; optional PodDisruptionBudgetStatus status = 3; }

// certificates/v1
message CertificateSigningRequestCondition {
  optional string type = 1; optional string status = 6; optional string reason = 2; optional string message = 3; optional Time lastUpdateTime = 4; optional Time lastTransitionTime = 5;
}
message CertificateSigningRequestSpec { optional bytes request = 1; optional string username = 2; repeated string usages = 5; optional string signerName = 7; optional int32 expirationSeconds = 8; }
message CertificateSigningRequestStatus { repeated CertificateSigningRequestCondition conditions = 1; optional bytes certificate = 2; }
message CertificateSigningRequest { optional ObjectMeta metadata = 1; optional CertificateSigningRequestSpec spec = 2; optional CertificateSigningRequestStatus status = 3; }
`;

const root = protobuf.parse(K8S_PROTO, { keepCase: true }).root;
const defs = builtinSchemaDefinitions();
const kinds = builtinDefinitions();

const kind = (k: string, group: string): ResourceDefinition => builtinKind(kinds, k, group);

// 2024-01-02T03:04:05Z and one minute later
const T0 = { seconds: 1704164645 };
const T1 = { seconds: 1704164705 };
const J0 = '2024-01-02T03:04:05Z';
const J1 = '2024-01-02T03:05:05Z';
/** IntOrString as Go writes it: all three fields, whichever is set */
const ios = (v: number | string) => (typeof v === 'number' ? { type: 0, intVal: v, strVal: '' } : { type: 1, intVal: 0, strVal: v });
const meta = { name: 'x', namespace: 'ns', labels: { app: 'web' }, creationTimestamp: T0 };
const metaJson = { name: 'x', namespace: 'ns', labels: { app: 'web' }, creationTimestamp: J0 };

/** a pod spec whose JSON and protobuf forms have the same shape (no times, quantities or IntOrStrings) */
const schedulingSpec = {
  containers: [{ name: 'db', image: 'pg', volumeDevices: [{ name: 'raw', devicePath: '/dev/xvda' }], resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'NotRequired' }] }],
  securityContext: { runAsUser: 1000, windowsOptions: { gmsaCredentialSpecName: 'gmsa', runAsUserName: 'ContainerUser', hostProcess: false }, appArmorProfile: { type: 'Localhost', localhostProfile: 'p' } },
  affinity: {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }], matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['n9'] }] }] },
      preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 10, preference: { matchExpressions: [{ key: 'ssd', operator: 'Exists' }] } }],
    },
    podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'cache' } }, topologyKey: 'kubernetes.io/hostname', namespaces: ['ns'] }] },
    podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 50, podAffinityTerm: { labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'zone', matchLabelKeys: ['pod-template-hash'] } }] },
  },
  topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'web' } }, minDomains: 2, nodeTaintsPolicy: 'Honor', matchLabelKeys: ['pod-template-hash'] }],
  resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 'gpu-template' }],
};

interface Case extends AuditCase {
  kind: [string, string];
}

const CASES: Case[] = [
  {
    name: 'Deployment: DeploymentCondition lastUpdateTime = 6, lastTransitionTime = 7; strategy IntOrString; template',
    kind: ['Deployment', 'apps'],
    message: 'k8s.Deployment',
    pb: {
      metadata: meta,
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }] },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx', ports: [{ name: 'http', containerPort: 80, protocol: 'TCP' }] }] } },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: ios('25%'), maxSurge: ios(1) } },
        progressDeadlineSeconds: 600,
      },
      status: {
        observedGeneration: 2, replicas: 3, availableReplicas: 2, readyReplicas: 2,
        conditions: [{ type: 'Available', status: 'True', lastUpdateTime: T1, lastTransitionTime: T0, reason: 'MinimumReplicasAvailable', message: 'ok' }],
      },
    },
    json: {
      metadata: metaJson,
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }] },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx', ports: [{ name: 'http', containerPort: 80, protocol: 'TCP' }] }] } },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: 1 } },
        progressDeadlineSeconds: 600,
      },
      status: {
        observedGeneration: 2, replicas: 3, availableReplicas: 2, readyReplicas: 2,
        conditions: [{ type: 'Available', status: 'True', lastUpdateTime: J1, lastTransitionTime: J0, reason: 'MinimumReplicasAvailable', message: 'ok' }],
      },
    },
  },
  {
    name: 'ReplicaSet: ReplicaSetCondition lastTransitionTime = 3',
    kind: ['ReplicaSet', 'apps'],
    message: 'k8s.ReplicaSet',
    pb: { metadata: meta, status: { replicas: 1, observedGeneration: 4, readyReplicas: 1, conditions: [{ type: 'ReplicaFailure', status: 'True', lastTransitionTime: T0, reason: 'FailedCreate', message: 'quota' }] } },
    json: { metadata: metaJson, status: { replicas: 1, observedGeneration: 4, readyReplicas: 1, conditions: [{ type: 'ReplicaFailure', status: 'True', lastTransitionTime: J0, reason: 'FailedCreate', message: 'quota' }] } },
  },
  {
    name: 'Job: JobCondition (lastProbeTime 3 … message 6) and UncountedTerminatedPods',
    kind: ['Job', 'batch'],
    message: 'k8s.Job',
    pb: {
      metadata: meta,
      status: {
        conditions: [{ type: 'Complete', status: 'True', lastProbeTime: T1, lastTransitionTime: T1, reason: 'CompletionsReached', message: 'Reached expected number of succeeded pods' }],
        startTime: T0, completionTime: T1, succeeded: 1, ready: 0, terminating: 0,
        uncountedTerminatedPods: { succeeded: ['uid-1'], failed: ['uid-2', 'uid-3'] },
      },
    },
    json: {
      metadata: metaJson,
      status: {
        conditions: [{ type: 'Complete', status: 'True', lastProbeTime: J1, lastTransitionTime: J1, reason: 'CompletionsReached', message: 'Reached expected number of succeeded pods' }],
        startTime: J0, completionTime: J1, succeeded: 1, ready: 0, terminating: 0,
        uncountedTerminatedPods: { succeeded: ['uid-1'], failed: ['uid-2', 'uid-3'] },
      },
    },
  },
  {
    name: 'PersistentVolumeClaim: PersistentVolumeClaimCondition lastProbeTime 3, lastTransitionTime 4, reason 5, message 6',
    kind: ['PersistentVolumeClaim', ''],
    message: 'k8s.PersistentVolumeClaim',
    pb: {
      metadata: meta,
      status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: { string: '1Gi' } }, conditions: [{ type: 'Resizing', status: 'True', lastProbeTime: T0, lastTransitionTime: T1, reason: 'r', message: 'm' }] },
    },
    json: {
      metadata: metaJson,
      status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' }, conditions: [{ type: 'Resizing', status: 'True', lastProbeTime: J0, lastTransitionTime: J1, reason: 'r', message: 'm' }] },
    },
  },
  {
    name: 'PodDisruptionBudget: metav1.Condition (observedGeneration 3, lastTransitionTime 4, reason 5, message 6)',
    kind: ['PodDisruptionBudget', 'policy'],
    message: 'k8s.PodDisruptionBudget',
    pb: {
      metadata: meta,
      spec: { minAvailable: ios(1), selector: { matchLabels: { app: 'web' } } },
      status: {
        observedGeneration: 1, disruptedPods: { 'p-1': T0 }, disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2,
        conditions: [{ type: 'DisruptionAllowed', status: 'True', observedGeneration: 1, lastTransitionTime: T0, reason: 'SufficientPods' }],
      },
    },
    json: {
      metadata: metaJson,
      spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } } },
      status: {
        observedGeneration: 1, disruptedPods: { 'p-1': J0 }, disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2,
        conditions: [{ type: 'DisruptionAllowed', status: 'True', observedGeneration: 1, lastTransitionTime: J0, reason: 'SufficientPods' }],
      },
    },
  },
  {
    name: 'CertificateSigningRequest: condition status = 6, request/certificate bytes, signerName = 7',
    kind: ['CertificateSigningRequest', 'certificates'],
    message: 'k8s.CertificateSigningRequest',
    pb: {
      metadata: { name: 'csr' },
      spec: { request: Buffer.from('PEM'), username: 'alice', usages: ['client auth'], signerName: 'example.com/s', expirationSeconds: 3600 },
      status: { conditions: [{ type: 'Approved', status: 'True', reason: 'KubectlApprove', message: 'approved', lastUpdateTime: T1, lastTransitionTime: T0 }], certificate: Buffer.from('CERT') },
    },
    json: {
      metadata: { name: 'csr' },
      spec: { request: Buffer.from('PEM').toString('base64'), username: 'alice', usages: ['client auth'], signerName: 'example.com/s', expirationSeconds: 3600 },
      status: { conditions: [{ type: 'Approved', status: 'True', reason: 'KubectlApprove', message: 'approved', lastUpdateTime: J1, lastTransitionTime: J0 }], certificate: Buffer.from('CERT').toString('base64') },
    },
  },
  {
    name: 'Ingress: IngressRuleValue inlined at 2, backend service = 4, status.loadBalancer',
    kind: ['Ingress', 'networking'],
    message: 'k8s.Ingress',
    pb: {
      metadata: meta,
      spec: {
        ingressClassName: 'nginx',
        defaultBackend: { service: { name: 'def', port: { name: 'http' } } },
        tls: [{ hosts: ['a.example.com'], secretName: 'tls' }],
        rules: [{ host: 'a.example.com', ingressRuleValue: { http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } } }],
      },
      status: { loadBalancer: { ingress: [{ ip: '10.0.0.1', ports: [{ port: 443, protocol: 'TCP', error: 'Pending' }] }, { hostname: 'lb.example.com' }] } },
    },
    json: {
      metadata: metaJson,
      spec: {
        ingressClassName: 'nginx',
        defaultBackend: { service: { name: 'def', port: { name: 'http' } } },
        tls: [{ hosts: ['a.example.com'], secretName: 'tls' }],
        rules: [{ host: 'a.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }],
      },
      status: { loadBalancer: { ingress: [{ ip: '10.0.0.1', ports: [{ port: 443, protocol: 'TCP', error: 'Pending' }] }, { hostname: 'lb.example.com' }] } },
    },
  },
  {
    name: 'Pod: VolumeSource inlined at 2 (emptyDir 2, pvc 10, configMap 19 with LocalObjectReference 1), ProbeHandler at 1, secretKeyRef 4',
    kind: ['Pod', ''],
    message: 'k8s.Pod',
    pb: {
      metadata: meta,
      spec: {
        volumes: [
          { name: 'cfg', volumeSource: { configMap: { localObjectReference: { name: 'app-cfg' }, items: [{ key: 'k', path: 'p', mode: 420 }], defaultMode: 420, optional: true } } },
          { name: 'tmp', volumeSource: { emptyDir: { medium: 'Memory', sizeLimit: { string: '64Mi' } } } },
          { name: 'data', volumeSource: { persistentVolumeClaim: { claimName: 'claim', readOnly: true } } },
        ],
        initContainers: [{ name: 'init', image: 'busybox', args: ['true'], restartPolicy: 'Always' }],
        containers: [{
          name: 'app', image: 'nginx', imagePullPolicy: 'IfNotPresent',
          env: [{ name: 'A', value: '1' }, { name: 'PW', valueFrom: { secretKeyRef: { localObjectReference: { name: 's' }, key: 'pw', optional: false } } }],
          resources: { limits: { cpu: { string: '500m' } }, requests: { memory: { string: '64Mi' } } },
          readinessProbe: { handler: { httpGet: { path: '/healthz', port: ios('http'), scheme: 'HTTP' } }, initialDelaySeconds: 5, periodSeconds: 10 },
        }],
        restartPolicy: 'Always',
        nodeName: 'node-1',
      },
    },
    json: {
      metadata: metaJson,
      spec: {
        volumes: [
          { name: 'cfg', configMap: { name: 'app-cfg', items: [{ key: 'k', path: 'p', mode: 420 }], defaultMode: 420, optional: true } },
          { name: 'tmp', emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } },
          { name: 'data', persistentVolumeClaim: { claimName: 'claim', readOnly: true } },
        ],
        initContainers: [{ name: 'init', image: 'busybox', args: ['true'], restartPolicy: 'Always' }],
        containers: [{
          name: 'app', image: 'nginx', imagePullPolicy: 'IfNotPresent',
          env: [{ name: 'A', value: '1' }, { name: 'PW', valueFrom: { secretKeyRef: { name: 's', key: 'pw', optional: false } } }],
          resources: { limits: { cpu: '500m' }, requests: { memory: '64Mi' } },
          readinessProbe: { httpGet: { path: '/healthz', port: 'http', scheme: 'HTTP' }, initialDelaySeconds: 5, periodSeconds: 10 },
        }],
        restartPolicy: 'Always',
        nodeName: 'node-1',
      },
    },
  },
  {
    name: 'Pod: affinity = 18, topologySpreadConstraints = 33, resourceClaims = 39, volumeDevices = 21, resizePolicy = 23, windows/AppArmor options',
    kind: ['Pod', ''],
    message: 'k8s.Pod',
    pb: { metadata: meta, spec: schedulingSpec },
    json: { metadata: metaJson, spec: schedulingSpec },
  },
  {
    name: 'Node: status runtimeHandlers = 12, features = 13 (what a 1.32 kubelet reports)',
    kind: ['Node', ''],
    message: 'k8s.Node',
    pb: {
      metadata: { name: 'n1' },
      status: { capacity: { cpu: { string: '4' } }, runtimeHandlers: [{ features: { recursiveReadOnlyMounts: true, userNamespaces: false } }, { name: 'runc' }], features: { supplementalGroupsPolicy: true } },
    },
    json: {
      metadata: { name: 'n1' },
      status: { capacity: { cpu: '4' }, runtimeHandlers: [{ features: { recursiveReadOnlyMounts: true, userNamespaces: false } }, { name: 'runc' }], features: { supplementalGroupsPolicy: true } },
    },
  },
  {
    name: 'Service: ServicePort targetPort IntOrString = 4, clusterIPs = 18',
    kind: ['Service', ''],
    message: 'k8s.Service',
    pb: {
      metadata: meta,
      spec: { ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: ios(8080), nodePort: 30080 }], selector: { app: 'web' }, clusterIP: '10.96.0.10', type: 'NodePort', clusterIPs: ['10.96.0.10'] },
    },
    json: {
      metadata: metaJson,
      spec: { ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080, nodePort: 30080 }], selector: { app: 'web' }, clusterIP: '10.96.0.10', type: 'NodePort', clusterIPs: ['10.96.0.10'] },
    },
  },
];

describe('field numbers against Kubernetes generated.proto', () => {
  auditCases(CASES, root, (c) => kind(...c.kind), defs);
});
