// The in-process controllers in a 3-member Raft cluster (in-process members
// over real gRPC on loopback, as raft-store.test.ts starts them): only the
// leader's controllers act (src/controllers/leader-gate.ts), and when the
// leader goes away the new leader finishes a namespace deletion the old one
// left pending (the controllers are level-driven and re-scan on start).

import { eventually } from '../helpers/eventually.js';
import { clusterLayout, openMember, removeLayout, retry, stableLeader } from '../helpers/cluster.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { SchemaAdmission } from '../../src/registry/admission.js';
import { GenericStore, decodeObject, type WriteOptions } from '../../src/registry/generic-store.js';
import type { Registry } from '../../src/registry/registry.js';
import type { ApiObject, ResourceDefinition } from '../../src/registry/types.js';
import { GarbageCollector } from '../../src/controllers/garbage-collector.js';
import { type LeaderGate, runWhileLeader } from '../../src/controllers/leader-gate.js';
import { NamespaceController } from '../../src/controllers/namespace.js';
import type { RaftStore } from '../../src/store/raft-store.js';

const HOLD = 'example.com/hold';


/** a GenericStore that counts the writes made through it: the controllers' actions on one member */
class CountingStore extends GenericStore {
  constructor(
    def: ResourceDefinition,
    store: RaftStore,
    admission: SchemaAdmission,
    private readonly counter: { writes: number },
  ) {
    super(def, store, admission);
  }
  override delete(...args: Parameters<GenericStore['delete']>): ReturnType<GenericStore['delete']> {
    this.counter.writes++;
    return super.delete(...args);
  }
  override guaranteedUpdate(...args: Parameters<GenericStore['guaranteedUpdate']>): ReturnType<GenericStore['guaranteedUpdate']> {
    this.counter.writes++;
    return super.guaranteedUpdate(...args);
  }
}

interface Member {
  name: string;
  store: RaftStore;
  registry: Registry;
  /** GenericStores for the test's own requests (not counted) */
  storeFor(def: ResourceDefinition): GenericStore;
  /** writes the member's controllers made */
  counter: { writes: number };
  gates: LeaderGate[];
  close(): Promise<void>;
}

let root: string | undefined;
const members = new Map<string, Member>();

afterEach(async () => {
  await Promise.all([...members.values()].map((m) => m.close()));
  members.clear();
  await removeLayout(root);
  root = undefined;
});

async function startMember(name: string, cluster: Record<string, string>, dir: string): Promise<Member> {
  const base = await openMember(name, cluster, dir);
  const { store, registry, admission } = base;
  const counter = { writes: 0 };
  const storeFor = base.storesBy();
  const controllerStoreFor = base.storesBy((def) => new CountingStore(def, store, admission, counter));
  // wired as src/server/server.ts wires them
  const gates = [
    runWhileLeader(store, new NamespaceController(store, registry, controllerStoreFor)),
    runWhileLeader(store, new GarbageCollector(store, registry, controllerStoreFor)),
  ];
  let closing: Promise<void> | undefined;
  const m: Member = {
    name,
    store,
    registry,
    storeFor,
    counter,
    gates,
    close() {
      closing ??= (async () => {
        for (const g of gates) g.stop();
        await store.close();
      })();
      return closing;
    },
  };
  members.set(name, m);
  return m;
}

const W: WriteOptions = { dryRun: false };

function def(m: Member, resource: string): ResourceDefinition {
  return m.registry.lookup('', 'v1', resource)!;
}

function read(m: Member, resource: string, namespace: string, name: string): ApiObject | undefined {
  const kv = m.storeFor(def(m, resource)).readRaw(namespace, name);
  return kv ? decodeObject(kv) : undefined;
}

describe('controllers in a 3-member cluster', () => {
  it('act on the leader only, and a new leader finishes a pending namespace deletion', async () => {
    const names = ['m1', 'm2', 'm3'];
    const layout = await clusterLayout(names, 'orch-ctrl-');
    root = layout.root;
    const cluster = layout.cluster;
    await Promise.all(names.map((n) => startMember(n, cluster, root!)));
    const leader = await stableLeader(() => members.values());
    await eventually(() => leader.gates.every((g) => g.running), 'the leader gate to start');

    // a namespace with an object its own finalizer holds, and a plain object
    const ns = leader.storeFor(def(leader, 'namespaces'));
    const cms = leader.storeFor(def(leader, 'configmaps'));
    await retry(() => ns.create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } }, W));
    await retry(() => cms.create('doomed', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', finalizers: [HOLD] } }, W));
    await retry(() => cms.create('doomed', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'plain' } }, W));
    // and a dependent whose owner is gone: work for the garbage collector
    await retry(() =>
      cms.create(
        'default',
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'orphaned', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'gone', uid: 'no-such-uid' }] },
        },
        W,
      ),
    );
    await retry(() => ns.delete('', 'doomed', { dryRun: false }));

    // the leader's namespace controller deletes the contents; the held one stays Terminating
    await eventually(() => {
      const held = read(leader, 'configmaps', 'doomed', 'held');
      return read(leader, 'configmaps', 'doomed', 'plain') === undefined && held?.metadata?.deletionTimestamp !== undefined;
    }, 'the namespace contents to be deleted');
    await eventually(() => read(leader, 'configmaps', 'default', 'orphaned') === undefined, 'the garbage collector to delete the orphan');
    // every member sees it all, and the namespace is still pending
    for (const m of members.values()) {
      await eventually(() => read(m, 'configmaps', 'doomed', 'plain') === undefined, `${m.name} to apply the deletions`);
      expect(read(m, 'namespaces', '', 'doomed')?.metadata?.deletionTimestamp).toBeDefined();
    }
    expect(leader.counter.writes).toBeGreaterThan(0);
    for (const m of members.values()) {
      if (m === leader) continue;
      expect(m.counter.writes, `controller writes on follower ${m.name}`).toBe(0);
      expect(m.gates.some((g) => g.running)).toBe(false);
    }

    // the leader goes away with the deletion pending
    await leader.close();
    members.delete(leader.name);
    const next = await stableLeader(() => members.values());
    expect(next).not.toBe(leader);
    await eventually(() => next.gates.every((g) => g.running), 'the new leader gate to start');
    const before = next.counter.writes;
    expect(read(next, 'namespaces', '', 'doomed')).toBeDefined();

    // release the held object: the new leader's controller finishes the namespace
    const nextCms = next.storeFor(def(next, 'configmaps'));
    await retry(() =>
      nextCms.guaranteedUpdate('doomed', 'held', W, (cur) => {
        const o = cur as ApiObject;
        o.metadata!.finalizers = [];
        return o;
      }),
    );
    await eventually(() => read(next, 'namespaces', '', 'doomed') === undefined, 'the namespace to be removed');
    expect(next.counter.writes).toBeGreaterThan(before);
    for (const m of members.values()) {
      if (m === next) continue;
      expect(m.counter.writes, `controller writes on follower ${m.name}`).toBe(0);
    }
  }, 60_000);
});
