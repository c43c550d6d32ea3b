// Port-forward over WebSocket (kube's `v4.channel.k8s.io` / `portforward.k8s.io`
// channel protocol, `/portForward/{namespace}/{pod}?port=P&port=Q`): port i
// has data channel 2i and error channel 2i+1; the server's first message on
// each channel is the channel byte and the port (2 bytes, little-endian).
// Each port is one runtime PortForwardStream, i.e. one TCP connection to the
// port in the pod's sandbox; the WebSocket closes when all of them have ended.

import type * as grpc from '@grpc/grpc-js';
import type { WebSocket, RawData } from 'ws';
import type { RuntimeClient } from '../runtime/client.js';
import type { PortForwardFrame } from '../runtime/types.js';
import { messageBuffer } from '../../core/ws-message.js';
import { HttpError } from './target.js';

import { SPDY_TUNNEL_PROTOCOL } from './portforward-spdy.js';

/** kubectl 1.32 offers the SPDY tunnel; client libraries the channel protocol */
export const PORT_FORWARD_PROTOCOLS = [SPDY_TUNNEL_PROTOCOL, 'v4.channel.k8s.io', 'portforward.k8s.io'];

/** the ports of the channel protocol; the SPDY tunnel names them per stream instead (`required` false) */
export function parsePorts(q: URLSearchParams, required = true): number[] {
  const ports = q.getAll('port').flatMap((p) => p.split(','));
  if (ports.length === 0 && required) throw new HttpError(400, 'query parameter "port" is required');
  return ports.map((p) => {
    if (!/^\d+$/.test(p) || Number(p) < 1 || Number(p) > 65535) throw new HttpError(400, `invalid port "${p}": must be 1-65535`);
    return Number(p);
  });
}

export function bridgePortForward(ws: WebSocket, runtime: RuntimeClient, sandboxId: string, ports: number[], log: (m: string) => void): void {
  const calls: (grpc.ClientDuplexStream<PortForwardFrame, PortForwardFrame> | undefined)[] = [];
  let open = ports.length;
  const send = (channel: number, data: Buffer) => {
    if (ws.readyState !== 1) return;
    const msg = Buffer.allocUnsafe(data.length + 1);
    msg[0] = channel;
    data.copy(msg, 1);
    ws.send(msg, { binary: true });
  };
  const portBytes = (p: number) => Buffer.from([p & 0xff, p >> 8]);
  const ended = () => {
    if (--open === 0 && ws.readyState === 1) ws.close(1000);
  };
  ports.forEach((port, i) => {
    send(2 * i, portBytes(port));
    send(2 * i + 1, portBytes(port));
    const call = runtime.portForwardStream();
    calls[i] = call;
    let done = false;
    const end = () => {
      if (done) return;
      done = true;
      ended();
    };
    call.on('data', (f: PortForwardFrame) => {
      if (f.data && f.data.length > 0) send(2 * i, Buffer.from(f.data));
      if (f.close) end();
    });
    call.on('end', end);
    call.on('error', (e: Error & { code?: number; details?: string }) => {
      if (e.code !== 1) {
        const text = `an error occurred forwarding ${port} -> ${port}: ${e.details ?? e.message}`;
        log(`port-forward: ${text}`);
        send(2 * i + 1, Buffer.from(text));
      }
      end();
    });
    call.write({ podSandboxId: sandboxId, port });
  });
  ws.on('message', (raw: RawData) => {
    const data = messageBuffer(raw);
    if (data.length === 0) return;
    const ch = data[0]!;
    // data channels only; what a client writes on an error channel means nothing
    if (ch % 2 !== 0) return;
    const call = calls[ch / 2];
    if (call && data.length > 1) call.write({ data: data.subarray(1) });
  });
  ws.on('close', () => {
    for (const c of calls) c?.cancel();
  });
  ws.on('error', () => undefined);
}
