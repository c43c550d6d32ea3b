// The in-process controllers in a 3-member Raft cluster (in-process members
// over real gRPC on loopback, as raft-store.test.ts starts them): only the
// leader's controllers act (src/controllers/leader-gate.ts), and when the
// leader goes away the new leader finishes a namespace deletion the old one
// left pending (the controllers are level-driven and re-scan on start).

import { mkdtemp, rm } from 'node:fs/promises';
import { freePort } from '../helpers/ports.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SchemaAdmission } from '../../src/registry/admission.js';
import { StatusError } from '../../src/core/errors.js';
import { GenericStore, decodeObject, type WriteOptions } from '../../src/registry/generic-store.js';
import { builtinDefinitions, sharedDefinitions } from '../../src/registry/kinds/index.js';
import { Registry } from '../../src/registry/registry.js';
import type { ApiObject, ResourceDefinition } from '../../src/registry/types.js';
import { GarbageCollector } from '../../src/controllers/garbage-collector.js';
import { type LeaderGate, runWhileLeader } from '../../src/controllers/leader-gate.js';
import { NamespaceController } from '../../src/controllers/namespace.js';
import { RaftStore, RaftUnavailableError } from '../../src/store/raft-store.js';

const API_DOMAIN = 'orch.io';
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
  if (root) await rm(root, { recursive: true, force: true });
  root = undefined;
});

async function startMember(name: string, cluster: Record<string, string>, dir: string): Promise<Member> {
  const store = await RaftStore.open({ name, initialCluster: cluster, dataDir: join(dir, name), tickMs: 20, electionTick: 10, compactIntervalMs: 0 });
  const defs = sharedDefinitions(API_DOMAIN);
  const registry = new Registry(API_DOMAIN, defs, builtinDefinitions(API_DOMAIN));
  const admission = new SchemaAdmission(defs);
  const counter = { writes: 0 };
  const plain = new Map<ResourceDefinition, GenericStore>();
  const counted = new Map<ResourceDefinition, GenericStore>();
  const storeFor = (def: ResourceDefinition): GenericStore => {
    if (!plain.has(def)) plain.set(def, new GenericStore(def, store, admission));
    return plain.get(def)!;
  };
  const controllerStoreFor = (def: ResourceDefinition): GenericStore => {
    if (!counted.has(def)) counted.set(def, new CountingStore(def, store, admission, counter));
    return counted.get(def)!;
  };
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

async function stableLeader(): Promise<Member> {
  for (let i = 0; i < 500; i++) {
    const live = [...members.values()];
    const leaders = live.filter((m) => m.store.status().role === 'leader');
    if (leaders.length === 1 && live.every((m) => m.store.status().leader === leaders[0]!.name)) return leaders[0]!;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('no stable leader');
}

async function eventually(what: string, ok: () => boolean, attempts = 500): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (ok()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** a write that is retried while leadership settles (RaftUnavailableError is retryable) */
async function retry<T>(fn: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (err) {
      const retryable = err instanceof RaftUnavailableError || (err instanceof StatusError && (err.code === 503 || err.code === 504));
      if (!retryable || i >= 50) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
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
    root = await mkdtemp(join(tmpdir(), 'orch-ctrl-'));
    const names = ['m1', 'm2', 'm3'];
    const cluster: Record<string, string> = {};
    for (const n of names) cluster[n] = `127.0.0.1:${await freePort()}`;
    await Promise.all(names.map((n) => startMember(n, cluster, root!)));
    const leader = await stableLeader();
    await eventually('the leader gate to start', () => leader.gates.every((g) => g.running));

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
    await eventually('the namespace contents to be deleted', () => {
      const held = read(leader, 'configmaps', 'doomed', 'held');
      return read(leader, 'configmaps', 'doomed', 'plain') === undefined && held?.metadata?.deletionTimestamp !== undefined;
    });
    await eventually('the garbage collector to delete the orphan', () => read(leader, 'configmaps', 'default', 'orphaned') === undefined);
    // every member sees it all, and the namespace is still pending
    for (const m of members.values()) {
      await eventually(`${m.name} to apply the deletions`, () => read(m, 'configmaps', 'doomed', 'plain') === undefined);
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
    const next = await stableLeader();
    expect(next).not.toBe(leader);
    await eventually('the new leader gate to start', () => next.gates.every((g) => g.running));
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
    await eventually('the namespace to be removed', () => read(next, 'namespaces', '', 'doomed') === undefined);
    expect(next.counter.writes).toBeGreaterThan(before);
    for (const m of members.values()) {
      if (m === next) continue;
      expect(m.counter.writes, `controller writes on follower ${m.name}`).toBe(0);
    }
  }, 60_000);
});
