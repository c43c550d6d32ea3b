// TLS session resumption across the TLS worker processes (issue #13: full
// handshakes under load took seconds; docs/tls.md "Session resumption"): the
// workers share one set of ticket keys, a resumed connection is authenticated
// as the client certificate of its first handshake, a ticket of another
// server does not resume, and a certificate that expired since the ticket was
// issued is not accepted on resumption.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import uws from 'uWebSockets.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { startTlsFront } from '../../src/gateway/tls-front.js';
import { ensurePki, issueClientCertificate } from '../../src/server/pki.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const REVIEW_PATH = '/apis/authentication.orch.io/v1/selfsubjectreviews';
const REVIEW_BODY = JSON.stringify({ apiVersion: 'authentication.orch.io/v1', kind: 'SelfSubjectReview' });

interface Exchange {
  reused: boolean;
  /** the session the server sent on this connection (TLS 1.3: after the handshake) */
  session: Buffer | undefined;
  status: number;
  body: string;
  protocol: string | null;
}

/** one connection: handshake (offering `session`), one request with Connection: close, the whole response */
function exchange(port: number, ca: string, cert: { certPem: string; keyPem: string }, session: Buffer | undefined, head: string): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    let got: Buffer | undefined;
    const chunks: Buffer[] = [];
    const s = tlsConnect({ host: '127.0.0.1', port, ca, cert: cert.certPem, key: cert.keyPem, servername: 'localhost', ALPNProtocols: ['http/1.1'], ...(session ? { session } : {}) });
    s.on('session', (b: Buffer) => (got = b));
    s.on('error', reject);
    s.once('secureConnect', () => {
      const reused = s.isSessionReused();
      const protocol = s.getProtocol();
      s.write(head);
      s.on('data', (c: Buffer) => chunks.push(c));
      s.once('end', () => {
        s.destroy();
        const text = Buffer.concat(chunks).toString();
        const status = Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1] ?? 0);
        resolve({ reused, session: got, status, body: text.slice(text.indexOf('\r\n\r\n') + 4), protocol });
      });
    });
  });
}

const reviewHead = `POST ${REVIEW_PATH} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(REVIEW_BODY)}\r\nConnection: close\r\n\r\n${REVIEW_BODY}`;

function username(x: Exchange): string {
  // the body may be chunked; the user name is a JSON string inside it
  return /"username":"([^"]+)"/.exec(x.body)?.[1] ?? `<status ${x.status}>`;
}

async function until(what: string, f: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

let t: TestServer;
let dir: string;
beforeAll(async () => {
  t = await startTestServer({ tlsWorkers: 2 });
  dir = await mkdtemp(join(tmpdir(), 'orch-tls-resumption-'));
});
afterAll(async () => {
  await t?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('TLS session resumption with TLS workers', () => {
  it('a ticket resumes on every worker, including workers started after it was issued, as the same client certificate user', async () => {
    const pki = await ensurePki(join(t.dataDir, 'pki'));
    const alice = await issueClientCertificate(pki, { commonName: 'alice', organizations: ['dev'], days: 1 });
    const first = await exchange(t.server.port, t.server.caPem, alice, undefined, reviewHead);
    expect(first.status, first.body).toBe(201);
    expect(first.reused).toBe(false);
    expect(first.protocol).toBe('TLSv1.3');
    expect(username(first)).toBe('alice');
    const ticket = first.session;
    expect(ticket).toBeDefined();

    // 12 connections with the one ticket: the kernel spreads them over both
    // workers (with keys per worker about half of them failed to resume)
    const resumed = await Promise.all(Array.from({ length: 12 }, () => exchange(t.server.port, t.server.caPem, alice, ticket, reviewHead)));
    for (const r of resumed) {
      expect(r.reused).toBe(true);
      expect(r.status, r.body).toBe(201);
      expect(username(r)).toBe('alice');
    }

    // every worker replaced: the new processes still know the ticket's keys
    const before = t.server.tlsWorkerPids();
    for (const pid of before) process.kill(pid, 'SIGKILL');
    await until('both workers replaced', () => {
      const now = t.server.tlsWorkerPids();
      return now.length === 2 && now.every((p) => !before.includes(p));
    });
    let after: Exchange | undefined;
    for (let i = 0; i < 100 && !after; i++) {
      after = await exchange(t.server.port, t.server.caPem, alice, ticket, reviewHead).catch(() => undefined);
      if (!after) await new Promise((r) => setTimeout(r, 100));
    }
    expect(after?.reused).toBe(true);
    expect(after?.status, after?.body).toBe(201);
    expect(username(after!)).toBe('alice');
  }, 60_000);

  it('a resumed session is not another user: each certificate keeps its own identity', async () => {
    const pki = await ensurePki(join(t.dataDir, 'pki'));
    const bob = await issueClientCertificate(pki, { commonName: 'bob', organizations: [], days: 1 });
    const admin = { certPem: t.server.adminCertPem, keyPem: t.server.adminKeyPem };
    const b1 = await exchange(t.server.port, t.server.caPem, bob, undefined, reviewHead);
    const a1 = await exchange(t.server.port, t.server.caPem, admin, undefined, reviewHead);
    const b2 = await exchange(t.server.port, t.server.caPem, bob, b1.session, reviewHead);
    const a2 = await exchange(t.server.port, t.server.caPem, admin, a1.session, reviewHead);
    expect([b2.reused, a2.reused]).toEqual([true, true]);
    expect([username(b1), username(b2), username(a1), username(a2)]).toEqual(['bob', 'bob', 'orch-admin', 'orch-admin']);
  }, 30_000);

  it('a ticket issued by another server with the same certificates does not resume there', async () => {
    const admin = { certPem: t.server.adminCertPem, keyPem: t.server.adminKeyPem };
    const pki = await ensurePki(join(t.dataDir, 'pki'));
    const other = await startTlsFront({ host: '127.0.0.1', port: 0, key: pki.serving.keyPem, cert: pki.serving.certPem, clientCA: pki.ca.certPem, backendSocketPath: join(dir, 'none.sock') });
    try {
      const fromHere = await exchange(t.server.port, t.server.caPem, admin, undefined, reviewHead);
      expect(fromHere.session).toBeDefined();
      // the other front has no backend: only the handshake matters
      const there = await new Promise<boolean>((resolve, reject) => {
        const s = tlsConnect({ host: '127.0.0.1', port: other.port, ca: t.server.caPem, cert: admin.certPem, key: admin.keyPem, servername: 'localhost', session: fromHere.session! });
        s.once('secureConnect', () => {
          resolve(s.isSessionReused());
          s.destroy();
        });
        s.on('error', reject);
      });
      expect(there).toBe(false);
      // and back here the same ticket still resumes
      expect((await exchange(t.server.port, t.server.caPem, admin, fromHere.session, reviewHead)).reused).toBe(true);
    } finally {
      await other.close();
    }
  }, 30_000);
});

describe('TLS session resumption, in-process front', () => {
  it('a resumed session whose client certificate has expired since is not verified', async () => {
    const pki = await ensurePki(join(dir, 'pki'));
    const carol = await issueClientCertificate(pki, { commonName: 'carol', organizations: [], days: 1 });
    const socketPath = join(dir, 'echo.sock');
    const clock = new ManualClock(Date.now());
    let front: Awaited<ReturnType<typeof startTlsFront>> | undefined;
    const app = uws.App().any('/*', (res) => {
      const peer = front?.peerFor(Buffer.from(res.getProxiedRemoteAddressAsText()).toString());
      res.end(JSON.stringify({ username: peer?.commonName ?? 'none', verified: peer?.verified ?? false, verifyError: peer?.verifyError ?? '' }));
    });
    const listen = await new Promise<uws.us_listen_socket>((resolve, reject) => app.listen_unix((s) => (s ? resolve(s) : reject(new Error('listen_unix'))), socketPath));
    front = await startTlsFront({ host: '127.0.0.1', port: 0, key: pki.serving.keyPem, cert: pki.serving.certPem, clientCA: pki.ca.certPem, backendSocketPath: socketPath, clock });
    try {
      const head = 'GET /who HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';
      const first = await exchange(front.port, pki.ca.certPem, carol, undefined, head);
      expect(JSON.parse(first.body)).toEqual({ username: 'carol', verified: true, verifyError: '' });
      const resumed = await exchange(front.port, pki.ca.certPem, carol, first.session, head);
      expect(resumed.reused).toBe(true);
      expect(JSON.parse(resumed.body)).toEqual({ username: 'carol', verified: true, verifyError: '' });
      // two days later (the certificate was valid for one), the ticket still decrypts: the registry refuses it
      clock.advance(2 * 24 * 3600 * 1000);
      const late = await exchange(front.port, pki.ca.certPem, carol, resumed.session ?? first.session, head);
      expect(late.reused).toBe(true);
      expect(JSON.parse(late.body)).toEqual({ username: 'carol', verified: false, verifyError: 'certificate has expired' });
    } finally {
      await front.close();
      uws.us_listen_socket_close(listen);
    }
  }, 30_000);
});
