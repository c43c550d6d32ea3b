// Storage kinds (issue #11 item 4): core v1 PersistentVolume and
// PersistentVolumeClaim, storage.<domain>/v1 StorageClass. Stored and served;
// no provisioner or binder acts on them yet (docs/compatibility.md).

import type { SchemaNames } from '../schema/naming.js';
import type { Definitions, Schema } from '../schema/types.js';
import type { ApiObject, FieldError, ResourceDefinition } from '../types.js';
import { column, get, getString } from './columns.js';
import { atomicList, bool, enumOf, mapOf, obj, opaque, ref, str, strMap } from './dsl.js';
import { kindSchema } from './meta.js';
import { conditions, immutable, labelSelector, setDefault } from './workload-common.js';

const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];

export function storageDefinitions(n: SchemaNames): Definitions {
  const quantity = (d: string): Schema => ref(n.quantity, d);
  return {
    [n.core('PersistentVolumeClaimSpec')]: obj('What a claim asks for.', {
      accessModes: atomicList('Desired access modes.', enumOf('An access mode.', ACCESS_MODES)),
      selector: labelSelector(n, 'Label query over volumes to consider for binding.'),
      resources: obj('Minimum resources the volume should have.', {
        limits: mapOf('Maximum amounts.', quantity('A quantity.')),
        requests: mapOf('Minimum amounts.', quantity('A quantity.')),
      }),
      volumeName: str('Name of the bound PersistentVolume.'),
      storageClassName: str('Name of the StorageClass required by the claim.'),
      volumeMode: enumOf('Filesystem or Block.', ['Block', 'Filesystem']),
      dataSource: opaque('An existing object to populate the volume from.'),
      dataSourceRef: opaque('An object to populate the volume from.'),
      volumeAttributesClassName: str('VolumeAttributesClass of the claim.'),
    }),
  };
}

const pvcStatus = obj('Observed state of the claim.', {
  phase: enumOf('Phase of the claim.', ['Bound', 'Lost', 'Pending']),
  accessModes: atomicList('Access modes of the bound volume.', str('An access mode.')),
  capacity: strMap('Resources of the bound volume.'),
  conditions: conditions('Current conditions.'),
  allocatedResources: strMap('Resources allocated to the claim.'),
});

function requireStorageRequest(o: ApiObject): FieldError[] {
  const req = get(o, 'spec', 'resources', 'requests', 'storage');
  if (get(o, 'spec', 'volumeName') === undefined && req === undefined && get(o, 'spec', 'dataSourceRef') === undefined) {
    return [{ field: 'spec.resources[storage]', type: 'FieldValueRequired', message: 'Required value' }];
  }
  if ((get(o, 'spec', 'accessModes') as unknown[] | undefined)?.length === 0 || get(o, 'spec', 'accessModes') === undefined) {
    return [{ field: 'spec.accessModes', type: 'FieldValueRequired', message: 'Required value: at least 1 access mode is required' }];
  }
  return [];
}

export function persistentVolumeClaimDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: '',
    version: 'v1',
    kind: 'PersistentVolumeClaim',
    resource: 'persistentvolumeclaims',
    singular: 'persistentvolumeclaim',
    scope: 'Namespaced',
    shortNames: ['pvc'],
    subresources: ['status'],
    schema: kindSchema(n, "PersistentVolumeClaim is a user's request for and claim to a persistent volume.", {
      spec: ref(n.core('PersistentVolumeClaimSpec'), 'What the claim asks for.'),
      status: pvcStatus,
    }),
    strategy: {
      default(o) {
        setDefault(o, 'Filesystem', 'spec', 'volumeMode');
      },
      prepareForCreate(o) {
        o.status = { phase: 'Pending' };
      },
      validate: requireStorageRequest,
      // kube allows only the requested size (expansion) and a few fields to change once bound
      validateUpdate: (o, old) => [...requireStorageRequest(o), ...immutable(o, old, 'spec', 'accessModes'), ...immutable(o, old, 'spec', 'selector'), ...immutable(o, old, 'spec', 'volumeMode')],
      columns: [
        column('Status', 'string', (o) => getString(o, 'status', 'phase') ?? '', { description: 'Phase of the claim.' }),
        column('Volume', 'string', (o) => getString(o, 'spec', 'volumeName') ?? '', { description: 'Bound volume.' }),
        column('Capacity', 'string', (o) => String(get(o, 'status', 'capacity', 'storage') ?? ''), { description: 'Capacity of the bound volume.' }),
        column('Access Modes', 'string', (o) => accessModesCell(get(o, 'status', 'accessModes')), { description: 'Access modes of the bound volume.' }),
        column('StorageClass', 'string', (o) => getString(o, 'spec', 'storageClassName') ?? '<unset>', { description: 'StorageClass of the claim.' }),
        column('VolumeAttributesClass', 'string', (o) => getString(o, 'spec', 'volumeAttributesClassName') ?? '<unset>', { description: 'VolumeAttributesClass of the claim.' }),
        column('VolumeMode', 'string', (o) => getString(o, 'spec', 'volumeMode') ?? '', { priority: 1, description: 'Volume mode.' }),
      ],
    },
  };
}

function accessModesCell(v: unknown): string {
  const short: Record<string, string> = { ReadWriteOnce: 'RWO', ReadOnlyMany: 'ROX', ReadWriteMany: 'RWX', ReadWriteOncePod: 'RWOP' };
  return Array.isArray(v) ? v.map((m) => short[String(m)] ?? String(m)).join(',') : '';
}

export function persistentVolumeDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: '',
    version: 'v1',
    kind: 'PersistentVolume',
    resource: 'persistentvolumes',
    singular: 'persistentvolume',
    scope: 'Cluster',
    shortNames: ['pv'],
    subresources: ['status'],
    schema: kindSchema(n, 'PersistentVolume is a storage resource provisioned by an administrator.', {
      spec: obj('Where the volume is and how it may be used.', {
        capacity: mapOf('Capacity of the volume.', ref(n.quantity, 'A quantity.')),
        accessModes: atomicList('Ways the volume can be mounted.', enumOf('An access mode.', ACCESS_MODES)),
        claimRef: ref(n.core('ObjectReference'), 'The claim bound to this volume.'),
        persistentVolumeReclaimPolicy: enumOf('What happens to the volume when released from its claim.', ['Delete', 'Recycle', 'Retain']),
        storageClassName: str('Name of the StorageClass of the volume.'),
        mountOptions: atomicList('Mount options.', str('A mount option.')),
        volumeMode: enumOf('Filesystem or Block.', ['Block', 'Filesystem']),
        nodeAffinity: opaque('Nodes the volume can be accessed from.'),
        volumeAttributesClassName: str('VolumeAttributesClass of the volume.'),
        hostPath: opaque('A directory on the host.'),
        local: opaque('A local disk.'),
        nfs: opaque('An NFS export.'),
        csi: opaque('A volume handled by a CSI driver.'),
        iscsi: opaque('An iSCSI disk.'),
        fc: opaque('A Fibre Channel disk.'),
      }),
      status: obj('Observed state of the volume.', {
        phase: enumOf('Phase of the volume.', ['Available', 'Bound', 'Failed', 'Pending', 'Released']),
        message: str('Human-readable reason.'),
        reason: str('Machine-readable reason.'),
        lastPhaseTransitionTime: { type: 'string', format: 'date-time', description: 'Time of the last phase change.' },
      }),
    }),
    strategy: {
      default(o) {
        setDefault(o, 'Retain', 'spec', 'persistentVolumeReclaimPolicy');
        setDefault(o, 'Filesystem', 'spec', 'volumeMode');
      },
      prepareForCreate(o) {
        o.status = { phase: 'Pending' };
      },
      validate: (o) => (get(o, 'spec', 'accessModes') === undefined ? [{ field: 'spec.accessModes', type: 'FieldValueRequired', message: 'Required value' }] : []),
      columns: [
        column('Capacity', 'string', (o) => String(get(o, 'spec', 'capacity', 'storage') ?? ''), { description: 'Capacity of the volume.' }),
        column('Access Modes', 'string', (o) => accessModesCell(get(o, 'spec', 'accessModes')), { description: 'Access modes.' }),
        column('Reclaim Policy', 'string', (o) => getString(o, 'spec', 'persistentVolumeReclaimPolicy') ?? '', { description: 'Reclaim policy.' }),
        column('Status', 'string', (o) => getString(o, 'status', 'phase') ?? '', { description: 'Phase.' }),
        column('Claim', 'string', (o) => (getString(o, 'spec', 'claimRef', 'name') ? `${getString(o, 'spec', 'claimRef', 'namespace')}/${getString(o, 'spec', 'claimRef', 'name')}` : ''), { description: 'Bound claim.' }),
        column('StorageClass', 'string', (o) => getString(o, 'spec', 'storageClassName') ?? '', { description: 'StorageClass.' }),
        column('VolumeAttributesClass', 'string', (o) => getString(o, 'spec', 'volumeAttributesClassName') ?? '<unset>', { description: 'VolumeAttributesClass.' }),
        column('Reason', 'string', (o) => getString(o, 'status', 'reason') ?? '', { description: 'Reason.' }),
      ],
    },
  };
}

export function storageClassDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: n.group('storage'),
    version: 'v1',
    kind: 'StorageClass',
    resource: 'storageclasses',
    singular: 'storageclass',
    scope: 'Cluster',
    shortNames: ['sc'],
    schema: kindSchema(n, 'StorageClass describes the parameters for a class of storage.', {
      provisioner: str('Name of the provisioner.'),
      parameters: strMap('Parameters for the provisioner.'),
      reclaimPolicy: enumOf('Reclaim policy of volumes created from the class; default Delete.', ['Delete', 'Recycle', 'Retain']),
      mountOptions: atomicList('Mount options of volumes created from the class.', str('A mount option.')),
      allowVolumeExpansion: bool('Volumes of the class may be expanded.'),
      volumeBindingMode: enumOf('When volumes are bound; default Immediate.', ['Immediate', 'WaitForFirstConsumer']),
      allowedTopologies: atomicList('Topologies where volumes may be provisioned.', opaque('A topology selector term.')),
    }, ['provisioner']),
    strategy: {
      default(o) {
        setDefault(o, 'Delete', 'reclaimPolicy');
        setDefault(o, 'Immediate', 'volumeBindingMode');
      },
      validateUpdate: (o, old) => [...immutable(o, old, 'provisioner'), ...immutable(o, old, 'parameters'), ...immutable(o, old, 'reclaimPolicy'), ...immutable(o, old, 'volumeBindingMode')],
      columns: [
        column('Provisioner', 'string', (o) => getString(o, 'provisioner') ?? '', { description: 'Provisioner.' }),
        column('ReclaimPolicy', 'string', (o) => getString(o, 'reclaimPolicy') ?? '', { description: 'Reclaim policy.' }),
        column('VolumeBindingMode', 'string', (o) => getString(o, 'volumeBindingMode') ?? '', { description: 'Binding mode.' }),
        column('AllowVolumeExpansion', 'string', (o) => String(get(o, 'allowVolumeExpansion') === true), { description: 'Expansion allowed.' }),
        column('Parameters', 'string', (o) => Object.entries((get(o, 'parameters') as Record<string, string> | undefined) ?? {}).map(([k, v]) => `${k}=${v}`).join(','), { priority: 1, description: 'Parameters.' }),
      ],
    },
  };
}
