// The node lifecycle controller in a 3-member Raft cluster (in-process
// members over real gRPC on loopback, as controllers.test.ts starts them):
// only the leader's controller acts, and a leader change does not mark every
// node Unknown — the new leader gives each node a fresh grace period, even
// though heartbeats stopped for a while around the change — while a node
// that really stays silent is still marked by the new leader.

import { afterEach, describe, expect, it } from 'vitest';
import { type GenericStore, decodeObject } from '../../src/registry/generic-store.js';
import { type LeaderGate, runWhileLeader } from '../../src/controllers/leader-gate.js';
import { NodeLifecycleController } from '../../src/controllers/node-lifecycle/controller.js';
import type { RaftStore } from '../../src/store/raft-store.js';
import { clusterLayout, openMember, removeLayout, retry as retryWrite, stableLeader } from '../helpers/cluster.js';
import { eventually } from '../helpers/eventually.js';

const D = 'orch.io';
const GRACE_MS = 4_000;
const NODES = Array.from({ length: 20 }, (_, i) => `n${i}`);

interface Member {
  name: string;
  store: RaftStore;
  gs(resource: string, group?: string): GenericStore;
  controller: NodeLifecycleController;
  gate: LeaderGate;
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

/** node name → times it was seen with Ready=Unknown, on any member */
const unknownSeen = new Map<string, number>();

async function startMember(name: string, cluster: Record<string, string>, dir: string): Promise<Member> {
  const base = await openMember(name, cluster, dir, D);
  const { store, registry } = base;
  const storeFor = base.storesBy();
  const gs = (resource: string, group = '') => storeFor(registry.lookup(group, 'v1', resource)!);
  const controller = new NodeLifecycleController({ store, nodes: () => gs('nodes'), leases: () => gs('leases', `coordination.${D}`), apiDomain: D, monitorGracePeriodMs: GRACE_MS, monitorPeriodMs: 500 });
  const gate = runWhileLeader(store, controller);
  const nodePrefix = gs('nodes').rangeKeys('');
  store.onApplied((w) => {
    for (const ev of w.events) {
      if (ev.type !== 'put' || ev.kv.key < nodePrefix.key || ev.kv.key >= nodePrefix.end) continue;
      const n = decodeObject(ev.kv);
      const ready = (n.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.find((c) => c.type === 'Ready');
      if (ready?.status === 'Unknown') unknownSeen.set(n.metadata!.name!, (unknownSeen.get(n.metadata!.name!) ?? 0) + 1);
    }
  });
  let closing: Promise<void> | undefined;
  const m: Member = {
    name,
    store,
    gs,
    controller,
    gate,
    close() {
      closing ??= (async () => {
        gate.stop();
        await store.close();
      })();
      return closing;
    },
  };
  members.set(name, m);
  return m;
}

/** the controller races the test's heartbeats: a 409 is retried too */
const retry = <T>(fn: () => Promise<T>): Promise<T> => retryWrite(fn, { attempts: 100, alsoRetry: [409] });

const nowRfc = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

describe('node lifecycle in a 3-member cluster', () => {
  it('a leader change does not flap the nodes; a silent node is still marked by the new leader', async () => {
    unknownSeen.clear();
    const names = ['m1', 'm2', 'm3'];
    const layout = await clusterLayout(names, 'orch-nlc-cluster-');
    root = layout.root;
    const cluster = layout.cluster;
    await Promise.all(names.map((n) => startMember(n, cluster, root!)));
    let leader = await stableLeader(() => members.values());
    await eventually(() => leader.gate.running, 'the leader gate', 20_000);

    const ns = leader.gs('namespaces');
    await retry(() => ns.create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'orch-node-lease' } }, { dryRun: false }));
    for (const n of NODES) {
      const t = nowRfc();
      await retry(() => leader.gs('nodes').create('', { apiVersion: 'v1', kind: 'Node', metadata: { name: n }, status: { conditions: [{ type: 'Ready', status: 'True', reason: 'NodeAgentReady', message: 'ok', lastHeartbeatTime: t, lastTransitionTime: t }] } }, { dryRun: false }));
    }

    // the node agents: a Lease renewal per node every 500 ms through whoever leads
    let beating = new Set(NODES);
    let stopped = false;
    const heartbeats = (async () => {
      while (!stopped) {
        const l = [...members.values()].find((m) => m.store.status().role === 'leader');
        if (l) {
          await Promise.all(
            [...beating].map((n) =>
              l.gs('leases', `coordination.${D}`)
                .guaranteedUpdate('orch-node-lease', n, { dryRun: false, createIfAbsent: true }, (cur) => ({
                  ...(cur ?? { apiVersion: `coordination.${D}/v1`, kind: 'Lease', metadata: { name: n, namespace: 'orch-node-lease' } }),
                  spec: { holderIdentity: n, leaseDurationSeconds: 40, renewTime: new Date().toISOString().replace('Z', '000Z') },
                }))
                .catch(() => undefined),
            ),
          );
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
    try {
      await new Promise((r) => setTimeout(r, GRACE_MS + 1_000));
      expect(unknownSeen.size).toBe(0);
      for (const m of members.values()) if (m !== leader) expect(m.gate.running).toBe(false);

      // heartbeats stop, then the leader goes away; they resume only after the new leader started
      beating = new Set();
      await new Promise((r) => setTimeout(r, GRACE_MS / 2));
      await leader.close();
      members.delete(leader.name);
      leader = await stableLeader(() => members.values());
      await eventually(() => leader.gate.running, 'the new leader gate', 20_000);
      expect(leader.controller.nodeView('n0')).toMatchObject({ unreachable: false });
      await new Promise((r) => setTimeout(r, GRACE_MS / 4));
      beating = new Set(NODES.slice(1));
      await new Promise((r) => setTimeout(r, GRACE_MS * 2));
      // n0 never came back: marked by the new leader; no other node was ever Unknown
      await eventually(() => (unknownSeen.get('n0') ?? 0) > 0, 'n0 Unknown', 20_000);
      expect([...unknownSeen.keys()]).toEqual(['n0']);
      expect(leader.controller.stats.markedUnknown).toBe(1);
    } finally {
      stopped = true;
      await heartbeats;
    }
  }, 90_000);
});
