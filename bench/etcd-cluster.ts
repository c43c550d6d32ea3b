// A 3-member etcd cluster on loopback for the benches' side-by-side runs
// (/usr/bin/etcd; bench/setup-etcd.sh installs it): mutual TLS on client and
// peer links with orch's PKI, as orch's members are set up.

import { type ChildProcess, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort } from '../test/helpers/ports.js';

/**
 * A certificate for etcd's links: etcd presents --peer-cert-file (and its JSON
 * gateway --cert-file) both as server and as client, so it needs both
 * extended key usages (orch's PKI has one of each). Issued by orch's CA with
 * openssl.
 */
export async function etcdPeerCert(pki: string): Promise<{ cert: string; key: string }> {
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

export interface EtcdCluster {
  /** https://127.0.0.1:<client port> of each member */
  clientUrls: string[];
  procs: ChildProcess[];
  stop(): Promise<void>;
}

/** three members with mutual TLS (orch's CA) on client and peer links */
export async function startEtcdCluster(root: string, pki: string, token = 'orch-bench'): Promise<EtcdCluster> {
  const names = ['e1', 'e2', 'e3'];
  const ports = await Promise.all(names.map(async () => ({ client: await freePort(), peer: await freePort() })));
  const ic = names.map((n, i) => `${n}=https://127.0.0.1:${ports[i]!.peer}`).join(',');
  const peer = await etcdPeerCert(pki);
  const ca = join(pki, 'ca.crt');
  const tlsArgs = [
    '--cert-file', peer.cert, '--key-file', peer.key, '--client-cert-auth', '--trusted-ca-file', ca,
    '--peer-cert-file', peer.cert, '--peer-key-file', peer.key, '--peer-client-cert-auth', '--peer-trusted-ca-file', ca,
  ];
  const procs = names.map((n, i) =>
    spawn('etcd', [
      '--name', n, '--data-dir', join(root, n),
      '--listen-client-urls', `https://127.0.0.1:${ports[i]!.client}`, '--advertise-client-urls', `https://127.0.0.1:${ports[i]!.client}`,
      '--listen-peer-urls', `https://127.0.0.1:${ports[i]!.peer}`, '--initial-advertise-peer-urls', `https://127.0.0.1:${ports[i]!.peer}`,
      '--initial-cluster', ic, '--initial-cluster-state', 'new', '--initial-cluster-token', token, '--log-level', 'error',
      ...tlsArgs,
    ], { stdio: process.env.BENCH_MEMBER_LOGS ? 'inherit' : 'ignore' }),
  );
  return {
    clientUrls: ports.map((p) => `https://127.0.0.1:${p.client}`),
    procs,
    async stop() {
      for (const p of procs) p.kill('SIGTERM');
      await Promise.all(procs.map((p) => (p.exitCode !== null ? undefined : new Promise((r) => p.once('exit', r)))));
    },
  };
}
