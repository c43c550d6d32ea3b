// The TLS terminator in front of uWS (src/gateway/tls-front.ts) with real
// sockets: a uWS app on a unix socket, real certificates, real TLS clients
// (Node and kubectl). Client-certificate identity per spec
// 001_bdb487117be0ea8a.txt §5.3 (CN = user, O = groups).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import http2 from 'node:http2';
import https from 'node:https';
import { connect as netConnect, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { promisify } from 'node:util';
import fc from 'fast-check';
import uws from 'uWebSockets.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { authenticateClientCertificate } from '../../src/auth/authn/x509.js';
import {
  encodeProxyV2Header,
  newConnectionId,
  parseProxiedAddress,
  proxiedAddressFor,
  startTlsFront,
  type TlsFront,
} from '../../src/gateway/tls-front.js';
import { ensurePki, issueClientCertificate, type Pki } from '../../src/server/pki.js';
import { writeKubeconfig } from '../../src/server/kubeconfig.js';

const execFileP = promisify(execFile);

interface Echo {
  addr: string;
  known: boolean;
  remoteAddress?: string;
  peer: { verified: boolean; verifyError?: string; commonName: string; organizations: string[] } | null;
}

const BIG_SIZE = 20 * 1024 * 1024;
function bigBody(): Buffer {
  const b = Buffer.allocUnsafe(BIG_SIZE);
  for (let i = 0; i < BIG_SIZE; i += 4) b.writeUInt32LE(i * 2654435761 >>> 0, i);
  return b;
}
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let dir: string;
let pki: Pki;
let otherPki: Pki;
let front: TlsFront;
/** every front started in this file; the uWS handlers look connections up in all of them */
const fronts: TlsFront[] = [];
const connectionFor = (addr: string) => {
  for (const f of fronts) {
    const c = f.connectionFor(addr);
    if (c) return c;
  }
  return undefined;
};
let listenSocket: uws.us_listen_socket;
let socketPath: string;
const big = bigBody();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-tls-front-'));
  pki = await ensurePki(join(dir, 'pki'), {});
  otherPki = await ensurePki(join(dir, 'other-pki'), {});
  socketPath = join(dir, 'gateway.sock');

  const app = uws
    .App()
    .get('/hello', (res) => {
      const peer = connectionFor(Buffer.from(res.getProxiedRemoteAddressAsText()).toString())?.peer;
      res.end(`hello ${peer?.commonName ?? 'anonymous'}`);
    })
    .get('/big', (res) => {
      res.end(big);
    })
    .post('/hash', (res) => {
      const hash = createHash('sha256');
      let aborted = false;
      res.onAborted(() => {
        aborted = true;
      });
      res.onData((chunk, isLast) => {
        hash.update(Buffer.from(chunk));
        if (isLast && !aborted) res.end(hash.digest('hex'));
      });
    })
    .any('/*', (res) => {
      const addr = Buffer.from(res.getProxiedRemoteAddressAsText()).toString();
      const info = connectionFor(addr);
      const p = info?.peer;
      const echo: Echo = {
        addr,
        known: info !== undefined,
        ...(info?.remoteAddress !== undefined ? { remoteAddress: info.remoteAddress } : {}),
        peer: p
          ? {
              verified: p.verified,
              ...(p.verifyError !== undefined ? { verifyError: p.verifyError } : {}),
              commonName: p.commonName,
              organizations: p.organizations,
            }
          : null,
      };
      res.writeHeader('content-type', 'application/json').end(JSON.stringify(echo));
    });
  listenSocket = await new Promise<uws.us_listen_socket>((resolve, reject) =>
    app.listen_unix((s) => (s ? resolve(s) : reject(new Error('uWS listen_unix failed'))), socketPath),
  );

  front = await startTlsFront({
    host: '127.0.0.1',
    port: 0,
    key: pki.serving.keyPem,
    cert: pki.serving.certPem,
    clientCA: pki.ca.certPem,
    backendSocketPath: socketPath,
  });
  fronts.push(front);
});

afterAll(async () => {
  await front?.close();
  if (listenSocket) uws.us_listen_socket_close(listenSocket);
  await rm(dir, { recursive: true, force: true });
});

interface Creds {
  cert?: string;
  key?: string;
}

function request(
  path: string,
  creds: Creds,
  extra: { agent?: https.Agent; method?: string; body?: Buffer } = {},
): Promise<{ status: number; body: Buffer; reused: boolean }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port: front.port,
        path,
        method: extra.method ?? 'GET',
        servername: 'localhost',
        ca: pki.ca.certPem,
        ...creds,
        agent: extra.agent ?? false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), reused: req.reusedSocket }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(extra.body);
  });
}

async function echo(creds: Creds, agent?: https.Agent): Promise<Echo> {
  const r = await request('/whoami', creds, agent ? { agent } : {});
  expect(r.status).toBe(200);
  return JSON.parse(r.body.toString('utf8')) as Echo;
}

const admin = (): Creds => ({ cert: pki.admin.certPem, key: pki.admin.keyPem });

describe('TLS front: client identity', () => {
  it('(a) the admin certificate arrives verified with CN and O', async () => {
    const e = await echo(admin());
    expect(e.addr).toMatch(/^fd[0-9a-f]{2}(:[0-9a-f]{4}){7}$/);
    expect(e.known).toBe(true);
    expect(e.remoteAddress).toBe('127.0.0.1');
    expect(e.peer).toEqual({ verified: true, commonName: 'orch-admin', organizations: ['system:masters'] });
  });

  it('several organizations arrive as groups in order and authenticate as that user', async () => {
    const jane = await issueClientCertificate(pki, { commonName: 'jane', organizations: ['dev', 'ops'], days: 1 });
    const r = await request('/whoami', { cert: jane.certPem, key: jane.keyPem });
    const e = JSON.parse(r.body.toString()) as Echo;
    expect(e.peer).toEqual({ verified: true, commonName: 'jane', organizations: ['dev', 'ops'] });
    const auth = authenticateClientCertificate(front.peerFor(e.addr) ?? { ...e.peer!, raw: new Uint8Array() });
    expect(auth).toEqual({ result: 'ok', user: { username: 'jane', groups: ['dev', 'ops'] } });
  });

  it('(b) without a certificate the connection is known but has no peer', async () => {
    const e = await echo({});
    expect(e.known).toBe(true);
    expect(e.peer).toBeNull();
    expect(authenticateClientCertificate(undefined)).toEqual({ result: 'none' });
  });

  it('(c) a certificate from another CA is recorded as unverified, and authentication fails', async () => {
    const e = await echo({ cert: otherPki.admin.certPem, key: otherPki.admin.keyPem });
    expect(e.peer?.verified).toBe(false);
    expect(e.peer?.verifyError).toBeTruthy();
    expect(e.peer?.commonName).toBe('orch-admin');
    const auth = authenticateClientCertificate({ ...e.peer!, raw: new Uint8Array() });
    expect(auth.result).toBe('error');
  });

  it('a certificate of the right CA without clientAuth usage (the serving certificate) is not verified', async () => {
    const e = await echo({ cert: pki.serving.certPem, key: pki.serving.keyPem });
    expect(e.peer?.verified).toBe(false);
    expect(e.peer?.commonName).toBe('orch-apiserver');
  });

  it('(d) keep-alive: two requests on one connection see the same connection and identity', async () => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const r1 = await request('/whoami', admin(), { agent });
      const r2 = await request('/whoami', admin(), { agent });
      expect(r2.reused).toBe(true);
      const e1 = JSON.parse(r1.body.toString()) as Echo;
      const e2 = JSON.parse(r2.body.toString()) as Echo;
      expect(e2.addr).toBe(e1.addr);
      expect(e2.peer).toEqual(e1.peer);
      expect(e2.peer?.commonName).toBe('orch-admin');
    } finally {
      agent.destroy();
    }
  });

  it('distinct connections get distinct ids', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) ids.add((await echo({})).addr);
    expect(ids.size).toBe(5);
  });
});

describe('TLS front: transport', () => {
  it('(e) a 20 MiB response arrives intact', async () => {
    const r = await request('/big', {});
    expect(r.status).toBe(200);
    expect(r.body.length).toBe(BIG_SIZE);
    expect(sha256(r.body)).toBe(sha256(big));
  });

  it('(e) a 20 MiB request body arrives intact', async () => {
    const r = await request('/hash', {}, { method: 'POST', body: big });
    expect(r.status).toBe(200);
    expect(r.body.toString()).toBe(sha256(big));
  });

  it('(e) a slow reader of a 20 MiB response still gets every byte', async () => {
    const socket = await connectTls({});
    socket.write('GET /big HTTP/1.1\r\nHost: localhost\r\n\r\n');
    socket.pause();
    // Let the pipes fill up and back-pressure engage before reading.
    await new Promise((r) => setTimeout(r, 200));
    const chunks: Buffer[] = [];
    let total = 0;
    await new Promise<void>((resolve, reject) => {
      socket.on('data', (d: Buffer) => {
        chunks.push(d);
        total += d.length;
        const text = Buffer.concat(chunks.slice(0, 1)).toString('latin1');
        const headerEnd = text.indexOf('\r\n\r\n');
        if (headerEnd >= 0 && total >= headerEnd + 4 + BIG_SIZE) resolve();
      });
      socket.on('error', reject);
      socket.resume();
    });
    const all = Buffer.concat(chunks);
    const headerEnd = all.indexOf('\r\n\r\n');
    expect(all.subarray(0, headerEnd).toString()).toMatch(/^HTTP\/1\.1 200/);
    expect(sha256(all.subarray(headerEnd + 4))).toBe(sha256(big));
    socket.destroy();
  });

  it('(f) the map entry is removed when the client disconnects', async () => {
    const socket = await connectTls(admin());
    const addr = await whoamiOn(socket);
    expect(front.peerFor(addr)?.commonName).toBe('orch-admin');
    expect(front.connections).toBeGreaterThanOrEqual(1);
    socket.destroy();
    await vi.waitFor(() => expect(front.connectionFor(addr)).toBeUndefined(), { timeout: 10_000 });
    expect(front.peerFor(addr)).toBeUndefined();
  });

  it('(g) ALPN negotiates h2 when the client prefers it, http/1.1 when it offers only that', async () => {
    const h2 = await connectTls({}, ['h2', 'http/1.1']);
    expect(h2.alpnProtocol).toBe('h2');
    h2.destroy();
    const h1 = await connectTls({}, ['http/1.1']);
    expect(h1.alpnProtocol).toBe('http/1.1');
    h1.destroy();
  });

  it('(g2) with http2: false, ALPN negotiates http/1.1 even when the client prefers h2', async () => {
    const f = await startTlsFront({ host: '127.0.0.1', port: 0, key: pki.serving.keyPem, cert: pki.serving.certPem, clientCA: pki.ca.certPem, backendSocketPath: socketPath, http2: false });
    try {
      const socket = await new Promise<TLSSocket>((resolve, reject) => {
        const s = tlsConnect({ host: '127.0.0.1', port: f.port, servername: 'localhost', ca: pki.ca.certPem, ALPNProtocols: ['h2', 'http/1.1'] });
        s.once('secureConnect', () => resolve(s));
        s.once('error', reject);
      });
      expect(socket.alpnProtocol).toBe('http/1.1');
      socket.destroy();
    } finally {
      await f.close();
    }
  });

  it('(g3) every HTTP/2 stream reaches uWS with the session\'s connection id, so its certificate', async () => {
    const session = http2.connect(`https://127.0.0.1:${front.port}`, { ca: pki.ca.certPem, servername: 'localhost', ...admin() });
    try {
      const get = () =>
        new Promise<Echo>((resolve, reject) => {
          const req = session.request({ ':path': '/who' });
          let text = '';
          req.setEncoding('utf8');
          req.on('data', (d: string) => (text += d));
          req.on('end', () => resolve(JSON.parse(text) as Echo));
          req.on('error', reject);
          req.end();
        });
      const echoes = await Promise.all([get(), get(), get()]);
      expect(new Set(echoes.map((e) => e.addr)).size).toBe(1);
      for (const e of echoes) expect(e).toMatchObject({ known: true, peer: { verified: true, commonName: 'orch-admin' } });
      expect(front.http2?.sessions).toBe(1);
      expect(front.peerFor(echoes[0]!.addr)?.commonName).toBe('orch-admin');
    } finally {
      session.close();
    }
  });

  it('lookups accept the compressed IPv6 form of an id', async () => {
    const socket = await connectTls(admin());
    const addr = await whoamiOn(socket);
    const compressed = addr.replace(/(^|:)0{1,3}/g, '$1');
    expect(front.peerFor(compressed.toUpperCase())?.commonName).toBe('orch-admin');
    expect(front.peerFor('fd00::1')).toBeUndefined();
    expect(front.peerFor('not an address')).toBeUndefined();
    socket.destroy();
  });

  it('handshake failures are counted and do not disturb the front', async () => {
    const before = front.handshakeErrors;
    await new Promise<void>((resolve) => {
      const s = netConnect({ host: '127.0.0.1', port: front.port }, () => {
        s.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'); // plain HTTP to a TLS port
      });
      s.on('error', () => resolve());
      s.on('close', () => resolve());
    });
    await vi.waitFor(() => expect(front.handshakeErrors).toBeGreaterThan(before), { timeout: 10_000 });
    const e = await echo(admin());
    expect(e.peer?.commonName).toBe('orch-admin');
  });

  it('a missing backend closes the client connection without crashing', async () => {
    const lonely = await startTlsFront({
      host: '127.0.0.1',
      port: 0,
      key: pki.serving.keyPem,
      cert: pki.serving.certPem,
      clientCA: pki.ca.certPem,
      backendSocketPath: join(dir, 'nobody-listens.sock'),
    });
    try {
      const outcome = await new Promise<string>((resolve) => {
        const req = https.request(
          { host: '127.0.0.1', port: lonely.port, path: '/', servername: 'localhost', ca: pki.ca.certPem, agent: false },
          () => resolve('response'),
        );
        req.on('error', (err) => resolve(`error:${(err as NodeJS.ErrnoException).code ?? err.message}`));
        req.end();
      });
      expect(outcome).toMatch(/^error:/);
      await vi.waitFor(() => expect(lonely.connections).toBe(0), { timeout: 10_000 });
    } finally {
      await lonely.close();
    }
  });

  it('without a client CA, presented certificates are never verified', async () => {
    const noCA = await startTlsFront({
      host: '127.0.0.1',
      port: 0,
      key: pki.serving.keyPem,
      cert: pki.serving.certPem,
      backendSocketPath: socketPath,
    });
    fronts.push(noCA);
    try {
      const r = await new Promise<string>((resolve, reject) => {
        https
          .get(
            { host: '127.0.0.1', port: noCA.port, path: '/whoami', servername: 'localhost', ca: pki.ca.certPem, agent: false, ...admin() },
            (res) => {
              let b = '';
              res.on('data', (d: Buffer) => (b += d.toString()));
              res.on('end', () => resolve(b));
            },
          )
          .on('error', reject);
      });
      const e = JSON.parse(r) as Echo;
      expect(e.peer).toEqual({
        verified: false,
        verifyError: 'no client certificate authority configured',
        commonName: 'orch-admin',
        organizations: ['system:masters'],
      });
    } finally {
      await noCA.close();
    }
  });
});

describe('TLS front: close', () => {
  it('close() ends established and still-handshaking connections', async () => {
    const f = await startTlsFront({
      host: '127.0.0.1',
      port: 0,
      key: pki.serving.keyPem,
      cert: pki.serving.certPem,
      clientCA: pki.ca.certPem,
      backendSocketPath: socketPath,
    });
    fronts.push(f);
    // one connection that never starts its handshake
    const idle = netConnect({ host: '127.0.0.1', port: f.port });
    const idleClosed = new Promise<void>((resolve) => idle.on('close', () => resolve()).on('error', () => undefined));
    await new Promise<void>((resolve) => idle.once('connect', () => resolve()));
    // one established TLS connection
    const tlsSock = tlsConnect({ host: '127.0.0.1', port: f.port, servername: 'localhost', ca: pki.ca.certPem });
    const tlsClosed = new Promise<void>((resolve) => tlsSock.on('close', () => resolve()).on('error', () => undefined));
    await new Promise<void>((resolve) => tlsSock.once('secureConnect', () => resolve()));
    await vi.waitFor(() => expect(f.connections).toBe(1), { timeout: 10_000 });

    await f.close();
    await Promise.all([idleClosed, tlsClosed]);
    expect(f.connections).toBe(0);
    const refused = await new Promise<string>((resolve) => {
      const s = netConnect({ host: '127.0.0.1', port: f.port });
      s.on('connect', () => {
        s.destroy();
        resolve('connected');
      });
      s.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
  });
});

describe('TLS front: graceful close', () => {
  const startFront = async () => {
    const f = await startTlsFront({
      host: '127.0.0.1',
      port: 0,
      key: pki.serving.keyPem,
      cert: pki.serving.certPem,
      clientCA: pki.ca.certPem,
      backendSocketPath: socketPath,
    });
    fronts.push(f);
    const sock = tlsConnect({ host: '127.0.0.1', port: f.port, servername: 'localhost', ca: pki.ca.certPem, ...admin() });
    const sockClosed = new Promise<void>((resolve) => sock.on('close', () => resolve()).on('error', () => undefined));
    await new Promise<void>((resolve) => sock.once('secureConnect', () => resolve()));
    return { f, sock, sockClosed };
  };

  it('keeps serving open connections, refuses new ones, and finishes when they end', async () => {
    const { f, sock, sockClosed } = await startFront();
    let closed = false;
    const closing = f.close({ graceful: true }).then(() => {
      closed = true;
    });
    const addr = await whoamiOn(sock);
    expect(f.peerFor(addr)?.commonName).toBe('orch-admin');
    const refused = await new Promise<string>((resolve) => {
      const s = netConnect({ host: '127.0.0.1', port: f.port });
      s.on('connect', () => {
        s.destroy();
        resolve('connected');
      });
      s.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
    expect(closed).toBe(false); // our connection is still open
    sock.end();
    await closing;
    await sockClosed;
    expect(f.connections).toBe(0);
  });

  it('destroys connections still open after timeoutMs', async () => {
    const { f, sockClosed } = await startFront();
    await f.close({ graceful: true, timeoutMs: 50 });
    await sockClosed;
    expect(f.connections).toBe(0);
  });
});

describe('TLS front: maxConnections', () => {
  it('counts connections handed over (adopt) and accepted here against one bound, refusing the excess at accept', async () => {
    const f = await startTlsFront({ host: '127.0.0.1', port: 0, key: pki.serving.keyPem, cert: pki.serving.certPem, clientCA: pki.ca.certPem, backendSocketPath: socketPath, maxConnections: 2 });
    fronts.push(f);
    const side = createNetServer({ pauseOnConnect: true }, (raw) => f.adopt(raw));
    await new Promise<void>((r) => side.listen(0, '127.0.0.1', r));
    const open = (port: number): Promise<{ ok: boolean; s: TLSSocket }> =>
      new Promise((resolve) => {
        const s = tlsConnect({ host: '127.0.0.1', port, servername: 'localhost', ca: pki.ca.certPem, ...admin() });
        s.once('secureConnect', () => resolve({ ok: true, s }));
        s.once('error', () => resolve({ ok: false, s }));
        s.once('close', () => resolve({ ok: false, s }));
      });
    try {
      const adopted = await open((side.address() as { port: number }).port);
      const direct = await open(f.port);
      expect([adopted.ok, direct.ok]).toEqual([true, true]);
      // one handed over and one accepted here fill the bound of 2, whichever way the third comes
      expect((await open(f.port)).ok).toBe(false);
      expect((await open((side.address() as { port: number }).port)).ok).toBe(false);
      expect(f.refusedConnections).toBe(2);
      adopted.s.destroy();
      direct.s.destroy();
    } finally {
      side.close();
      await f.close();
    }
  });
});

describe('kubectl through the front', () => {
  it('kubectl get --raw /hello authenticates with the admin certificate', async () => {
    const kubeconfig = join(dir, 'kube', 'config');
    await writeKubeconfig(kubeconfig, {
      server: `https://127.0.0.1:${front.port}`,
      caPem: pki.ca.certPem,
      clientCertPem: pki.admin.certPem,
      clientKeyPem: pki.admin.keyPem,
    });
    const { stdout } = await execFileP('kubectl', ['--kubeconfig', kubeconfig, 'get', '--raw', '/hello'], {
      env: { ...process.env, HOME: dir, KUBECACHEDIR: join(dir, 'kube-cache') },
      timeout: 30_000,
    });
    expect(stdout.trim()).toBe('hello orch-admin');
  });
});

describe('connection id format', () => {
  it('encodes the PROXY v2 TCP6 header byte for byte', () => {
    const src = Buffer.from('fd0000000000000000000000' + '0001e240', 'hex');
    const dst = Buffer.alloc(16);
    const h = encodeProxyV2Header(src, dst, 1, 2);
    expect([...h.subarray(0, 16)]).toEqual([
      0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a, 0x21, 0x21, 0x00, 36,
    ]);
    expect(h.length).toBe(52);
    expect(h.subarray(16, 32).equals(src)).toBe(true);
    expect(h.readUInt16BE(48)).toBe(1);
    expect(h.readUInt16BE(50)).toBe(2);
    expect(proxiedAddressFor(src)).toBe('fd00:0000:0000:0000:0000:0000:0001:e240');
  });

  it('new ids are in fd00::/8 and differ', () => {
    const a = newConnectionId();
    const b = newConnectionId();
    expect(a[0]).toBe(0xfd);
    expect(a.equals(b)).toBe(false);
  });

  it('parseProxiedAddress inverts proxiedAddressFor, in full and compressed forms', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 16, maxLength: 16 }), (bytes) => {
        const text = proxiedAddressFor(bytes);
        expect(parseProxiedAddress(text)?.equals(Buffer.from(bytes))).toBe(true);
        const compressed = text.replace(/(^|:)0{1,3}/g, '$1').toUpperCase();
        expect(parseProxiedAddress(compressed)?.equals(Buffer.from(bytes))).toBe(true);
      }),
    );
    expect(parseProxiedAddress('fd00::1')?.toString('hex')).toBe('fd000000000000000000000000000001');
    expect(parseProxiedAddress('::')?.toString('hex')).toBe('0'.repeat(32));
    expect(parseProxiedAddress('1::2::3')).toBeUndefined();
    expect(parseProxiedAddress('1:2:3:4:5:6:7')).toBeUndefined();
    expect(parseProxiedAddress('127.0.0.1')).toBeUndefined();
    expect(parseProxiedAddress('1:2:3:4:5:6:7:8::')).toBeUndefined();
  });
});

function connectTls(creds: Creds, alpn: string[] = ['http/1.1']): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({
      host: '127.0.0.1',
      port: front.port,
      servername: 'localhost',
      ca: pki.ca.certPem,
      ALPNProtocols: alpn,
      ...creds,
    });
    s.once('secureConnect', () => resolve(s));
    s.once('error', reject);
  });
}

/** One keep-alive request on a raw TLS socket; returns the proxied address the gateway saw. */
function whoamiOn(socket: TLSSocket): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (d: Buffer): void => {
      buf += d.toString('utf8');
      const m = /content-length: (\d+)\r\n/i.exec(buf);
      const headerEnd = buf.indexOf('\r\n\r\n');
      if (m && headerEnd >= 0 && buf.length >= headerEnd + 4 + Number(m[1])) {
        socket.off('data', onData);
        resolve((JSON.parse(buf.slice(headerEnd + 4)) as Echo).addr);
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.write('GET /whoami HTTP/1.1\r\nHost: localhost\r\n\r\n');
  });
}

describe('TLS front: connection limit', () => {
  it('closes connections beyond maxConnections at accept and serves the others', async () => {
    const f = await startTlsFront({
      host: '127.0.0.1',
      port: 0,
      key: pki.serving.keyPem,
      cert: pki.serving.certPem,
      clientCA: pki.ca.certPem,
      backendSocketPath: socketPath,
      maxConnections: 1,
    });
    fronts.push(f);
    const first = tlsConnect({ host: '127.0.0.1', port: f.port, servername: 'localhost', ca: pki.ca.certPem });
    await new Promise<void>((resolve) => first.once('secureConnect', () => resolve()));
    const second = await new Promise<string>((resolve) => {
      const s = tlsConnect({ host: '127.0.0.1', port: f.port, servername: 'localhost', ca: pki.ca.certPem });
      s.once('secureConnect', () => {
        s.destroy();
        resolve('connected');
      });
      s.on('error', () => resolve('refused'));
      s.on('close', () => resolve('refused'));
    });
    expect(second).toBe('refused');
    first.destroy();
  });

  it('derives the default limit from the open-files limit', async () => {
    const { defaultMaxConnections } = await import('../../src/gateway/tls-front.js');
    const n = defaultMaxConnections();
    expect(n).toBeGreaterThan(15);
    // three descriptors per client must fit under the process limit
    const { readFileSync } = await import('node:fs');
    const soft = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
    if (soft) expect(n * 3).toBeLessThan(Number(soft));
  });
});
