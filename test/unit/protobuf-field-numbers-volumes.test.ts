// The field-number audit (protobuf-field-numbers.test.ts) for the volume sources
// of pods and pod templates (CSI, ephemeral, image, iSCSI, the legacy in-tree
// sources, projected ClusterTrustBundles), PersistentVolume's sources,
// VolumeAttachment's inlineVolumeSpec and Node's deprecated config source and
// status (docs/protobuf.md "Volume sources"), with the .proto text of
// test/helpers/k8s-proto-volumes.ts (Kubernetes 1.32's numbers, restated).
// protobufjs encodes hand-built messages; orch must decode them to the expected
// JSON, and orch's encoding must decode back through protobufjs to the same message.

import { describe, expect, it } from 'vitest';
import { DEFAULT_API_DOMAIN, builtinDefinitions, builtinSchemaDefinitions } from '../../src/registry/kinds/index.js';
import { admissionRegistrationDefinitions } from '../../src/registry/admission/kinds.js';
import { crdDefinition } from '../../src/registry/crd/kind.js';
import { accessReviewDefinitions } from '../../src/auth/kinds/access-reviews.js';
import { selfSubjectReviewDefinition } from '../../src/auth/kinds/reviews.js';
import { SchemaNames } from '../../src/machinery/schema/naming.js';
import { type MessagePlan, type ValuePlan, messagePlan, resolve } from '../../src/machinery/protobuf/plan.js';
import type { Schema } from '../../src/machinery/schema/types.js';
import type { ResourceDefinition } from '../../src/registry/types.js';
import { k8sVolumesProto as root, volumesJson, volumesPb } from '../helpers/k8s-proto-volumes.js';
import { type AuditCase, auditCases, builtinKind } from '../helpers/proto-audit.js';

const defs = builtinSchemaDefinitions();
const kinds = builtinDefinitions();

const kind = (k: string, group: string): ResourceDefinition => builtinKind(kinds, k, group);

const meta = { name: 'x', namespace: 'ns' };
const container = { name: 'app', image: 'busybox', volumeMounts: [{ name: 'inline', mountPath: '/data' }] };

/** the sources both forms spell alike (no quantities, no Go-inlined structs) */
const csi = { driver: 'csi.example.com', readOnly: true, fsType: 'ext4', volumeAttributes: { size: '1Gi' }, nodePublishSecretRef: { name: 'csi-secret' } };
const iscsi = {
  targetPortal: '10.0.0.1:3260', iqn: 'iqn.2001-04.com.example:storage', lun: 3, iscsiInterface: 'default', fsType: 'ext4', readOnly: true,
  portals: ['10.0.0.2:3260'], chapAuthDiscovery: true, chapAuthSession: true, secretRef: { name: 'chap' }, initiatorName: 'iqn.2001-04.com.example:node',
};
const image = { reference: 'registry.example/tools:1', pullPolicy: 'IfNotPresent' };
const bundle = { projected: { sources: [{ clusterTrustBundle: { signerName: 'example.com/signer', labelSelector: { matchLabels: { a: 'b' } }, path: 'ca.pem', optional: true } }], defaultMode: 420 } };
const claimTemplate = (storage: unknown) => ({
  volumeClaimTemplate: {
    metadata: { labels: { type: 'scratch' } },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } }, storageClassName: 'fast', volumeMode: 'Filesystem' },
  },
});

/** the sources newer than the in-tree ones, one volume each; the claim's storage in the form's spelling */
const newSources = (storage: unknown): [string, Record<string, unknown>][] => [
  ['inline', { csi }], ['scratch', { ephemeral: claimTemplate(storage) }], ['disk', { iscsi }], ['tools', { image }], ['bundle', bundle],
];

/** every legacy in-tree source a pod's VolumeSource still has, one volume each */
const legacy = {
  gcePersistentDisk: { pdName: 'pd', fsType: 'ext4', partition: 1, readOnly: true },
  awsElasticBlockStore: { volumeID: 'vol-1', fsType: 'xfs', partition: 2, readOnly: true },
  gitRepo: { repository: 'https://example.com/r.git', revision: 'abc', directory: '.' },
  glusterfs: { endpoints: 'gluster', path: 'vol', readOnly: true },
  rbd: { monitors: ['m1', 'm2'], image: 'img', fsType: 'ext4', pool: 'rbd', user: 'admin', keyring: '/etc/ceph/keyring', secretRef: { name: 'ceph' }, readOnly: true },
  flexVolume: { driver: 'example/flex', fsType: 'ext4', secretRef: { name: 'flex' }, readOnly: true, options: { a: '1' } },
  cinder: { volumeID: 'c1', fsType: 'ext4', readOnly: true, secretRef: { name: 'os' } },
  cephfs: { monitors: ['m1'], path: '/', user: 'admin', secretFile: '/etc/ceph/secret', secretRef: { name: 'ceph' }, readOnly: true },
  flocker: { datasetName: 'ds', datasetUUID: 'uuid' },
  fc: { targetWWNs: ['500a0982991b8dc5'], lun: 2, fsType: 'ext4', readOnly: true, wwids: ['w1'] },
  azureFile: { secretName: 'az', shareName: 'share', readOnly: true },
  vsphereVolume: { volumePath: '[ds] v.vmdk', fsType: 'ext4', storagePolicyName: 'gold', storagePolicyID: 'id' },
  quobyte: { registry: 'reg:7861', volume: 'v', readOnly: true, user: 'u', group: 'g', tenant: 't' },
  azureDisk: { diskName: 'd', diskURI: 'https://example/d.vhd', cachingMode: 'ReadWrite', fsType: 'ext4', readOnly: false, kind: 'Shared' },
  photonPersistentDisk: { pdID: 'p1', fsType: 'ext4' },
  portworxVolume: { volumeID: 'px', fsType: 'ext4', readOnly: true },
  scaleIO: {
    gateway: 'https://gw', system: 'sys', secretRef: { name: 'sio' }, sslEnabled: true, protectionDomain: 'pd', storagePool: 'sp', storageMode: 'ThinProvisioned',
    volumeName: 'v', fsType: 'xfs', readOnly: true,
  },
  storageos: { volumeName: 'v', volumeNamespace: 'default', fsType: 'ext4', readOnly: true, secretRef: { name: 'sos' } },
};
const legacyVolumes = Object.entries(legacy).map(([k, v]): [string, Record<string, unknown>] => [k.toLowerCase(), { [k]: v }]);

/** the sources a PersistentVolumeSpec has (secret references are SecretReference / ObjectReference there) */
const ref = { name: 's', namespace: 'ns' };
const pvSources: Record<string, Record<string, unknown>> = {
  csi: {
    driver: 'csi.example.com', volumeHandle: 'h-1', readOnly: true, fsType: 'ext4', volumeAttributes: { tier: 'gold' }, controllerPublishSecretRef: ref,
    nodeStageSecretRef: { name: 'stage', namespace: 'kube-system' }, nodePublishSecretRef: ref, controllerExpandSecretRef: ref, nodeExpandSecretRef: ref,
  },
  local: { path: '/mnt/disks/ssd1', fsType: 'ext4' },
  hostPath: { path: '/srv', type: 'Directory' },
  nfs: { server: 'nfs.example', path: '/export', readOnly: true },
  iscsi: { ...iscsi, secretRef: ref },
  rbd: { ...legacy.rbd, secretRef: ref },
  cinder: { ...legacy.cinder, secretRef: ref },
  cephfs: { ...legacy.cephfs, secretRef: ref },
  flexVolume: { ...legacy.flexVolume, secretRef: ref },
  azureFile: { ...legacy.azureFile, secretNamespace: 'az-ns' },
  glusterfs: { ...legacy.glusterfs, endpointsNamespace: 'gl-ns' },
  scaleIO: { ...legacy.scaleIO, secretRef: ref },
  storageos: { ...legacy.storageos, secretRef: { kind: 'Secret', namespace: 'ns', name: 'sos' } },
  gcePersistentDisk: legacy.gcePersistentDisk, awsElasticBlockStore: legacy.awsElasticBlockStore, fc: legacy.fc, flocker: legacy.flocker,
  vsphereVolume: legacy.vsphereVolume, quobyte: legacy.quobyte, azureDisk: legacy.azureDisk, photonPersistentDisk: legacy.photonPersistentDisk,
  portworxVolume: legacy.portworxVolume,
};

interface Case extends AuditCase {
  kind: [string, string];
}

const pvSpec = (source: Record<string, unknown>) => ({
  pb: { capacity: { storage: { string: '5Gi' } }, persistentVolumeSource: source, accessModes: ['ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Retain', volumeMode: 'Filesystem' },
  json: { capacity: { storage: '5Gi' }, ...source, accessModes: ['ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Retain', volumeMode: 'Filesystem' },
});

/** Node's deprecated dynamic kubelet config: the same shape in both forms */
const nodeConfig = {
  metadata: { name: 'n1' },
  spec: { podCIDR: '10.0.0.0/24', configSource: { configMap: { namespace: 'kube-system', name: 'kubelet', kubeletConfigKey: 'kubelet' } } },
  status: {
    config: {
      assigned: { configMap: { namespace: 'kube-system', name: 'kubelet', uid: 'u1', resourceVersion: '7', kubeletConfigKey: 'kubelet' } },
      lastKnownGood: { configMap: { namespace: 'kube-system', name: 'old', uid: 'u0', resourceVersion: '3', kubeletConfigKey: 'kubelet' } },
      error: 'failed to load',
    },
  },
};

const CASES: Case[] = [
  {
    name: 'Pod: csi 28, ephemeral 29 (PersistentVolumeClaimTemplate), iscsi 8, image 30, projected clusterTrustBundle 5',
    kind: ['Pod', ''],
    message: 'k8s.Pod',
    pb: {
      metadata: meta,
      spec: {
        volumes: volumesPb(newSources({ string: '1Gi' })),
        containers: [container],
      },
    },
    json: {
      metadata: meta,
      spec: {
        volumes: volumesJson(newSources('1Gi')),
        containers: [container],
      },
    },
  },
  {
    name: 'Pod: the legacy in-tree sources (gcePersistentDisk 3 … storageos 27)',
    kind: ['Pod', ''],
    message: 'k8s.Pod',
    pb: { metadata: meta, spec: { volumes: volumesPb(legacyVolumes), containers: [container] } },
    json: { metadata: meta, spec: { volumes: volumesJson(legacyVolumes), containers: [container] } },
  },
  {
    name: 'Pod: Go writes non-pointer zero values (readOnly, chapAuthSession, partition): absent in JSON',
    kind: ['Pod', ''],
    message: 'k8s.Pod',
    decodeOnly: true,
    pb: {
      metadata: meta,
      spec: {
        volumes: [
          { name: 'disk', volumeSource: { iscsi: { targetPortal: 'p', iqn: 'q', lun: 0, iscsiInterface: 'default', readOnly: false, chapAuthDiscovery: false, chapAuthSession: false } } },
          { name: 'pd', volumeSource: { gcePersistentDisk: { pdName: 'pd', partition: 0, readOnly: false } } },
        ],
        containers: [container],
      },
    },
    json: {
      metadata: meta,
      spec: { volumes: [{ name: 'disk', iscsi: { targetPortal: 'p', iqn: 'q', lun: 0, iscsiInterface: 'default' } }, { name: 'pd', gcePersistentDisk: { pdName: 'pd' } }], containers: [container] },
    },
  },
  {
    name: 'Deployment: a pod template with a csi and an ephemeral volume',
    kind: ['Deployment', 'apps'],
    message: 'k8s.Deployment',
    pb: {
      metadata: meta,
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { volumes: [{ name: 'inline', volumeSource: { csi } }, { name: 'scratch', volumeSource: { ephemeral: claimTemplate({ string: '2Gi' }) } }], containers: [container] } },
      },
    },
    json: {
      metadata: meta,
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { volumes: [{ name: 'inline', csi }, { name: 'scratch', ephemeral: claimTemplate('2Gi') }], containers: [container] } },
      },
    },
  },
  ...Object.entries(pvSources).map(([source, value]): Case => {
    const spec = pvSpec({ [source]: value });
    return {
      name: `PersistentVolume: PersistentVolumeSource inlined at 2, ${source}`,
      kind: ['PersistentVolume', ''],
      message: 'k8s.PersistentVolume',
      pb: { metadata: { name: `pv-${source.toLowerCase()}` }, spec: spec.pb },
      json: { metadata: { name: `pv-${source.toLowerCase()}` }, spec: spec.json },
    };
  }),
  {
    name: 'VolumeAttachment: source.inlineVolumeSpec = 2 (a PersistentVolumeSpec with csi)',
    kind: ['VolumeAttachment', 'storage'],
    message: 'k8s.VolumeAttachment',
    pb: { metadata: { name: 'va' }, spec: { attacher: 'csi.example.com', source: { inlineVolumeSpec: pvSpec({ csi: pvSources.csi }).pb }, nodeName: 'n1' } },
    json: { metadata: { name: 'va' }, spec: { attacher: 'csi.example.com', source: { inlineVolumeSpec: pvSpec({ csi: pvSources.csi }).json }, nodeName: 'n1' } },
  },
  {
    name: 'Node: spec.configSource = 6, status.config = 11 (NodeConfigSource configMap = 2)',
    kind: ['Node', ''],
    message: 'k8s.Node',
    pb: nodeConfig,
    json: nodeConfig,
  },
];

describe('volume source field numbers against Kubernetes generated.proto', () => {
  auditCases(CASES, root, (c) => kind(...c.kind), defs);
});

/** JSON paths of a kind's message plan that have no field number (a protobuf body cannot carry them) */
function unnumbered(p: MessagePlan, path: string, out: string[], seen = new Set<MessagePlan>()): string[] {
  if (seen.has(p)) return out;
  seen.add(p);
  for (const u of p.unnumbered) out.push(`${path}.${u}`);
  const value = (v: ValuePlan, at: string): void => {
    if (v.kind === 'message') unnumbered(v.message, at, out, seen);
    else if (v.kind === 'map') value(v.value, `${at}{}`);
    else if (v.kind === 'wrappedList') value(v.item, `${at}[]`);
  };
  for (const f of p.fields) value(f.value, `${path}.${f.name}`);
  for (const e of p.embedded.values()) unnumbered(e, path, out, seen);
  return out;
}

/** JSON paths whose unknown keys are kept (preserve-unknown-fields) though protobuf cannot carry them */
function preserved(s: Schema, path: string, out: string[], seen = new Set<Schema>()): string[] {
  const r = resolve(s, defs);
  if (seen.has(r)) return out;
  seen.add(r);
  if ((s['x-orch-preserve-unknown-fields'] ?? r['x-orch-preserve-unknown-fields']) && !(s['x-orch-proto-type'] ?? r['x-orch-proto-type'])) out.push(path);
  for (const [k, p] of Object.entries(r.properties ?? {})) preserved(p, `${path}.${k}`, out, seen);
  if (r.items && !Array.isArray(r.items)) preserved(r.items, `${path}[]`, out, seen);
  if (r.additionalProperties && typeof r.additionalProperties === 'object') preserved(r.additionalProperties, `${path}{}`, out, seen);
  return out;
}

describe('every served built-in kind is fully numbered', () => {
  const names = new SchemaNames(DEFAULT_API_DOMAIN);
  const served = [
    ...kinds, ...admissionRegistrationDefinitions(names), crdDefinition(names, { reservedGroups: () => new Set() }),
    ...accessReviewDefinitions(names), selfSubjectReviewDefinition(names),
  ];
  // a property without a number is skipped by the decoder: a protobuf client's value would be dropped silently;
  // an embedded claim template's TypeMeta has none in kube's generated.proto either
  it('has no property without a field number but TypeMeta (carried by the envelope)', () => {
    const missing = served.flatMap((d) => unnumbered(messagePlan(d.schema, defs), d.kind, [])).filter((p) => !/^(\w+|StatefulSet\.spec\.volumeClaimTemplates)\.(apiVersion|kind)$/.test(p));
    expect(missing).toEqual([]);
  });

  it('keeps no unknown JSON keys that protobuf could not carry', () => {
    expect(served.flatMap((d) => preserved(d.schema, d.kind, []))).toEqual([]);
  });
});
