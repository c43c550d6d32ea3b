// /readyz of cluster members (src/server/readiness.ts, issue #15 item 1):
// three in-process members over real gRPC and HTTPS on loopback. A member cut
// off from the quorum (a follower, then the leader) stops being ready while
// the two that keep the quorum stay ready, and is ready again after the heal.
// Partitions go through each member's fault-injection endpoint
// (src/raft/faults.ts), as the chaos test drives real processes.

import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensurePki } from '../../src/server/pki.js';
import { type RunningServer, startServer } from '../../src/server/server.js';
import type { RaftStore } from '../../src/store/raft-store.js';
import { eventually } from '../helpers/eventually.js';
import { freePort } from '../helpers/ports.js';
import { rawRequest } from '../helpers/server.js';

interface Member {
  name: string;
  server: RunningServer;
  faultPort: number;
}

function setFaults(m: Member, rules: unknown | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const data = rules === undefined ? '' : JSON.stringify(rules);
    const req = httpRequest({ host: '127.0.0.1', port: m.faultPort, method: rules === undefined ? 'DELETE' : 'PUT', path: '/faults', headers: { 'Content-Length': Buffer.byteLength(data) } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`faults ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(data);
  });
}

const readyz = (m: Member, path = '/readyz?verbose') => rawRequest(m.server, 'GET', path);
const leaderOf = (m: Member): string => (m.server.store as RaftStore).status().leader;

let root: string | undefined;
const members: Member[] = [];

afterAll(async () => {
  await Promise.all(members.map((m) => m.server.shutdown().catch(() => undefined)));
  if (root) await rm(root, { recursive: true, force: true });
});

describe('readiness of cluster members', () => {
  it('a member that cannot reach the quorum is not ready; it is again after the heal', async () => {
    root = await mkdtemp(join(tmpdir(), 'orch-readyz-'));
    const names = ['m1', 'm2', 'm3'];
    const peers: Record<string, string> = {};
    for (const n of names) peers[n] = `127.0.0.1:${await freePort()}`;
    const pkiDir = join(root, 'pki');
    await ensurePki(pkiDir, { hosts: ['localhost', '127.0.0.1', '::1'] });
    const started = await Promise.all(
      names.map(async (name) => {
        const faultPort = await freePort();
        const server = await startServer({
          dataDir: join(root!, name),
          pkiDir,
          bindAddress: '127.0.0.1',
          securePort: 0,
          apiDomain: 'orch.io',
          log: () => undefined,
          cluster: { name, initialCluster: peers, tickMs: 20, electionTick: 10, faultInjectionPort: faultPort },
        });
        return { name, server, faultPort };
      }),
    );
    members.push(...started);

    for (const m of members) {
      await eventually(async () => (await readyz(m)).status === 200, `${m.name} ready`);
      const r = await readyz(m);
      for (const check of ['etcd-readiness', 'watch-cache', 'informer-sync']) expect(r.text).toContain(`[+]${check} ok`);
    }

    // one follower cut off from both others
    const leaderName = leaderOf(members[0]!);
    const follower = members.find((m) => m.name !== leaderName)!;
    const leader = members.find((m) => m.name === leaderName)!;
    await setFaults(follower, { partitioned: ['*'] });
    // not ready as soon as one check fails (the `etcd` check can be first); wait for the ReadIndex one
    await eventually(async () => (await readyz(follower)).text.includes('[-]etcd-readiness failed'), 'isolated follower not ready', 20_000);
    const isolated = await readyz(follower);
    expect(isolated.status).toBe(500);
    expect(isolated.text).toContain('[-]etcd-readiness failed: reason withheld');
    expect(isolated.text).toContain('readyz check failed');
    const single = await readyz(follower, '/readyz/etcd-readiness');
    expect(single.status).toBe(500);
    expect(single.text).toMatch(/^internal server error: /);
    // the two that keep the quorum keep serving and stay ready
    for (const m of members.filter((x) => x !== follower)) expect((await readyz(m)).status).toBe(200);
    await setFaults(follower, undefined);
    await eventually(async () => (await readyz(follower)).status === 200, 'healed follower ready', 20_000);

    // the leader cut off: it steps down (check-quorum), the others elect a new one
    await setFaults(leader, { partitioned: ['*'] });
    await eventually(async () => (await readyz(leader)).status === 500, 'isolated leader not ready', 20_000);
    const others = members.filter((x) => x !== leader);
    for (const m of others) await eventually(async () => (await readyz(m)).status === 200, `${m.name} ready under a new leader`, 20_000);
    expect(others.map(leaderOf)).not.toContain(leader.name);
    // the new leader started its controllers (informer-sync) before calling itself ready
    const newLeader = others.find((m) => m.name === leaderOf(m))!;
    expect((await readyz(newLeader)).text).toContain('[+]informer-sync ok');
    await setFaults(leader, undefined);
    await eventually(async () => (await readyz(leader)).status === 200, 'healed former leader ready', 20_000);
  }, 120_000);
});
