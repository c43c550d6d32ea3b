// What a Kubernetes client sees of a leader change (docs/raft.md "Re-proposing
// lost proposals", docs/scale.md): three real `orch server` processes, clients
// on the two followers renewing their own object as a node agent renews its
// Lease (a PUT of the object it last got back, with its resourceVersion),
// while the leader is partitioned from both (the fault-injection endpoint)
// and later rejoins. No renewal answers 504 — before, those forwarded to the
// old leader waited for the 7 s proposal timeout and answered 504 "timed out
// waiting for the write to commit", and the client's next renewal met a 409
// when that write had in fact been applied — and the object holds exactly the
// acknowledged renewals: its counter equals the number answered 200.

import { afterAll, describe, expect, it } from 'vitest';
import { ChaosCluster, sleep, type Member } from './chaos-cluster.js';

const cluster = new ChaosCluster(50);
afterAll(() => cluster.close(), 60_000);

const path = (name: string) => `/api/v1/namespaces/default/configmaps/${name}`;

interface Renewer {
  name: string;
  acked: number;
  statuses: number[];
}

/** renews ConfigMap `name` on member `m` until `stop()`: PUT with the last resourceVersion; 503/429 retried as a client does */
function renew(m: Member, name: string, stop: () => boolean): { renewer: Renewer; done: Promise<void> } {
  const renewer: Renewer = { name, acked: 0, statuses: [] };
  const done = (async () => {
    let obj = (await cluster.api(m, 'POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { n: '0' } })).body;
    while (!stop()) {
      const body = { ...obj, data: { n: String(renewer.acked + 1) } };
      const r = await cluster.api(m, 'PUT', path(name), body, 30_000).catch(() => ({ status: 0, body: {} }));
      renewer.statuses.push(r.status);
      if (r.status === 200) {
        renewer.acked += 1;
        obj = r.body;
      } else if (r.status !== 503 && r.status !== 429) break; // anything else ends the run (and fails the test)
      else await sleep(50);
    }
  })();
  return { renewer, done };
}

async function raftz(m: Member): Promise<{ leader: string; term: number; metrics: Record<string, number> }> {
  const r = await cluster.api(m, 'GET', '/raftz');
  return r.body as { leader: string; term: number; metrics: Record<string, number> };
}

describe('Lease-style renewals through the followers while the leader is partitioned (3 processes)', () => {
  it('answers none with 504 (nor 409), and the object holds exactly the acknowledged renewals', async () => {
    await cluster.init();
    for (const m of cluster.members) cluster.start(m);
    await Promise.all(cluster.members.map((m) => cluster.waitServing(m)));
    const leader = (await cluster.findLeader())!;
    const followers = cluster.members.filter((m) => m !== leader);
    const term = (await raftz(leader)).term;
    let stopped = false;
    const runs = followers.flatMap((f) => Array.from({ length: 4 }, (_, i) => renew(f, `renew-${f.name}-${i}`, () => stopped)));
    while (runs.reduce((n, r) => n + r.renewer.acked, 0) < 40) await sleep(20);
    await cluster.faults(leader, { partitioned: ['*'] });
    // the followers elect a new leader; the renewals go on through it
    for (;;) {
      const zs = await Promise.all(followers.map((f) => raftz(f)));
      if (zs.every((z) => z.leader !== '' && z.leader !== leader.name && z.term > term)) break;
      await sleep(50);
    }
    const atChange = runs.reduce((n, r) => n + r.renewer.acked, 0);
    while (runs.reduce((n, r) => n + r.renewer.acked, 0) < atChange + 40) await sleep(20);
    await cluster.faults(leader);
    stopped = true;
    await Promise.all(runs.map((r) => r.done));

    const retried = (await Promise.all(followers.map((f) => raftz(f)))).reduce((n, z) => n + (z.metrics.proposalsRetried ?? 0), 0);
    console.log(`reproposal-http: ${JSON.stringify({ renewals: runs.map((r) => r.renewer.acked), retried })}`);
    for (const { renewer } of runs) {
      expect({ name: renewer.name, failed: renewer.statuses.filter((s) => s !== 200 && s !== 503 && s !== 429) }).toEqual({ name: renewer.name, failed: [] });
      // read where it was written: that member applied each acknowledged renewal before answering
      const f = followers.find((m) => renewer.name.startsWith(`renew-${m.name}-`))!;
      const obj = (await cluster.api(f, 'GET', path(renewer.name))).body as { data: { n: string } };
      expect({ name: renewer.name, n: Number(obj.data.n) }).toEqual({ name: renewer.name, n: renewer.acked });
    }
  }, 300_000);
});
