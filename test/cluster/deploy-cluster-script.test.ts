// The README's 3-member quick start, as a user runs it: `deploy/cluster.sh up`
// must report the cluster up (exit 0) once every member serves, and its
// kubeconfig must reach every member. It once reported "did not become ready"
// on a working cluster: its readiness check read /raftz as compact JSON, which
// the server answers curl pretty-printed. A member that exits at start is
// reported with its reason right away. A member's peer port takes Raft
// streams only from a member's identity, not from a node's certificate of the
// same CA.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { PeerTransport } from '../../src/raft/transport.js';
import { issueClientCertificate, loadPki } from '../../src/server/pki.js';
import { runKubectl } from '../helpers/kubectl.js';
import { freePortRun } from '../helpers/ports.js';

const exec = promisify(execFile);
const REPO = new URL('../..', import.meta.url).pathname;

describe('deploy/cluster.sh', () => {
  let env: NodeJS.ProcessEnv = {};
  let dir = '';

  const script = async (...args: string[]) => {
    try {
      const r = await exec('bash', ['deploy/cluster.sh', ...args], { cwd: REPO, env, timeout: 120_000 });
      return { code: 0, out: r.stdout, err: r.stderr };
    } catch (e) {
      const x = e as { code?: number; stdout?: string; stderr?: string };
      return { code: x.code ?? -1, out: x.stdout ?? '', err: x.stderr ?? '' };
    }
  };

  afterAll(async () => {
    if (dir) {
      await script('down', '--purge');
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('starts 3 members, reports them up, and its kubeconfig reaches each', async () => {
    dir = await mkdtemp(join(tmpdir(), 'orch-cluster-sh-'));
    env = { ...process.env, ORCH_CLUSTER_DIR: join(dir, 'cluster'), ORCH_API_BASE: String(await freePortRun(3)), ORCH_PEER_BASE: String(await freePortRun(3)) };

    const up = await script('up');
    expect(up.code, `${up.out}\n${up.err}`).toBe(0);
    expect(up.out).toContain('cluster is up');

    const kubeconfig = join(dir, 'cluster', 'kubeconfig');
    const created = await runKubectl(kubeconfig, ['--context', 'm3', 'create', 'configmap', 'from-m3', '--from-literal=a=b']);
    expect(created.code, created.stderr).toBe(0);
    // a write on one member, read on another (writes are forwarded to the leader; reads are consistent)
    const read = await runKubectl(kubeconfig, ['--context', 'm1', 'get', 'configmap', 'from-m3', '-o', 'jsonpath={.data.a}']);
    expect(read.code, read.stderr).toBe(0);
    expect(read.stdout).toBe('b');

    // one line per member, as `etcdctl endpoint status -w table`: every member names the same leader,
    // which is the one member whose role is leader, and none is behind the others for long
    const status = await script('status');
    expect(status.code, status.err).toBe(0);
    const [head, ...rows] = status.out.trim().split('\n').map((l) => l.trim().split(/\s+/));
    expect(head).toEqual(['NAME', 'ROLE', 'LEADER', 'TERM', 'COMMIT', 'APPLIED']);
    expect(rows.map((r) => r[0])).toEqual(['m1', 'm2', 'm3']);
    const leader = rows[0]![2]!;
    expect(rows.map((r) => r[2])).toEqual([leader, leader, leader]);
    expect(rows.filter((r) => r[1] === 'leader').map((r) => r[0])).toEqual([leader]);
    for (const r of rows) expect(Number(r[5])).toBeGreaterThan(0);
    const json = await script('status', '--json');
    const leaders = [...json.out.matchAll(/"leader": ?"(m[123])"/g)].map((m) => m[1]);
    expect(leaders).toEqual([leader, leader, leader]);

    // a node's client certificate (the cluster CA signs those too) opening a Raft stream to m1 is refused
    const pki = await loadPki(join(dir, 'cluster', 'pki'));
    const node = await issueClientCertificate(pki, { commonName: 'system:node:intruder', organizations: ['system:nodes'] });
    const m1 = `127.0.0.1:${env.ORCH_PEER_BASE}`;
    const intruder = await PeerTransport.start({
      self: 'x', listen: '127.0.0.1:0', peers: { m1 }, onMessage: () => undefined, initialBackoffMs: 20, maxBackoffMs: 50,
      tls: { caPem: pki.ca.certPem, serverCertPem: node.certPem, serverKeyPem: node.keyPem, clientCertPem: node.certPem, clientKeyPem: node.keyPem },
    });
    // m1's document comes first in `status --json`
    const refused = async () => Number(/"refusedPeers": ?(\d+)/.exec((await script('status', '--json')).out)?.[1] ?? 0);
    try {
      for (let i = 0; i < 200 && (await refused()) === 0; i++) {
        intruder.send([{ type: 'heartbeat', from: 'x', to: 'm1', term: 1_000_000, commit: 0 }]);
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      await intruder.close();
    }
    expect(await refused()).toBeGreaterThan(0);
    // the forged term reached nobody: the cluster's term is unchanged
    const after = (await script('status')).out.trim().split('\n').slice(1).map((l) => l.trim().split(/\s+/));
    expect(after.map((r) => r[3])).toEqual(rows.map((r) => r[3]));

    const down = await script('down');
    expect(down.code, down.err).toBe(0);
    expect(down.out.match(/stopped/g)).toHaveLength(3);
  }, 180_000);

  it('`up` with a flag its members refuse names the member and its reason (it once waited a minute for "did not become ready")', async () => {
    // the data kept by `down` was created with the default API domain (the test above)
    const up = await script('up', '--', '--api-domain', 'k8s.io');
    expect(up.code).toBe(1);
    expect(up.err).toMatch(/^m\d exited: orch: cannot start: --api-domain k8s.io: this data was created with --api-domain orch.io/m);
    expect(up.err).toContain('cluster did not come up');
    const down = await script('down');
    expect(down.code, down.err).toBe(0);
  }, 90_000);
});
