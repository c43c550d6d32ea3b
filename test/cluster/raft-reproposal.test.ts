// Writes in flight on the followers when the leader is cut off, then when the
// next leader is stopped (docs/raft.md "Re-proposing lost proposals"): the
// ones a leader took in and never got committed, and the ones forwarded to it
// after it was gone, are proposed again in the new leader's term. Every
// acknowledged write is on every member exactly once (a put of its own key:
// twice would make version 2), none fails with the 504 of the 7 s proposal
// timeout, and a 503 (certainly not applied) is not there.
// Three RaftStores over real gRPC on loopback with their logs on disk.

import { afterEach, describe, expect, it } from 'vitest';
import { RaftStore } from '../../src/store/raft-store.js';
import { clusterLayout, removeLayout } from '../helpers/cluster.js';
import { until } from '../helpers/memory-raft.js';
import { StoreUnavailableError } from '../../src/core/store-unavailable.js';

const names = ['m1', 'm2', 'm3'];
const enc = new TextEncoder();
const stores = new Map<string, RaftStore>();
let root: string | undefined;

afterEach(async () => {
  await Promise.all([...stores.values()].map((s) => s.close()));
  stores.clear();
  await removeLayout(root);
  root = undefined;
});

const put = (key: string) => ({ compare: [], success: [{ type: 'put' as const, key, value: enc.encode(key) }], failure: [] });

type Outcome = 'applied' | `failed ${number}: ${string}`;

/** writers on `members` that put their own keys one after another until stopped */
function writers(members: RaftStore[], perMember: number, tag: string) {
  const outcomes = new Map<string, Outcome>();
  let stopped = false;
  const write = async (s: RaftStore, key: string): Promise<void> => {
    outcomes.set(key, await s.txn(put(key)).then(
      (): Outcome => 'applied',
      (e: unknown): Outcome => (e instanceof StoreUnavailableError ? `failed ${e.code}: ${e.message}` : `failed 0: ${String(e)}`),
    ));
  };
  const loops = members.flatMap((s) =>
    Array.from({ length: perMember }, async (_, w) => {
      for (let i = 0; !stopped; i++) await write(s, `/w/${tag}/${s.status().name}/${w}/${i}`);
    }),
  );
  return {
    outcomes,
    /** `n` more writes on each member at once, beside the loops */
    burst(n: number): void {
      for (const s of members) for (let i = 0; i < n; i++) loops.push(write(s, `/w/${tag}/${s.status().name}/burst/${i}`));
    },
    applied: () => [...outcomes.values()].filter((o) => o === 'applied').length,
    async stop(): Promise<void> {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

async function stableLeader(): Promise<RaftStore> {
  let leader: RaftStore | undefined;
  await until(() => {
    const live = [...stores.values()];
    const leaders = live.filter((s) => s.status().role === 'leader');
    leader = leaders.length === 1 && live.every((s) => s.status().leader === leaders[0]!.status().name) ? leaders[0] : undefined;
    return leader !== undefined;
  });
  return leader!;
}

/** every acknowledged key is on every live member once; no 504 time-out; a 503 one is nowhere */
async function checkOutcomes(outcomes: Map<string, Outcome>): Promise<void> {
  const last = await (await stableLeader()).txn(put('/w/last'));
  const live = [...stores.values()];
  await Promise.all(live.map((s) => s.waitForRevision(last.revision, 10_000)));
  const failures = [...outcomes.values()].filter((o) => o !== 'applied');
  expect(failures.filter((o) => o.startsWith('failed 504'))).toEqual([]);
  for (const [key, o] of outcomes) {
    for (const s of live) {
      const kvs = s.range({ key }).kvs;
      if (o === 'applied') expect({ key, member: s.status().name, version: kvs[0]?.version }).toEqual({ key, member: s.status().name, version: 1 });
      else if (o.startsWith('failed 503')) expect({ key, kvs: kvs.length }).toEqual({ key, kvs: 0 });
    }
  }
}

describe('writes in flight on the followers across a leader change (3 members, gRPC)', () => {
  it('are applied exactly once when the leader is partitioned, and again when the next one is stopped', async () => {
    const layout = await clusterLayout(names, 'orch-reproposal-');
    root = layout.root;
    for (const name of names) {
      // 20 ms ticks: an election within 200-400 ms; the default 7 s proposal timeout
      stores.set(name, await RaftStore.open({ name, initialCluster: layout.cluster, dataDir: `${root}/${name}`, tickMs: 20, electionTick: 10, compactIntervalMs: 0 }));
    }
    const first = await stableLeader();
    const term1 = first.status().term;
    const followers = [...stores.values()].filter((s) => s !== first);
    const retriedBefore = followers.reduce((n, s) => n + s.metrics.proposalsRetried, 0);

    // 1. the leader is cut off from both followers while they write
    const round1 = writers(followers, 4, 'r1');
    await until(() => round1.applied() >= 40);
    first.faults.set({ partitioned: ['*'] });
    // the followers still take it for the leader (no tick has run since): these are forwarded to it and lost
    expect(followers.map((s) => s.status().leader)).toEqual(followers.map(() => first.status().name));
    round1.burst(4);
    await until(() => followers.some((s) => s.status().role === 'leader' && s.status().term > term1));
    const afterChange = round1.applied();
    await until(() => round1.applied() >= afterChange + 40);
    await round1.stop();
    first.faults.clear();
    await checkOutcomes(round1.outcomes);
    // the partition lost writes the followers had forwarded, and they were proposed again
    const retried1 = followers.reduce((n, s) => n + s.metrics.proposalsRetried, 0) - retriedBefore;
    expect(retried1).toBeGreaterThan(0);

    // 2. the next leader is stopped while the other two members write
    const second = await stableLeader();
    const term2 = second.status().term;
    const others = [...stores.values()].filter((s) => s !== second);
    const round2 = writers(others, 4, 'r2');
    await until(() => round2.applied() >= 40);
    const secondName = second.status().name;
    stores.delete(secondName);
    await second.close();
    await until(() => others.some((s) => s.status().role === 'leader' && s.status().term > term2));
    const afterStop = round2.applied();
    await until(() => round2.applied() >= afterStop + 40);
    await round2.stop();
    await checkOutcomes(round2.outcomes);
    expect(round2.outcomes.size).toBeGreaterThan(80);
  });
});
