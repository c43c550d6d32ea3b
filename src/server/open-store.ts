// Chooses the store of a control-plane member: the single-node LocalStore by
// default, or a RaftStore member of a cluster when `cluster` is set
// (docs/raft.md "Running a cluster"). Also the cluster's status document
// (/raftz) and its metrics.

import type { Clock } from '../core/clock.js';
import type { Random } from '../core/random.js';
import { join } from 'node:path';
import type { NonResourceHandler } from '../endpoints/chain.js';
import { RaftMetrics } from '../raft/metrics.js';
import { peerAddress } from '../raft/transport.js';
import { LocalStore } from '../store/local-store.js';
import { RaftStore } from '../store/raft-store.js';
import type { RevisionedStore } from '../store/types.js';
import { ADMIN_ORGANIZATION, type Pki } from './pki.js';
import type { PeerCertificate } from 'node:tls';

export interface ClusterOptions {
  /** this member's name (must be a key of initialCluster) */
  name: string;
  /** member name -> peer URL (host:port or http(s)://host:port), etcd's --initial-cluster */
  initialCluster: Record<string, string>;
  /** peer port to listen on; defaults to the port of this member's peer URL */
  peerPort?: number;
  /** address the peer port binds to; defaults to the host of this member's peer URL */
  peerBindAddress?: string;
  /** serve the loopback fault-injection endpoint (chaos tests only) */
  faultInjectionPort?: number;
  /** with faultInjectionPort: the endpoint may also jump this process's wall clock */
  faultInjectionClock?: { get(): number; set(offsetMs: number): void };
  /** ms per Raft tick (default 100; election timeout 10-20 ticks) */
  tickMs?: number;
  electionTick?: number;
  snapshotEvery?: number;
  /** how long startup waits for a quorum before giving up (default 10 minutes) */
  readyTimeoutMs?: number;
}

/** "m1=127.0.0.1:2380,m2=http://127.0.0.1:2381" -> { m1: '127.0.0.1:2380', m2: '127.0.0.1:2381' } */
export function parseInitialCluster(spec: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of spec.split(',').map((p) => p.trim()).filter(Boolean)) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new Error(`invalid --initial-cluster member "${part}" (expected name=host:port)`);
    const name = part.slice(0, eq);
    if (name in out) throw new Error(`duplicate member "${name}" in --initial-cluster`);
    out[name] = peerAddress(part.slice(eq + 1));
  }
  if (Object.keys(out).length === 0) throw new Error('--initial-cluster names no member');
  return out;
}

export async function openStore(
  opts: { cluster?: ClusterOptions; watchWindowMs?: number; log?: (msg: string) => void; clock: Clock; random: Random },
  dataDir: string,
  pki: Pki,
): Promise<RevisionedStore> {
  const c = opts.cluster;
  // the store keeps history as long as the watch window (a single member kept 5 min whatever the window was)
  if (!c) return LocalStore.open(join(dataDir, 'store'), { clock: opts.clock, historyMs: opts.watchWindowMs });
  const own = c.initialCluster[c.name];
  if (!own) throw new Error(`member "${c.name}" is not in --initial-cluster`);
  const host = own.slice(0, own.lastIndexOf(':'));
  const port = c.peerPort ?? Number(own.slice(own.lastIndexOf(':') + 1));
  const store = await RaftStore.open({
    name: c.name,
    initialCluster: c.initialCluster,
    dataDir: join(dataDir, 'member'),
    peerListen: `${c.peerBindAddress ?? host}:${port}`,
    // members authenticate each other with the cluster's shared PKI; as that CA also signs nodes' and
    // users' client certificates (CSRs), a peer stream is taken only from the identity members present,
    // group system:masters, which the CSR API never issues (CertificateSubjectRestriction)
    tls: {
      caPem: pki.ca.certPem,
      serverCertPem: pki.serving.certPem,
      serverKeyPem: pki.serving.keyPem,
      clientCertPem: pki.admin.certPem,
      clientKeyPem: pki.admin.keyPem,
      authorizePeer: (cert) => organizationsOf(cert).includes(ADMIN_ORGANIZATION),
    },
    tickMs: c.tickMs,
    electionTick: c.electionTick,
    snapshotEvery: c.snapshotEvery,
    historyMs: opts.watchWindowMs,
    faultAdminPort: c.faultInjectionPort,
    ...(c.faultInjectionClock ? { faultAdminClock: c.faultInjectionClock } : {}),
    clock: opts.clock,
    random: opts.random,
    log: opts.log,
  });
  opts.log?.(`raft: member ${c.name} listening for peers on ${host}:${port}; waiting for a quorum of ${Object.keys(c.initialCluster).join(', ')}`);
  try {
    // bootstrap writes and local reads need a leader and an up-to-date state
    await store.waitUntilReady(c.readyTimeoutMs ?? 600_000);
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}

/** Adds GET /raftz (members, leader, term, commit, applied) for a clustered store. */
export function withClusterStatus(handler: NonResourceHandler, store: RevisionedStore): NonResourceHandler {
  if (!(store instanceof RaftStore)) return handler;
  return (path, query, accept, acceptHeader) => {
    const p = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    if (p === '/raftz') return { status: 200, body: store.status() };
    return handler(path, query, accept, acceptHeader);
  };
}

/** Raft gauges and counters on the metrics endpoint (no-op for the single-node store). */
export function registerStoreMetrics(
  metrics: { gauge(name: string, help: string, read: () => number): void },
  store: RevisionedStore,
): void {
  if (!(store instanceof RaftStore)) return;
  RaftMetrics.register((n, h, r) => metrics.gauge(n, h, r), store.metrics, () => store.liveMetrics());
}

/** the organizations (O) of a verified client certificate's subject */
function organizationsOf(cert: PeerCertificate): string[] {
  const o = (cert.subject as Record<string, string | string[] | undefined> | undefined)?.O;
  return o === undefined ? [] : ([] as string[]).concat(o);
}
