// The persistent volume controllers (src/controllers/volume/) on a real
// LocalStore with a simulated clock, where each step can be waited for
// (`settled`): a bind interrupted after any of its four writes is finished by
// the next sync (kube's order of writes), lastPhaseTransitionTime follows the
// injected clock, a volume the controller bound to a claim that went to
// another volume is freed, an unset class gets the default class
// (retroactive assignment), and the protection finalizers hold a used claim
// and a Bound volume.

import { describe, expect, it, onTestFinished } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { PersistentVolumeController } from '../../src/controllers/volume/pv-controller.js';
import { PvProtectionController, PvcProtectionController } from '../../src/controllers/volume/protection.js';
import type { GenericStore } from '../../src/registry/generic-store.js';
import type { ApiObject } from '../../src/registry/types.js';
import { openLocalRegistry, settleControllers } from '../helpers/local-registry.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
const W = { dryRun: false };

interface Env {
  clock: ManualClock;
  pvs: GenericStore;
  pvcs: GenericStore;
  gs(resource: string, group?: string): GenericStore;
  start(): void;
  settled(): Promise<void>;
}

async function env(): Promise<Env> {
  const clock = new ManualClock(T0);
  const { store, gs, close } = await openLocalRegistry('orch.io', 'orch-pv-', clock);
  await gs('namespaces').create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } }, W);
  const pvs = gs('persistentvolumes');
  const pvcs = gs('persistentvolumeclaims');
  const ctrl = [
    new PersistentVolumeController({ store, volumes: () => pvs, claims: () => pvcs, classes: () => gs('storageclasses', 'storage.orch.io'), pods: () => gs('pods'), clock }),
    new PvcProtectionController({ store, clock, claims: () => pvcs, pods: () => gs('pods') }),
    new PvProtectionController({ store, clock, volumes: () => pvs }),
  ];
  onTestFinished(async () => {
    for (const c of ctrl) c.stop();
    await close();
  });
  const settled = (): Promise<void> => settleControllers(ctrl);
  return { clock, pvs, pvcs, gs, start: () => ctrl.forEach((c) => c.start()), settled };
}

const pv = (name: string, extra: Record<string, unknown> = {}): ApiObject => ({
  apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name },
  spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/x' }, storageClassName: '', ...extra },
}) as ApiObject;
const pvc = (name: string, extra: Record<string, unknown> = {}): ApiObject => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: '', ...extra },
}) as ApiObject;
const ref = (c: ApiObject): Record<string, string> => ({ kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'default', name: c.metadata!.name!, uid: c.metadata!.uid!, resourceVersion: c.metadata!.resourceVersion! });
const phase = (o: ApiObject): unknown => (o.status as { phase?: string } | undefined)?.phase;

async function expectBound(e: Env, claim: string, volume: string): Promise<void> {
  const c = await e.pvcs.get('default', claim);
  const v = await e.pvs.get('', volume);
  expect([phase(c), (c.spec as { volumeName?: string }).volumeName, phase(v)]).toEqual(['Bound', volume, 'Bound']);
  expect((v.spec as { claimRef: { uid: string } }).claimRef.uid).toBe(c.metadata!.uid);
  expect(c.metadata!.annotations!['pv.kubernetes.io/bind-completed']).toBe('yes');
  expect(c.status).toMatchObject({ capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'] });
}

describe('a bind cut short is finished by the next sync', () => {
  it('after the volume got its claimRef only', async () => {
    const e = await env();
    const c = (await e.pvcs.create('default', pvc('a'), W)).object;
    await e.pvs.create('', { ...pv('v'), metadata: { name: 'v', annotations: { 'pv.kubernetes.io/bound-by-controller': 'yes' } }, spec: { ...(pv('v').spec as object), claimRef: ref(c) } } as ApiObject, W);
    e.clock.advance(5_000);
    e.start();
    await e.settled();
    await expectBound(e, 'a', 'v');
    // the phase changed at the controller's (simulated) time
    expect((await e.pvs.get('', 'v')).status).toMatchObject({ lastPhaseTransitionTime: iso(T0 + 5_000) });
  });

  it('after the claim got its volumeName and annotations but not its status', async () => {
    const e = await env();
    const c = (await e.pvcs.create('default', { ...pvc('b'), metadata: { name: 'b', annotations: { 'pv.kubernetes.io/bind-completed': 'yes', 'pv.kubernetes.io/bound-by-controller': 'yes' } }, spec: { ...(pvc('b').spec as object), volumeName: 'w' } } as ApiObject, W)).object;
    const v = (await e.pvs.create('', { ...pv('w'), spec: { ...(pv('w').spec as object), claimRef: ref(c) } } as ApiObject, W)).object;
    await e.pvs.guaranteedUpdate('', 'w', { ...W, subresource: 'status' }, (cur) => ({ ...cur!, status: { phase: 'Bound' } }));
    expect(phase(v)).toBe('Pending');
    e.start();
    await e.settled();
    await expectBound(e, 'b', 'w');
  });
});

describe('phases', () => {
  it('a new volume is Pending since its creation, then Available; Released when its claim goes, each dated by the clock', async () => {
    const e = await env();
    const created = (await e.pvs.create('', pv('v'), W)).object;
    expect(created.status).toEqual({ phase: 'Pending', lastPhaseTransitionTime: iso(T0) });
    e.clock.advance(1_000);
    e.start();
    await e.settled();
    expect((await e.pvs.get('', 'v')).status).toEqual({ phase: 'Available', lastPhaseTransitionTime: iso(T0 + 1_000) });
    await e.pvcs.create('default', pvc('a'), W);
    await e.settled();
    await expectBound(e, 'a', 'v');
    e.clock.advance(60_000);
    await e.pvcs.delete('default', 'a', W);
    await e.settled();
    expect((await e.pvs.get('', 'v')).status).toEqual({ phase: 'Released', lastPhaseTransitionTime: iso(T0 + 61_000) });
  });

  it('frees a volume the controller bound to a claim that is bound to another volume', async () => {
    const e = await env();
    const c = (await e.pvcs.create('default', { ...pvc('a'), spec: { ...(pvc('a').spec as object), volumeName: 'mine' } } as ApiObject, W)).object;
    await e.pvs.create('', pv('mine'), W);
    await e.pvs.create('', { ...pv('stray'), metadata: { name: 'stray', annotations: { 'pv.kubernetes.io/bound-by-controller': 'yes' } }, spec: { ...(pv('stray').spec as object), claimRef: ref(c) } } as ApiObject, W);
    e.start();
    await e.settled();
    await expectBound(e, 'a', 'mine');
    const stray = await e.pvs.get('', 'stray');
    expect([phase(stray), (stray.spec as { claimRef?: unknown }).claimRef, stray.metadata!.annotations]).toEqual(['Available', undefined, undefined]);
  });

  it('gives a claim with no class the default StorageClass when no volume fits (retroactive default class)', async () => {
    const e = await env();
    await e.gs('storageclasses', 'storage.orch.io').create('', { apiVersion: 'storage.orch.io/v1', kind: 'StorageClass', metadata: { name: 'std', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } }, provisioner: 'example.com/x' } as ApiObject, W);
    const noClass = pvc('n');
    delete (noClass.spec as { storageClassName?: string }).storageClassName;
    await e.pvcs.create('default', noClass, W);
    await e.pvcs.create('default', pvc('empty'), W);
    e.start();
    await e.settled();
    const n = await e.pvcs.get('default', 'n');
    expect((n.spec as { storageClassName?: string }).storageClassName).toBe('std');
    expect(n.metadata!.annotations).toMatchObject({ 'volume.kubernetes.io/storage-provisioner': 'example.com/x' });
    // "" is a class choice: it keeps it
    expect((await e.pvcs.get('default', 'empty')).spec).toMatchObject({ storageClassName: '' });
  });
});

describe('protection finalizers', () => {
  it('a claim a scheduled pod names stays until the pod goes; a Bound volume until its claim goes', async () => {
    const e = await env();
    e.start();
    await e.pvs.create('', pv('v'), W);
    await e.pvcs.create('default', pvc('a'), W);
    await e.gs('pods').create('default', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'x' }], volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'a' } }] } } as ApiObject, W);
    await e.settled();
    await expectBound(e, 'a', 'v');
    expect((await e.pvcs.get('default', 'a')).metadata!.finalizers).toEqual(['kubernetes.io/pvc-protection']);
    expect((await e.pvs.get('', 'v')).metadata!.finalizers).toEqual(['kubernetes.io/pv-protection']);
    await e.pvs.delete('', 'v', W);
    await e.pvcs.delete('default', 'a', W);
    await e.settled();
    // both Terminating: the pod holds the claim, the claim holds the volume
    expect((await e.pvcs.get('default', 'a')).metadata!.deletionTimestamp).toBeDefined();
    expect(phase(await e.pvs.get('', 'v'))).toBe('Bound');
    await e.gs('pods').delete('default', 'p', { ...W, gracePeriodSeconds: 0 });
    await e.settled();
    await expect(e.pvcs.get('default', 'a')).rejects.toMatchObject({ code: 404 });
    await expect(e.pvs.get('', 'v')).rejects.toMatchObject({ code: 404 });
  });
});
