// The garbage collector on the controller runtime (src/controllers/garbage-collector.ts,
// docs/controllers.md): its graph follows an informer per registered kind —
// kinds registered after the start included, kinds removed released — and a
// failed action is retried from the WorkQueue on the injected Clock.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { StatusError } from '../../src/core/errors.js';
import { GarbageCollector } from '../../src/controllers/garbage-collector.js';
import { prefixRange, sharedInformers } from '../../src/controllers/runtime/index.js';
import { SchemaAdmission } from '../../src/registry/admission.js';
import { GenericStore } from '../../src/registry/generic-store.js';
import { builtinDefinitions, sharedDefinitions } from '../../src/registry/kinds/index.js';
import { Registry } from '../../src/registry/registry.js';
import type { ApiObject, ResourceDefinition } from '../../src/registry/types.js';
import { LocalStore } from '../../src/store/local-store.js';

const CM_PREFIX = '/registry/core/configmaps/';

/** a generic store whose deletes of `failName` fail while `failing` is above zero (counting down) */
class FlakyStore extends GenericStore {
  failName = '';
  failing = 0;
  deletes = 0;
  override delete(...args: Parameters<GenericStore['delete']>): ReturnType<GenericStore['delete']> {
    this.deletes++;
    if (this.failing > 0 && args[1] === this.failName) {
      this.failing--;
      return Promise.reject(new StatusError(503, 'ServiceUnavailable', 'injected'));
    }
    return super.delete(...args);
  }
}

interface Env {
  store: LocalStore;
  registry: Registry;
  cmDef: ResourceDefinition;
  cms: FlakyStore;
  clock: ManualClock;
  gc: GarbageCollector;
}

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

/** a registry without ConfigMaps at first (`withConfigMaps` false): they are registered later, as a CRD's kind is */
async function setup(withConfigMaps: boolean): Promise<Env> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-gc-'));
  const store = await LocalStore.open(join(dir, 'store'));
  const defs = sharedDefinitions('orch.io');
  const all = builtinDefinitions('orch.io');
  const cmDef = all.find((d) => d.group === '' && d.resource === 'configmaps')!;
  const registry = new Registry('orch.io', defs, withConfigMaps ? all : all.filter((d) => d !== cmDef));
  const admission = new SchemaAdmission(defs);
  const cms = new FlakyStore(cmDef, store, admission);
  const stores = new Map<ResourceDefinition, GenericStore>([[cmDef, cms]]);
  const storeFor = (def: ResourceDefinition): GenericStore => {
    if (!stores.has(def)) stores.set(def, new GenericStore(def, store, admission));
    return stores.get(def)!;
  };
  const clock = new ManualClock(1_000_000);
  const gc = new GarbageCollector(store, registry, storeFor, () => {}, undefined, clock);
  cleanup = async () => {
    gc.stop();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  };
  return { store, registry, cmDef, cms, clock, gc };
}

async function createCm(cms: GenericStore, name: string, owner?: ApiObject): Promise<ApiObject> {
  const metadata: Record<string, unknown> = { name };
  if (owner) metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'ConfigMap', name: owner.metadata!.name, uid: owner.metadata!.uid }];
  return (await cms.create('default', { apiVersion: 'v1', kind: 'ConfigMap', metadata } as ApiObject, { dryRun: false })).object;
}

/** polls on real time (the collector's own clock is not involved: its work is not delayed) */
async function until(ok: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (ok()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`not reached: ${what}`);
}

describe('garbage collector on the runtime', () => {
  it('starts an informer for a kind registered after the start and releases it when the kind is removed', async () => {
    const { registry, cmDef, cms, gc, store } = await setup(false);
    gc.start();
    // the collector's informers are metadata-only (kube's metadata informers)
    const informer = sharedInformers(store).informer({ ...prefixRange(CM_PREFIX), metadataOnly: true });
    expect(informer.hasSynced()).toBe(false);
    expect(gc.hasSynced()).toBe(true);

    registry.add(cmDef);
    expect(informer.hasSynced()).toBe(true);
    const owner = await createCm(cms, 'owner');
    await createCm(cms, 'dep', owner);
    await cms.delete('default', 'owner', { dryRun: false });
    await until(() => cms.readRaw('default', 'dep') === undefined, 'the dependent collected');

    registry.remove('', 'v1', 'configmaps');
    expect(informer.hasSynced()).toBe(false);
    gc.stop();
    expect(gc.hasSynced()).toBe(false);
  });

  it('retries a failed delete after the backoff on its clock, not before', async () => {
    const { cms, clock, gc } = await setup(true);
    gc.start();
    const owner = await createCm(cms, 'owner');
    await createCm(cms, 'dep', owner);
    cms.failName = 'dep';
    cms.failing = 1;
    const before = cms.deletes;
    await cms.delete('default', 'owner', { dryRun: false });
    const attempts = before + 1; // the owner's own delete
    await until(() => cms.deletes === attempts + 1, 'the first (failing) attempt');
    for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
    expect(cms.readRaw('default', 'dep')).toBeDefined();
    expect(cms.deletes).toBe(attempts + 1);

    clock.advance(199);
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(cms.readRaw('default', 'dep')).toBeDefined();
    clock.advance(1);
    await until(() => cms.readRaw('default', 'dep') === undefined, 'the retried delete');
  });

  it('an Orphan deletion goes through the orphan queue: the dependent loses the reference and stays', async () => {
    const { cms, gc } = await setup(true);
    gc.start();
    const owner = await createCm(cms, 'owner');
    await createCm(cms, 'dep', owner);
    await cms.delete('default', 'owner', { dryRun: false, propagationPolicy: 'Orphan' });
    await until(() => cms.readRaw('default', 'owner') === undefined, 'the owner removed once orphaned');
    const dep = cms.decode(cms.readRaw('default', 'dep')!);
    expect(dep.metadata?.ownerReferences).toBeUndefined();
  });

  it('keeps graph nodes only for objects with owners or waiting for dependents, and still collects the dependents of an owner without one', async () => {
    const { cms, gc } = await setup(true);
    gc.start();
    const owner = await createCm(cms, 'owner');
    for (let i = 0; i < 5; i++) await createCm(cms, `plain-${i}`);
    expect(gc.graphSize).toBe(0);
    await createCm(cms, 'dep', owner);
    await createCm(cms, 'dep2', owner);
    expect(gc.graphSize).toBe(2);
    // Background: the owner had no node; its dependents are found by the deleted object's uid
    await cms.delete('default', 'owner', { dryRun: false });
    await until(() => cms.readRaw('default', 'dep') === undefined && cms.readRaw('default', 'dep2') === undefined, 'the dependents collected');
    expect(gc.graphSize).toBe(0);
    expect(cms.readRaw('default', 'plain-0')).toBeDefined();

    // Foreground: the owner gets a node while it waits, and loses it once gone
    const fg = await createCm(cms, 'fg-owner');
    await createCm(cms, 'fg-dep', fg);
    await cms.delete('default', 'fg-owner', { dryRun: false, propagationPolicy: 'Foreground' });
    await until(() => cms.readRaw('default', 'fg-owner') === undefined, 'the foreground owner removed');
    expect(cms.readRaw('default', 'fg-dep')).toBeUndefined();
    expect(gc.graphSize).toBe(0);
  });
});
