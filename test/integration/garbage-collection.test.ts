// The garbage collector against a real server (spec 000 §2.6
// propagationPolicy, orphanDependents; docs/deletion.md): Background,
// Orphan, Foreground, and a restart in the middle of a foreground deletion.

import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { LocalStore } from '../../src/store/local-store.js';
import { eventually } from '../helpers/eventually.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const CMS = '/api/v1/namespaces/default/configmaps';
type Obj = { metadata: { name: string; uid: string; finalizers?: string[]; deletionTimestamp?: string; ownerReferences?: { uid: string }[] } };

let t: TestServer | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

async function create(s: TestServer, name: string, meta: Record<string, unknown> = {}): Promise<Obj> {
  const r = await s.request('POST', CMS, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...meta } } });
  expect(r.status, r.text).toBe(201);
  return r.json<Obj>();
}

function ownedBy(owner: Obj, block = true): Record<string, unknown> {
  return {
    ownerReferences: [
      { apiVersion: 'v1', kind: 'ConfigMap', name: owner.metadata.name, uid: owner.metadata.uid, blockOwnerDeletion: block },
    ],
  };
}

async function get(s: TestServer, name: string): Promise<Obj | undefined> {
  const r = await s.request('GET', `${CMS}/${name}`);
  if (r.status === 404) return undefined;
  expect(r.status, r.text).toBe(200);
  return r.json<Obj>();
}

describe('garbage collection', () => {
  it('Background (the default): the owner goes at once, then its dependents', async () => {
    t = await startTestServer();
    const s = t;
    const owner = await create(s, 'bg-owner');
    await create(s, 'bg-dep1', ownedBy(owner));
    await create(s, 'bg-dep2', ownedBy(owner, false));
    const keep = await create(s, 'bg-other');
    // a dependent with a second, living owner only loses the reference
    await create(s, 'bg-shared', {
      ownerReferences: [
        { apiVersion: 'v1', kind: 'ConfigMap', name: 'bg-owner', uid: owner.metadata.uid },
        { apiVersion: 'v1', kind: 'ConfigMap', name: 'bg-other', uid: keep.metadata.uid },
      ],
    });

    const r = await s.request('DELETE', `${CMS}/bg-owner`);
    expect(r.status).toBe(200);
    expect(await get(s, 'bg-owner')).toBeUndefined();
    await eventually(async () => !(await get(s, 'bg-dep1')) && !(await get(s, 'bg-dep2')), 'dependents deleted');
    await eventually(async () => (await get(s, 'bg-shared'))?.metadata.ownerReferences?.length === 1, 'dangling reference dropped');
    expect((await get(s, 'bg-shared'))!.metadata.ownerReferences![0]!.uid).toBe(keep.metadata.uid);
  });

  it('records an Event on each dependent it deletes, and OwnerRefInvalidNamespace for a cluster-scoped dependent of a namespaced owner (docs/events.md)', async () => {
    t = await startTestServer();
    const s = t;
    const owner = await create(s, 'ev-owner');
    const dep = await create(s, 'ev-dep', ownedBy(owner));
    const cr = await s.request('POST', '/apis/rbac.authorization.orch.io/v1/clusterroles', {
      body: { apiVersion: 'rbac.authorization.orch.io/v1', kind: 'ClusterRole', metadata: { name: 'ev-cluster-dep', ownerReferences: ownedBy(owner).ownerReferences }, rules: [] },
    });
    expect(cr.status, cr.text).toBe(201);
    expect((await s.request('DELETE', `${CMS}/ev-owner`)).status).toBe(200);
    type Ev = { reason: string; type: string; message: string; involvedObject: { kind: string; name: string; uid?: string; namespace?: string }; source: { component: string } };
    const events = async (): Promise<Ev[]> => (await s.request('GET', '/api/v1/namespaces/default/events')).json<{ items: Ev[] }>().items;
    await eventually(async () => (await events()).some((e) => e.reason === 'GarbageCollected' && e.involvedObject.name === 'ev-dep'), 'the GarbageCollected Event');
    const gcEv = (await events()).find((e) => e.reason === 'GarbageCollected' && e.involvedObject.name === 'ev-dep')!;
    expect(gcEv).toMatchObject({ type: 'Normal', involvedObject: { kind: 'ConfigMap', namespace: 'default', uid: dep.metadata.uid }, source: { component: 'orch-server' } });
    expect(gcEv.message).toContain(`ConfigMap ev-owner (uid ${owner.metadata.uid}) is gone`);
    expect(await get(s, 'ev-dep')).toBeUndefined();
    // the cluster-scoped dependent cannot have a namespaced owner: Warning (kube's reason and wording), then collected
    await eventually(async () => (await events()).some((e) => e.reason === 'OwnerRefInvalidNamespace' && e.involvedObject.name === 'ev-cluster-dep'), 'the OwnerRefInvalidNamespace Event');
    const warn = (await events()).find((e) => e.reason === 'OwnerRefInvalidNamespace')!;
    expect(warn.type).toBe('Warning');
    expect(warn.message).toBe(`ownerRef [v1/ConfigMap, namespace: , name: ev-owner, uid: ${owner.metadata.uid}] does not exist in namespace ""`);
    await eventually(async () => (await s.request('GET', '/apis/rbac.authorization.orch.io/v1/clusterroles/ev-cluster-dep')).status === 404, 'the cluster-scoped dependent collected');
    // the same Events through events.orch.io/v1 (one store, two versions)
    const v1 = (await s.request('GET', '/apis/events.orch.io/v1/namespaces/default/events?fieldSelector=reason%3DGarbageCollected')).json<{ items: { regarding: { name: string }; reportingController: string }[] }>();
    expect(v1.items.map((e) => [e.regarding.name, e.reportingController])).toContainEqual(['ev-dep', 'orch-server']);
  });

  it('a dependent created for an owner that does not exist is collected', async () => {
    t = await startTestServer();
    const s = t;
    await create(s, 'stray', {
      ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'ghost', uid: '00000000-0000-0000-0000-000000000000' }],
    });
    await eventually(async () => !(await get(s, 'stray')), 'stray dependent collected');
  });

  it('Orphan: dependents stay, without the owner reference; then the owner goes', async () => {
    t = await startTestServer();
    const s = t;
    const owner = await create(s, 'or-owner');
    await create(s, 'or-dep1', ownedBy(owner));
    await create(s, 'or-dep2', ownedBy(owner));
    const r = await s.request('DELETE', `${CMS}/or-owner`, { body: { propagationPolicy: 'Orphan' } });
    expect(r.status).toBe(200);
    expect(r.json<Obj>().metadata.finalizers).toContain('orphan');
    await eventually(async () => !(await get(s, 'or-owner')), 'owner removed');
    for (const n of ['or-dep1', 'or-dep2']) {
      const d = await get(s, n);
      expect(d).toBeDefined();
      expect(d!.metadata.ownerReferences).toBeUndefined();
    }
  });

  it('legacy orphanDependents=true orphans too', async () => {
    t = await startTestServer();
    const s = t;
    const owner = await create(s, 'lo-owner');
    await create(s, 'lo-dep', ownedBy(owner));
    expect((await s.request('DELETE', `${CMS}/lo-owner?orphanDependents=true`)).status).toBe(200);
    await eventually(async () => !(await get(s, 'lo-owner')), 'owner removed');
    expect((await get(s, 'lo-dep'))?.metadata.ownerReferences).toBeUndefined();
  });

  it('Foreground: the owner stays with foregroundDeletion until its blocking dependents are gone', async () => {
    t = await startTestServer();
    const s = t;
    const owner = await create(s, 'fg-owner');
    await create(s, 'fg-dep', ownedBy(owner));
    const held = await create(s, 'fg-held', { ...ownedBy(owner), finalizers: ['example.com/hold'] });
    // a grandchild: the dependent is itself deleted in the foreground
    await create(s, 'fg-grandchild', ownedBy(held));

    const r = await s.request('DELETE', `${CMS}/fg-owner`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground' } });
    expect(r.status).toBe(200);
    const marked = r.json<Obj>();
    expect(marked.metadata.finalizers).toEqual(['foregroundDeletion']);
    expect(typeof marked.metadata.deletionTimestamp).toBe('string');

    await eventually(async () => !(await get(s, 'fg-dep')), 'plain dependent deleted');
    await eventually(async () => !(await get(s, 'fg-grandchild')), 'grandchild deleted');
    await eventually(async () => typeof (await get(s, 'fg-held'))?.metadata.deletionTimestamp === 'string', 'held dependent marked');
    // the owner is visible, Terminating, with foregroundDeletion, while a blocking dependent remains
    const during = await get(s, 'fg-owner');
    expect(during?.metadata.finalizers).toEqual(['foregroundDeletion']);

    const p = await s.request('PATCH', `${CMS}/fg-held`, {
      body: { metadata: { finalizers: null } },
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    expect(p.status, p.text).toBe(200);
    await eventually(async () => !(await get(s, 'fg-owner')), 'owner removed after its dependents');
    expect(await get(s, 'fg-held')).toBeUndefined();
  });

  it('a restart in the middle of a foreground deletion finishes it; nothing is left half-deleted', async () => {
    const first = await startTestServer();
    t = first;
    const owner = await create(first, 'rs-owner');
    await create(first, 'rs-dep', ownedBy(owner));
    await create(first, 'rs-held', { ...ownedBy(owner), finalizers: ['example.com/hold'] });
    const r = await first.request('DELETE', `${CMS}/rs-owner`, { body: { propagationPolicy: 'Foreground' } });
    expect(r.status).toBe(200);
    await eventually(async () => !(await get(first, 'rs-dep')), 'first dependent deleted');
    await eventually(async () => typeof (await get(first, 'rs-held'))?.metadata.deletionTimestamp === 'string', 'held dependent marked');

    await first.stop(true);
    t = undefined;
    const second = await startTestServer({ dataDir: first.dataDir });
    t = second;
    const ready = await second.request('GET', '/readyz/poststarthook/start-garbage-collector');
    expect(ready.status).toBe(200);

    // mid-way state survived the restart
    expect((await get(second, 'rs-owner'))?.metadata.finalizers).toEqual(['foregroundDeletion']);
    expect((await get(second, 'rs-held'))?.metadata.deletionTimestamp).toBeDefined();

    const p = await second.request('PATCH', `${CMS}/rs-held`, {
      body: { metadata: { finalizers: null } },
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    expect(p.status, p.text).toBe(200);
    await eventually(async () => !(await get(second, 'rs-owner')), 'owner removed after restart');
    const list = await second.request('GET', `${CMS}`);
    const names = list.json<{ items: Obj[] }>().items.map((i) => i.metadata.name);
    expect(names.filter((n) => n.startsWith('rs-'))).toEqual([]);
  });

  it('an owner deleted while the server was down has its dependents collected on start', async () => {
    const first = await startTestServer();
    t = first;
    const owner = await create(first, 'down-owner');
    await create(first, 'down-dep', ownedBy(owner));
    await first.stop(true);
    t = undefined;
    // remove the owner while no server runs, as a crash right after the delete would leave it
    const store = await LocalStore.open(join(first.dataDir, 'store'));
    await store.txn({ compare: [], success: [{ type: 'delete', key: '/registry/core/configmaps/default/down-owner' }], failure: [] });
    await store.close();
    const again = await startTestServer({ dataDir: first.dataDir });
    t = again;
    await eventually(async () => !(await get(again, 'down-dep')), 'dependent collected');
  });
});
