// A real HTTPS server that plays a peer closing a kept-alive connection just as
// the client sends its next request on it (the peer's idle timeout racing the
// reuse): the second request on every connection gets no answer, its
// connection is destroyed. Used to pin the API server's clients' retry of such
// a request on a new connection (src/core/reused-connection.ts).
import { type IncomingMessage, type ServerResponse } from 'node:http';
import { type Server, createServer } from 'node:https';
import type { AddressInfo } from 'node:net';

export interface IdleClosingServer {
  port: number;
  /** TLS connections accepted so far */
  connections(): number;
  /** `METHOD url` of every request answered (the dropped ones are not) */
  served: string[];
  close(): Promise<void>;
}

export async function startIdleClosingServer(tls: { certPem: string; keyPem: string }, answer: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<IdleClosingServer> {
  let connections = 0;
  const served: string[] = [];
  const server: Server = createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
    const socket = req.socket as typeof req.socket & { served?: number };
    socket.served = (socket.served ?? 0) + 1;
    if (socket.served === 2) {
      req.socket.destroy();
      return;
    }
    let body = '';
    req.on('data', (c: Buffer) => (body += String(c)));
    req.on('end', () => {
      served.push(`${req.method} ${req.url}`);
      answer(req, res, body);
    });
  });
  server.on('secureConnection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    served,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
