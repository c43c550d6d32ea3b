// A kept-alive client connection outlives uWS's fixed ~10 s idle close: the
// TLS front keeps it and hands the next request to a fresh backend connection
// (src/gateway/tls-front.ts), as kube-apiserver keeps idle connections for 90 s.
// Clients renewing every 10 s (node Leases) otherwise raced the close.
import { Agent, request } from 'node:https';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.stop();
});

describe('idle keep-alive connections', () => {
  it('serve the next request on the same TLS connection after 11 s of silence', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: t.server.caPem, cert: t.server.adminCertPem, key: t.server.adminKeyPem });
    const sockets: Socket[] = [];
    const get = (path: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: t.server.port, path, agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('socket', (s: Socket) => {
          if (!sockets.includes(s)) sockets.push(s);
        });
        req.on('error', reject);
        req.end();
      });
    try {
      expect(await get('/api/v1/namespaces/default/configmaps')).toBe(200);
      await new Promise((r) => setTimeout(r, 11_000));
      expect(sockets[0]!.destroyed).toBe(false);
      expect(await get('/api/v1/namespaces/default/configmaps')).toBe(200);
      expect(await get('/version')).toBe(200);
      // one TLS connection served all three
      expect(sockets).toHaveLength(1);
    } finally {
      agent.destroy();
    }
  }, 30_000);
});
