// Kubernetes' protobuf messages for the volume sources of pods and persistent
// volumes, VolumeAttachment (storage/v1) and Node's deprecated config source,
// restated as .proto text with the numbers of Kubernetes 1.32's core/v1 and
// storage/v1 generated.proto: an encoder and decoder independent of orch's
// codec, for test/unit/protobuf-field-numbers-volumes.test.ts and the protobuf
// requests of test/integration/protobuf-volumes.test.ts. Go-inlined structs
// (VolumeSource in Volume at 2, PersistentVolumeSource in PersistentVolumeSpec
// at 2, LocalObjectReference at 1) are the nested messages they are on the wire.
// Bodies: k8sEnvelope/k8sUnenvelope of k8s-proto-extensions.ts with this root.

import protobuf from 'protobufjs';

const PROTO = `
syntax = "proto2";
package k8s;

message Time { optional int64 seconds = 1; optional int32 nanos = 2; }
message Quantity { optional string string = 1; }
message ObjectMeta {
  optional string name = 1; optional string generateName = 2; optional string namespace = 3; optional string uid = 5; optional string resourceVersion = 6;
  optional Time creationTimestamp = 8; map<string, string> labels = 11; map<string, string> annotations = 12;
}
message LabelSelectorRequirement { optional string key = 1; optional string operator = 2; repeated string values = 3; }
message LabelSelector { map<string, string> matchLabels = 1; repeated LabelSelectorRequirement matchExpressions = 2; }
message TypeMeta { optional string apiVersion = 1; optional string kind = 2; }
message Unknown { optional TypeMeta typeMeta = 1; optional bytes raw = 2; optional string contentEncoding = 3; optional string contentType = 4; }

// core/v1 references
message LocalObjectReference { optional string name = 1; }
message SecretReference { optional string name = 1; optional string namespace = 2; }
message ObjectReference {
  optional string kind = 1; optional string namespace = 2; optional string name = 3; optional string uid = 4; optional string apiVersion = 5;
  optional string resourceVersion = 6; optional string fieldPath = 7;
}

// core/v1 volume sources of a pod
message HostPathVolumeSource { optional string path = 1; optional string type = 2; }
message EmptyDirVolumeSource { optional string medium = 1; optional Quantity sizeLimit = 2; }
message GCEPersistentDiskVolumeSource { optional string pdName = 1; optional string fsType = 2; optional int32 partition = 3; optional bool readOnly = 4; }
message AWSElasticBlockStoreVolumeSource { optional string volumeID = 1; optional string fsType = 2; optional int32 partition = 3; optional bool readOnly = 4; }
message GitRepoVolumeSource { optional string repository = 1; optional string revision = 2; optional string directory = 3; }
message NFSVolumeSource { optional string server = 1; optional string path = 2; optional bool readOnly = 3; }
message ISCSIVolumeSource {
  optional string targetPortal = 1; optional string iqn = 2; optional int32 lun = 3; optional string iscsiInterface = 4; optional string fsType = 5;
  optional bool readOnly = 6; repeated string portals = 7; optional bool chapAuthDiscovery = 8; optional bool chapAuthSession = 11;
  optional LocalObjectReference secretRef = 10; optional string initiatorName = 12;
}
message GlusterfsVolumeSource { optional string endpoints = 1; optional string path = 2; optional bool readOnly = 3; }
message RBDVolumeSource {
  repeated string monitors = 1; optional string image = 2; optional string fsType = 3; optional string pool = 4; optional string user = 5;
  optional string keyring = 6; optional LocalObjectReference secretRef = 7; optional bool readOnly = 8;
}
message FlexVolumeSource { optional string driver = 1; optional string fsType = 2; optional LocalObjectReference secretRef = 3; optional bool readOnly = 4; map<string, string> options = 5; }
message CinderVolumeSource { optional string volumeID = 1; optional string fsType = 2; optional bool readOnly = 3; optional LocalObjectReference secretRef = 4; }
message CephFSVolumeSource {
  repeated string monitors = 1; optional string path = 2; optional string user = 3; optional string secretFile = 4; optional LocalObjectReference secretRef = 5; optional bool readOnly = 6;
}
message FlockerVolumeSource { optional string datasetName = 1; optional string datasetUUID = 2; }
message FCVolumeSource { repeated string targetWWNs = 1; optional int32 lun = 2; optional string fsType = 3; optional bool readOnly = 4; repeated string wwids = 5; }
message AzureFileVolumeSource { optional string secretName = 1; optional string shareName = 2; optional bool readOnly = 3; }
message VsphereVirtualDiskVolumeSource { optional string volumePath = 1; optional string fsType = 2; optional string storagePolicyName = 3; optional string storagePolicyID = 4; }
message QuobyteVolumeSource { optional string registry = 1; optional string volume = 2; optional bool readOnly = 3; optional string user = 4; optional string group = 5; optional string tenant = 6; }
message AzureDiskVolumeSource { optional string diskName = 1; optional string diskURI = 2; optional string cachingMode = 3; optional string fsType = 4; optional bool readOnly = 5; optional string kind = 6; }
message PhotonPersistentDiskVolumeSource { optional string pdID = 1; optional string fsType = 2; }
message PortworxVolumeSource { optional string volumeID = 1; optional string fsType = 2; optional bool readOnly = 3; }
message ScaleIOVolumeSource {
  optional string gateway = 1; optional string system = 2; optional LocalObjectReference secretRef = 3; optional bool sslEnabled = 4; optional string protectionDomain = 5;
  optional string storagePool = 6; optional string storageMode = 7; optional string volumeName = 8; optional string fsType = 9; optional bool readOnly = 10;
}
message StorageOSVolumeSource { optional string volumeName = 1; optional string volumeNamespace = 2; optional string fsType = 3; optional bool readOnly = 4; optional LocalObjectReference secretRef = 5; }
message CSIVolumeSource { optional string driver = 1; optional bool readOnly = 2; optional string fsType = 3; map<string, string> volumeAttributes = 4; optional LocalObjectReference nodePublishSecretRef = 5; }
message VolumeResourceRequirements { map<string, Quantity> limits = 1; map<string, Quantity> requests = 2; }
message PersistentVolumeClaimSpec { repeated string accessModes = 1; optional VolumeResourceRequirements resources = 2; optional string storageClassName = 5; optional string volumeMode = 6; }
message PersistentVolumeClaimTemplate { optional ObjectMeta metadata = 1; optional PersistentVolumeClaimSpec spec = 2; }
message EphemeralVolumeSource { optional PersistentVolumeClaimTemplate volumeClaimTemplate = 1; }
message ImageVolumeSource { optional string reference = 1; optional string pullPolicy = 2; }
message ClusterTrustBundleProjection { optional string name = 1; optional string signerName = 2; optional LabelSelector labelSelector = 3; optional string path = 4; optional bool optional = 5; }
message ServiceAccountTokenProjection { optional string audience = 1; optional int64 expirationSeconds = 2; optional string path = 3; }
message VolumeProjection { optional ServiceAccountTokenProjection serviceAccountToken = 4; optional ClusterTrustBundleProjection clusterTrustBundle = 5; }
message ProjectedVolumeSource { repeated VolumeProjection sources = 1; optional int32 defaultMode = 2; }
message VolumeSource {
  optional HostPathVolumeSource hostPath = 1; optional EmptyDirVolumeSource emptyDir = 2; optional GCEPersistentDiskVolumeSource gcePersistentDisk = 3;
  optional AWSElasticBlockStoreVolumeSource awsElasticBlockStore = 4; optional GitRepoVolumeSource gitRepo = 5; optional NFSVolumeSource nfs = 7;
  optional ISCSIVolumeSource iscsi = 8; optional GlusterfsVolumeSource glusterfs = 9; optional RBDVolumeSource rbd = 11; optional FlexVolumeSource flexVolume = 12;
  optional CinderVolumeSource cinder = 13; optional CephFSVolumeSource cephfs = 14; optional FlockerVolumeSource flocker = 15; optional FCVolumeSource fc = 17;
  optional AzureFileVolumeSource azureFile = 18; optional VsphereVirtualDiskVolumeSource vsphereVolume = 20; optional QuobyteVolumeSource quobyte = 21;
  optional AzureDiskVolumeSource azureDisk = 22; optional PhotonPersistentDiskVolumeSource photonPersistentDisk = 23; optional PortworxVolumeSource portworxVolume = 24;
  optional ScaleIOVolumeSource scaleIO = 25; optional ProjectedVolumeSource projected = 26; optional StorageOSVolumeSource storageos = 27;
  optional CSIVolumeSource csi = 28; optional EphemeralVolumeSource ephemeral = 29; optional ImageVolumeSource image = 30;
}
message Volume { optional string name = 1; optional VolumeSource volumeSource = 2; }
message VolumeMount { optional string name = 1; optional bool readOnly = 2; optional string mountPath = 3; }
message Container { optional string name = 1; optional string image = 2; repeated VolumeMount volumeMounts = 9; }
message PodSpec { repeated Volume volumes = 1; repeated Container containers = 2; optional bool automountServiceAccountToken = 21; }
message Pod { optional ObjectMeta metadata = 1; optional PodSpec spec = 2; }
message PodTemplateSpec { optional ObjectMeta metadata = 1; optional PodSpec spec = 2; }
message DeploymentSpec { optional int32 replicas = 1; optional LabelSelector selector = 2; optional PodTemplateSpec template = 3; }
message Deployment { optional ObjectMeta metadata = 1; optional DeploymentSpec spec = 2; }

// core/v1 persistent volume sources (PersistentVolumeSource is Go-inlined in PersistentVolumeSpec at 2)
message GlusterfsPersistentVolumeSource { optional string endpoints = 1; optional string path = 2; optional bool readOnly = 3; optional string endpointsNamespace = 4; }
message RBDPersistentVolumeSource {
  repeated string monitors = 1; optional string image = 2; optional string fsType = 3; optional string pool = 4; optional string user = 5;
  optional string keyring = 6; optional SecretReference secretRef = 7; optional bool readOnly = 8;
}
message ISCSIPersistentVolumeSource {
  optional string targetPortal = 1; optional string iqn = 2; optional int32 lun = 3; optional string iscsiInterface = 4; optional string fsType = 5;
  optional bool readOnly = 6; repeated string portals = 7; optional bool chapAuthDiscovery = 8; optional bool chapAuthSession = 11;
  optional SecretReference secretRef = 10; optional string initiatorName = 12;
}
message CinderPersistentVolumeSource { optional string volumeID = 1; optional string fsType = 2; optional bool readOnly = 3; optional SecretReference secretRef = 4; }
message CephFSPersistentVolumeSource {
  repeated string monitors = 1; optional string path = 2; optional string user = 3; optional string secretFile = 4; optional SecretReference secretRef = 5; optional bool readOnly = 6;
}
message FlexPersistentVolumeSource { optional string driver = 1; optional string fsType = 2; optional SecretReference secretRef = 3; optional bool readOnly = 4; map<string, string> options = 5; }
message AzureFilePersistentVolumeSource { optional string secretName = 1; optional string shareName = 2; optional bool readOnly = 3; optional string secretNamespace = 4; }
message ScaleIOPersistentVolumeSource {
  optional string gateway = 1; optional string system = 2; optional SecretReference secretRef = 3; optional bool sslEnabled = 4; optional string protectionDomain = 5;
  optional string storagePool = 6; optional string storageMode = 7; optional string volumeName = 8; optional string fsType = 9; optional bool readOnly = 10;
}
message LocalVolumeSource { optional string path = 1; optional string fsType = 2; }
message StorageOSPersistentVolumeSource { optional string volumeName = 1; optional string volumeNamespace = 2; optional string fsType = 3; optional bool readOnly = 4; optional ObjectReference secretRef = 5; }
message CSIPersistentVolumeSource {
  optional string driver = 1; optional string volumeHandle = 2; optional bool readOnly = 3; optional string fsType = 4; map<string, string> volumeAttributes = 5;
  optional SecretReference controllerPublishSecretRef = 6; optional SecretReference nodeStageSecretRef = 7; optional SecretReference nodePublishSecretRef = 8;
  optional SecretReference controllerExpandSecretRef = 9; optional SecretReference nodeExpandSecretRef = 10;
}
message PersistentVolumeSource {
  optional GCEPersistentDiskVolumeSource gcePersistentDisk = 1; optional AWSElasticBlockStoreVolumeSource awsElasticBlockStore = 2; optional HostPathVolumeSource hostPath = 3;
  optional GlusterfsPersistentVolumeSource glusterfs = 4; optional NFSVolumeSource nfs = 5; optional RBDPersistentVolumeSource rbd = 6; optional ISCSIPersistentVolumeSource iscsi = 7;
  optional CinderPersistentVolumeSource cinder = 8; optional CephFSPersistentVolumeSource cephfs = 9; optional FCVolumeSource fc = 10; optional FlockerVolumeSource flocker = 11;
  optional FlexPersistentVolumeSource flexVolume = 12; optional AzureFilePersistentVolumeSource azureFile = 13; optional VsphereVirtualDiskVolumeSource vsphereVolume = 14;
  optional QuobyteVolumeSource quobyte = 15; optional AzureDiskVolumeSource azureDisk = 16; optional PhotonPersistentDiskVolumeSource photonPersistentDisk = 17;
  optional PortworxVolumeSource portworxVolume = 18; optional ScaleIOPersistentVolumeSource scaleIO = 19; optional LocalVolumeSource local = 20;
  optional StorageOSPersistentVolumeSource storageos = 21; optional CSIPersistentVolumeSource csi = 22;
}
message PersistentVolumeSpec {
  map<string, Quantity> capacity = 1; optional PersistentVolumeSource persistentVolumeSource = 2; repeated string accessModes = 3; optional ObjectReference claimRef = 4;
  optional string persistentVolumeReclaimPolicy = 5; optional string storageClassName = 6; repeated string mountOptions = 7; optional string volumeMode = 8;
}
message PersistentVolume { optional ObjectMeta metadata = 1; optional PersistentVolumeSpec spec = 2; }

// storage/v1
message VolumeAttachmentSource { optional string persistentVolumeName = 1; optional PersistentVolumeSpec inlineVolumeSpec = 2; }
message VolumeAttachmentSpec { optional string attacher = 1; optional VolumeAttachmentSource source = 2; optional string nodeName = 3; }
message VolumeAttachment { optional ObjectMeta metadata = 1; optional VolumeAttachmentSpec spec = 2; }

// core/v1 Node: the deprecated dynamic kubelet config
message ConfigMapNodeConfigSource { optional string namespace = 1; optional string name = 2; optional string uid = 3; optional string resourceVersion = 4; optional string kubeletConfigKey = 5; }
message NodeConfigSource { optional ConfigMapNodeConfigSource configMap = 2; }
message NodeConfigStatus { optional NodeConfigSource assigned = 1; optional NodeConfigSource active = 2; optional NodeConfigSource lastKnownGood = 3; optional string error = 4; }
message NodeSpec { optional string podCIDR = 1; optional NodeConfigSource configSource = 6; }
message NodeStatus { optional NodeConfigStatus config = 11; }
message Node { optional ObjectMeta metadata = 1; optional NodeSpec spec = 2; optional NodeStatus status = 3; }
`;

export const k8sVolumesProto = protobuf.parse(PROTO, { keepCase: true }).root;


type Source = Record<string, unknown>;

/** pod volumes as Kubernetes' protobuf lays them out: the VolumeSource nested at field 2 */
export const volumesPb = (volumes: [string, Source][]): Source[] => volumes.map(([name, source]) => ({ name, volumeSource: source }));
/** the same volumes in JSON, where the VolumeSource is inlined into the Volume */
export const volumesJson = (volumes: [string, Source][]): Source[] => volumes.map(([name, source]) => ({ name, ...source }));
