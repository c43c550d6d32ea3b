// core/v1 volume sources that used to be opaque: CSI, ephemeral, image, iSCSI,
// the in-tree cloud/legacy sources of pods and persistent volumes, projected
// ClusterTrustBundles, the PersistentVolumeSpec (shared with VolumeAttachment's
// inlineVolumeSpec) and the deprecated Node config source/status. Each carries
// its generated.proto field numbers (spec 000 §2.7): an opaque property has no
// protobuf form, so a protobuf body holding one lost it silently on decode
// (docs/protobuf.md "Volume sources"). Defaults are kube's SetDefaults_*.

import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { Definitions, Schema } from '../../machinery/schema/types.js';
import { atomicList, bool, enumOf, int32, mapOf, obj, proto, protoEmbedded, ref, str, strMap } from '../../machinery/schema/dsl.js';

const strings = (description: string): Schema => atomicList(description, { type: 'string' });
const atomicStruct = { 'x-orch-map-type': 'atomic' } as const;
const fsType = (d = 'Filesystem type to mount (ext4, xfs, ntfs, …).'): Schema => str(d);
/** Go's non-pointer omitempty bool/int: the false/0 a Go client always writes is absent in JSON */
const goZero = { 'x-orch-proto-omit-zero': true } as const;
const flag = (d: string): Schema => bool(d, goZero);
const readOnly = (): Schema => flag('Force the ReadOnly setting in VolumeMounts.');

/** secret reference of a source: a pod's is a LocalObjectReference, a persistent volume's a SecretReference (or ObjectReference) */
type SecretRef = (d: string) => Schema;

/** the sources a pod's Volume and a PersistentVolumeSpec both have, with the variant's secret reference */
function sharedSources(c: (k: string) => string, pv: boolean): Record<string, Schema> {
  const secretRef: SecretRef = (d) => ref(c(pv ? 'SecretReference' : 'LocalObjectReference'), d);
  const v = (pod: string, persistent: string): string => c(pv ? persistent : pod);
  return {
    gcePersistentDisk: ref(c('GCEPersistentDiskVolumeSource'), 'Deprecated: a GCE persistent disk.'),
    awsElasticBlockStore: ref(c('AWSElasticBlockStoreVolumeSource'), 'Deprecated: an AWS EBS disk.'),
    glusterfs: ref(v('GlusterfsVolumeSource', 'GlusterfsPersistentVolumeSource'), 'Deprecated: a Glusterfs mount.'),
    rbd: obj('Deprecated: a Rados Block Device mount.', proto({ monitors: 1, image: 2, fsType: 3, pool: 4, user: 5, keyring: 6, secretRef: 7, readOnly: 8 }, {
      monitors: strings('Ceph monitors.'),
      image: str('Rados image name.'),
      fsType: fsType(),
      pool: str('Rados pool name.', { default: 'rbd' }),
      user: str('Rados user name.', { default: 'admin' }),
      keyring: str('Path to the key ring for the user.', { default: '/etc/ceph/keyring' }),
      secretRef: secretRef('Authentication secret; overrides keyring.'),
      readOnly: readOnly(),
    }), ['monitors', 'image']),
    iscsi: obj('An iSCSI disk.', proto({
      targetPortal: 1, iqn: 2, lun: 3, iscsiInterface: 4, fsType: 5, readOnly: 6, portals: 7, chapAuthDiscovery: 8, chapAuthSession: 11, secretRef: 10, initiatorName: 12,
    }, {
      targetPortal: str('Target portal: an IP or ip_addr:port.'),
      iqn: str('Target iSCSI Qualified Name.'),
      // Go's Lun has no omitempty: kube writes 0 when unset
      lun: int32('Target LUN number.', { default: 0 }),
      iscsiInterface: str('Interface name that uses an iSCSI transport.', { default: 'default' }),
      fsType: fsType(),
      readOnly: readOnly(),
      portals: strings('Target portal list.'),
      chapAuthDiscovery: flag('Whether iSCSI discovery CHAP authentication is supported.'),
      chapAuthSession: flag('Whether iSCSI session CHAP authentication is supported.'),
      secretRef: secretRef('CHAP secret for target and initiator authentication.'),
      initiatorName: str('Custom iSCSI initiator name.'),
    }), ['targetPortal', 'iqn']),
    cinder: obj('Deprecated: an OpenStack Cinder volume.', proto({ volumeID: 1, fsType: 2, readOnly: 3, secretRef: 4 }, {
      volumeID: str('Volume id in Cinder.'),
      fsType: fsType(),
      readOnly: readOnly(),
      secretRef: secretRef('Secret with the OpenStack connection parameters.'),
    }), ['volumeID']),
    cephfs: obj('Deprecated: a Ceph filesystem mount.', proto({ monitors: 1, path: 2, user: 3, secretFile: 4, secretRef: 5, readOnly: 6 }, {
      monitors: strings('Ceph monitors.'),
      path: str('Mounted root; default /.'),
      user: str('Rados user name; default admin.'),
      secretFile: str('Path to the key ring for the user.'),
      secretRef: secretRef('Authentication secret for the user.'),
      readOnly: readOnly(),
    }), ['monitors']),
    fc: ref(c('FCVolumeSource'), 'A Fibre Channel volume.'),
    flocker: ref(c('FlockerVolumeSource'), 'Deprecated: a Flocker volume.'),
    flexVolume: obj('Deprecated: a volume attached with an exec based plugin.', proto({ driver: 1, fsType: 2, secretRef: 3, readOnly: 4, options: 5 }, {
      driver: str('Name of the driver.'),
      fsType: fsType(),
      secretRef: secretRef('Secret passed to the plugin scripts.'),
      readOnly: readOnly(),
      options: strMap('Extra command options.'),
    }), ['driver']),
    azureFile: obj('Deprecated: an Azure File Service mount.', proto({ secretName: 1, shareName: 2, readOnly: 3, ...(pv ? { secretNamespace: 4 } : {}) }, {
      secretName: str('Secret holding the Azure storage account name and key.'),
      shareName: str('Share name.'),
      readOnly: readOnly(),
      ...(pv ? { secretNamespace: str('Namespace of the secret; default the pod namespace.') } : {}),
    }), ['secretName', 'shareName']),
    vsphereVolume: ref(c('VsphereVirtualDiskVolumeSource'), 'Deprecated: a vSphere volume.'),
    quobyte: ref(c('QuobyteVolumeSource'), 'Deprecated: a Quobyte mount.'),
    azureDisk: ref(c('AzureDiskVolumeSource'), 'Deprecated: an Azure data disk.'),
    photonPersistentDisk: ref(c('PhotonPersistentDiskVolumeSource'), 'Deprecated: a Photon Controller persistent disk.'),
    portworxVolume: ref(c('PortworxVolumeSource'), 'Deprecated: a Portworx volume.'),
    scaleIO: obj('Deprecated: a ScaleIO volume.', proto({
      gateway: 1, system: 2, secretRef: 3, sslEnabled: 4, protectionDomain: 5, storagePool: 6, storageMode: 7, volumeName: 8, fsType: 9, readOnly: 10,
    }, {
      gateway: str('Host address of the ScaleIO API gateway.'),
      system: str('Name of the storage system.'),
      secretRef: secretRef('Secret for the ScaleIO user.'),
      sslEnabled: flag('SSL communication with the gateway.'),
      protectionDomain: str('ScaleIO protection domain.'),
      storagePool: str('ScaleIO storage pool.'),
      storageMode: str('ThickProvisioned or ThinProvisioned.', { default: 'ThinProvisioned' }),
      volumeName: str('Name of a volume already created in the ScaleIO system.'),
      fsType: str('Filesystem type to mount.', { default: 'xfs' }),
      readOnly: readOnly(),
    }), ['gateway', 'system', 'volumeName']),
    storageos: obj('Deprecated: a StorageOS volume.', proto({ volumeName: 1, volumeNamespace: 2, fsType: 3, readOnly: 4, secretRef: 5 }, {
      volumeName: str('Name of the StorageOS volume.'),
      volumeNamespace: str('Scope of the volume within StorageOS.'),
      fsType: fsType(),
      readOnly: readOnly(),
      secretRef: ref(c(pv ? 'ObjectReference' : 'LocalObjectReference'), 'Secret with the StorageOS API credentials.'),
    })),
  };
}

/** VolumeSource members beyond the ones core-types.ts models (the numbers are set there, in the Volume tree) */
export function podVolumeSources(n: SchemaNames): Record<string, Schema> {
  const c = (k: string): string => n.core(k);
  return {
    ...sharedSources(c, false),
    gitRepo: obj('Deprecated: a git repository at a revision.', proto({ repository: 1, revision: 2, directory: 3 }, {
      repository: str('Repository URL.'),
      revision: str('Commit hash.'),
      directory: str('Target directory name.'),
    }), ['repository']),
    csi: obj('An ephemeral volume provided by a CSI driver.', proto({ driver: 1, readOnly: 2, fsType: 3, volumeAttributes: 4, nodePublishSecretRef: 5 }, {
      driver: str('Name of the CSI driver.'),
      readOnly: bool('Read-only configuration for the volume.'),
      fsType: str('Filesystem type to mount; empty lets the driver choose.'),
      volumeAttributes: strMap('Driver-specific properties.'),
      nodePublishSecretRef: ref(c('LocalObjectReference'), 'Secret passed to NodePublishVolume and NodeUnpublishVolume.'),
    }), ['driver']),
    ephemeral: obj('A volume with a claim created for and deleted with the pod.', proto({ volumeClaimTemplate: 1 }, {
      volumeClaimTemplate: obj('Template of the PersistentVolumeClaim created for the pod.', proto({ metadata: 1, spec: 2 }, {
        metadata: ref(n.meta('ObjectMeta'), 'Labels and annotations copied into the claim.'),
        spec: ref(c('PersistentVolumeClaimSpec'), 'Specification of the claim, copied unchanged.'),
      }), ['spec']),
    }), ['volumeClaimTemplate']),
    image: obj('An OCI image or artifact mounted as a volume.', proto({ reference: 1, pullPolicy: 2 }, {
      reference: str('Image or artifact reference.'),
      pullPolicy: str('Always, Never or IfNotPresent.'),
    })),
  };
}

export function volumeSourceDefinitions(n: SchemaNames): Definitions {
  const c = (k: string): string => n.core(k);
  const glusterfs = (pv: boolean): Schema => obj('A Glusterfs mount.', proto({ endpoints: 1, path: 2, readOnly: 3, ...(pv ? { endpointsNamespace: 4 } : {}) }, {
    endpoints: str('Endpoints name with the Glusterfs topology.'),
    path: str('Glusterfs volume path.'),
    readOnly: readOnly(),
    ...(pv ? { endpointsNamespace: str('Namespace of the endpoints; default the claim namespace.') } : {}),
  }), ['endpoints', 'path']);
  const disk = (id: string, d: string): Schema => obj(d, proto({ [id]: 1, fsType: 2, partition: 3, readOnly: 4 }, {
    [id]: str('Identifier of the disk.'),
    fsType: fsType(),
    partition: int32('Partition to mount; the whole volume if omitted.', goZero),
    readOnly: readOnly(),
  }), [id]);
  return {
    [c('SecretReference')]: obj('A secret in any namespace.', proto({ name: 1, namespace: 2 }, {
      name: str('Name of the secret.'),
      namespace: str('Namespace of the secret.'),
    }), undefined, atomicStruct),
    [c('GCEPersistentDiskVolumeSource')]: disk('pdName', 'A GCE persistent disk.'),
    [c('AWSElasticBlockStoreVolumeSource')]: disk('volumeID', 'An AWS EBS disk.'),
    [c('GlusterfsVolumeSource')]: glusterfs(false),
    [c('GlusterfsPersistentVolumeSource')]: glusterfs(true),
    [c('FCVolumeSource')]: obj('A Fibre Channel volume.', proto({ targetWWNs: 1, lun: 2, fsType: 3, readOnly: 4, wwids: 5 }, {
      targetWWNs: strings('Target worldwide names.'),
      lun: int32('Target LUN number.'),
      fsType: fsType(),
      readOnly: readOnly(),
      wwids: strings('Volume worldwide identifiers.'),
    })),
    [c('FlockerVolumeSource')]: obj('A Flocker volume.', proto({ datasetName: 1, datasetUUID: 2 }, {
      datasetName: str('Name of the dataset.'),
      datasetUUID: str('UUID of the dataset.'),
    })),
    [c('VsphereVirtualDiskVolumeSource')]: obj('A vSphere volume.', proto({ volumePath: 1, fsType: 2, storagePolicyName: 3, storagePolicyID: 4 }, {
      volumePath: str('Path of the vmdk.'),
      fsType: fsType(),
      storagePolicyName: str('SPBM profile name.'),
      storagePolicyID: str('SPBM profile ID.'),
    }), ['volumePath']),
    [c('QuobyteVolumeSource')]: obj('A Quobyte mount.', proto({ registry: 1, volume: 2, readOnly: 3, user: 4, group: 5, tenant: 6 }, {
      registry: str('Quobyte registry services, host:port pairs separated by commas.'),
      volume: str('Name of an existing Quobyte volume.'),
      readOnly: readOnly(),
      user: str('User to map volume access to.'),
      group: str('Group to map volume access to.'),
      tenant: str('Tenant owning the volume.'),
    }), ['registry', 'volume']),
    [c('AzureDiskVolumeSource')]: obj('An Azure data disk.', proto({ diskName: 1, diskURI: 2, cachingMode: 3, fsType: 4, readOnly: 5, kind: 6 }, {
      diskName: str('Name of the data disk in the blob storage.'),
      diskURI: str('URI of the data disk in the blob storage.'),
      cachingMode: str('None, ReadOnly or ReadWrite.', { default: 'ReadWrite' }),
      fsType: str('Filesystem type to mount.', { default: 'ext4' }),
      readOnly: bool('Force the ReadOnly setting in VolumeMounts.', { default: false }),
      kind: str('Shared, Dedicated or Managed.', { default: 'Shared' }),
    }), ['diskName', 'diskURI']),
    [c('PhotonPersistentDiskVolumeSource')]: obj('A Photon Controller persistent disk.', proto({ pdID: 1, fsType: 2 }, {
      pdID: str('ID of the disk.'),
      fsType: fsType(),
    }), ['pdID']),
    [c('PortworxVolumeSource')]: obj('A Portworx volume.', proto({ volumeID: 1, fsType: 2, readOnly: 3 }, {
      volumeID: str('ID of the volume.'),
      fsType: fsType(),
      readOnly: readOnly(),
    }), ['volumeID']),
    [c('ClusterTrustBundleProjection')]: obj('ClusterTrustBundles projected into a file.', proto({ name: 1, signerName: 2, labelSelector: 3, optional: 5, path: 4 }, {
      name: str('A single ClusterTrustBundle by name.'),
      signerName: str('All ClusterTrustBundles of this signer.'),
      labelSelector: ref(n.meta('LabelSelector'), 'ClusterTrustBundles of the signer matching this selector.'),
      optional: bool('Do not block pod startup if the bundles are missing.'),
      path: str('Relative path of the file to write.'),
    }), ['path']),
    [c('PersistentVolumeSpec')]: persistentVolumeSpec(n),
    [c('NodeConfigSource')]: obj('Deprecated: a source of node configuration.', proto({ configMap: 2 }, {
      configMap: obj('A ConfigMap as the config source of the node.', proto({ namespace: 1, name: 2, uid: 3, resourceVersion: 4, kubeletConfigKey: 5 }, {
        namespace: str('Namespace of the ConfigMap.'),
        name: str('Name of the ConfigMap.'),
        uid: str('UID of the ConfigMap.'),
        resourceVersion: str('ResourceVersion of the ConfigMap.'),
        kubeletConfigKey: str('Key of the ConfigMap holding the configuration.'),
      }), ['namespace', 'name', 'kubeletConfigKey']),
    })),
    [c('NodeConfigStatus')]: obj('Deprecated: status of the config assigned by spec.configSource.', proto({ assigned: 1, active: 2, lastKnownGood: 3, error: 4 }, {
      assigned: ref(c('NodeConfigSource'), 'Checkpointed config the node will try to use.'),
      active: ref(c('NodeConfigSource'), 'Checkpointed config the node is using.'),
      lastKnownGood: ref(c('NodeConfigSource'), 'Config the node falls back to on error.'),
      error: str('Problems reconciling spec.configSource.'),
    })),
  };
}

/** PersistentVolumeSpec: its PersistentVolumeSource is Go-inlined at field 2 */
function persistentVolumeSpec(n: SchemaNames): Schema {
  const c = (k: string): string => n.core(k);
  const sources: Record<string, Schema> = {
    ...sharedSources(c, true),
    hostPath: obj('A file or directory on the host.', proto({ path: 1, type: 2 }, {
      path: str('Path on the host.'),
      type: enumOf('Type of the host path.', ['', 'BlockDevice', 'CharDevice', 'Directory', 'DirectoryOrCreate', 'File', 'FileOrCreate', 'Socket'], { default: '' }),
    }), ['path']),
    nfs: obj('An NFS export.', proto({ server: 1, path: 2, readOnly: 3 }, { server: str('NFS server.'), path: str('Exported path.'), readOnly: readOnly() }), ['server', 'path']),
    local: obj('Directly-attached storage with node affinity.', proto({ path: 1, fsType: 2 }, {
      path: str('Full path of the volume on the node.'),
      fsType: str('Filesystem type when the path is a block device.'),
    }), ['path']),
    csi: obj('Storage handled by an external CSI driver.', proto({
      driver: 1, volumeHandle: 2, readOnly: 3, fsType: 4, volumeAttributes: 5, controllerPublishSecretRef: 6, nodeStageSecretRef: 7, nodePublishSecretRef: 8,
      controllerExpandSecretRef: 9, nodeExpandSecretRef: 10,
    }, {
      driver: str('Name of the CSI driver.'),
      volumeHandle: str('Unique volume name returned by the driver.'),
      readOnly: flag('Value passed to ControllerPublishVolumeRequest.'),
      fsType: fsType(),
      volumeAttributes: strMap('Attributes of the volume to publish.'),
      controllerPublishSecretRef: ref(c('SecretReference'), 'Secret for ControllerPublishVolume and ControllerUnpublishVolume.'),
      nodeStageSecretRef: ref(c('SecretReference'), 'Secret for NodeStageVolume and NodeUnstageVolume.'),
      nodePublishSecretRef: ref(c('SecretReference'), 'Secret for NodePublishVolume and NodeUnpublishVolume.'),
      controllerExpandSecretRef: ref(c('SecretReference'), 'Secret for ControllerExpandVolume.'),
      nodeExpandSecretRef: ref(c('SecretReference'), 'Secret for NodeExpandVolume.'),
    }), ['driver', 'volumeHandle']),
  };
  const sourceNumbers: Record<string, number> = {
    gcePersistentDisk: 1, awsElasticBlockStore: 2, hostPath: 3, glusterfs: 4, nfs: 5, rbd: 6, iscsi: 7, cinder: 8, cephfs: 9, fc: 10, flocker: 11, flexVolume: 12,
    azureFile: 13, vsphereVolume: 14, quobyte: 15, azureDisk: 16, photonPersistentDisk: 17, portworxVolume: 18, scaleIO: 19, local: 20, storageos: 21, csi: 22,
  };
  return obj('The specification of a persistent volume.', proto({
    capacity: 1, accessModes: 3, claimRef: 4, persistentVolumeReclaimPolicy: 5, storageClassName: 6, mountOptions: 7, volumeMode: 8, nodeAffinity: 9, volumeAttributesClassName: 10,
  }, {
    capacity: mapOf('The resources of the volume (storage).', ref(n.quantity)),
    accessModes: strings('Ways the volume can be mounted.'),
    claimRef: ref(c('ObjectReference'), 'Part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim.'),
    persistentVolumeReclaimPolicy: enumOf('What happens to the volume when released from its claim.', ['Delete', 'Recycle', 'Retain']),
    storageClassName: str('Name of the StorageClass this volume belongs to.'),
    mountOptions: strings('Mount options.'),
    volumeMode: enumOf('Whether the volume is formatted or a raw block device.', ['Block', 'Filesystem']),
    nodeAffinity: obj('Constraints on the nodes this volume can be accessed from.', proto({ required: 1 }, { required: ref(c('NodeSelector'), 'Hard node constraints.') })),
    volumeAttributesClassName: str('Name of the VolumeAttributesClass.'),
    ...protoEmbedded(2, sourceNumbers, sources),
  }));
}
