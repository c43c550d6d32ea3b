// The API server's client of node agents (src/server/node-transport.ts) against a
// real HTTPS server that plays the agent closing a kept-alive connection just as
// the next request goes out on it: a request that changes nothing is sent again,
// once, on a new connection; one that changes something is not.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { NodeUnreachable } from '../../src/endpoints/handlers/node-transport.js';
import { createNodeTransport } from '../../src/server/node-transport.js';
import { type Pki, ensurePki } from '../../src/server/pki.js';
import { type IdleClosingServer, startIdleClosingServer } from '../helpers/idle-closing-server.js';

let dir: string;
let pki: Pki;
let server: IdleClosingServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-node-transport-'));
  pki = await ensurePki(join(dir, 'pki'), { hosts: ['127.0.0.1'] });
  server = await startIdleClosingServer(pki.serving, (req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`answer to ${req.method} ${req.url}`);
  });
});

afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

async function text(body: Readable): Promise<string> {
  let out = '';
  for await (const c of body) out += String(c);
  return out;
}

describe('node transport', () => {
  it('sends a GET again on a new connection when the kept-alive one is closed under it; a POST fails', async () => {
    const transport = createNodeTransport(pki.admin, systemClock);
    const ep = { nodeName: 'n1', host: '127.0.0.1', port: server.port };
    try {
      const first = await transport.request(ep, 'GET', '/containerLogs/ns/p/c', {});
      expect(await text(first.body as Readable)).toBe('answer to GET /containerLogs/ns/p/c');
      // the pooled connection is reused, and closed by the "agent": answered on a second connection
      const second = await transport.request(ep, 'GET', '/containerLogs/ns/p/c?tailLines=1', {});
      expect(second.status).toBe(200);
      expect(await text(second.body as Readable)).toBe('answer to GET /containerLogs/ns/p/c?tailLines=1');
      expect(server.connections()).toBe(2);
      // a request with a body is not sent twice: its failure is the caller's to see
      const post = transport.request(ep, 'POST', '/run/ns/p/c', { body: new TextEncoder().encode('x') });
      await expect(post).rejects.toBeInstanceOf(NodeUnreachable);
      expect(server.served.filter((s) => s.startsWith('POST'))).toEqual([]);
    } finally {
      transport.close();
    }
  });
});
