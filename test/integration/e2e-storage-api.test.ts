// Ports of Kubernetes' API-only sig-storage e2e conformance tests to orch, on a
// started server with kube's group names: the "CSI Conformance" lifecycles of
// StorageClass, CSIDriver, CSINode, VolumeAttachment (and its status),
// PersistentVolume with PersistentVolumeClaim (and their status), the
// CSIStorageCapacity API operations, a pod with CSI inline volumes through the
// pod API (test/e2e/storage/storageclass.go, csi_inline.go, csi_node.go,
// volume_attachment.go, persistent_volumes.go, csistoragecapacity.go), and the
// `immutable` ConfigMap and Secret (test/e2e/common/storage/configmap_volume.go,
// secrets_volume.go). Each step is kube's: create, get, strategic or merge patch
// of a label named after the object, list by that label, delete and confirm,
// a replacement updated and deleted by collection.

import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { type Obj, type TestServer, call, deleteOneThenCollection, generateName, getOrUndefined, listItems, newNamespace, patchUpdateAndWatch, useKubeServer } from '../helpers/kube-e2e.js';

let t: TestServer;
useKubeServer((s) => (t = s));

const SMP = 'application/strategic-merge-patch+json';
const sel = (s: string): string => `labelSelector=${encodeURIComponent(s)}`;
const STORAGE = '/apis/storage.k8s.io/v1';

/** the e2e's "patched"/"updated" label: the object's own name as the key */
const labelPatch = (name: string, value: string): Obj => ({ metadata: { labels: { [name]: value } } });

/** resourceversion.CompareResourceVersion(a, b) == -1 */
const newerRv = (before: Obj, after: Obj): boolean => BigInt(after.metadata.resourceVersion) > BigInt(before.metadata.resourceVersion);

/** the e2e's Eventually over a list by label: nothing left */
async function confirmGone(collection: string, selector: string): Promise<void> {
  await eventually(async () => (await listItems(t, `${collection}?${sel(selector)}`)).length === 0, `${collection} ${selector} deleted`, 30_000);
}

/** kube's client-go retry.RetryOnConflict around get, change, update */
async function updateRetrying(path: string, change: (o: Obj) => void): Promise<Obj> {
  return eventually(async () => {
    const cur = await call(t, 'GET', path);
    change(cur);
    const r = await t.request('PUT', path, { body: cur });
    if (r.status === 409) return undefined;
    expect(r.status, r.text).toBe(200);
    return r.json<Obj>();
  }, `update of ${path}`);
}

/** after a delete: 404, or still there with a deletionTimestamp (held by a finalizer) */
async function deletedOrTerminating(path: string): Promise<void> {
  const o = await getOrUndefined(t, path);
  if (o) expect(o.metadata.deletionTimestamp, `${path} should have been deleted or have DeletionTimestamp`).toBeTruthy();
}

describe('[sig-storage] StorageClasses CSI Conformance', () => {
  it('should run through the lifecycle of a StorageClass [Conformance]', async () => {
    const scs = `${STORAGE}/storageclasses`;
    const created = await call(t, 'POST', scs, { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { generateName: 'e2e-' }, provisioner: 'e2e-fake-provisioner' });
    const name = created.metadata.name as string;
    expect(name).toMatch(/^e2e-/);
    const retrieved = await call(t, 'GET', `${scs}/${name}`);
    const patched = await call(t, 'PATCH', `${scs}/${name}`, labelPatch(name, 'patched'), SMP);
    expect(patched.metadata.labels[name]).toBe('patched');
    expect(newerRv(retrieved, patched), 'patched object should have a larger resource version').toBe(true);
    await call(t, 'DELETE', `${scs}/${name}`);
    await confirmGone(scs, `${name}=patched`);

    const replacement = await call(t, 'POST', scs, { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { generateName: 'e2e-v2-' }, provisioner: 'e2e-fake-provisioner' });
    const name2 = replacement.metadata.name as string;
    const updated = await updateRetrying(`${scs}/${name2}`, (sc) => (sc.metadata.labels = { [name2]: 'updated' }));
    expect(updated.metadata.labels[name2]).toBe('updated');
    expect(await listItems(t, `${scs}?${sel(`${name2}=updated`)}`)).toHaveLength(1);
    await call(t, 'DELETE', `${scs}?${sel(`${name2}=updated`)}`);
    await confirmGone(scs, `${name2}=updated`);
  });
});

describe('[sig-storage] CSIInlineVolumes', () => {
  it('should support CSIVolumeSource in Pod API [Conformance]', async () => {
    const ns = await newNamespace(t, 'csiinlinevolumes');
    const pods = `/api/v1/namespaces/${ns}/pods`;
    const podName = 'pod-csi-inline-volumes';
    const pod = {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: podName },
      spec: {
        volumes: [
          { name: 'csi-inline-vol1', csi: { driver: 'e2e.example.com' } },
          { name: 'csi-inline-vol2', csi: { driver: 'e2e.example.com', fsType: 'ext4', readOnly: true } },
        ],
        containers: [{
          name: podName, image: 'registry.k8s.io/e2e-test-images/busybox:1.37.0-1', command: ['sh', '-c', 'ls /mnt/*'],
          volumeMounts: [{ name: 'csi-inline-vol1', mountPath: '/mnt/vol1' }, { name: 'csi-inline-vol2', mountPath: '/mnt/vol2' }],
        }],
      },
    };
    const created = await call(t, 'POST', pods, pod);
    expect(created.spec.volumes[1].csi).toEqual({ driver: 'e2e.example.com', fsType: 'ext4', readOnly: true });
    const again = await t.request('POST', pods, { body: pod });
    expect(again.status, again.text).toBe(409);
    expect(again.json<Obj>().reason).toBe('AlreadyExists');
    expect((await call(t, 'GET', `${pods}/${podName}`)).metadata.uid).toBe(created.metadata.uid);
    expect(await listItems(t, pods)).toHaveLength(1);
    const patched = await call(t, 'PATCH', `${pods}/${podName}`, { metadata: { annotations: { patched: 'true' } } });
    expect(patched.metadata.annotations.patched).toBe('true');
    await call(t, 'DELETE', `${pods}/${podName}`);
    await deletedOrTerminating(`${pods}/${podName}`);
  });

  it('should run through the lifecycle of a CSIDriver [Conformance]', async () => {
    const drivers = `${STORAGE}/csidrivers`;
    const unique = generateName('csiinlinevolumes-');
    const driver = (modes: string[]): Obj => ({
      apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver',
      metadata: { name: `inline-driver-${crypto.randomUUID()}`, labels: { 'e2e-test': unique } },
      spec: { volumeLifecycleModes: modes, fsGroupPolicy: 'ReadWriteOnceWithFSType' },
    });
    const [d1, d2] = [driver(['Ephemeral']), driver(['Persistent', 'Ephemeral'])];
    const c1 = await call(t, 'POST', drivers, d1);
    const c2 = await call(t, 'POST', drivers, d2);
    const again = await t.request('POST', drivers, { body: d1 });
    expect(again.status, again.text).toBe(409);
    expect((await call(t, 'GET', `${drivers}/${c1.metadata.name}`)).metadata.uid).toBe(c1.metadata.uid);
    expect((await call(t, 'GET', `${drivers}/${c2.metadata.name}`)).metadata.uid).toBe(c2.metadata.uid);
    const n2 = c2.metadata.name as string;
    const patched = await call(t, 'PATCH', `${drivers}/${n2}`, labelPatch(n2, 'patched'), SMP);
    expect(patched.metadata.labels[n2]).toContain('patched');
    const updated = await updateRetrying(`${drivers}/${n2}`, (d) => (d.metadata.labels[n2] = 'updated'));
    expect(updated.metadata.labels[n2]).toContain('updated');
    expect(await listItems(t, `${drivers}?${sel(`e2e-test=${unique}`)}`)).toHaveLength(2);
    await call(t, 'DELETE', `${drivers}/${c1.metadata.name}`);
    await deletedOrTerminating(`${drivers}/${c1.metadata.name}`);
    await call(t, 'DELETE', `${drivers}?${sel(`${n2}=updated`)}`);
    await deletedOrTerminating(`${drivers}/${n2}`);
  });
});

describe('[sig-storage] CSINodes CSI Conformance', () => {
  it('should run through the lifecycle of a csinode [Conformance]', async () => {
    const csinodes = `${STORAGE}/csinodes`;
    const name = generateName('e2e-csinode-');
    const created = await call(t, 'POST', csinodes, { apiVersion: 'storage.k8s.io/v1', kind: 'CSINode', metadata: { name }, spec: { drivers: [] } });
    expect((await call(t, 'GET', `${csinodes}/${name}`)).metadata.name).toBe(created.metadata.name);
    const patched = await call(t, 'PATCH', `${csinodes}/${name}`, labelPatch(name, 'patched'), SMP);
    expect(patched.metadata.labels[name]).toBe('patched');
    expect(await listItems(t, `${csinodes}?${sel(`${name}=patched`)}`)).toHaveLength(1);
    await call(t, 'DELETE', `${csinodes}/${name}`);
    await confirmGone(csinodes, `${name}=patched`);

    const name2 = generateName('e2e-csinode-');
    await call(t, 'POST', csinodes, { apiVersion: 'storage.k8s.io/v1', kind: 'CSINode', metadata: { name: name2 }, spec: { drivers: [] } });
    expect((await call(t, 'GET', `${csinodes}/${name2}`)).metadata.name).toBe(name2);
    const updated = await updateRetrying(`${csinodes}/${name2}`, (n) => (n.metadata.labels = { [name2]: 'updated' }));
    expect(updated.metadata.labels[name2]).toBe('updated');
    await call(t, 'DELETE', `${csinodes}?${sel(`${name2}=updated`)}`);
    await confirmGone(csinodes, `${name2}=updated`);
  });
});

describe('[sig-storage] CSIStorageCapacity', () => {
  it('should support CSIStorageCapacities API operations [Conformance]', async () => {
    // discovery: the group, its version, the resource
    expect(((await call(t, 'GET', '/apis')).groups as Obj[]).find((g) => g.name === 'storage.k8s.io')?.versions.map((v: Obj) => v.version)).toContain('v1');
    expect(((await call(t, 'GET', '/apis/storage.k8s.io')).versions as Obj[]).map((v) => v.version)).toContain('v1');
    expect(((await call(t, 'GET', STORAGE)).resources as Obj[]).map((r) => r.name)).toContain('csistoragecapacities');

    const ns = await newNamespace(t, 'csistoragecapacity');
    const unique = ns;
    const cscs = `${STORAGE}/namespaces/${ns}/csistoragecapacities`;
    const all = `${STORAGE}/csistoragecapacities`;
    const csc = (suffix: string): Obj => ({ apiVersion: 'storage.k8s.io/v1', kind: 'CSIStorageCapacity', metadata: { name: `${unique}${suffix}`, labels: { test: unique } }, storageClassName: 'e2e.example.com' });
    const created = await call(t, 'POST', cscs, csc('-csc1'));
    expect((await t.request('POST', cscs, { body: csc('-csc1') })).status).toBe(409);
    await call(t, 'POST', cscs, csc('-csc2'));
    const rv = (await call(t, 'GET', `${cscs}?${sel(`test=${unique}`)}`)).metadata.resourceVersion as string;
    await call(t, 'POST', cscs, csc('-csc3'));
    expect((await call(t, 'GET', `${cscs}/${created.metadata.name}`)).metadata.uid).toBe(created.metadata.uid);
    expect(await listItems(t, `${cscs}?${sel(`test=${unique}`)}`)).toHaveLength(3);
    expect(await listItems(t, `${all}?${sel(`test=${unique}`)}`)).toHaveLength(3);
    // the csc3 creation comes first on a watch from before it: read past it to the patch and update
    const after3 = (await call(t, 'GET', `${cscs}?${sel(`test=${unique}`)}`)).metadata.resourceVersion as string;
    expect(BigInt(after3)).toBeGreaterThan(BigInt(rv));
    await patchUpdateAndWatch(t, cscs, `${cscs}/${created.metadata.name}`, after3, `test=${unique}`);
    await deleteOneThenCollection(t, cscs, `${cscs}/${created.metadata.name}`, `test=${unique}`, 2);
  });
});

describe('[sig-storage] VolumeAttachment Conformance', () => {
  const vas = `${STORAGE}/volumeattachments`;
  /** kube's createVolumeAttachment: a random name, on one of the cluster's nodes, attached false */
  async function createVolumeAttachment(): Promise<string> {
    const nodes = await listItems(t, '/api/v1/nodes');
    const nodeName = nodes.length ? (nodes[0]!.metadata.name as string) : (await call(t, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'va-e2e-node' } })).metadata.name as string;
    const id = generateName('e2e-');
    const va = {
      apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name: `va-${id}`, uid: `va-${id}` },
      spec: { attacher: 'e2e-test.storage.k8s.io', nodeName, source: { persistentVolumeName: `pv-${id}` } },
      status: { attached: false },
    };
    const created = await call(t, 'POST', vas, va);
    expect(created.metadata.name).toBe(`va-${id}`);
    return created.metadata.name as string;
  }

  it('should run through the lifecycle of a VolumeAttachment [Conformance]', async () => {
    const first = await createVolumeAttachment();
    expect((await call(t, 'GET', `${vas}/${first}`)).metadata.name).toBe(first);
    const patched = await call(t, 'PATCH', `${vas}/${first}`, labelPatch(first, 'patched'));
    expect(patched.metadata.labels[first]).toBe('patched');
    expect(await listItems(t, `${vas}?${sel(`${first}=patched`)}`)).toHaveLength(1);
    await call(t, 'DELETE', `${vas}/${first}`);
    await confirmGone(vas, `${first}=patched`);

    for (const va of [await createVolumeAttachment(), await createVolumeAttachment()]) {
      const updated = await updateRetrying(`${vas}/${va}`, (o) => (o.metadata.labels = { 'va-e2e': 'updated' }));
      expect(updated.metadata.labels['va-e2e']).toBe('updated');
    }
    await call(t, 'DELETE', `${vas}?${sel('va-e2e=updated')}`);
    await confirmGone(vas, 'va-e2e=updated');
  });

  it('should apply changes to a volumeattachment status [Conformance]', async () => {
    const name = await createVolumeAttachment();
    const patched = await call(t, 'PATCH', `${vas}/${name}`, labelPatch(name, 'patched'));
    expect(patched.metadata.labels[name]).toBe('patched');
    expect((await call(t, 'GET', `${vas}/${name}/status`)).status?.attached ?? false).toBe(false);
    const statusPatched = await call(t, 'PATCH', `${vas}/${name}/status`, { status: { attached: true } });
    expect(statusPatched.status.attached).toBe(true);
    const updated = await eventually(async () => {
      const cur = await call(t, 'GET', `${vas}/${name}`);
      cur.status.attached = false;
      const r = await t.request('PUT', `${vas}/${name}/status`, { body: cur });
      if (r.status === 409) return undefined;
      expect(r.status, r.text).toBe(200);
      return r.json<Obj>();
    }, 'status update');
    expect(updated.status.attached ?? false).toBe(false);
    await call(t, 'DELETE', `${vas}/${name}`);
    await confirmGone(vas, `${name}=patched`);
  });
});

describe('[sig-storage] PersistentVolumes CSI Conformance', () => {
  /** e2epv.CreatePVsPVCs(1, 1): a PV labelled e2e-pv-pool=<ns> of the class <ns>, and a claim of that class */
  async function createPvAndPvc(ns: string, driver: string, handle: string): Promise<{ pv: string; pvc: string }> {
    const pv = await call(t, 'POST', '/api/v1/persistentvolumes', {
      apiVersion: 'v1', kind: 'PersistentVolume',
      metadata: { generateName: `${ns}-`, labels: { 'e2e-pv-pool': ns }, annotations: { 'volume.beta.kubernetes.io/gid': '777' } },
      spec: { persistentVolumeReclaimPolicy: 'Retain', capacity: { storage: '2Gi' }, accessModes: ['ReadWriteOnce'], storageClassName: ns, csi: { driver, volumeHandle: handle } },
    });
    const pvc = await call(t, 'POST', `/api/v1/namespaces/${ns}/persistentvolumeclaims`, {
      apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { generateName: 'pvc-' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '2Gi' } }, storageClassName: ns },
    });
    return { pv: pv.metadata.name as string, pvc: pvc.metadata.name as string };
  }
  const PVS = '/api/v1/persistentvolumes';

  it('should run through the lifecycle of a PV and a PVC [Conformance]', async () => {
    const ns = await newNamespace(t, 'pv');
    const pvcs = `/api/v1/namespaces/${ns}/persistentvolumeclaims`;
    const driver = `inline-driver-${crypto.randomUUID()}`;
    await call(t, 'POST', `${STORAGE}/csidrivers`, { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: driver, labels: { 'e2e-test': ns } }, spec: { volumeLifecycleModes: ['Persistent'], fsGroupPolicy: 'ReadWriteOnceWithFSType' } });
    await createPvAndPvc(ns, driver, 'e2e-conformance');
    const pvList = await listItems(t, `${PVS}?${sel(`e2e-pv-pool=${ns}`)}`);
    expect(pvList).toHaveLength(1);
    const initialPV = pvList[0]!;
    const pvcList = await listItems(t, pvcs);
    expect(pvcList).toHaveLength(1);
    const initialPVC = pvcList[0]!;
    for (const o of [initialPV, initialPVC]) expect(o.metadata.resourceVersion).toMatch(/^[1-9][0-9]*$/);

    const patchedPV = await call(t, 'PATCH', `${PVS}/${initialPV.metadata.name}`, labelPatch(initialPV.metadata.name, 'patched'), SMP);
    expect(patchedPV.metadata.labels[initialPV.metadata.name]).toBe('patched');
    expect(newerRv(initialPV, patchedPV)).toBe(true);
    const patchedPVC = await call(t, 'PATCH', `${pvcs}/${initialPVC.metadata.name}`, labelPatch(initialPVC.metadata.name, 'patched'), SMP);
    expect(patchedPVC.metadata.labels[initialPVC.metadata.name]).toBe('patched');
    expect(newerRv(initialPVC, patchedPVC)).toBe(true);
    expect((await call(t, 'GET', `${PVS}/${patchedPV.metadata.name}`)).metadata.uid).toBe(patchedPV.metadata.uid);
    expect((await call(t, 'GET', `${pvcs}/${patchedPVC.metadata.name}`)).metadata.uid).toBe(patchedPVC.metadata.uid);

    await call(t, 'DELETE', `${pvcs}/${patchedPVC.metadata.name}`);
    await eventually(async () => (await listItems(t, pvcs)).length === 0, 'the PVC deleted', 30_000);
    await call(t, 'DELETE', `${PVS}/${patchedPV.metadata.name}`);
    await confirmGone(PVS, `e2e-pv-pool=${ns}`);

    const { pv, pvc } = await createPvAndPvc(ns, driver, 'e2e-conformance');
    const updatedPV = await updateRetrying(`${PVS}/${pv}`, (o) => (o.metadata.labels[pv] = 'updated'));
    expect(updatedPV.metadata.labels[pv]).toBe('updated');
    const updatedPVC = await updateRetrying(`${pvcs}/${pvc}`, (o) => (o.metadata.labels = { [pvc]: 'updated' }));
    expect(updatedPVC.metadata.labels[pvc]).toBe('updated');
    expect(await listItems(t, `/api/v1/persistentvolumeclaims?${sel(`${pvc}=updated`)}`)).toHaveLength(1);
    await call(t, 'DELETE', `${pvcs}?${sel(`${pvc}=updated`)}`);
    await confirmGone(pvcs, `${pvc}=updated`);
    await call(t, 'DELETE', `${PVS}?${sel(`${pv}=updated`)}`);
    await confirmGone(PVS, `${pv}=updated`);
  });

  it('should apply changes to a pv/pvc status [Conformance]', async () => {
    const ns = await newNamespace(t, 'pv');
    const pvcs = `/api/v1/namespaces/${ns}/persistentvolumeclaims`;
    await createPvAndPvc(ns, `e2e-driver-${crypto.randomUUID()}`, 'e2e-status-conformance');
    const pvList = await listItems(t, `${PVS}?${sel(`e2e-pv-pool=${ns}`)}`);
    expect(pvList).toHaveLength(1);
    const pvcList = await listItems(t, pvcs);
    expect(pvcList).toHaveLength(1);
    const [pv, pvc] = [pvList[0]!.metadata.name as string, pvcList[0]!.metadata.name as string];

    expect(['Pending', 'Bound']).toContain((await call(t, 'GET', `${pvcs}/${pvc}/status`)).status.phase);
    expect(['Available', 'Bound', 'Pending']).toContain((await call(t, 'GET', `${PVS}/${pv}/status`)).status.phase);

    const patchedPVC = await call(t, 'PATCH', `${pvcs}/${pvc}/status`, { status: { conditions: [{ type: 'StatusPatched', status: 'True', reason: 'E2E patchedStatus', message: 'Set from e2e test' }] } });
    expect((patchedPVC.status.conditions as Obj[]).find((c) => c.type === 'StatusPatched')).toMatchObject({ reason: 'E2E patchedStatus', message: 'Set from e2e test' });
    const patchedPV = await call(t, 'PATCH', `${PVS}/${pv}/status`, { status: { message: 'StatusPatched', reason: 'E2E patchStatus' } });
    expect(patchedPV.status).toMatchObject({ reason: 'E2E patchStatus', message: 'StatusPatched' });

    const statusUpdate = async (path: string, change: (o: Obj) => void): Promise<Obj> =>
      eventually(async () => {
        const cur = await call(t, 'GET', path);
        change(cur);
        const r = await t.request('PUT', `${path}/status`, { body: cur });
        if (r.status === 409) return undefined;
        expect(r.status, r.text).toBe(200);
        return r.json<Obj>();
      }, `status update of ${path}`);
    const updatedPVC = await statusUpdate(`${pvcs}/${pvc}`, (o) => (o.status.conditions = [...(o.status.conditions ?? []), { type: 'StatusUpdated', status: 'True', reason: 'E2E updateStatus', message: 'Set from e2e test' }]));
    expect((updatedPVC.status.conditions as Obj[]).find((c) => c.type === 'StatusUpdated')).toMatchObject({ reason: 'E2E updateStatus', message: 'Set from e2e test' });
    const updatedPV = await statusUpdate(`${PVS}/${pv}`, (o) => Object.assign(o.status, { reason: 'E2E updateStatus', message: 'StatusUpdated' }));
    expect(updatedPV.status).toMatchObject({ reason: 'E2E updateStatus', message: 'StatusUpdated' });

    // the e2e's AfterEach: PVPVCMapCleanup
    await call(t, 'DELETE', `${pvcs}/${pvc}`);
    await call(t, 'DELETE', `${PVS}/${pv}`);
  });
});

/** kube's immutable tests: data changes, then immutable, then neither data nor `immutable` may change; labels may; it can be deleted */
async function immutableLifecycle(collection: string, name: string, data: (k: string, v: string) => Obj): Promise<void> {
  const path = `${collection}/${name}`;
  let cur = await call(t, 'POST', collection, { apiVersion: 'v1', kind: collection.endsWith('/secrets') ? 'Secret' : 'ConfigMap', metadata: { name }, data: data('data-1', 'value-1') });
  cur.data = { ...cur.data, ...data('data-4', 'value-4') };
  cur = await call(t, 'PUT', path, cur);
  cur.immutable = true;
  cur = await call(t, 'PUT', path, cur);
  const refused = async (body: Obj): Promise<void> => {
    const r = await t.request('PUT', path, { body });
    expect(r.status, r.text).toBe(422);
    expect(r.json<Obj>().reason).toBe('Invalid');
    expect(r.text).toContain('field is immutable when `immutable` is set');
  };
  await refused({ ...cur, data: { ...cur.data, ...data('data-5', 'value-5') } });
  cur = await call(t, 'GET', path);
  expect(cur.immutable, `${name} can be switched from immutable to mutable`).toBe(true);
  await refused({ ...cur, immutable: false });
  cur = await call(t, 'GET', path);
  cur.metadata.labels = { label1: 'value1' };
  expect((await call(t, 'PUT', path, cur)).metadata.labels).toEqual({ label1: 'value1' });
  await call(t, 'DELETE', path);
}

describe('[sig-storage] ConfigMap', () => {
  it('should be immutable if `immutable` field is set [Conformance]', async () => {
    const ns = await newNamespace(t, 'configmap');
    await immutableLifecycle(`/api/v1/namespaces/${ns}/configmaps`, `configmap-test-volume-immutable-${crypto.randomUUID()}`, (k, v) => ({ [k]: v }));
  });
});

describe('[sig-storage] Secrets', () => {
  it('should be immutable if `immutable` field is set [Conformance]', async () => {
    const ns = await newNamespace(t, 'secrets');
    await immutableLifecycle(`/api/v1/namespaces/${ns}/secrets`, `secret-test-immutable-${crypto.randomUUID()}`, (k, v) => ({ [k]: Buffer.from(v).toString('base64') }));
  });
});
