// SPDY/3.1 upgrades through uWebSockets.js (docs/tls.md "SPDY upgrades").
// uWS upgrades only WebSockets and cannot hand a connection over, so a
// handler's TunnelResponse is answered with an internal `101` that carries a
// one-time token (TUNNEL_HEADER). The TLS front, which reads every byte uWS
// writes, recognizes that head (response-chunk-framer.ts), does not pass it
// on, leaves the uWS connection, and connects the client's connection to
// this listener (a unix socket beside uWS's): the token and a newline first,
// then the client's bytes. The token names the waiting ByteTunnel, which
// writes the real `101` and relays the connection from there on.

import { randomBytes } from 'node:crypto';
import { unlink } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Clock, TimerHandle } from '../core/clock.js';
import type { ByteTunnel } from '../endpoints/request.js';
import { ResponseChunkFramer } from './response-chunk-framer.js';
import { recordWriterAfterHandshake, type WebSocketRecordWriter } from './ws-record-writer.js';

/** the internal header of the token-carrying 101; it never reaches a client */
export const TUNNEL_HEADER = 'X-Orch-Tunnel';
/** beside it, `websocket` for a tunnel that carries a WebSocket (its frames are written one TLS record each) */
export const TUNNEL_KIND_HEADER = 'X-Orch-Tunnel-Kind';
/** a token the front did not bring within this is dropped (the tunnel is closed) */
const TOKEN_TTL_MS = 10_000;
/** 32 random bytes in hex and the newline */
const TOKEN_LINE_BYTES = 65;

/** the tunnel listener's path, beside the uWS socket (both the main process and the fronts derive it) */
export const tunnelSocketPath = (backendSocketPath: string): string => `${backendSocketPath}.tunnel`;

export interface ByteTunnelListener {
  /** keeps `tunnel` for the front's connection; the token goes into the internal 101 */
  offer(tunnel: ByteTunnel): string;
  close(): Promise<void>;
}

export async function startByteTunnelListener(path: string, clock: Clock): Promise<ByteTunnelListener> {
  const waiting = new Map<string, { tunnel: ByteTunnel; timer: TimerHandle }>();
  const open = new Set<Socket>();
  const server: Server = createServer((socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => socket.destroy());
    let line = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      line = Buffer.concat([line, chunk]);
      const nl = line.indexOf(0x0a);
      if (nl < 0) {
        if (line.length >= TOKEN_LINE_BYTES) socket.destroy();
        return;
      }
      socket.off('data', onData);
      socket.pause();
      const entry = waiting.get(line.subarray(0, nl).toString('latin1'));
      if (!entry) return void socket.destroy();
      waiting.delete(line.subarray(0, nl).toString('latin1'));
      entry.timer.cancel();
      const rest = line.subarray(nl + 1);
      if (rest.length > 0) socket.unshift(rest);
      entry.tunnel.open(socket);
      socket.resume();
    };
    socket.on('data', onData);
  });
  await unlink(path).catch(() => undefined);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    offer(tunnel) {
      // authenticates the front's connection to this tunnel: from node:crypto (src/core/random.ts)
      const token = randomBytes(32).toString('hex');
      const timer = clock.setTimeout(() => {
        if (waiting.delete(token)) tunnel.close();
      }, TOKEN_TTL_MS);
      waiting.set(token, { tunnel, timer });
      return token;
    },
    async close() {
      for (const { tunnel, timer } of waiting.values()) {
        timer.cancel();
        tunnel.close();
      }
      waiting.clear();
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The front's side: the client's connection, past its upgrade request, relayed to the tunnel
 * listener of the main process behind `token`, with back-pressure both ways (`fail` on a broken one).
 */
export function relayToTunnel(client: Duplex, backendSocketPath: string, token: string, fail: () => void, webSocket = false): Socket {
  const t = connect({ path: tunnelSocketPath(backendSocketPath) });
  t.write(`${token}\n`);
  const frames = webSocket ? webSocketRecords(client, t) : undefined;
  t.on('data', (d: Buffer) => {
    if (frames) return frames.push(d);
    if (!client.write(d)) t.pause();
  });
  // the record writer paces the tunnel itself
  if (!frames) client.on('drain', () => t.resume());
  client.on('data', (d: Buffer) => {
    if (!t.write(d)) client.pause();
  });
  t.on('drain', () => client.resume());
  client.on('end', () => t.end());
  const endClient = () => {
    if (frames) frames.end();
    else if (!client.destroyed && !client.writableEnded) client.end();
  };
  t.on('end', endClient);
  t.on('error', fail);
  t.on('close', endClient);
  client.resume();
  return t;
}

/**
 * A WebSocket's bytes from the tunnel to the client: the handshake's 101 as one record, then one TLS
 * record per frame (src/gateway/ws-record-writer.ts), as on a connection uWS upgraded.
 */
function webSocketRecords(client: Duplex, t: Socket): { push(d: Buffer): void; end(): void } {
  const framer = new ResponseChunkFramer();
  let writer: WebSocketRecordWriter | undefined;
  let ended = false;
  return {
    push(d) {
      if (writer) return writer.push(d);
      const out = framer.frame(d);
      if (framer.webSocket) writer = recordWriterAfterHandshake(out, framer.takeWebSocketBytes(), client, t);
      else if (out && !client.write(out)) t.pause();
    },
    end() {
      if (ended) return;
      ended = true;
      if (writer) return writer.end();
      const rest = framer.finish();
      if (!client.destroyed && !client.writableEnded) client.end(rest);
    },
  };
}
