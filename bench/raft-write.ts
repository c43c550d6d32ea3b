// 3-member write throughput and latency: orch (3 real processes on loopback,
// writes through the HTTPS API of the leader) side by side with a 3-member
// etcd cluster on loopback (writes through etcd's v3 JSON gateway), same
// number of writes, same value size, at 1 and 64 writes in flight.
//
//   sh bench/setup-etcd.sh            # once, as root: installs etcd-server if missing
//   npx tsx bench/raft-write.ts [writes=2000] [valueSize=1024]
//
// Prints one JSON document; ratio = orch / etcd (throughput: >1 is faster;
// latency: <1 is faster), and per member what it did per write (fsyncs,
// entries per fsync, Raft messages, gRPC frames, propose->apply time).
//
// What one write is on each side (docs/raft.md "Performance"):
//   orch: HTTPS POST of a ConfigMap (JSON) to the leader's API, client
//         certificate authentication, admission/defaulting, the object encoded
//         into a create-if-absent store transaction, one Raft entry; peers
//         talk gRPC over mutual TLS; reply: the created object (JSON).
//   etcd: HTTPS POST (client certificate) to the leader's v3 JSON gateway of a
//         create-if-absent txn (compare create_revision = 0, put) of the same
//         value size; peers talk mutual TLS; reply: the txn header.
//         BENCH_ETCD_PLAIN=1: plain HTTP everywhere and a bare put.
// Both fsync their log on every member before acknowledging.

import { freePort } from '../test/helpers/ports.js';
import { etcdPeerCert } from './etcd-cluster.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const writes = Number(process.argv[2] ?? 2000);
const valueSize = Number(process.argv[3] ?? 1024);
// profiling/iteration knobs: extra node flags for the orch members (e.g.
// "--cpu-prof --cpu-prof-dir=/tmp/prof") and which sides to run ("orch", "etcd" or both)
const memberNodeArgs = (process.env.ORCH_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
const sides = (process.env.BENCH_SIDES ?? 'orch,etcd').split(',');
// BENCH_MEMBER_LOGS=1 shows the orch members' output
// BENCH_INFLIGHT=1,64: the concurrency levels to run
const inFlights = (process.env.BENCH_INFLIGHT ?? '1,64').split(',').map(Number);

interface Stats {
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
}

function stats(lat: number[], elapsedMs: number): Stats {
  const s = [...lat].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? 0;
  return { opsPerSec: Math.round((lat.length / elapsedMs) * 1000), p50Ms: +q(0.5).toFixed(3), p99Ms: +q(0.99).toFixed(3) };
}


const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** runs `total` calls of `one(i)` with `inFlight` concurrent callers */
async function drive(total: number, inFlight: number, one: (i: number) => Promise<void>): Promise<Stats> {
  const lat: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < total) {
        const i = next++;
        const s = performance.now();
        await one(i);
        lat.push(performance.now() - s);
      }
    }),
  );
  return stats(lat, performance.now() - t0);
}

function httpCall(
  mod: typeof request | typeof httpRequest,
  opts: Record<string, unknown>,
  body: string,
  expect: number,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = mod({ ...opts, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        if (res.statusCode === expect) resolve(text);
        else reject(new Error(`status ${res.statusCode}: ${text.slice(0, 200)}`));
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

interface Raftz {
  role: string;
  metrics: Record<string, number>;
  transport?: Record<string, number>;
}

/** what one member did per write during a phase (from /raftz counter deltas) */
function perWrite(before: Raftz, after: Raftz, n: number): Record<string, number> {
  const d = (k: string) => (after.metrics[k] ?? 0) - (before.metrics[k] ?? 0);
  const t = (k: string) => (after.transport?.[k] ?? 0) - (before.transport?.[k] ?? 0);
  const r = (x: number) => +x.toFixed(3);
  const syncs = d('storageSyncs');
  return {
    readies: r(d('readies') / n),
    fsyncs: r(syncs / n),
    entriesPerFsync: r(syncs ? d('entriesPersisted') / syncs : 0),
    fsyncMs: r(syncs ? d('storageSyncMs') / syncs : 0),
    messagesSent: r(d('messagesSent') / n),
    framesSent: r(t('frames') / n),
    ...(d('proposalsCommitted') > 0 ? { proposeToApplyMs: r(d('proposeToApplyMs') / d('proposalsCommitted')) } : {}),
  };
}

/** orch's shared PKI (CA, serving and admin certificates), used by both clusters */
function makePki(pki: string): Promise<void> {
  return new Promise<void>((res, rej) =>
    spawn(process.execPath, ['--import', 'tsx', 'deploy/init-pki.ts', pki], { cwd: REPO, stdio: 'ignore' }).on('exit', (c) => (c === 0 ? res() : rej(new Error('init-pki failed')))),
  );
}

async function benchOrch(root: string, pki: string): Promise<{ stats: Record<string, Stats>; perWrite: Record<string, Record<string, Record<string, number>>> }> {
  const names = ['m1', 'm2', 'm3'];
  const ports = await Promise.all(names.map(async () => ({ api: await freePort(), peer: await freePort() })));
  const ic = names.map((n, i) => `${n}=127.0.0.1:${ports[i].peer}`).join(',');
  const procs: ChildProcess[] = [];
  try {
    for (const [i, n] of names.entries()) {
      await cp(pki, join(root, n, 'pki'), { recursive: true });
      procs.push(
        spawn(process.execPath, [...memberNodeArgs, '--import', 'tsx', 'src/cli/main.ts', 'server', '--name', n, '--initial-cluster', ic, '--data-dir', join(root, n), '--secure-port', String(ports[i].api), '--peer-port', String(ports[i].peer)], { cwd: REPO, stdio: process.env.BENCH_MEMBER_LOGS ? 'inherit' : 'ignore' }),
      );
    }
    const [ca, cert, key] = await Promise.all(['ca.crt', 'admin.crt', 'admin.key'].map((f) => readFile(join(pki, f), 'utf8')));
    const agent = new Agent({ keepAlive: true, maxSockets: 64, ca, cert, key });
    let leaderPort = 0;
    for (let attempt = 0; attempt < 300 && !leaderPort; attempt++) {
      for (const [i] of names.entries()) {
        try {
          const raftz = JSON.parse(await httpCall(request, { host: '127.0.0.1', port: ports[i].api, method: 'GET', path: '/raftz', agent }, '', 200)) as { leader: string; role: string };
          if (raftz.role === 'leader') leaderPort = ports[i].api;
        } catch {
          // not up yet
        }
      }
      if (!leaderPort) await sleep(200);
    }
    if (!leaderPort) throw new Error('orch cluster did not elect a leader');
    const value = 'x'.repeat(valueSize);
    const out: Record<string, Stats> = {};
    const raftz = () =>
      Promise.all(ports.map(async (p) => JSON.parse(await httpCall(request, { host: '127.0.0.1', port: p.api, method: 'GET', path: '/raftz', agent }, '', 200)) as Raftz));
    const counters: Record<string, Record<string, Record<string, number>>> = {};
    for (const inFlight of inFlights) {
      const before = await raftz();
      out[`inFlight${inFlight}`] = await drive(writes, inFlight, async (i) => {
        const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `b${inFlight}-${i}` }, data: { v: value } });
        await httpCall(request, { host: '127.0.0.1', port: leaderPort, method: 'POST', path: '/api/v1/namespaces/default/configmaps', agent }, body, 201);
      });
      const after = await raftz();
      counters[`inFlight${inFlight}`] = Object.fromEntries(
        after.map((a, i) => [`${names[i]}${ports[i].api === leaderPort ? ' (leader)' : ''}`, perWrite(before[i], a, writes)]),
      );
    }
    agent.destroy();
    return { stats: out, perWrite: counters };
  } finally {
    for (const p of procs) p.kill('SIGTERM');
    // members exit after a graceful shutdown (and write their --cpu-prof profiles)
    await Promise.all(procs.map((p) => (p.exitCode !== null ? undefined : new Promise((r) => p.once('exit', r)))));
  }
}

/**
 * etcd, by default set up like orch: mutual TLS on client and peer links
 * (orch's PKI), and each write a create-if-absent transaction (compare
 * create_revision = 0, then put), which is what orch's create does in its
 * store (and kube-apiserver's in etcd). BENCH_ETCD_PLAIN=1: plain HTTP and a
 * bare put, the setup of the first measurement.
 */
async function benchEtcd(root: string, pki: string): Promise<Record<string, Stats>> {
  const plain = Boolean(process.env.BENCH_ETCD_PLAIN);
  const scheme = plain ? 'http' : 'https';
  const names = ['e1', 'e2', 'e3'];
  const ports = await Promise.all(names.map(async () => ({ client: await freePort(), peer: await freePort() })));
  const ic = names.map((n, i) => `${n}=${scheme}://127.0.0.1:${ports[i].peer}`).join(',');
  const procs: ChildProcess[] = [];
  try {
    let tlsArgs: string[] = [];
    let agent: HttpAgent;
    const call = plain ? httpRequest : request;
    if (plain) {
      agent = new HttpAgent({ keepAlive: true, maxSockets: 64 });
    } else {
      const peer = await etcdPeerCert(pki);
      const ca = join(pki, 'ca.crt');
      tlsArgs = [
        // the JSON gateway dials the member's own gRPC port with --cert-file as its client certificate
        '--cert-file', peer.cert, '--key-file', peer.key, '--client-cert-auth', '--trusted-ca-file', ca,
        '--peer-cert-file', peer.cert, '--peer-key-file', peer.key, '--peer-client-cert-auth', '--peer-trusted-ca-file', ca,
      ];
      const [caPem, cert, key] = await Promise.all(['ca.crt', 'admin.crt', 'admin.key'].map((f) => readFile(join(pki, f), 'utf8')));
      agent = new Agent({ keepAlive: true, maxSockets: 64, ca: caPem, cert, key });
    }
    for (const [i, n] of names.entries()) {
      procs.push(
        spawn('etcd', [
          '--name', n, '--data-dir', join(root, n),
          '--listen-client-urls', `${scheme}://127.0.0.1:${ports[i].client}`, '--advertise-client-urls', `${scheme}://127.0.0.1:${ports[i].client}`,
          '--listen-peer-urls', `${scheme}://127.0.0.1:${ports[i].peer}`, '--initial-advertise-peer-urls', `${scheme}://127.0.0.1:${ports[i].peer}`,
          '--initial-cluster', ic, '--initial-cluster-state', 'new', '--initial-cluster-token', 'orch-bench', '--log-level', 'error',
          ...tlsArgs,
        ], { stdio: process.env.BENCH_MEMBER_LOGS ? 'inherit' : 'ignore' }),
      );
    }
    let leaderPort = 0;
    for (let attempt = 0; attempt < 300 && !leaderPort; attempt++) {
      for (const [i] of names.entries()) {
        try {
          const st = JSON.parse(await httpCall(call, { host: '127.0.0.1', port: ports[i].client, method: 'POST', path: '/v3/maintenance/status', agent }, '{}', 200)) as { header: { member_id: string }; leader: string };
          if (st.leader && st.leader === st.header.member_id) leaderPort = ports[i].client;
        } catch {
          // not up yet
        }
      }
      if (!leaderPort) await sleep(200);
    }
    if (!leaderPort) throw new Error('etcd cluster did not elect a leader');
    const value = Buffer.from('x'.repeat(valueSize)).toString('base64');
    const out: Record<string, Stats> = {};
    for (const inFlight of inFlights) {
      out[`inFlight${inFlight}`] = await drive(writes, inFlight, async (i) => {
        const key = Buffer.from(`/registry/configmaps/default/b${inFlight}-${i}`).toString('base64');
        if (plain) {
          await httpCall(call, { host: '127.0.0.1', port: leaderPort, method: 'POST', path: '/v3/kv/put', agent }, JSON.stringify({ key, value }), 200);
          return;
        }
        const txn = { compare: [{ key, result: 'EQUAL', target: 'CREATE', create_revision: '0' }], success: [{ request_put: { key, value } }] };
        const res = JSON.parse(await httpCall(call, { host: '127.0.0.1', port: leaderPort, method: 'POST', path: '/v3/kv/txn', agent }, JSON.stringify(txn), 200)) as { succeeded?: boolean };
        if (!res.succeeded) throw new Error('etcd create-if-absent did not succeed');
      });
    }
    agent.destroy();
    return out;
  } finally {
    for (const p of procs) p.kill('SIGTERM');
    await Promise.all(procs.map((p) => (p.exitCode !== null ? undefined : new Promise((r) => p.once('exit', r)))));
  }
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'orch-raft-bench-'));
  try {
    const pki = join(root, 'pki');
    await makePki(pki);
    const orchRun = sides.includes('orch') ? await benchOrch(join(root, 'orch'), pki) : undefined;
    const orch = orchRun?.stats ?? {};
    const etcd = sides.includes('etcd') ? await benchEtcd(join(root, 'etcd'), pki) : {};
    const ratio: Record<string, Stats> = {};
    for (const k of Object.keys(orch).filter((k) => k in etcd)) {
      ratio[k] = {
        opsPerSec: +(orch[k].opsPerSec / etcd[k].opsPerSec).toFixed(3),
        p50Ms: +(orch[k].p50Ms / etcd[k].p50Ms).toFixed(3),
        p99Ms: +(orch[k].p99Ms / etcd[k].p99Ms).toFixed(3),
      };
    }
    process.stdout.write(`${JSON.stringify({ members: 3, writes, valueSize, orch, etcd, ratio, orchPerWrite: orchRun?.perWrite, note: `orch: HTTPS API on the leader (create ConfigMap); etcd: ${process.env.BENCH_ETCD_PLAIN ? 'plain-HTTP v3 JSON gateway put' : 'mTLS v3 JSON gateway create-if-absent txn'} on the leader; mTLS peers on both sides unless plain; loopback` }, null, 2)}\n`);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

await main();
