// The persistent volume controllers against a started server: PersistentVolumes
// and claims created over HTTP, the phases and bindings kube's persistent volume
// controller gives them awaited (no timing is asserted: `eventually` only
// bounds a failure), kube's events read back, and a StatefulSet whose claims
// bind to volumes made for them beforehand.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { runKubectl } from '../helpers/kubectl.js';
import { NO_NODE_LIFECYCLE, type TestServer, startTestServer } from '../helpers/server.js';
import { type WObj, workloadApi } from '../helpers/workload-api.js';

let ts: TestServer;
const PVS = '/api/v1/persistentvolumes';
const NS = '/api/v1/namespaces/default';
const PVCS = `${NS}/persistentvolumeclaims`;
const CLASSES = '/apis/storage.orch.io/v1/storageclasses';
const { get, send, list } = workloadApi(() => ts);

function pv(name: string, size: string, extra: Record<string, unknown> = {}, labels: Record<string, string> = {}): Record<string, unknown> {
  return {
    apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name, labels },
    spec: { capacity: { storage: size }, accessModes: ['ReadWriteOnce'], hostPath: { path: `/tmp/${name}` }, storageClassName: '', ...extra },
  };
}

function pvc(name: string, size: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } }, storageClassName: '', ...extra } };
}

const phase = (o: WObj | undefined): unknown => o?.status?.phase;
const finalizers = (o: WObj | undefined): string[] | undefined => (o?.metadata as { finalizers?: string[] } | undefined)?.finalizers;

async function phaseOf(path: string, want: string): Promise<WObj> {
  return eventually(async () => {
    const o = await get(path);
    return phase(o) === want ? o : undefined;
  }, `${path} ${want}`, 20_000);
}

async function eventFor(name: string, reason: string): Promise<{ message: string; type: string }> {
  return eventually(async () => {
    const items = (await list(`${NS}/events`)) as unknown as { involvedObject: { name: string }; reason: string; message: string; type: string }[];
    return items.find((e) => e.involvedObject.name === name && e.reason === reason);
  }, `event ${reason} for ${name}`, 20_000);
}

beforeAll(async () => {
  ts = await startTestServer(NO_NODE_LIFECYCLE);
});

afterAll(async () => {
  await ts?.stop();
});

describe('claim validation (kube ValidatePersistentVolumeClaimSpec)', () => {
  it('refuses unknown access modes, ReadWriteOncePod with others, and a storage request of zero', async () => {
    const refused = async (body: Record<string, unknown>) => {
      const r = await ts.request('POST', `${PVCS}?dryRun=All`, { body });
      expect(r.status, r.text).toBe(422);
      return r.json<{ details: { causes: { field: string; message: string }[] } }>().details.causes;
    };
    expect(await refused(pvc('modes', '1Gi', { accessModes: ['Foo'] }))).toEqual([
      { reason: 'FieldValueNotSupported', field: 'spec.accessModes', message: 'Unsupported value: "Foo": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"' },
    ]);
    expect(await refused(pvc('once', '1Gi', { accessModes: ['ReadWriteOncePod', 'ReadWriteOnce'] }))).toEqual([
      { reason: 'FieldValueForbidden', field: 'spec.accessModes', message: 'Forbidden: may not use ReadWriteOncePod with other access modes' },
    ]);
    expect(await refused(pvc('zero', '0'))).toEqual([{ reason: 'FieldValueInvalid', field: 'spec.resources[storage]', message: 'Invalid value: "0": must be greater than zero' }]);
    expect((await ts.request('POST', `${PVCS}?dryRun=All`, { body: pvc('fine', '1Gi', { accessModes: ['ReadWriteOncePod'] }) })).status).toBe(201);
  });
});

describe('persistent volume binding', () => {
  it('makes a new volume Available, then binds a claim to the smallest volume that fits, both ways, with kube annotations', async () => {
    await send('POST', PVS, pv('small', '1Gi'));
    await send('POST', PVS, pv('big', '10Gi'));
    await send('POST', PVS, pv('mid', '5Gi'));
    await send('POST', PVS, pv('fast', '2Gi', { storageClassName: 'fast' }));
    const small = await phaseOf(`${PVS}/small`, 'Available');
    expect(typeof small.status?.lastPhaseTransitionTime).toBe('string');
    await phaseOf(`${PVS}/mid`, 'Available');
    const claim = await send('POST', PVCS, pvc('data', '2Gi'));
    const bound = await phaseOf(`${PVCS}/data`, 'Bound');
    expect(bound.spec.volumeName).toBe('mid');
    expect(bound.status?.capacity).toEqual({ storage: '5Gi' });
    expect(bound.status?.accessModes).toEqual(['ReadWriteOnce']);
    expect(bound.metadata.annotations?.['pv.kubernetes.io/bind-completed']).toBe('yes');
    expect(bound.metadata.annotations?.['pv.kubernetes.io/bound-by-controller']).toBe('yes');
    const vol = await phaseOf(`${PVS}/mid`, 'Bound');
    expect(vol.spec.claimRef).toMatchObject({ kind: 'PersistentVolumeClaim', namespace: 'default', name: 'data', uid: claim.metadata.uid, apiVersion: 'v1' });
    expect(typeof (vol.spec.claimRef as { resourceVersion?: string }).resourceVersion).toBe('string');
    expect(vol.metadata.annotations?.['pv.kubernetes.io/bound-by-controller']).toBe('yes');
    expect(phase(await get(`${PVS}/small`))).toBe('Available');
  });

  it('honours a selector and the claim naming its volume', async () => {
    await send('POST', PVS, pv('labelled', '3Gi', {}, { tier: 'gold' }));
    await send('POST', PVS, pv('plain', '3Gi'));
    await phaseOf(`${PVS}/labelled`, 'Available');
    await send('POST', PVCS, pvc('gold', '1Gi', { selector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['gold'] }] } }));
    expect((await phaseOf(`${PVCS}/gold`, 'Bound')).spec.volumeName).toBe('labelled');
    await send('POST', PVCS, pvc('named', '1Gi', { volumeName: 'big' }));
    const named = await phaseOf(`${PVCS}/named`, 'Bound');
    expect(named.metadata.annotations?.['pv.kubernetes.io/bound-by-controller']).toBeUndefined();
    const big = await phaseOf(`${PVS}/big`, 'Bound');
    // the claim chose the volume: the volume's binding is the controller's
    expect(big.metadata.annotations?.['pv.kubernetes.io/bound-by-controller']).toBe('yes');
  });

  it('honours a volume pre-bound to a claim by name, before the claim exists', async () => {
    await send('POST', PVS, pv('reserved', '1Gi', { claimRef: { namespace: 'default', name: 'later' } }));
    await phaseOf(`${PVS}/reserved`, 'Available');
    await send('POST', PVCS, pvc('other', '1Gi'));
    // the 1Gi "small" volume is the only unreserved fit
    expect((await phaseOf(`${PVCS}/other`, 'Bound')).spec.volumeName).toBe('small');
    await send('POST', PVCS, pvc('later', '1Gi'));
    const later = await phaseOf(`${PVCS}/later`, 'Bound');
    expect(later.spec.volumeName).toBe('reserved');
    const reserved = await phaseOf(`${PVS}/reserved`, 'Bound');
    expect(reserved.metadata.annotations?.['pv.kubernetes.io/bound-by-controller']).toBeUndefined();
    expect((reserved.spec.claimRef as { uid?: string }).uid).toBe(later.metadata.uid);
  });

  it('leaves a claim Pending with kube events: no class, WaitForFirstConsumer, external and missing provisioners', async () => {
    await send('POST', PVCS, pvc('nothing', '100Gi'));
    expect((await eventFor('nothing', 'FailedBinding')).message).toBe('no persistent volumes available for this claim and no storage class is set');
    await send('POST', CLASSES, { apiVersion: 'storage.orch.io/v1', kind: 'StorageClass', metadata: { name: 'local' }, provisioner: 'kubernetes.io/no-provisioner', volumeBindingMode: 'WaitForFirstConsumer' });
    await send('POST', PVS, pv('local-1', '1Gi', { storageClassName: 'local' }));
    await phaseOf(`${PVS}/local-1`, 'Available');
    await send('POST', PVCS, pvc('wait', '1Gi', { storageClassName: 'local' }));
    expect((await eventFor('wait', 'WaitForFirstConsumer')).message).toBe('waiting for first consumer to be created before binding');
    await send('POST', CLASSES, { apiVersion: 'storage.orch.io/v1', kind: 'StorageClass', metadata: { name: 'csi' }, provisioner: 'example.com/csi' });
    await send('POST', PVCS, pvc('ext', '1Gi', { storageClassName: 'csi' }));
    const ev = await eventFor('ext', 'ExternalProvisioning');
    expect(ev.message).toContain("external provisioner 'example.com/csi'");
    const ext = await eventually(async () => {
      const c = await get(`${PVCS}/ext`);
      return c?.metadata.annotations?.['volume.kubernetes.io/storage-provisioner'] === 'example.com/csi' ? c : undefined;
    }, 'provisioner annotation');
    expect(phase(ext)).toBe('Pending');
    await send('POST', PVCS, pvc('ghost', '1Gi', { storageClassName: 'missing' }));
    const failed = await eventFor('ghost', 'ProvisioningFailed');
    expect([failed.type, failed.message]).toEqual(['Warning', 'storageclass.storage.k8s.io "missing" not found']);
    for (const n of ['nothing', 'wait', 'ghost']) expect(phase(await get(`${PVCS}/${n}`))).toBe('Pending');
    expect(phase(await get(`${PVS}/local-1`))).toBe('Available');
  });

  it('runs the reclaim policy when the claim goes: Retain Released, Delete deletes the object, Recycle Failed; a claim whose volume goes is Lost', async () => {
    const kinds = [['keep', 'Retain'], ['drop', 'Delete'], ['recycle', 'Recycle'], ['vanish', 'Retain']] as const;
    for (const [name, policy] of kinds) {
      await send('POST', PVS, pv(`pv-${name}`, '7Gi', { storageClassName: 'reclaim', persistentVolumeReclaimPolicy: policy }, { reclaim: name }));
      await send('POST', PVCS, pvc(`c-${name}`, '7Gi', { storageClassName: 'reclaim', selector: { matchLabels: { reclaim: name } } }));
    }
    for (const [name] of kinds) expect((await phaseOf(`${PVCS}/c-${name}`, 'Bound')).spec.volumeName).toBe(`pv-${name}`);
    for (const [name] of kinds.slice(0, 3)) expect((await ts.request('DELETE', `${PVCS}/c-${name}`)).status).toBeLessThan(300);
    const kept = await phaseOf(`${PVS}/pv-keep`, 'Released');
    // the reference stays: a Released volume is not bound again until an administrator clears it
    expect((kept.spec.claimRef as { name?: string }).name).toBe('c-keep');
    await eventually(async () => (await ts.request('GET', `${PVS}/pv-drop`)).status === 404, 'pv-drop deleted', 20_000);
    const failed = await phaseOf(`${PVS}/pv-recycle`, 'Failed');
    expect(failed.status?.message).toBe('No recycler plugin found for the volume!');
    expect((await eventFor('pv-recycle', 'VolumeFailedRecycle')).type).toBe('Warning');
    // a new claim does not get the Released volume
    await send('POST', PVCS, pvc('c-again', '7Gi', { storageClassName: 'reclaim', selector: { matchLabels: { reclaim: 'keep' } } }));
    await eventFor('c-again', 'ProvisioningFailed');
    expect(phase(await get(`${PVCS}/c-again`))).toBe('Pending');

    // a Bound volume is protected: its deletion waits (kubernetes.io/pv-protection)
    expect((await ts.request('DELETE', `${PVS}/pv-vanish`)).status).toBeLessThan(300);
    const held = await get(`${PVS}/pv-vanish`);
    expect(held?.metadata.deletionTimestamp).toBeDefined();
    expect(held?.metadata).toMatchObject({ finalizers: ['kubernetes.io/pv-protection'] });
    expect(phase(await get(`${PVCS}/c-vanish`))).toBe('Bound');
    // with the finalizer taken off by hand the volume goes, and its claim is Lost
    await send('PATCH', `${PVS}/pv-vanish`, { metadata: { finalizers: null } });
    await phaseOf(`${PVCS}/c-vanish`, 'Lost');
    expect((await eventFor('c-vanish', 'ClaimLost')).message).toBe('Bound claim has lost its PersistentVolume. Data on the volume is lost!');
  });

  it("binds a StatefulSet's claims from volumeClaimTemplates to the volumes made for them beforehand", async () => {
    for (const i of [0, 1]) {
      await send('POST', PVS, pv(`web-${i}`, '1Gi', { storageClassName: 'sts', claimRef: { namespace: 'default', name: `www-web-${i}` } }));
    }
    // another free volume of the class that fits: the claims must still take the ones reserved for them
    await send('POST', PVS, pv('web-spare', '1Gi', { storageClassName: 'sts' }));
    await send('POST', '/apis/apps/v1/namespaces/default/statefulsets', {
      apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'web' },
      spec: {
        replicas: 2, serviceName: 'web', selector: { matchLabels: { app: 'web' } }, podManagementPolicy: 'Parallel',
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx:1' }] } },
        volumeClaimTemplates: [{ metadata: { name: 'www' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'sts', resources: { requests: { storage: '1Gi' } } } }],
      },
    });
    for (const i of [0, 1]) {
      const c = await phaseOf(`${PVCS}/www-web-${i}`, 'Bound');
      expect(c.spec.volumeName).toBe(`web-${i}`);
      expect((await phaseOf(`${PVS}/web-${i}`, 'Bound')).spec.claimRef).toMatchObject({ name: `www-web-${i}`, uid: c.metadata.uid });
    }
    expect(phase(await get(`${PVS}/web-spare`))).toBe('Available');
  });

  it('keeps a claim a scheduled pod uses Terminating until the pod is gone (kubernetes.io/pvc-protection), then releases its volume', async () => {
    await send('POST', PVS, pv('pv-used', '1Gi', { storageClassName: 'used' }));
    await send('POST', PVCS, pvc('used', '1Gi', { storageClassName: 'used' }));
    const claim = await phaseOf(`${PVCS}/used`, 'Bound');
    await eventually(async () => finalizers(await get(`${PVCS}/used`))?.includes('kubernetes.io/pvc-protection'), 'pvc finalizer');
    expect(claim.spec.volumeName).toBe('pv-used');
    await send('POST', `${NS}/pods`, {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'user' },
      spec: { nodeName: 'node-x', containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'used' } }] },
    });
    expect((await ts.request('DELETE', `${PVCS}/used`)).status).toBeLessThan(300);
    // the controller has looked at the Terminating claim (and let it be) once its events settle; the pod still holds it
    const terminating = await eventually(async () => {
      const c = await get(`${PVCS}/used`);
      return c?.metadata.deletionTimestamp ? c : undefined;
    }, 'claim Terminating');
    expect(finalizers(terminating)).toEqual(['kubernetes.io/pvc-protection']);
    expect(phase(await get(`${PVS}/pv-used`))).toBe('Bound');
    // kubectl shows it as kube does
    const kc = join(ts.dataDir, 'admin.kubeconfig');
    const shown = await runKubectl(kc, ['get', 'pvc', 'used', '--no-headers']);
    expect(shown.stdout.trim().split(/\s+/).slice(0, 3)).toEqual(['used', 'Terminating', 'pv-used']);
    const pvShown = await runKubectl(kc, ['get', 'pv', 'pv-used', '--no-headers']);
    expect(pvShown.stdout.trim().split(/\s+/).slice(0, 6)).toEqual(['pv-used', '1Gi', 'RWO', 'Retain', 'Bound', 'default/used']);
    expect((await ts.request('DELETE', `${NS}/pods/user`, { body: { gracePeriodSeconds: 0 } })).status).toBeLessThan(300);
    await eventually(async () => (await ts.request('GET', `${PVCS}/used`)).status === 404, 'claim gone with its pod', 20_000);
    await phaseOf(`${PVS}/pv-used`, 'Released');
  });
});

describe('StorageObjectInUseProtection admission', () => {
  it('a new claim and a new volume carry their protection finalizer from the create on', async () => {
    const v = await send('POST', PVS, pv('pv-protected', '1Gi', { storageClassName: 'protected' }));
    expect(finalizers(v)).toEqual(['kubernetes.io/pv-protection']);
    const c = await send('POST', PVCS, pvc('protected', '1Gi', { storageClassName: 'protected' }));
    expect(finalizers(c)).toEqual(['kubernetes.io/pvc-protection']);
  });

  it('turned off, the create leaves them to the protection controllers', async () => {
    const off = await startTestServer({ admissionPlugins: { disable: ['StorageObjectInUseProtection'] }, authn: { controllers: ['*', '-pvc-protection', '-pv-protection'] } });
    try {
      const r = await off.request('POST', '/api/v1/namespaces/default/persistentvolumeclaims', { body: pvc('bare', '1Gi') });
      expect(r.status, r.text).toBe(201);
      expect(r.json<{ metadata: { finalizers?: string[] } }>().metadata.finalizers).toBeUndefined();
    } finally {
      await off.stop();
    }
  });
});
