// TLS terminated in worker processes (src/gateway/tls-workers.ts, docs/tls.md):
// a real server with `tlsWorkers: 2`, real clients (kubectl, client-node, raw
// HTTPS), client-certificate identity (spec 001_bdb487117be0ea8a.txt §5.3)
// carried from the worker to the API process, worker crash and restart, and
// shutdown leaving no worker behind.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect as netConnect, createServer as createNetServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import uws from 'uWebSockets.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTlsWorkers, type TlsWorkerPool } from '../../src/gateway/tls-workers.js';
import { ensurePki, issueClientCertificate, type Pki } from '../../src/server/pki.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const execFileP = promisify(execFile);
const REVIEW_PATH = '/apis/authentication.orch.io/v1/selfsubjectreviews';
const REVIEW_BODY = { apiVersion: 'authentication.orch.io/v1', kind: 'SelfSubjectReview' };

interface Review {
  status: { userInfo: { username: string; groups?: string[] } };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until<T>(what: string, f: () => T | undefined | false, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

let t: TestServer;
let otherDir: string;

beforeAll(async () => {
  t = await startTestServer({ tlsWorkers: 2 });
  otherDir = await mkdtemp(join(tmpdir(), 'orch-tls-workers-other-'));
});

afterAll(async () => {
  await t?.stop();
  await rm(otherDir, { recursive: true, force: true });
});

describe('server with tlsWorkers: 2', () => {
  it('runs two worker processes besides itself', () => {
    const pids = t.server.tlsWorkerPids();
    expect(pids).toHaveLength(2);
    for (const pid of pids) {
      expect(pid).not.toBe(process.pid);
      expect(alive(pid)).toBe(true);
    }
  });

  it('the admin client certificate identity reaches the API (SelfSubjectReview), on many connections', async () => {
    // fresh connections each (agent: false), so both workers serve some
    const reviews = await Promise.all(Array.from({ length: 12 }, () => t.request('POST', REVIEW_PATH, { body: REVIEW_BODY })));
    for (const r of reviews) {
      expect(r.status, r.text).toBe(201);
      const info = r.json<Review>().status.userInfo;
      expect(info.username).toBe('orch-admin');
      expect(info.groups).toContain('system:masters');
    }
  });

  it('a client certificate issued by the cluster CA names its user and groups', async () => {
    const pki = await ensurePki(join(t.dataDir, 'pki'));
    const alice = await issueClientCertificate(pki, { commonName: 'alice', organizations: ['dev', 'ops'], days: 1 });
    const r = await t.request('POST', REVIEW_PATH, { body: REVIEW_BODY, cert: alice });
    expect(r.status, r.text).toBe(201);
    const info = r.json<Review>().status.userInfo;
    expect(info.username).toBe('alice');
    expect(info.groups).toEqual(expect.arrayContaining(['dev', 'ops']));
  });

  it('a connection without a certificate is anonymous', async () => {
    // anonymous may not create a SelfSubjectReview under the default Node,RBAC: the 403 names the user it saw
    const r = await t.request('POST', REVIEW_PATH, { body: REVIEW_BODY, anonymous: true });
    expect(r.status, r.text).toBe(403);
    expect(r.json<{ message: string }>().message).toContain('User "system:anonymous" cannot create resource "selfsubjectreviews"');
  });

  it('a certificate that does not verify is 401', async () => {
    const other = await ensurePki(otherDir);
    const r = await t.request('POST', REVIEW_PATH, { body: REVIEW_BODY, cert: { certPem: other.admin.certPem, keyPem: other.admin.keyPem } });
    expect(r.status, r.text).toBe(401);
  });

  it('kubectl works through the workers', async () => {
    const r = await execFileP('kubectl', ['--kubeconfig', t.server.kubeconfigPath, 'get', 'ns', '-o', 'name'], { timeout: 30_000 });
    expect(r.stdout.split('\n')).toEqual(expect.arrayContaining(['namespace/default', 'namespace/orch-system']));
  });

  it('@kubernetes/client-node works through the workers, including a watch', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(t.server.kubeconfigPath);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const list = await core.listNamespace();
    expect(list.items.map((n) => n.metadata?.name)).toContain('default');

    const seen: string[] = [];
    const watch = new k8s.Watch(kc);
    const req = await watch.watch(
      '/api/v1/namespaces/default/configmaps',
      { resourceVersion: list.metadata!.resourceVersion },
      (type: string, obj: { metadata?: { name?: string } }) => seen.push(`${type} ${obj.metadata?.name}`),
      () => undefined,
    );
    try {
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'via-workers' }, data: { a: '1' } } });
      await until('the watch event', () => seen.includes('ADDED via-workers'));
    } finally {
      req.abort();
    }
    expect(seen).toContain('ADDED via-workers');
  });

  it('a worker killed with SIGKILL is replaced and requests keep working', async () => {
    const before = t.server.tlsWorkerPids();
    const victim = before[0]!;
    process.kill(victim, 'SIGKILL');
    const after = await until('a replacement worker', () => {
      const pids = t.server.tlsWorkerPids();
      return pids.length === 2 && !pids.includes(victim) ? pids : undefined;
    });
    expect(after).toContain(before[1]);
    await until('the killed worker to be gone', () => !alive(victim));
    // the replacement has the listening socket: every fresh connection is served
    for (let i = 0; i < 10; i++) {
      const r = await t.request('POST', REVIEW_PATH, { body: REVIEW_BODY });
      expect(r.status, r.text).toBe(201);
      expect(r.json<Review>().status.userInfo.username).toBe('orch-admin');
    }
    // forking a replacement (TypeScript loader included) is slow on a loaded 2-core machine
  }, 150_000);

  it('shutdown ends every worker process', async () => {
    const s = await startTestServer({ tlsWorkers: 2 });
    const pids = s.server.tlsWorkerPids();
    expect(pids).toHaveLength(2);
    expect((await s.request('GET', '/api/v1/namespaces/default')).status).toBe(200);
    await s.stop();
    expect(s.server.tlsWorkerPids()).toEqual([]);
    for (const pid of pids) expect(alive(pid)).toBe(false);
  });
});

describe('startTlsWorkers', () => {
  let dir: string;
  let pool: TlsWorkerPool;
  let pki: Pki;
  let listenSocket: uws.us_listen_socket | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'orch-tls-pool-'));
    pki = await ensurePki(join(dir, 'pki'));
    const socketPath = join(dir, 'gw.sock');
    // a uWS backend that answers with what the pool knows about the connection
    const app = uws.App();
    app.any('/*', (res) => {
      const addr = Buffer.from(res.getProxiedRemoteAddressAsText()).toString();
      const peer = pool.peerFor(addr);
      res.end(JSON.stringify({ cn: peer?.commonName ?? null, verified: peer?.verified ?? null, pid: process.pid }));
    });
    await new Promise<void>((resolve, reject) =>
      app.listen_unix((s) => {
        listenSocket = s || undefined;
        if (s) resolve();
        else reject(new Error('uWS listen failed'));
      }, socketPath),
    );
    pool = await startTlsWorkers({
      workers: 2,
      host: '127.0.0.1',
      port: 0,
      key: pki.serving.keyPem,
      cert: pki.serving.certPem,
      clientCA: pki.ca.certPem,
      backendSocketPath: socketPath,
    });
  });

  afterAll(async () => {
    await pool?.close();
    if (listenSocket) uws.us_listen_socket_close(listenSocket);
    await rm(dir, { recursive: true, force: true });
  });

  const get = (socket?: Socket): Promise<{ cn: string | null; verified: boolean | null }> => {
    return new Promise((resolve, reject) => {
      const s = tlsConnect({
        ...(socket ? { socket } : { host: '127.0.0.1', port: pool.port }),
        ca: pki.ca.certPem,
        cert: pki.admin.certPem,
        key: pki.admin.keyPem,
        servername: 'localhost',
      });
      let text = '';
      s.on('secureConnect', () => s.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
      s.on('data', (d: Buffer) => (text += d.toString()));
      s.on('error', reject);
      s.on('close', () => {
        const body = text.slice(text.indexOf('\r\n\r\n') + 4);
        try {
          resolve(JSON.parse(body) as { cn: string | null; verified: boolean | null });
        } catch {
          reject(new Error(`unexpected response: ${text}`));
        }
      });
    });
  };

  it('serves identity for connections the workers accept', async () => {
    const r = await get();
    expect(r).toMatchObject({ cn: 'orch-admin', verified: true });
  });

  it('hands a connection accepted in the parent to a worker (adopt) and still knows who it is', async () => {
    // accept a TCP connection here, outside the pool, and give it to the pool
    const side = createNetServer({ pauseOnConnect: true }, (sock) => pool.adopt(sock));
    await new Promise<void>((r) => side.listen(0, '127.0.0.1', r));
    try {
      const raw = netConnect({ host: '127.0.0.1', port: (side.address() as { port: number }).port });
      const r = await get(raw);
      expect(r).toMatchObject({ cn: 'orch-admin', verified: true });
    } finally {
      side.close();
    }
  });

  it('counts failed handshakes across the workers', async () => {
    const before = pool.handshakeErrors;
    await Promise.all(
      Array.from({ length: 4 }, () =>
        new Promise<void>((resolve) => {
          const s = netConnect({ host: '127.0.0.1', port: pool.port }, () => s.end('GET / HTTP/1.1\r\n\r\n'));
          s.on('error', () => resolve());
          s.on('close', () => resolve());
          s.resume();
        }),
      ),
    );
    await until('the handshake errors to be reported', () => pool.handshakeErrors >= before + 4);
    expect(pool.handshakeErrors).toBeGreaterThanOrEqual(before + 4);
  });

  it('the parent stops accepting once the workers serve: every new connection is a worker\'s', async () => {
    await until('the parent to stop accepting', () => !pool.parentAccepting());
    const before = pool.parentAccepted;
    const answers = await Promise.all(Array.from({ length: 40 }, () => get()));
    for (const r of answers) expect(r).toMatchObject({ cn: 'orch-admin', verified: true });
    // none went through the parent's loop (issue #15: a probe it accepted waited for that loop)
    expect(pool.parentAccepted).toBe(before);
  });

  it('with every worker killed at once the socket stays: connections are answered by the replacements', async () => {
    await until('the parent to stop accepting', () => !pool.parentAccepting());
    const victims = pool.workerPids();
    for (const pid of victims) process.kill(pid, 'SIGKILL');
    // made while no worker exists: held in the kernel's backlog or by the parent, never refused or left hanging
    const answers = await Promise.all(Array.from({ length: 5 }, () => get()));
    for (const r of answers) expect(r).toMatchObject({ cn: 'orch-admin', verified: true });
    await until('two replacement workers', () => pool.readyWorkers() === 2 && pool.workerPids().every((p) => !victims.includes(p)), 60_000);
    // and once they serve, the parent hands the socket over again
    await until('the parent to stop accepting again', () => !pool.parentAccepting(), 20_000);
    const before = pool.parentAccepted;
    expect(await get()).toMatchObject({ cn: 'orch-admin', verified: true });
    expect(pool.parentAccepted).toBe(before);
  }, 90_000);
});

describe('a per-worker connection cap (--max-connections-per-tls-worker)', () => {
  let dir: string;
  let pool: TlsWorkerPool;
  let pki: Pki;
  let backend: ReturnType<typeof createNetServer>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'orch-tls-cap-'));
    pki = await ensurePki(join(dir, 'pki'));
    // a backend that holds what it is given: the client connections stay open
    backend = createNetServer((s) => s.resume());
    await new Promise<void>((r) => backend.listen(join(dir, 'backend.sock'), r));
    pool = await startTlsWorkers({ workers: 1, host: '127.0.0.1', port: 0, key: pki.serving.keyPem, cert: pki.serving.certPem, backendSocketPath: join(dir, 'backend.sock'), maxConnectionsPerWorker: 3 });
  });
  afterAll(async () => {
    await pool?.close();
    backend?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** a TLS connection: 'open' once the handshake completed, 'refused' if the server ended it first */
  const open = (): Promise<{ outcome: 'open' | 'refused'; socket: Socket }> =>
    new Promise((resolve) => {
      const s = tlsConnect({ host: '127.0.0.1', port: pool.port, ca: pki.ca.certPem, servername: 'localhost' });
      s.once('secureConnect', () => resolve({ outcome: 'open', socket: s }));
      s.once('error', () => resolve({ outcome: 'refused', socket: s }));
      s.once('close', () => resolve({ outcome: 'refused', socket: s }));
    });

  it('refuses connections beyond the cap at accept instead of leaving them waiting, and takes new ones once some close', async () => {
    const held = [await open(), await open(), await open()];
    expect(held.map((c) => c.outcome)).toEqual(['open', 'open', 'open']);
    const extra = await open();
    expect(extra.outcome).toBe('refused');
    await until('the refusal to be counted', () => pool.refusedConnections >= 1);
    expect(pool.refusedConnections).toBe(1);
    held[0]!.socket.destroy();
    // the worker sees the close, then has room again (each try that comes too early is refused, not left waiting)
    let again = await open();
    for (let i = 0; i < 100 && again.outcome === 'refused'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      again = await open();
    }
    expect(again.outcome).toBe('open');
    for (const c of [...held, again]) c.socket.destroy();
  });
});
