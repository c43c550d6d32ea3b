// storage.<domain>/v1 CSIDriver, CSINode, VolumeAttachment and
// CSIStorageCapacity (spec 000 §9 deprecation table): stored and served with
// kube 1.32's defaults and validation (pkg/apis/storage/validation). Nothing
// acts on them: no attach/detach controller writes VolumeAttachments, the node
// agent registers no CSI drivers and the scheduler reads no capacities.
// Fields kube requires are not marked `required` in the schema: the strategy
// reports them missing with kube's paths and messages (and only once).

import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { Schema } from '../../machinery/schema/types.js';
import { isDNS1123Subdomain, isQualifiedName } from '../../machinery/schema/object-meta.js';
import { parseQuantity } from '../../core/quantity.js';
import { validateLabelSelector } from '../admission/matching.js';
import type { ApiObject, FieldError, ResourceDefinition } from '../types.js';
import { column, get, getArray, getObject, getString } from './columns.js';
import { atomicList, bool, enumOf, int32, int64, listMap, obj, opaque, proto, ref, setList, str, strMap, time } from '../../machinery/schema/dsl.js';
import { kindSchema } from './meta.js';
import { duplicate, goSlice, immutable, invalid, invalidShown, notSupported, required, tooLong } from './field-errors.js';
import { deepEqual } from '../../machinery/meta.js';

const FS_GROUP_POLICIES = ['File', 'None', 'ReadWriteOnceWithFSType'];
const LIFECYCLE_MODES = ['Ephemeral', 'Persistent'];
const CSI_NODE_ID_MAX = 192;
const VOLUME_ERROR_MESSAGE_MAX = 1024;
const ATTACHMENT_METADATA_MAX = 256 * 1024;

/** kube's ValidateCSIDriverName: at most 63 characters, a DNS subdomain once lower-cased */
function csiDriverName(name: string, at: string): FieldError[] {
  const errs: FieldError[] = [];
  if (name === '') errs.push(required(at));
  if (name.length > 63) errs.push(tooLong(at, 63));
  for (const m of isDNS1123Subdomain(name.toLowerCase())) errs.push(invalid(at, name, m));
  return errs;
}

const bools = (o: ApiObject, ...path: string[]): boolean => get(o, ...path) === true;

export function csiDriverDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: n.group('storage'), version: 'v1', kind: 'CSIDriver', resource: 'csidrivers', singular: 'csidriver', scope: 'Cluster',
    schema: kindSchema(n, 'CSIDriver captures information about a Container Storage Interface (CSI) volume driver deployed on the cluster (stored; nothing acts on it).', proto({ spec: 2 }, {
      spec: obj('The specification of the CSI driver.', proto({
        attachRequired: 1, podInfoOnMount: 2, volumeLifecycleModes: 3, storageCapacity: 4, fsGroupPolicy: 5, tokenRequests: 6, requiresRepublish: 7, seLinuxMount: 8,
      }, {
        attachRequired: bool('Whether the driver needs an attach operation (ControllerPublishVolume). Defaults to true. Immutable.'),
        podInfoOnMount: bool('Whether the driver wants pod information on mount. Defaults to false.'),
        volumeLifecycleModes: setList('The kinds of volumes the driver supports. Defaults to ["Persistent"]. Immutable.', { type: 'string' }),
        storageCapacity: bool('Whether pod scheduling considers the capacity the driver publishes. Defaults to false.'),
        fsGroupPolicy: enumOf('Whether volumes support changing ownership and permissions before mount. Defaults to ReadWriteOnceWithFSType.', FS_GROUP_POLICIES),
        tokenRequests: atomicList('Service account tokens the driver needs for the pods it mounts volumes for.', obj('A service account token request.', proto({ audience: 1, expirationSeconds: 2 }, {
          audience: str('Intended audience of the token.'),
          expirationSeconds: int64('Duration of validity of the token.'),
        }), ['audience'])),
        requiresRepublish: bool('Whether NodePublishVolume is called periodically. Defaults to false.'),
        seLinuxMount: bool('Whether the driver supports the "-o context" mount option. Defaults to false.'),
      })),
    }), ['spec']),
    strategy: {
      zeroShape: { spec: {} },
      default: (o) => {
        const spec = getObject(o, 'spec');
        if (!spec) return;
        spec.attachRequired ??= true;
        spec.podInfoOnMount ??= false;
        spec.storageCapacity ??= false;
        spec.fsGroupPolicy ??= 'ReadWriteOnceWithFSType';
        if (!Array.isArray(spec.volumeLifecycleModes) || spec.volumeLifecycleModes.length === 0) spec.volumeLifecycleModes = ['Persistent'];
        spec.requiresRepublish ??= false;
        spec.seLinuxMount ??= false;
      },
      validate: validateCSIDriver,
      // kube 1.32: attachRequired and volumeLifecycleModes stay; podInfoOnMount, fsGroupPolicy, storageCapacity may change
      // (kube's path for attachRequired is spec.attachedRequired)
      validateUpdate: (o, old) => [
        ...validateCSIDriver(o),
        ...immutable('spec.attachedRequired', get(o, 'spec', 'attachRequired'), get(old, 'spec', 'attachRequired')),
        ...lifecycleModesFixed(get(o, 'spec', 'volumeLifecycleModes'), get(old, 'spec', 'volumeLifecycleModes')),
      ],
      columns: [
        column('AttachRequired', 'boolean', (o) => get(o, 'spec', 'attachRequired') !== false),
        column('PodInfoOnMount', 'boolean', (o) => bools(o, 'spec', 'podInfoOnMount')),
        column('StorageCapacity', 'boolean', (o) => bools(o, 'spec', 'storageCapacity')),
        column('TokenRequests', 'string', (o) => getArray(o, 'spec', 'tokenRequests').map((t) => getString(t, 'audience') ?? '').join(',') || '<unset>'),
        column('RequiresRepublish', 'boolean', (o) => bools(o, 'spec', 'requiresRepublish')),
        column('Modes', 'string', (o) => getArray(o, 'spec', 'volumeLifecycleModes').join(',') || '<none>'),
      ],
    },
  };
}

/** kube prints the modes as the Go slice they are */
function lifecycleModesFixed(next: unknown, prev: unknown): FieldError[] {
  return deepEqual(next ?? null, prev ?? null) ? [] : [invalidShown('spec.volumeLifecycleModes', goSlice('storage.VolumeLifecycleMode', next), 'field is immutable')];
}

function validateCSIDriver(o: ApiObject): FieldError[] {
  const errs = csiDriverName(o.metadata?.name ?? '', 'metadata.name').filter((e) => e.type === 'FieldValueTooLong');
  // fsGroupPolicy's values are the schema's enum
  for (const m of getArray(o, 'spec', 'volumeLifecycleModes')) {
    if (!LIFECYCLE_MODES.includes(String(m))) errs.push(notSupported('spec.volumeLifecycleModes', m, LIFECYCLE_MODES));
  }
  const audiences = new Set<string>();
  getArray(o, 'spec', 'tokenRequests').forEach((t, i) => {
    const at = `spec.tokenRequests[${i}]`;
    const audience = getString(t, 'audience') ?? '';
    if (audiences.has(audience)) {
      errs.push(duplicate(`${at}.audience`, audience));
      return;
    }
    audiences.add(audience);
    const secs = get(t, 'expirationSeconds');
    if (typeof secs !== 'number') return;
    if (secs < 600) errs.push(invalid(`${at}.expirationSeconds`, secs, 'may not specify a duration less than 10 minutes'));
    if (secs > 2 ** 32) errs.push(invalid(`${at}.expirationSeconds`, secs, 'may not specify a duration larger than 2^32 seconds'));
  });
  return errs;
}

export function csiNodeDefinition(n: SchemaNames): ResourceDefinition {
  const driver = obj('One CSI driver installed on the node.', proto({ name: 1, nodeID: 2, topologyKeys: 3, allocatable: 4 }, {
    name: str('Name of the CSI driver (its GetPluginName()).'),
    nodeID: str('The node as the driver names it.'),
    topologyKeys: atomicList('Topology keys the driver supports.', { type: 'string' }),
    allocatable: obj('Volume resources of the node available for scheduling.', proto({ count: 1 }, {
      count: int32('Maximum number of unique volumes of the driver on the node.'),
    })),
  }));
  return {
    group: n.group('storage'), version: 'v1', kind: 'CSINode', resource: 'csinodes', singular: 'csinode', scope: 'Cluster',
    schema: kindSchema(n, 'CSINode holds information about all CSI drivers installed on a node (stored; the node agent registers none).', proto({ spec: 2 }, {
      spec: obj('The CSI drivers of the node.', proto({ drivers: 1 }, {
        drivers: listMap('The CSI drivers on the node.', driver, ['name'], 'name'),
      }), ['drivers']),
    }), ['spec']),
    strategy: {
      zeroShape: { spec: {} },
      validate: validateCSINode,
      // kube 1.32: an existing driver entry may not change (drivers may be added or removed); kube's path
      // is the Go type's name, `CSINodeDriver`, with the new entry as the value
      validateUpdate: (o, old) => {
        const errs = validateCSINode(o);
        const next = new Map(getArray(o, 'spec', 'drivers').map((d) => [getString(d, 'name'), d]));
        for (const d of getArray(old, 'spec', 'drivers')) {
          const now = next.get(getString(d, 'name'));
          if (now !== undefined) errs.push(...immutable('CSINodeDriver', now, d));
        }
        return errs;
      },
      columns: [column('Drivers', 'integer', (o) => getArray(o, 'spec', 'drivers').length)],
    },
  };
}

function validateCSINode(o: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  getArray(o, 'spec', 'drivers').forEach((d, i) => {
    const at = `spec.drivers[${i}]`;
    const name = getString(d, 'name') ?? '';
    errs.push(...csiDriverName(name, `${at}.name`));
    const id = getString(d, 'nodeID') ?? '';
    if (id === '') errs.push(required(`${at}.nodeID`));
    else if (id.length > CSI_NODE_ID_MAX) errs.push(invalid(`${at}.nodeID`, id, `must be ${CSI_NODE_ID_MAX} characters or less`));
    const count = get(d, 'allocatable', 'count');
    if (typeof count === 'number' && count < 0) errs.push(invalid(`${at}.allocatable.count`, count, 'must be greater than or equal to 0'));
    if (names.has(name)) errs.push(duplicate(`${at}.name`, name));
    names.add(name);
    const keys = new Set<string>();
    for (const k of getArray(d, 'topologyKeys').map(String)) {
      if (k === '') errs.push(required(at));
      if (keys.has(k)) errs.push(duplicate(at, k));
      keys.add(k);
      for (const m of isQualifiedName(k)) errs.push(invalid(at, k, m));
    }
  });
  return errs;
}

function volumeError(d: string): Schema {
  return obj(d, proto({ time: 1, message: 2 }, {
    time: time('When the error was encountered.'),
    message: str('The error encountered during the attach or detach operation.'),
  }));
}

export function volumeAttachmentDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: n.group('storage'), version: 'v1', kind: 'VolumeAttachment', resource: 'volumeattachments', singular: 'volumeattachment', scope: 'Cluster',
    subresources: ['status'],
    schema: kindSchema(n, 'VolumeAttachment captures the intent to attach or detach a volume to or from a node (stored; nothing attaches volumes).', proto({ spec: 2, status: 3 }, {
      spec: obj('The desired attach/detach behaviour. Immutable.', proto({ attacher: 1, source: 2, nodeName: 3 }, {
        attacher: str('Name of the volume driver that must handle the request.'),
        source: obj('The volume to attach; exactly one member is set.', proto({ persistentVolumeName: 1, inlineVolumeSpec: 2 }, {
          persistentVolumeName: str('Name of the persistent volume to attach.'),
          inlineVolumeSpec: ref(n.core('PersistentVolumeSpec'), "A persistent volume spec translated from a pod's inline volume (CSI migration)."),
        })),
        nodeName: str('The node the volume should be attached to.'),
      })),
      status: obj('The state of the attach or detach operation, written by the attacher.', proto({ attached: 1, attachmentMetadata: 2, attachError: 3, detachError: 4 }, {
        attached: bool('Whether the volume is attached.'),
        attachmentMetadata: strMap('Information returned by a successful attach for later mount calls.'),
        attachError: volumeError('The last error of the attach operation.'),
        detachError: volumeError('The last error of the detach operation.'),
      }), ['attached']),
    }), ['spec']),
    strategy: {
      zeroShape: { spec: { source: {} }, status: { attached: false } },
      validate: validateVolumeAttachment,
      validateUpdate: (o, old) => [...validateVolumeAttachment(o), ...immutable('spec', o.spec, old.spec)],
      columns: [
        column('Attacher', 'string', (o) => getString(o, 'spec', 'attacher') ?? '', { format: 'name' }),
        column('PV', 'string', (o) => getString(o, 'spec', 'source', 'persistentVolumeName') ?? ''),
        column('Node', 'string', (o) => getString(o, 'spec', 'nodeName') ?? ''),
        column('Attached', 'boolean', (o) => bools(o, 'status', 'attached')),
      ],
    },
  };
}

function validateVolumeAttachment(o: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  const attacher = getString(o, 'spec', 'attacher') ?? '';
  errs.push(...(attacher === '' ? [required('spec.attacher')] : csiDriverName(attacher, 'spec.attacher')));
  const pv = get(o, 'spec', 'source', 'persistentVolumeName');
  const inline = get(o, 'spec', 'source', 'inlineVolumeSpec');
  const exactlyOne = 'must specify exactly one of inlineVolumeSpec and persistentVolumeName';
  if (pv == null && inline == null) errs.push(required('spec.source', exactlyOne));
  else if (pv != null && inline != null) errs.push({ field: 'spec.source', type: 'FieldValueForbidden', message: `Forbidden: ${exactlyOne}` });
  else if (pv === '') errs.push(required('spec.source.persistentVolumeName', 'must specify non empty persistentVolumeName'));
  else if (typeof pv === 'string') for (const m of isDNS1123Subdomain(pv)) errs.push(invalid('spec.source.persistentVolumeName', pv, m));
  const node = getString(o, 'spec', 'nodeName') ?? '';
  for (const m of isDNS1123Subdomain(node)) errs.push(invalid('spec.nodeName', node, m));
  const meta = getObject(o, 'status', 'attachmentMetadata') ?? {};
  const size = Object.entries(meta).reduce((s, [k, v]) => s + k.length + String(v).length, 0);
  if (size > ATTACHMENT_METADATA_MAX) errs.push(tooLong('status.attachmentMetadata', ATTACHMENT_METADATA_MAX));
  for (const f of ['attachError', 'detachError']) {
    const m = getString(o, 'status', f, 'message') ?? '';
    if (m.length > VOLUME_ERROR_MESSAGE_MAX) errs.push(tooLong(`status.${f}.message`, VOLUME_ERROR_MESSAGE_MAX));
  }
  return errs;
}

export function csiStorageCapacityDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: n.group('storage'), version: 'v1', kind: 'CSIStorageCapacity', resource: 'csistoragecapacities', singular: 'csistoragecapacity', scope: 'Namespaced',
    schema: kindSchema(n, 'CSIStorageCapacity stores the result of one CSI GetCapacity call for a storage class in a topology segment (stored; the scheduler does not read it).', proto({
      nodeTopology: 2, storageClassName: 3, capacity: 4, maximumVolumeSize: 5,
    }, {
      nodeTopology: ref(n.meta('LabelSelector'), 'The nodes that have access to the storage. Immutable.'),
      storageClassName: str('The StorageClass the capacity applies to. Immutable.'),
      capacity: ref(n.quantity, 'The available capacity reported by the driver.'),
      maximumVolumeSize: ref(n.quantity, 'The largest volume the driver can create with these parameters.'),
    })),
    strategy: {
      validate: validateCapacity,
      validateUpdate: (o, old) => [
        ...validateCapacity(o),
        ...immutable('nodeTopology', o.nodeTopology, old.nodeTopology),
        ...immutable('storageClassName', o.storageClassName, old.storageClassName),
      ],
      // kube's csiStorageCapacityColumnDefinitions have no Age
      exactColumns: true,
      columns: [
        column('StorageClassName', 'string', (o) => getString(o, 'storageClassName') ?? ''),
        column('Capacity', 'string', (o) => (o.capacity === undefined ? '<unset>' : String(o.capacity))),
      ],
    },
  };
}

function validateCapacity(o: ApiObject): FieldError[] {
  const errs = validateLabelSelector(o.nodeTopology, 'nodeTopology');
  const sc = typeof o.storageClassName === 'string' ? o.storageClassName : '';
  for (const m of isDNS1123Subdomain(sc)) errs.push(invalid('storageClassName', sc, m));
  for (const f of ['capacity', 'maximumVolumeSize']) {
    const q = get(o, f);
    const v = parseQuantity(q);
    if (v !== undefined && v < 0) errs.push(invalid(f, q, 'must be greater than or equal to 0'));
  }
  return errs;
}

export const storageCsiFactories = [csiDriverDefinition, csiNodeDefinition, volumeAttachmentDefinition, csiStorageCapacityDefinition];
