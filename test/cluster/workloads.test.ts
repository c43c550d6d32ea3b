// The workload controllers in a three-member cluster (in-process members over
// real gRPC and HTTPS on loopback): only the leader's controllers act, so a
// Deployment gets exactly one ReplicaSet and its replicas; when the leader
// goes, the new leader's controllers list again and carry on (a scale made
// after the change is honoured, nothing is created twice; a Job's pod that
// finishes after the change is counted by the new leader and replaced once).

import { mkdtemp, rm } from 'node:fs/promises';
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
}

let root: string | undefined;
const members: Member[] = [];
const leaderOf = (m: Member): string => (m.server.store as RaftStore).status().leader;

afterAll(async () => {
  await Promise.all(members.map((m) => m.server.shutdown().catch(() => undefined)));
  if (root) await rm(root, { recursive: true, force: true });
});

async function count(m: Member, path: string): Promise<number> {
  const r = await rawRequest(m.server, 'GET', path);
  expect(r.status, r.text).toBe(200);
  return r.json<{ items: unknown[] }>().items.length;
}

describe('workload controllers in a cluster', () => {
  it('one ReplicaSet and its replicas; after a leader change the new leader carries on', async () => {
    root = await mkdtemp(join(tmpdir(), 'orch-workloads-'));
    const names = ['w1', 'w2', 'w3'];
    const peers: Record<string, string> = {};
    for (const n of names) peers[n] = `127.0.0.1:${await freePort()}`;
    const pkiDir = join(root, 'pki');
    await ensurePki(pkiDir, { hosts: ['localhost', '127.0.0.1', '::1'] });
    members.push(
      ...(await Promise.all(
        names.map(async (name) => ({
          name,
          server: await startServer({
            dataDir: join(root!, name),
            pkiDir,
            bindAddress: '127.0.0.1',
            securePort: 0,
            apiDomain: 'orch.io',
            log: () => undefined,
            cluster: { name, initialCluster: peers, tickMs: 20, electionTick: 10 },
          }),
        })),
      )),
    );
    for (const m of members) await eventually(async () => (await rawRequest(m.server, 'GET', '/readyz')).status === 200, `${m.name} ready`, 30_000);
    const leaderName = leaderOf(members[0]!);
    const leader = members.find((m) => m.name === leaderName)!;
    const others = members.filter((m) => m !== leader);

    const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments';
    const body = {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' },
      spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
    };
    const created = await rawRequest(others[0]!.server, 'POST', DEPLOYS, { body });
    expect(created.status, created.text).toBe(201);
    const PODS = '/api/v1/namespaces/default/pods?labelSelector=app%3Dweb';
    const RSS = '/apis/apps/v1/namespaces/default/replicasets?labelSelector=app%3Dweb';
    await eventually(async () => (await count(others[1]!, PODS)) === 2, 'two pods', 30_000);
    expect(await count(others[1]!, RSS)).toBe(1);

    const JOBS = '/apis/batch/v1/namespaces/default/jobs';
    const JOB_PODS = '/api/v1/namespaces/default/pods?labelSelector=batch.kubernetes.io%2Fjob-name%3Dbatch';
    const job = await rawRequest(others[0]!.server, 'POST', JOBS, {
      body: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'batch' }, spec: { completions: 3, parallelism: 2, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } },
    });
    expect(job.status, job.text).toBe(201);
    await eventually(async () => (await count(others[1]!, JOB_PODS)) === 2, 'two Job pods', 30_000);

    await leader.server.shutdown();
    members.splice(members.indexOf(leader), 1);
    await eventually(() => others.some((m) => leaderOf(m) === m.name && m.name !== leaderName), 'a new leader', 30_000);
    const scaled = await rawRequest(others[0]!.server, 'PATCH', `${DEPLOYS}/web`, { body: { spec: { replicas: 4 } }, headers: { 'content-type': 'application/merge-patch+json' } });
    expect(scaled.status, scaled.text).toBe(200);
    await eventually(async () => (await count(others[1]!, PODS)) === 4, 'four pods under the new leader', 30_000);
    await eventually(async () => {
      const r = await rawRequest(others[1]!.server, 'GET', `${DEPLOYS}/web`);
      const s = r.json<{ status?: { replicas?: number; observedGeneration?: number } }>().status;
      return s?.replicas === 4 && s.observedGeneration === 2;
    }, 'status from the new leader', 30_000);
    expect(await count(others[1]!, RSS)).toBe(1);
    expect(await count(others[0]!, PODS)).toBe(4);

    // one Job pod succeeds under the new leader: counted once, the third pod made once
    const jobPods = (await rawRequest(others[0]!.server, 'GET', JOB_PODS)).json<{ items: { metadata: { name: string } }[] }>().items;
    const done = await rawRequest(others[0]!.server, 'PATCH', `/api/v1/namespaces/default/pods/${jobPods[0]!.metadata.name}/status`, {
      body: { status: { phase: 'Succeeded' } }, headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(done.status, done.text).toBe(200);
    await eventually(async () => {
      const s = (await rawRequest(others[1]!.server, 'GET', `${JOBS}/batch`)).json<{ status?: { succeeded?: number; active?: number } }>().status;
      return s?.succeeded === 1 && s.active === 2;
    }, 'the Job counted by the new leader', 30_000);
    expect(await count(others[0]!, JOB_PODS)).toBe(3);
  }, 120_000);
});
