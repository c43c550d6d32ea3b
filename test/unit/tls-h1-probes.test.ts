// Health probes answered by the TLS front's HTTP/1.1 connection itself
// (TLS workers, issue #15, src/gateway/tls-h1-connection.ts `answerProbe`):
// no backend connection for a probe, no wait for the parent's registration
// acknowledgement, nothing else reaches the backend before it, and answers
// stay in request order when a probe is pipelined behind a forwarded request.
import type { Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProbeAnswerer } from '../../src/gateway/health-probe.js';
import { PROXY_V2_TCP6_HEADER_LENGTH, startTlsFront, type TlsFront } from '../../src/gateway/tls-front.js';
import type { Pki } from '../../src/server/pki.js';
import { pkiAndUnixBackend, requestHeads, type UnixBackendFixture } from '../helpers/unix-backend.js';

let fixture: UnixBackendFixture | undefined;
let pki: Pki;
let socketPath: string;
/** backend connections opened, and the request lines the backend read */
const seen = { opened: 0, requests: [] as string[] };

/** a minimal HTTP/1.1 backend behind the PROXY header: answers `backend <request line>` */
function serveBackend(s: Socket): void {
  seen.opened++;
  s.on('error', () => undefined);
  s.on(
    'data',
    requestHeads((line) => {
      seen.requests.push(line);
      const body = `backend ${line}`;
      s.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    }),
  );
}

/** answers `GET /livez` (and `Connection: close` on request) like a worker with a snapshot */
const answerProbe: ProbeAnswerer = (head) => {
  if (!head.startsWith('GET /livez ')) return Promise.resolve(undefined);
  const close = /\r\nconnection: close/i.test(head);
  const body = 'local ok';
  return Promise.resolve({ bytes: Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n${close ? 'Connection: close\r\n' : ''}\r\n${body}`), close });
};

beforeAll(async () => {
  fixture = await pkiAndUnixBackend('orch-tls-h1-probes-', serveBackend);
  ({ pki, socketPath } = fixture);
});

afterAll(async () => {
  await fixture?.close();
});

/** a front whose registrations are acknowledged only when `ack()` is called */
async function frontWithHeldRegistration(): Promise<{ front: TlsFront; ack: () => void; registered: () => number }> {
  let release!: () => void;
  const acked = new Promise<void>((r) => (release = r));
  let registered = 0;
  const front = await startTlsFront({
    host: '127.0.0.1',
    port: 0,
    key: pki.serving.keyPem,
    cert: pki.serving.certPem,
    clientCA: pki.ca.certPem,
    backendSocketPath: socketPath,
    http2: false,
    register: () => {
      registered++;
      return acked;
    },
    answerProbe,
  });
  return { front, ack: release, registered: () => registered };
}

function open(front: TlsFront): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({ host: '127.0.0.1', port: front.port, ca: pki.ca.certPem, cert: pki.admin.certPem, key: pki.admin.keyPem, servername: 'localhost' });
    s.once('secureConnect', () => resolve(s));
    s.once('error', reject);
  });
}

/** the bodies of the next `n` Content-Length responses on `s`, in wire order */
function bodies(s: TLSSocket, n: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    let buf: Buffer = Buffer.alloc(0);
    const out: string[] = [];
    const onData = (chunk: Buffer): void => {
      buf = Buffer.concat([buf, chunk]);
      for (let end = buf.indexOf('\r\n\r\n'); end >= 0; end = buf.indexOf('\r\n\r\n')) {
        const len = Number(/content-length: (\d+)/i.exec(buf.subarray(0, end).toString('latin1'))![1]);
        if (buf.length < end + 4 + len) return;
        out.push(buf.subarray(end + 4, end + 4 + len).toString());
        buf = buf.subarray(end + 4 + len);
        if (out.length === n) {
          s.off('data', onData);
          resolve(out);
          return;
        }
      }
    };
    s.on('data', onData);
    s.once('error', reject);
  });
}

describe('health probes answered by the HTTP/1.1 front connection', () => {
  it('answers a probe before the registration is acknowledged, without a backend connection; other requests wait for it', async () => {
    const { front, ack, registered } = await frontWithHeldRegistration();
    const s = await open(front);
    try {
      const opened = seen.opened;
      const before = seen.requests.length;
      const probes = bodies(s, 2);
      s.write('GET /livez HTTP/1.1\r\nHost: x\r\n\r\nGET /livez HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(await probes).toEqual(['local ok', 'local ok']);
      expect(registered()).toBe(1);
      expect(seen.opened).toBe(opened);
      // a request for the backend is held until the parent knows the connection
      const version = bodies(s, 1);
      s.write('GET /version HTTP/1.1\r\nHost: x\r\n\r\n');
      // a probe round trip after the write: the front has read /version by then
      const settled = await open(front);
      const viaOther = bodies(settled, 1);
      settled.write('GET /livez HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(await viaOther).toEqual(['local ok']);
      settled.destroy();
      expect(seen.requests.length).toBe(before);
      ack();
      expect(await version).toEqual(['backend GET /version HTTP/1.1']);
      expect(seen.opened).toBe(opened + 1);
    } finally {
      s.destroy();
      await front.close();
    }
  });

  it('keeps request order: a probe pipelined behind a forwarded request goes to the backend behind it', async () => {
    const { front, ack } = await frontWithHeldRegistration();
    ack();
    const s = await open(front);
    try {
      const got = bodies(s, 4);
      s.write('GET /livez HTTP/1.1\r\nHost: x\r\n\r\nGET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /livez HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(await got).toEqual(['local ok', 'backend GET /a HTTP/1.1', 'backend GET /livez HTTP/1.1', 'backend GET /b HTTP/1.1']);
    } finally {
      s.destroy();
      await front.close();
    }
  });

  it('closes the connection after a probe with Connection: close', async () => {
    const { front, ack } = await frontWithHeldRegistration();
    ack();
    const s = await open(front);
    try {
      const ended = new Promise<void>((resolve) => s.once('end', resolve));
      const got = bodies(s, 1);
      s.write('GET /livez HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      expect(await got).toEqual(['local ok']);
      await ended;
    } finally {
      s.destroy();
      await front.close();
    }
  });
});
