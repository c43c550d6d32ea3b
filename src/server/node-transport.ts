// The API server's client of node agents (docs/nodeagent.md "Streams"):
// HTTPS requests and WebSockets to `https://<node address>:<agent port>`,
// authenticated with the apiserver-kubelet-client certificate (issued from
// the cluster CA at start; CN orch-apiserver-kubelet-client, O system:masters,
// as kubeadm issues kube's), which agents trust through their
// `authentication.x509.clientCAFile`. As kube-apiserver without
// `--kubelet-certificate-authority`, the agent's serving certificate is not
// verified (agents sign their own, spec 002 §4.2).

import { Agent, request as httpsRequest } from 'node:https';
import { WebSocket } from 'ws';
import { NodeRefusal, NodeUnreachable, type NodeEndpoint, type NodeHttpResponse, type NodeTransport, type NodeWebSocket } from '../api/handlers/node-transport.js';
import type { CertificateAndKey } from './pki.js';

export const KUBELET_CLIENT_COMMON_NAME = 'orch-apiserver-kubelet-client';
export const KUBELET_CLIENT_ORGANIZATION = 'system:masters';

/** connecting and the agent's answer must come within this; the stream itself has no deadline */
const CONNECT_TIMEOUT_MS = 10_000;

const hostPort = (ep: NodeEndpoint) => `${ep.host.includes(':') ? `[${ep.host}]` : ep.host}:${ep.port}`;

export function createNodeTransport(client: CertificateAndKey): NodeTransport & { close(): void } {
  const agent = new Agent({ keepAlive: true, cert: client.certPem, key: client.keyPem, rejectUnauthorized: false, maxSockets: 64 });
  return {
    request(ep, method, pathAndQuery, opts) {
      return new Promise<NodeHttpResponse>((resolve, reject) => {
        const headers: Record<string, string> = { ...(opts.headers ?? {}) };
        if (opts.body) headers['content-length'] = String(opts.body.byteLength);
        const req = httpsRequest({ host: ep.host, port: ep.port, method, path: pathAndQuery, headers, agent, signal: opts.signal }, (res) => {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 502, headers: res.headers, body: res });
        });
        const timer = setTimeout(() => req.destroy(new Error(`no answer within ${CONNECT_TIMEOUT_MS / 1000}s`)), CONNECT_TIMEOUT_MS);
        req.on('error', (e) => {
          clearTimeout(timer);
          reject(new NodeUnreachable(`${method} https://${hostPort(ep)}${pathAndQuery.split('?')[0]}: ${e.message}`));
        });
        req.end(opts.body ? Buffer.from(opts.body) : undefined);
      });
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
            const buf = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
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

    close() {
      agent.destroy();
    },
  };
}
