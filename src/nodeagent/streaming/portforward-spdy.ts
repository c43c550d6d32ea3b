// kube's SPDY port-forward protocol (`portforward.k8s.io`), on a plain
// `Upgrade: SPDY/3.1` connection or as kubectl 1.32 speaks it inside a
// WebSocket (subprotocol `SPDY/3.1+portforward.k8s.io`, KEP-4006
// tunnelling; byte-conn.ts): for every local connection the client opens two SPDY
// streams with headers `streamtype` (`error` / `data`), `port` and
// `requestid`. Once both streams of a request id are there, one runtime
// PortForwardStream connects to the port in the pod's sandbox; its bytes
// travel on the data stream; a failure is written on the error stream; when
// the connection ends both streams are finished (FIN), which is what the
// client waits for.

import type * as grpc from '@grpc/grpc-js';
import type { RuntimeClient } from '../runtime/client.js';
import type { PortForwardFrame } from '../runtime/types.js';
import type { ByteConn } from './byte-conn.js';
import { SpdyServerSession } from './spdy.js';

/**
 * kubectl's subprotocol is `SPDY/3.1+portforward.k8s.io`, but `/` is not a token character
 * (RFC 6455 §4.1), and the WebSocket library refuses it; the API server names it this way
 * towards the agent (src/endpoints/handlers/node-streams.ts).
 */
export const SPDY_TUNNEL_PROTOCOL = 'SPDY-3.1+portforward.k8s.io';

interface Pair {
  port: number;
  error?: number;
  data?: number;
  call?: grpc.ClientDuplexStream<PortForwardFrame, PortForwardFrame>;
  /** client bytes that came before the runtime stream was open */
  pending: Buffer[];
  clientFin: boolean;
  done: boolean;
}

/** the protocol of a plain `Upgrade: SPDY/3.1` port-forward (kubelet's portforward.k8s.io) */
export const SPDY_PORT_FORWARD_PROTOCOL = 'portforward.k8s.io';

export function bridgeSpdyPortForward(conn: ByteConn, runtime: RuntimeClient, sandboxId: string, log: (m: string) => void): void {
  const pairs = new Map<string, Pair>();
  const byStream = new Map<number, Pair>();
  const session = new SpdyServerSession(
    (bytes) => conn.write(bytes),
    {
      onStream(id, headers, fin) {
        session.reply(id);
        const rid = headers.get('requestid') ?? String(id);
        const type = headers.get('streamtype');
        const port = Number(headers.get('port'));
        let p = pairs.get(rid);
        if (!p) {
          p = { port, pending: [], clientFin: false, done: false };
          pairs.set(rid, p);
        }
        byStream.set(id, p);
        if (type === 'error') p.error = id;
        else if (type === 'data') {
          p.data = id;
          if (fin) p.clientFin = true;
        } else {
          session.reset(id, 1 /* PROTOCOL_ERROR */);
          return;
        }
        if (p.error !== undefined && p.data !== undefined && !p.call) start(rid, p);
      },
      onData(id, data, fin) {
        const p = byStream.get(id);
        if (!p || id !== p.data) return; // the error stream carries nothing from the client
        if (!p.call) {
          if (data.length) p.pending.push(Buffer.from(data));
          if (fin) p.clientFin = true;
          return;
        }
        if (data.length) p.call.write({ data: Buffer.from(data) });
        if (fin) p.call.write({ close: true });
      },
      onReset(id) {
        const p = byStream.get(id);
        p?.call?.cancel();
      },
      onEnd(reason) {
        log(`port-forward: ${reason}`);
        conn.close();
      },
    },
  );

  const finish = (p: Pair, error?: string) => {
    if (p.done) return;
    p.done = true;
    if (error) session.data(p.error!, Buffer.from(error));
    session.data(p.data!, Buffer.alloc(0), true);
    session.data(p.error!, Buffer.alloc(0), true);
  };

  function start(rid: string, p: Pair): void {
    if (!(p.port > 0 && p.port < 65536)) return finish(p, `invalid port "${p.port}"`);
    const call = runtime.portForwardStream();
    p.call = call;
    call.on('data', (f: PortForwardFrame) => {
      if (f.data && f.data.length > 0) session.data(p.data!, Buffer.from(f.data));
      if (f.close) finish(p);
    });
    call.on('end', () => finish(p));
    call.on('error', (e: Error & { code?: number; details?: string }) => {
      if (e.code === 1) return finish(p);
      const text = `an error occurred forwarding ${p.port} -> ${p.port}: ${e.details ?? e.message}`;
      log(`port-forward (request ${rid}): ${text}`);
      finish(p, text);
    });
    call.write({ podSandboxId: sandboxId, port: p.port });
    for (const d of p.pending.splice(0)) call.write({ data: d });
    if (p.clientFin) call.write({ close: true });
  }

  conn.onData((bytes) => session.feed(bytes));
  conn.onClose(() => {
    for (const p of pairs.values()) p.call?.cancel();
  });
}
