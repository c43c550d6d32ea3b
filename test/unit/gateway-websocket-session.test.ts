// The gateway's WebSocket sessions (src/gateway/http-server.ts): every upgrade
// completes after the handler answered, and the session opens on the turn
// after uWS's open callback (a send inside it could make this uWS build close
// the new socket: uWebSockets.js #1108). What a session sends as it opens
// still comes first; what the client sends at once, and its close, reach the
// session after its open, in order.
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHttpServer, type HttpServer } from '../../src/gateway/http-server.js';
import { startTlsFront } from '../../src/gateway/tls-front.js';
import { ensurePki } from '../../src/server/pki.js';
import type { UpgradeSession, WebSocketPeer } from '../../src/endpoints/request.js';

let server: HttpServer | undefined;
afterEach(async () => {
  await server?.close(1000);
  server = undefined;
});

/** a server whose every WebSocket gets a session from `make`, after an asynchronous step as the API's handlers take */
async function serve(make: () => UpgradeSession): Promise<number> {
  server = await startHttpServer({
    listen: { host: '127.0.0.1', port: 0 },
    maxBodyBytes: 1024,
    webSocketPaths: ['/ws'],
    tooLarge: () => ({ status: 413, headers: [], body: '' }),
    handle: async () => {
      await new Promise((r) => setImmediate(r));
      return { status: 101, headers: [], body: undefined, upgrade: make() } as never;
    },
  });
  return server.port;
}

function recordingSession(events: string[], onOpen: (peer: WebSocketPeer) => void = () => undefined): UpgradeSession {
  return {
    protocol: 'v4.channel.k8s.io',
    open(peer) {
      events.push('open');
      onOpen(peer);
    },
    message: (d) => events.push(`message ${d.toString()}`),
    drain: () => undefined,
    close: () => events.push('close'),
  };
}

const until = async (f: () => boolean) => {
  for (let i = 0; i < 500 && !f(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(f()).toBe(true);
};

describe('gateway WebSocket sessions', () => {
  it("delivers what a session sends as it opens, first and in order, on every one of 200 upgrades", async () => {
    const port = await serve(() => recordingSession([], (peer) => {
      peer.send(Buffer.from([0, 0x50, 0x1f]));
      peer.send(Buffer.from([1, 0x50, 0x1f]));
    }));
    for (let i = 0; i < 200; i++) {
      const got = await new Promise<number[][]>((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, ['v4.channel.k8s.io']);
        const msgs: number[][] = [];
        ws.on('message', (raw) => {
          const d = raw as Buffer;
          msgs.push([...d]);
          if (msgs.length === 2) {
            ws.close();
            resolve(msgs);
          }
        });
        ws.on('close', () => resolve(msgs));
        ws.on('error', reject);
      });
      expect(got, `upgrade ${i}`).toEqual([[0, 0x50, 0x1f], [1, 0x50, 0x1f]]);
    }
  });

  it('hands the session what the client sent at once, and its close, after the open', async () => {
    const events: string[] = [];
    const port = await serve(() => recordingSession(events));
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, ['v4.channel.k8s.io']);
    await new Promise((r) => ws.once('open', r));
    ws.send('a');
    ws.send('b');
    ws.close();
    await until(() => events.includes('close'));
    expect(events).toEqual(['open', 'message a', 'message b', 'close']);
  });

  it('ends the connection when the session ends it as it opens, after what it sent', async () => {
    const port = await serve(() => recordingSession([], (peer) => {
      peer.send(Buffer.from('last words'));
      peer.end(1000, 'done');
    }));
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, ['v4.channel.k8s.io']);
    const msgs: string[] = [];
    ws.on('message', (raw) => msgs.push((raw as Buffer).toString()));
    const [code, reason] = await new Promise<[number, string]>((r) => ws.once('close', (c, why: Buffer) => r([c, why.toString()])));
    expect({ code, reason, msgs }).toEqual({ code: 1000, reason: 'done', msgs: ['last words'] });
  });
});

describe('behind the TLS front (the connection handed over to Node ws)', () => {
  it('carries the session both ways and closes it with 1001 when the server shuts down', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'orch-ws-tunnel-'));
    const pki = await ensurePki(join(dir, 'pki'), {});
    const events: string[] = [];
    const backend = await startHttpServer({
      listen: { unixPath: join(dir, 'gateway.sock') },
      maxBodyBytes: 1024,
      webSocketPaths: ['/ws'],
      tooLarge: () => ({ status: 413, headers: [], body: '' }),
      handle: async () => {
        await new Promise((r) => setImmediate(r));
        return { status: 101, headers: [], body: undefined, upgrade: recordingSession(events, (peer) => peer.send(Buffer.from('hello'))) } as never;
      },
    });
    const front = await startTlsFront({ host: '127.0.0.1', port: 0, key: pki.serving.keyPem, cert: pki.serving.certPem, clientCA: pki.ca.certPem, backendSocketPath: join(dir, 'gateway.sock') });
    try {
      const ws = new WebSocket(`wss://127.0.0.1:${front.port}/ws`, ['v4.channel.k8s.io'], { ca: pki.ca.certPem, cert: pki.admin.certPem, key: pki.admin.keyPem, servername: 'localhost' });
      const got: string[] = [];
      ws.on('message', (raw) => got.push((raw as Buffer).toString()));
      const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
      await new Promise((r, j) => {
        ws.once('open', r);
        ws.once('error', j);
      });
      // (kubectl's `SPDY/3.1+portforward.k8s.io`, no token to ws's parser, is test/nodeagent/streams.test.ts's)
      expect(ws.protocol).toBe('v4.channel.k8s.io');
      ws.send('ping');
      await until(() => got.includes('hello') && events.includes('message ping'));
      await backend.close(1000);
      expect(await closed).toBe(1001);
      await until(() => events.includes('close'));
      expect(events).toEqual(['open', 'message ping', 'close']);
    } finally {
      await front.close();
      await backend.close(100);
      await rm(dir, { recursive: true, force: true });
    }
  });
});
