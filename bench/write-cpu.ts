// CPU per create through the full API path, in one process: the server
// (TLS in-process, authn, Node,RBAC authz, admission, managed fields, the
// garbage collector) and its HTTPS client. On a shared machine wall-clock
// throughput moves with the neighbours; this process's CPU time per create
// moves much less, so A/B comparisons of a hot-path change use this
// (docs/architecture.md "Write path cost"). The client's share is the same
// on both sides of an A/B, so differences are the server's.
//
//   npx tsx bench/write-cpu.ts [creates=3000] [--watched] [--rounds 3] [--lease-renewals] [--pods]
//
// --watched: a watch on the collection is open, so each write also feeds the
// watch cache (decode) and is fanned out to one watcher.
// --lease-renewals: instead of creates, node heartbeats' Lease renewals (one
// PUT of the Lease last returned with a new renewTime, 64 Leases in
// orch-node-lease, as bench/nodes.ts's agents do; docs/scale.md).
// --pods: creates of a small pod (bound to a node, so no scheduler work) instead
// of 1 KiB ConfigMaps: the path with the pod admission plugins (ServiceAccount,
// DefaultTolerationSeconds, Priority, LimitRanger) and the pod's defaulting.

import { connect } from 'node:tls';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../src/server/server.js';

const creates = Number(process.argv[2] && !process.argv[2].startsWith('--') ? process.argv[2] : 3000);
const watched = process.argv.includes('--watched');
const ri = process.argv.indexOf('--rounds');
const rounds = ri >= 0 ? Number(process.argv[ri + 1]) : 3;
const leaseRenewals = process.argv.includes('--lease-renewals');
const pods = process.argv.includes('--pods');

const cpuUs = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-write-cpu-'));
  const server = await startServer({ dataDir: join(dir, 'data'), bindAddress: '127.0.0.1', securePort: 0, apiDomain: 'orch.io', tlsWorkers: 0, log: () => {} });
  const agent = new Agent({ keepAlive: true, maxSockets: 64, ca: server.caPem, cert: server.adminCertPem, key: server.adminKeyPem });
  const value = 'x'.repeat(1024);
  let seq = 0;
  const post = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify(
        pods
          ? { apiVersion: 'v1', kind: 'Pod', metadata: { name: `p-${seq++}`, labels: { app: 'bench' } }, spec: { nodeName: 'bench-node', containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', ports: [{ containerPort: 8080 }] }] } }
          : { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c-${seq++}` }, data: { v: value } },
      );
      const req = request(
        { host: '127.0.0.1', port: server.port, method: 'POST', path: `/api/v1/namespaces/default/${pods ? 'pods' : 'configmaps'}`, agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } },
        (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 201 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  // one Lease per loop, renewed with the object the last PUT returned (no conflicts)
  const leases: Record<string, unknown>[] = [];
  const leasePath = (i: number) => `/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases/node-${i}`;
  const put = (i: number, status: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const lease = leases[i] ?? { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: `node-${i}`, namespace: 'orch-node-lease' }, spec: { holderIdentity: `node-${i}`, leaseDurationSeconds: 40 } };
      const body = JSON.stringify({ ...lease, spec: { ...(lease.spec as object), renewTime: new Date().toISOString().replace('Z', '000Z') } });
      const req = request({ host: '127.0.0.1', port: server.port, method: 'PUT', path: leasePath(i), agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          if (res.statusCode !== status) return reject(new Error(`status ${res.statusCode}`));
          leases[i] = JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>;
          resolve();
        });
      });
      req.on('error', reject);
      req.end(body);
    });
  const run = async (n: number): Promise<void> => {
    let left = n;
    await Promise.all(
      Array.from({ length: 64 }, async (_, i) => {
        while (left-- > 0) await (leaseRenewals ? put(i, 200) : post());
      }),
    );
  };
  let watch: ReturnType<typeof connect> | undefined;
  let received = 0;
  try {
    if (watched) {
      watch = connect({ host: '127.0.0.1', port: server.port, ca: server.caPem, cert: server.adminCertPem, key: server.adminKeyPem, servername: 'localhost' }, () =>
        watch!.write(`GET /api/v1/namespaces/default/configmaps?watch=1 HTTP/1.1\r\nHost: localhost\r\nAccept: application/json\r\n\r\n`),
      );
      watch.on('data', (d: Buffer) => (received += d.length));
    }
    // the Leases (a PUT of an absent Lease creates it)
    if (leaseRenewals) await Promise.all(Array.from({ length: 64 }, (_, i) => put(i, 201)));
    // the ServiceAccount plugin needs the namespace's default account, which a controller creates
    for (let i = 0; pods && i < 100; i++) {
      const sa = await new Promise<number>((resolve, reject) =>
        request({ host: '127.0.0.1', port: server.port, path: '/api/v1/namespaces/default/serviceaccounts/default', agent }, (res) => (res.resume(), resolve(res.statusCode ?? 0))).on('error', reject).end(),
      );
      if (sa === 200) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await run(500); // warm-up: JIT, connections, caches
    const perRound: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const c0 = cpuUs();
      const t0 = performance.now();
      await run(creates);
      perRound.push(Math.round((cpuUs() - c0) / creates));
      void t0;
    }
    const sorted = [...perRound].sort((a, b) => a - b);
    // group commit: how many creates share one synced log batch (one thread-pool hop each)
    const st = (server.store as { stats?: () => { syncBatches: number; entriesWritten: number } }).stats?.();
    const entriesPerSync = st ? Math.round((st.entriesWritten / st.syncBatches) * 10) / 10 : undefined;
    process.stdout.write(
      `${JSON.stringify({ bench: 'write-cpu', kind: leaseRenewals ? 'Lease' : pods ? 'Pod' : 'ConfigMap', [leaseRenewals ? 'renewals' : 'creates']: creates, rounds, watched, [leaseRenewals ? 'cpuUsPerRenewal' : 'cpuUsPerCreate']: { median: sorted[Math.floor(sorted.length / 2)], min: sorted[0], rounds: perRound }, watchBytes: received, entriesPerSync })}\n`,
    );
  } finally {
    watch?.destroy();
    agent.destroy();
    await server.shutdown();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
