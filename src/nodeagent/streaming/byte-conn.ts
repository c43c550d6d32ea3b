// The byte stream a SPDY session runs on: a WebSocket's binary messages
// (kubectl 1.32's `SPDY/3.1+portforward.k8s.io` tunnel) or the raw socket of
// a `Upgrade: SPDY/3.1` connection (kubectl ≤ 1.29, client-go's SPDY
// executors, kubectl 1.32 with the *_WEBSOCKETS=false switches).

import type { Duplex } from 'node:stream';
import type { RawData, WebSocket } from 'ws';
import { messageBuffer } from '../../core/ws-message.js';

export interface ByteConn {
  write(bytes: Buffer): void;
  onData(f: (bytes: Buffer) => void): void;
  /** the peer went away (or `close()` was called) */
  onClose(f: () => void): void;
  /** ends the connection after what was written */
  close(): void;
  /** bytes written and not yet sent */
  backlog(): number;
  /** the backlog was sent (not told on a WebSocket, whose sessions here do not wait for it) */
  onDrain(f: () => void): void;
}

export function webSocketBytes(ws: WebSocket): ByteConn {
  return {
    write: (bytes) => {
      if (ws.readyState === 1) ws.send(bytes, { binary: true });
    },
    onData: (f) => ws.on('message', (raw: RawData) => f(messageBuffer(raw))),
    onClose: (f) => {
      ws.on('close', f);
      ws.on('error', () => undefined);
    },
    close: () => ws.close(1000),
    backlog: () => ws.bufferedAmount,
    onDrain: () => undefined,
  };
}

export function socketBytes(socket: Duplex): ByteConn {
  socket.on('error', () => socket.destroy());
  return {
    write: (bytes) => {
      if (!socket.destroyed && !socket.writableEnded) socket.write(bytes);
    },
    onData: (f) => socket.on('data', f),
    onClose: (f) => socket.on('close', f),
    close: () => {
      if (!socket.writableEnded) socket.end();
    },
    backlog: () => socket.writableLength,
    onDrain: (f) => socket.on('drain', f),
  };
}
