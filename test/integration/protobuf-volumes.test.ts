// Protobuf bodies carrying the volume sources that used to be opaque (spec 000
// §2.7; docs/protobuf.md "Volume sources") over real HTTPS: a Pod with csi,
// ephemeral, iscsi, image and projected clusterTrustBundle volumes and a
// PersistentVolume with a csi source, built by protobufjs from Kubernetes'
// numbers (test/helpers/k8s-proto-volumes.ts) as a client-go client sends them.
// What is stored and read back as JSON equals the same object created from
// JSON, and a protobuf GET answers protobuf (nothing left without a number).
// Before, the decoder skipped these fields: the objects were stored without them.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { k8sEnvelope, k8sUnenvelope } from '../helpers/k8s-proto-extensions.js';
import { k8sVolumesProto, volumesJson, volumesPb } from '../helpers/k8s-proto-volumes.js';
import { NO_WORKLOAD_CONTROLLERS, type TestServer, startTestServer } from '../helpers/server.js';

const PB = 'application/vnd.kubernetes.protobuf';
const PODS = '/api/v1/namespaces/default/pods';
const PVS = '/api/v1/persistentvolumes';

type J = Record<string, unknown>;

let t: TestServer;

beforeAll(async () => {
  // no scheduler or volume binder: the stored specs stay as created
  t = await startTestServer({ authn: NO_WORKLOAD_CONTROLLERS });
});
afterAll(async () => {
  await t?.stop();
});

const csi = { driver: 'csi.example.com', readOnly: true, volumeAttributes: { size: '1Gi' }, nodePublishSecretRef: { name: 'csi-secret' } };
const iscsi = { targetPortal: '10.0.0.1:3260', iqn: 'iqn.2001-04.com.example:storage', lun: 1, portals: ['10.0.0.2:3260'], chapAuthSession: true, secretRef: { name: 'chap' } };
const image = { reference: 'registry.example/tools:1', pullPolicy: 'IfNotPresent' };
const projected = { sources: [{ clusterTrustBundle: { signerName: 'example.com/signer', labelSelector: { matchLabels: { a: 'b' } }, path: 'ca.pem' } }] };
const claimTemplate = (storage: unknown) => ({
  volumeClaimTemplate: { metadata: { labels: { type: 'scratch' } }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } }, storageClassName: 'fast' } },
});
const container = { name: 'app', image: 'busybox', volumeMounts: [{ name: 'inline', mountPath: '/data' }, { name: 'disk', mountPath: '/disk' }] };

/** one volume per source; the claim's storage in the form's spelling */
const sources = (storage: unknown): [string, J][] => [['inline', { csi }], ['scratch', { ephemeral: claimTemplate(storage) }], ['disk', { iscsi }], ['tools', { image }], ['bundle', { projected }]];

function podPb(name: string): J {
  return {
    metadata: { name, labels: { via: 'test' } },
    spec: {
      volumes: volumesPb(sources({ string: '1Gi' })),
      containers: [container],
      automountServiceAccountToken: false,
    },
  };
}

function podJson(name: string): J {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { via: 'test' } },
    spec: {
      volumes: volumesJson(sources('1Gi')),
      containers: [container],
      automountServiceAccountToken: false,
    },
  };
}

const pvCsi = {
  driver: 'csi.example.com', volumeHandle: 'h-1', fsType: 'ext4', volumeAttributes: { tier: 'gold' },
  nodeStageSecretRef: { name: 'stage', namespace: 'kube-system' }, controllerExpandSecretRef: { name: 'expand', namespace: 'kube-system' },
};
const pvPb = (name: string): J => ({
  metadata: { name },
  spec: { capacity: { storage: { string: '5Gi' } }, persistentVolumeSource: { csi: pvCsi }, accessModes: ['ReadWriteOnce'], storageClassName: 'fast' },
});
const pvJson = (name: string): J => ({
  apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name }, spec: { capacity: { storage: '5Gi' }, csi: pvCsi, accessModes: ['ReadWriteOnce'], storageClassName: 'fast' },
});

/** the parts of a stored object that do not depend on when and under which name it was made */
function comparable(o: J): J {
  const m = o.metadata as J;
  return { labels: m.labels, spec: o.spec, status: o.status, managedFields: (m.managedFields as J[]).map(({ time: _t, ...rest }) => rest) };
}

describe('protobuf bodies with CSI, ephemeral, iSCSI, image and legacy volume sources', () => {
  it('creates a Pod from protobuf equal to the one created from JSON, and answers it in protobuf', async () => {
    const c = await t.request('POST', PODS, { body: k8sEnvelope('v1', 'Pod', 'k8s.Pod', podPb('pb-vols'), k8sVolumesProto), headers: { 'Content-Type': PB } });
    expect(c.status, c.text).toBe(201);
    const j = await t.request('POST', PODS, { body: podJson('json-vols') });
    expect(j.status, j.text).toBe(201);

    const pbStored = (await t.request('GET', `${PODS}/pb-vols`)).json();
    const jsonStored = (await t.request('GET', `${PODS}/json-vols`)).json();
    expect((pbStored.spec as { volumes: J[] }).volumes.map((v) => Object.keys(v).sort())).toEqual([
      ['csi', 'name'], ['ephemeral', 'name'], ['iscsi', 'name'], ['image', 'name'], ['name', 'projected'],
    ]);
    expect(comparable(pbStored)).toEqual(comparable(jsonStored));

    // a protobuf GET is protobuf (no property without a number), and Kubernetes' decoder reads the volumes back
    const g = await t.request('GET', `${PODS}/pb-vols`, { headers: { Accept: `${PB}, application/json` } });
    expect(g.headers['content-type']).toBe(PB);
    const read = k8sUnenvelope(g.raw, 'k8s.Pod', k8sVolumesProto).obj as { spec: { volumes: J[] } };
    // the server defaulted iscsiInterface, the claim template's volumeMode and the projection's defaultMode, as kube does
    const sent = (podPb('x').spec as { volumes: J[] }).volumes;
    const template = claimTemplate({ string: '1Gi' }).volumeClaimTemplate;
    expect(read.spec.volumes).toEqual([
      sent[0],
      { name: 'scratch', volumeSource: { ephemeral: { volumeClaimTemplate: { ...template, spec: { ...template.spec, volumeMode: 'Filesystem' } } } } },
      { name: 'disk', volumeSource: { iscsi: { ...iscsi, iscsiInterface: 'default' } } },
      sent[3],
      { name: 'bundle', volumeSource: { projected: { ...projected, defaultMode: 420 } } },
    ]);
  });

  it('creates a PersistentVolume with a csi source from protobuf equal to the one created from JSON', async () => {
    const c = await t.request('POST', PVS, { body: k8sEnvelope('v1', 'PersistentVolume', 'k8s.PersistentVolume', pvPb('pb-pv'), k8sVolumesProto), headers: { 'Content-Type': PB } });
    expect(c.status, c.text).toBe(201);
    const j = await t.request('POST', PVS, { body: pvJson('json-pv') });
    expect(j.status, j.text).toBe(201);
    const pbStored = (await t.request('GET', `${PVS}/pb-pv`)).json();
    const jsonStored = (await t.request('GET', `${PVS}/json-pv`)).json();
    expect((pbStored.spec as J).csi).toEqual(pvCsi);
    const { lastPhaseTransitionTime: _a, ...pbStatus } = pbStored.status as J;
    const { lastPhaseTransitionTime: _b, ...jsonStatus } = jsonStored.status as J;
    expect(pbStatus).toEqual(jsonStatus);
    expect(comparable({ ...pbStored, status: undefined })).toEqual(comparable({ ...jsonStored, status: undefined }));

    const g = await t.request('GET', `${PVS}/pb-pv`, { headers: { Accept: `${PB}, application/json` } });
    expect(g.headers['content-type']).toBe(PB);
    const read = k8sUnenvelope(g.raw, 'k8s.PersistentVolume', k8sVolumesProto).obj as { spec: { persistentVolumeSource: J } };
    expect(read.spec.persistentVolumeSource).toEqual({ csi: pvCsi });
  });

  it('types the sources in JSON as kube does: unknown keys refused when strict, kube defaults applied (no source: emptyDir)', async () => {
    const pod = (name: string, volume: J): J => ({ ...podJson(name), spec: { containers: [{ name: 'a', image: 'busybox' }], volumes: [volume], automountServiceAccountToken: false } });
    const strict = await t.request('POST', `${PODS}?fieldValidation=Strict`, { body: pod('strict', { name: 'v', csi: { driver: 'd', bogus: 1 } }) });
    expect(strict.status).toBe(400);
    expect(strict.json().message).toBe('Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.volumes[0].csi.bogus"');
    // a volume that names no source is an emptyDir (SetDefaults_Volume), in pods and pod templates alike
    const noSource = await t.request('POST', PODS, { body: pod('no-source', { name: 'v' }) });
    expect(noSource.status, noSource.text).toBe(201);
    expect((noSource.json().spec as { volumes: J[] }).volumes).toEqual([{ name: 'v', emptyDir: {} }]);
    const rs = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'no-source' }, spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: pod('x', { name: 'v' }).spec } } };
    const tmpl = await t.request('POST', '/apis/apps/v1/namespaces/default/replicasets', { body: rs });
    expect(tmpl.status, tmpl.text).toBe(201);
    expect(((tmpl.json().spec as { template: { spec: { volumes: J[] } } }).template.spec.volumes)).toEqual([{ name: 'v', emptyDir: {} }]);
    const noDriver = await t.request('POST', PODS, { body: pod('no-driver', { name: 'v', csi: { readOnly: true } }) });
    expect(noDriver.status).toBe(422);
    expect(noDriver.json().message).toBe('Pod "no-driver" is invalid: spec.volumes[0].csi.driver: Required value');
    // Go's ISCSIVolumeSource.Lun has no omitempty (written as 0); iscsiInterface defaults to "default"
    const c = await t.request('POST', PODS, { body: pod('iscsi-defaults', { name: 'v', iscsi: { targetPortal: 'p:3260', iqn: 'iqn.2001-04.com.example:s' } }) });
    expect(c.status, c.text).toBe(201);
    expect((c.json().spec as { volumes: J[] }).volumes[0]).toEqual({ name: 'v', iscsi: { targetPortal: 'p:3260', iqn: 'iqn.2001-04.com.example:s', lun: 0, iscsiInterface: 'default' } });
  });

  it("drops a new Node's deprecated configSource and status.config, as kube does since dynamic kubelet config was removed", async () => {
    const configMap = { namespace: 'kube-system', name: 'kubelet', kubeletConfigKey: 'kubelet' };
    const node = { metadata: { name: 'n-config' }, spec: { podCIDR: '10.0.0.0/24', configSource: { configMap } }, status: { config: { assigned: { configMap: { ...configMap, uid: 'u', resourceVersion: '1' } }, error: 'x' } } };
    const c = await t.request('POST', '/api/v1/nodes', { body: k8sEnvelope('v1', 'Node', 'k8s.Node', node, k8sVolumesProto), headers: { 'Content-Type': PB } });
    expect(c.status, c.text).toBe(201);
    const stored = (await t.request('GET', '/api/v1/nodes/n-config')).json<{ spec: J; status?: J }>();
    // (not the whole spec: TaintNodesByCondition's not-ready taint may still be there)
    expect(stored.spec.podCIDR).toBe('10.0.0.0/24');
    expect(stored.spec.configSource).toBeUndefined();
    expect(stored.status?.config).toBeUndefined();
    // an update may not set it either (kube keeps it only on a node that already has one)
    const u = await t.request('PATCH', '/api/v1/nodes/n-config', { body: { spec: { configSource: { configMap } } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(u.status, u.text).toBe(200);
    expect(u.json<{ spec: J }>().spec.configSource).toBeUndefined();
  });
});
