// The etcd side of the side-by-side benches: starts a 1- or 3-member etcd on
// loopback (bench/setup-etcd.sh installs it) and opens the two ways a client
// talks to it:
//   gateway: etcd's v3 JSON gateway over HTTP(S) (what the benches used first);
//   native:  the gRPC API through the `etcd3` npm client (@grpc/grpc-js), which is
//            what every real etcd client, kube-apiserver included, uses.
// Both reach the leader only (orch's side writes to its leader too).

import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { freePort } from '../test/helpers/ports.js';

export interface EtcdCluster {
  /** client URL of the leader (http:// or https://) */
  leaderUrl: string;
  leaderPort: number;
  tls: boolean;
  /** client URL of every member (a client given all of them balances like kube-apiserver's) */
  clientUrls: string[];
  pids: number[];
  /** JSON gateway POST to the leader: resolves with the parsed reply */
  gateway(path: string, body: unknown): Promise<Record<string, unknown>>;
  /** a native gRPC client of the leader (close it when done) */
  native(): Etcd3;
  stop(): Promise<void>;
}

/**
 * A certificate for etcd's links: etcd presents --peer-cert-file (and its JSON
 * gateway --cert-file) both as server and as client, so it needs both
 * extended key usages (orch's PKI has one of each). Issued by orch's CA with
 * openssl.
 */
async function etcdPeerCert(pki: string): Promise<{ cert: string; key: string }> {
  const key = join(pki, 'apiserver.key');
  const cert = join(pki, 'etcd-peer.crt');
  const ext = join(pki, 'etcd-peer.ext');
  await writeFile(ext, 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\nkeyUsage=digitalSignature\n');
  const run = (args: string[]) =>
    new Promise<void>((res, rej) =>
      spawn('openssl', args, { stdio: 'ignore' }).on('exit', (c) => (c === 0 ? res() : rej(new Error(`openssl ${args[0]} failed`)))),
    );
  await run(['req', '-new', '-key', key, '-subj', '/CN=etcd-peer', '-out', join(pki, 'etcd-peer.csr')]);
  await run(['x509', '-req', '-in', join(pki, 'etcd-peer.csr'), '-CA', join(pki, 'ca.crt'), '-CAkey', join(pki, 'ca.key'), '-CAcreateserial', '-days', '2', '-out', cert, '-extfile', ext]);
  return { cert, key };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function post(tls: boolean, agent: HttpAgent, port: number, path: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = (tls ? httpsRequest : httpRequest)(
      { host: '127.0.0.1', port, method: 'POST', path, agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Starts `members` etcd members under `root`. With `pki` (orch's PKI dir:
 * ca.crt/ca.key/apiserver.key/admin.crt/admin.key) client and peer links use
 * mutual TLS like orch's; without it, plain HTTP.
 */
export async function startEtcd(opts: { root: string; members: number; pki?: string; logs?: boolean; token?: string }): Promise<EtcdCluster> {
  const tls = Boolean(opts.pki);
  const scheme = tls ? 'https' : 'http';
  const names = Array.from({ length: opts.members }, (_, i) => `e${i + 1}`);
  const ports = await Promise.all(names.map(async () => ({ client: await freePort(), peer: await freePort() })));
  const ic = names.map((n, i) => `${n}=${scheme}://127.0.0.1:${ports[i]!.peer}`).join(',');
  let tlsArgs: string[] = [];
  let agent: HttpAgent;
  let creds: { rootCertificate: Buffer; certChain: Buffer; privateKey: Buffer } | undefined;
  if (tls) {
    const pki = opts.pki!;
    const peer = await etcdPeerCert(pki);
    const ca = join(pki, 'ca.crt');
    tlsArgs = [
      // the JSON gateway dials the member's own gRPC port with --cert-file as its client certificate
      '--cert-file', peer.cert, '--key-file', peer.key, '--client-cert-auth', '--trusted-ca-file', ca,
      '--peer-cert-file', peer.cert, '--peer-key-file', peer.key, '--peer-client-cert-auth', '--peer-trusted-ca-file', ca,
    ];
    const [caPem, cert, key] = await Promise.all(['ca.crt', 'admin.crt', 'admin.key'].map((f) => readFile(join(pki, f))));
    agent = new HttpsAgent({ keepAlive: true, maxSockets: 64, ca: caPem, cert, key });
    creds = { rootCertificate: caPem!, certChain: cert!, privateKey: key! };
  } else {
    agent = new HttpAgent({ keepAlive: true, maxSockets: 64 });
  }
  const procs: ChildProcess[] = names.map((n, i) =>
    spawn('etcd', [
      '--name', n, '--data-dir', join(opts.root, n),
      '--listen-client-urls', `${scheme}://127.0.0.1:${ports[i]!.client}`, '--advertise-client-urls', `${scheme}://127.0.0.1:${ports[i]!.client}`,
      '--listen-peer-urls', `${scheme}://127.0.0.1:${ports[i]!.peer}`, '--initial-advertise-peer-urls', `${scheme}://127.0.0.1:${ports[i]!.peer}`,
      '--initial-cluster', ic, '--initial-cluster-state', 'new', '--initial-cluster-token', opts.token ?? 'orch-bench', '--log-level', 'error',
      ...tlsArgs,
    ], { stdio: opts.logs || process.env.BENCH_MEMBER_LOGS ? 'inherit' : 'ignore' }),
  );
  const stop = async (): Promise<void> => {
    agent.destroy();
    for (const p of procs) p.kill('SIGTERM');
    await Promise.all(procs.map((p) => (p.exitCode !== null ? undefined : new Promise((r) => p.once('exit', r)))));
  };
  let leaderPort = 0;
  for (let attempt = 0; attempt < 300 && !leaderPort; attempt++) {
    for (const p of ports) {
      try {
        const r = await post(tls, agent, p.client, '/v3/maintenance/status', '{}');
        const st = JSON.parse(r.text) as { header?: { member_id: string }; leader?: string };
        if (st.leader && st.leader === st.header?.member_id) leaderPort = p.client;
      } catch {
        // not up yet
      }
    }
    if (!leaderPort) await sleep(200);
  }
  if (!leaderPort) {
    await stop();
    throw new Error('etcd did not elect a leader');
  }
  const leaderUrl = `${scheme}://127.0.0.1:${leaderPort}`;
  return {
    leaderUrl,
    leaderPort,
    tls,
    clientUrls: ports.map((p) => `${scheme}://127.0.0.1:${p.client}`),
    pids: procs.map((p) => p.pid!),
    async gateway(path, body) {
      const r = await post(tls, agent, leaderPort, path, JSON.stringify(body));
      if (r.status !== 200) throw new Error(`etcd gateway ${path}: ${r.status} ${r.text.slice(0, 200)}`);
      return JSON.parse(r.text) as Record<string, unknown>;
    },
    native() {
      // one gRPC channel (HTTP/2 connection) per client, as kube-apiserver holds per etcd endpoint
      return new Etcd3({ hosts: leaderUrl, ...(creds ? { credentials: creds } : {}) });
    },
    stop,
  };
}

/** one create-if-absent txn through the JSON gateway (base64 key/value) */
export async function gatewayCreate(etcd: EtcdCluster, key: string, value: Buffer): Promise<number> {
  const k = Buffer.from(key).toString('base64');
  const txn = { compare: [{ key: k, result: 'EQUAL', target: 'CREATE', create_revision: '0' }], success: [{ request_put: { key: k, value: value.toString('base64') } }] };
  const res = (await etcd.gateway('/v3/kv/txn', txn)) as { succeeded?: boolean; header: { revision: string } };
  if (!res.succeeded) throw new Error(`etcd create-if-absent of ${key} did not succeed`);
  return Number(res.header.revision);
}

/** one create-if-absent txn over native gRPC */
export async function nativeCreate(client: Etcd3, key: string, value: Buffer): Promise<number> {
  const res = await client.if(key, 'Create', '==', 0).then(client.put(key).value(value)).commit();
  if (!res.succeeded) throw new Error(`etcd create-if-absent of ${key} did not succeed`);
  return Number(res.header.revision);
}

export function etcdAvailable(): Promise<boolean> {
  return new Promise((resolve) => {
    const p = spawn('etcd', ['--version'], { stdio: 'ignore' });
    p.on('error', () => resolve(false));
    p.on('exit', (code) => resolve(code === 0));
  });
}
