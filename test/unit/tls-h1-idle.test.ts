// "socket hang up" on kept-alive connections (docs/scale.md, issue #13): uWS
// closes a backend connection idle for ~10 s, and under event-loop lag its
// timer sweep can run before it reads a request that has already arrived;
// the request is lost and the client's connection was ended or reset. The
// backend here plays that race on purpose: a request arriving on a
// connection idle for RACE_MS is not read, the connection is reset. The
// front retires idle backend connections itself (backendIdleMs) so the
// request goes to a fresh one (src/gateway/tls-h1-connection.ts).
import { Agent, request } from 'node:https';
import { type Clock, systemClock } from '../../src/core/clock.js';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROXY_V2_TCP6_HEADER_LENGTH, startTlsFront, type TlsFront } from '../../src/gateway/tls-front.js';
import type { Pki } from '../../src/server/pki.js';
import { pkiAndUnixBackend, requestHeads, type UnixBackendFixture } from '../helpers/unix-backend.js';

const RACE_MS = 600;

let fixture: UnixBackendFixture | undefined;
let pki: Pki;
let socketPath: string;
/** backend connections opened, and those reset by the race */
const counts = { opened: 0, raced: 0 };

/** a minimal HTTP/1.1 backend behind the PROXY header: GET only, answers `ok <n>` */
function serveBackend(s: Socket): void {
  counts.opened++;
  let lastAnsweredAt = 0;
  const consume = requestHeads(() => {
    const body = `ok ${counts.opened}`;
    s.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    lastAnsweredAt = Date.now();
  });
  s.on('error', () => undefined);
  s.on('data', (chunk: Buffer) => {
    if (lastAnsweredAt > 0 && Date.now() - lastAnsweredAt >= RACE_MS) {
      // uWS's idle sweep won: the request is never read, the connection is closed
      counts.raced++;
      s.destroy();
      return;
    }
    consume(chunk);
  });
}

beforeAll(async () => {
  fixture = await pkiAndUnixBackend('orch-tls-h1-idle-', serveBackend);
  ({ pki, socketPath } = fixture);
});

afterAll(async () => {
  await fixture?.close();
});

async function twoRequestsWithAPause(front: TlsFront): Promise<{ results: (string | Error)[]; sockets: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: pki.ca.certPem, cert: pki.admin.certPem, key: pki.admin.keyPem });
  const sockets = new Set<Socket>();
  const get = (path: string) =>
    new Promise<string>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: front.port, path, agent, servername: 'localhost' }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve(body));
      });
      req.on('socket', (s: Socket) => sockets.add(s));
      req.on('error', reject);
      req.end();
    });
  const results: (string | Error)[] = [];
  try {
    results.push(await get('/a').catch((e: Error) => e));
    await new Promise((r) => setTimeout(r, RACE_MS + 400));
    results.push(await get('/b').catch((e: Error) => e));
  } finally {
    agent.destroy();
  }
  return { results, sockets: sockets.size };
}

/** both requests answered on one TLS connection over two backend connections, no race lost */
async function expectRetiredBeforeTheRace(clock: Clock): Promise<void> {
  const front = await startTlsFront({ host: '127.0.0.1', port: 0, key: pki.serving.keyPem, cert: pki.serving.certPem, clientCA: pki.ca.certPem, backendSocketPath: socketPath, backendIdleMs: 200, clock });
  try {
    const raced = counts.raced;
    const opened = counts.opened;
    const { results, sockets } = await twoRequestsWithAPause(front);
    expect(results).toEqual([`ok ${opened + 1}`, `ok ${opened + 2}`]);
    expect(sockets).toBe(1);
    expect(counts.raced).toBe(raced);
  } finally {
    await front.close();
  }
}

describe('kept-alive HTTP/1.1 connection across a backend idle close', () => {
  it('reproduces the reset when the front keeps the idle backend connection (retirement off)', async () => {
    const front = await startTlsFront({ host: '127.0.0.1', port: 0, key: pki.serving.keyPem, cert: pki.serving.certPem, clientCA: pki.ca.certPem, backendSocketPath: socketPath, backendIdleMs: 3_600_000 });
    try {
      const raced = counts.raced;
      const { results } = await twoRequestsWithAPause(front);
      expect(typeof results[0]).toBe('string');
      expect(results[1]).toBeInstanceOf(Error);
      expect((results[1] as NodeJS.ErrnoException).code ?? (results[1] as Error).message).toMatch(/ECONNRESET|socket hang up/);
      expect(counts.raced).toBe(raced + 1);
    } finally {
      await front.close();
    }
  });

  it('answers the request after the pause on the same client connection: the idle backend connection was retired first', async () => {
    await expectRetiredBeforeTheRace(systemClock);
  });

  it('retires an overdue backend connection when the next request comes, if its retirement timer ran late', async () => {
    // A worker starved of CPU runs its timers seconds late (docs/scale.md,
    // load average 24): the retirement timer has not fired yet when the
    // next request arrives, and uWS's idle close races it. This clock's
    // long timers never fire; short ones (head coalescing, linger) do.
    const lateClock: Clock = {
      now: () => Date.now(),
      setTimeout: (fn, ms) => (ms >= 200 ? { cancel: () => undefined } : systemClock.setTimeout(fn, ms)),
    };
    await expectRetiredBeforeTheRace(lateClock);
  });
});
