// In-process Raft cluster members for the tests of test/cluster/ (real gRPC
// on loopback, as raft-store.test.ts starts them): the member's store, the
// registry and admission of a server, a leader wait and a retry for writes
// while leadership settles. Each test adds its own controllers on top.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StatusError } from '../../src/core/errors.js';
import { SchemaAdmission } from '../../src/registry/admission.js';
import { GenericStore } from '../../src/registry/generic-store.js';
import { builtinDefinitions, sharedDefinitions } from '../../src/registry/kinds/index.js';
import { Registry } from '../../src/registry/registry.js';
import type { ResourceDefinition } from '../../src/registry/types.js';
import { RaftStore, RaftUnavailableError } from '../../src/store/raft-store.js';
import { freePort } from './ports.js';

export const API_DOMAIN = 'orch.io';

/** what every member has: its Raft store and a server's registry and admission */
export interface MemberBase {
  name: string;
  store: RaftStore;
  registry: Registry;
  admission: SchemaAdmission;
  /** one GenericStore per definition, made by `make` (a plain GenericStore unless given) */
  storesBy(make?: (def: ResourceDefinition) => GenericStore): (def: ResourceDefinition) => GenericStore;
}

/** a temporary data directory and the peer addresses of `names`, each on a free loopback port */
export async function clusterLayout(names: string[], prefix: string): Promise<{ root: string; cluster: Record<string, string> }> {
  const root = await mkdtemp(join(tmpdir(), prefix));
  const cluster: Record<string, string> = {};
  for (const n of names) cluster[n] = `127.0.0.1:${await freePort()}`;
  return { root, cluster };
}

export async function removeLayout(root: string | undefined): Promise<void> {
  if (root) await rm(root, { recursive: true, force: true });
}

/** opens member `name` of `cluster` with its data under `dir`/`name` (20 ms ticks, no compaction) */
export async function openMember(name: string, cluster: Record<string, string>, dir: string, apiDomain = API_DOMAIN): Promise<MemberBase> {
  const store = await RaftStore.open({ name, initialCluster: cluster, dataDir: join(dir, name), tickMs: 20, electionTick: 10, compactIntervalMs: 0 });
  const defs = sharedDefinitions(apiDomain);
  const registry = new Registry(apiDomain, defs, builtinDefinitions(apiDomain));
  const admission = new SchemaAdmission(defs);
  return {
    name,
    store,
    registry,
    admission,
    storesBy(make = (def) => new GenericStore(def, store, admission)) {
      const cache = new Map<ResourceDefinition, GenericStore>();
      return (def) => {
        if (!cache.has(def)) cache.set(def, make(def));
        return cache.get(def)!;
      };
    },
  };
}

/** the one leader every live member follows (10 s at most) */
export async function stableLeader<M extends { name: string; store: RaftStore }>(members: () => Iterable<M>): Promise<M> {
  for (let i = 0; i < 500; i++) {
    const live = [...members()];
    const leaders = live.filter((m) => m.store.status().role === 'leader');
    if (leaders.length === 1 && live.every((m) => m.store.status().leader === leaders[0]!.name)) return leaders[0]!;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('no stable leader');
}

/**
 * A write retried while leadership settles: RaftUnavailableError and 503/504
 * are retryable, and so are the Status codes in `alsoRetry` (409 where a
 * controller races the test).
 */
export async function retry<T>(fn: () => Promise<T>, o: { attempts?: number; alsoRetry?: number[] } = {}): Promise<T> {
  const attempts = o.attempts ?? 50;
  const codes = [503, 504, ...(o.alsoRetry ?? [])];
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (err) {
      const retryable = err instanceof RaftUnavailableError || (err instanceof StatusError && codes.includes(err.code));
      if (!retryable || i >= attempts) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
