// The API server's client of node agents (docs/nodeagent.md "Streams"):
// HTTPS requests and WebSockets to `https://<node address>:<agent port>`,
// authenticated with the apiserver-kubelet-client certificate (issued from
// the cluster CA at start; CN orch-apiserver-kubelet-client, O system:masters,
// as kubeadm issues kube's), which agents trust through their
// `authentication.x509.clientCAFile`. As kube-apiserver without
// `--kubelet-certificate-authority`, the agent's serving certificate is not
// verified (agents sign their own, spec 002 §4.2).

import type { Clock } from '../core/clock.js';
import { messageBuffer } from '../core/ws-message.js';
import { request as httpRequest } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import { REPLAYABLE_METHODS, closedReusedConnection } from '../core/reused-connection.js';
import { Duplex } from 'node:stream';
import { WebSocket } from 'ws';
import { NodeRefusal, NodeUnreachable, type NodeEndpoint, type NodeHttpResponse, type NodeTransport, type NodeUpgrade, type NodeWebSocket } from '../endpoints/handlers/node-transport.js';
import type { CertificateAndKey } from './pki.js';

export const KUBELET_CLIENT_COMMON_NAME = 'orch-apiserver-kubelet-client';
export const KUBELET_CLIENT_ORGANIZATION = 'system:masters';

/** connecting and the agent's answer must come within this; the stream itself has no deadline */
const CONNECT_TIMEOUT_MS = 10_000;

const hostPort = (ep: NodeEndpoint) => `${ep.host.includes(':') ? `[${ep.host}]` : ep.host}:${ep.port}`;

/**
 * One TCP connection to a pod's port as a Duplex, over the agent's port-forward WebSocket
 * (`v4.channel.k8s.io`: channel 0 data, 1 error, each starting with the 2-byte port).
 */
function portForwardConnection(ws: NodeWebSocket): Duplex {
  const prefixSeen = [false, false];
  const conn = new Duplex({
    read: () => ws.resume(),
    write(chunk: Buffer, _enc, cb) {
      ws.send(Buffer.concat([Buffer.from([0]), chunk]));
      cb();
    },
    destroy(err, cb) {
      ws.close();
      cb(err);
    },
  });
  ws.onMessage((m) => {
    const ch = m[0];
    if (ch !== 0 && ch !== 1) return;
    let data = m.subarray(1);
    if (!prefixSeen[ch]) {
      prefixSeen[ch] = true;
      data = data.subarray(2);
    }
    if (data.length === 0) return;
    if (ch === 1) conn.destroy(new Error(data.toString()));
    else if (!conn.push(data)) ws.pause();
  });
  ws.onClose(() => conn.push(null));
  return conn;
}

export function createNodeTransport(client: CertificateAndKey, clock: Clock): NodeTransport & { close(): void } {
  const agent = new Agent({ keepAlive: true, cert: client.certPem, key: client.keyPem, rejectUnauthorized: false, maxSockets: 64 });
  const transport: NodeTransport & { close(): void } = {
    request(ep, method, pathAndQuery, opts) {
      const attempt = (mayRetry: boolean): Promise<NodeHttpResponse> =>
        new Promise<NodeHttpResponse>((resolve, reject) => {
          const headers: Record<string, string> = { ...(opts.headers ?? {}) };
          if (opts.body) headers['content-length'] = String(opts.body.byteLength);
          let answered = false;
          const req = httpsRequest({ host: ep.host, port: ep.port, method, path: pathAndQuery, headers, agent, signal: opts.signal }, (res) => {
            answered = true;
            timer.cancel();
            resolve({ status: res.statusCode ?? 502, headers: res.headers, body: res });
          });
          const timer = clock.setTimeout(() => req.destroy(new Error(`no answer within ${CONNECT_TIMEOUT_MS / 1000}s`)), CONNECT_TIMEOUT_MS);
          req.on('error', (e: NodeJS.ErrnoException) => {
            timer.cancel();
            // A kept-alive connection the agent closed (its idle timeout) just as this request went out on it
            // ("socket hang up", a reset): a request that changes nothing goes again, once, on a new connection
            // (the reusedSocket pattern of Node's http docs). `kubectl logs` failed with 503 on this race.
            if (mayRetry && !answered && closedReusedConnection(req, e) && REPLAYABLE_METHODS.has(method) && !opts.body && !opts.signal?.aborted) {
              resolve(attempt(false));
              return;
            }
            reject(new NodeUnreachable(`${method} https://${hostPort(ep)}${pathAndQuery.split('?')[0]}: ${e.message}`));
          });
          req.end(opts.body ? Buffer.from(opts.body) : undefined);
        });
      return attempt(true);
    },

    websocket(ep, pathAndQuery, protocols) {
      return new Promise<NodeWebSocket>((resolve, reject) => {
        const ws = new WebSocket(`wss://${hostPort(ep)}${pathAndQuery}`, protocols, {
          cert: client.certPem,
          key: client.keyPem,
          rejectUnauthorized: false,
          perMessageDeflate: false,
          handshakeTimeout: CONNECT_TIMEOUT_MS,
          maxPayload: 16 * 1024 * 1024,
        });
        let settled = false;
        ws.on('unexpected-response', (_req, res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            settled = true;
            reject(new NodeRefusal(res.statusCode ?? 502, Buffer.concat(chunks).toString()));
          });
        });
        ws.on('error', (e) => {
          if (!settled) {
            settled = true;
            reject(new NodeUnreachable(`wss://${hostPort(ep)}${pathAndQuery.split('?')[0]}: ${e.message}`));
          }
        });
        ws.once('open', () => {
          settled = true;
          // the agent may speak at once (port-forward's port prefixes): kept until someone listens
          let onMessage: ((d: Buffer) => void) | undefined;
          let onClose: (() => void) | undefined;
          const pending: Buffer[] = [];
          let closed = false;
          ws.on('message', (data) => {
            const buf = messageBuffer(data);
            if (onMessage) onMessage(buf);
            else pending.push(buf);
          });
          ws.on('close', () => {
            closed = true;
            if (onMessage) onClose?.();
          });
          resolve({
            protocol: ws.protocol,
            send: (d) => ws.readyState === WebSocket.OPEN && ws.send(d, { binary: true }),
            bufferedAmount: () => ws.bufferedAmount,
            pause: () => ws.pause(),
            resume: () => ws.resume(),
            close: (code = 1000) => {
              if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.close(code);
            },
            onMessage: (f) => {
              onMessage = f;
              for (const d of pending.splice(0)) f(d);
              if (closed) onClose?.();
            },
            onClose: (f) => {
              onClose = f;
              if (closed && onMessage) f();
            },
          });
        });
      });
    },

    upgrade(ep, method, pathAndQuery, headers) {
      return new Promise<NodeUpgrade>((resolve, reject) => {
        // its own connection (no agent: an upgraded socket never returns to a pool)
        const req = httpsRequest({ host: ep.host, port: ep.port, method, path: pathAndQuery, headers, cert: client.certPem, key: client.keyPem, rejectUnauthorized: false, agent: false });
        const timer = clock.setTimeout(() => req.destroy(new Error(`no answer within ${CONNECT_TIMEOUT_MS / 1000}s`)), CONNECT_TIMEOUT_MS);
        req.on('upgrade', (res, socket, head) => {
          timer.cancel();
          // SPDY frames are small and interactive: without this, Nagle held each behind the agent's delayed ACK
          // (a kubectl port-forward over SPDY took ≈ 19 ms a connection instead of ≈ 2.5)
          socket.setNoDelay(true);
          resolve({ headers: res.headers, socket, head });
        });
        req.on('response', (res) => {
          timer.cancel();
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => reject(new NodeRefusal(res.statusCode ?? 502, Buffer.concat(chunks).toString())));
          res.on('error', (e) => reject(new NodeUnreachable(e.message)));
        });
        req.on('error', (e) => {
          timer.cancel();
          reject(new NodeUnreachable(`${method} https://${hostPort(ep)}${pathAndQuery.split('?')[0]}: ${e.message}`));
        });
        req.end();
      });
    },

    async podRequest(ep, pod, method, pathAndQuery, opts) {
      const ws = await transport.websocket(ep, `/portForward/${encodeURIComponent(pod.namespace)}/${encodeURIComponent(pod.name)}?port=${pod.port}`, ['v4.channel.k8s.io']);
      const conn = portForwardConnection(ws);
      return new Promise<NodeHttpResponse>((resolve, reject) => {
        const headers: Record<string, string> = { host: `${pod.name}:${pod.port}`, connection: 'close', ...(opts.headers ?? {}) };
        if (opts.body) headers['content-length'] = String(opts.body.byteLength);
        const req = httpRequest({ method, path: pathAndQuery, headers, createConnection: () => conn, signal: opts.signal }, (res) => {
          resolve({ status: res.statusCode ?? 502, headers: res.headers, body: res });
        });
        req.on('error', (e) => reject(new NodeUnreachable(`${method} port ${pod.port} of pod ${pod.namespace}/${pod.name}: ${e.message}`)));
        req.end(opts.body ? Buffer.from(opts.body) : undefined);
      });
    },

    close() {
      agent.destroy();
    },
  };
  return transport;
}
