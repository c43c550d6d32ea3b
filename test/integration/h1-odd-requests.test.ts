// Requests uWS answers with a silent close, answered by the TLS front
// (src/gateway/h1-request-head.ts): HTTP/1.0 (load balancers' health checks,
// ApacheBench) is served, without chunked framing and with the connection
// closed after the answer; a head that is not HTTP gets a Status (400, 405,
// 501, 505) and the connection's close, and nothing after it is read.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_NAMESPACE_DEFAULTS, type TestServer, startTestServer } from '../helpers/server.js';
import { adminTls, closedByServer } from '../helpers/raw-tls.js';

const NS = 'odd';

/** sends `raw` on a fresh admin connection; what the server sent until it closed */
async function exchange(t: TestServer, raw: string): Promise<string> {
  const s = await adminTls(t);
  s.write(raw);
  return closedByServer(s, 10_000);
}

function split(wire: string): { status: number; head: string; body: string } {
  const end = wire.indexOf('\r\n\r\n');
  return { status: Number(wire.slice(9, 12)), head: wire.slice(0, end), body: wire.slice(end + 4) };
}

describe('HTTP/1.0 and heads that are not HTTP, at the TLS front', () => {
  let t: TestServer;

  beforeAll(async () => {
    t = await startTestServer({ authn: NO_NAMESPACE_DEFAULTS });
    expect((await t.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } })).status).toBe(201);
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'one' }, data: { a: 'b' } };
    expect((await t.request('POST', `/api/v1/namespaces/${NS}/configmaps`, { body: cm })).status).toBe(201);
  });
  afterAll(async () => t.stop());

  it('serves an HTTP/1.0 GET with a Content-Length and closes the connection after it', async () => {
    const r = split(await exchange(t, `GET /api/v1/namespaces/${NS}/configmaps/one HTTP/1.0\r\n\r\n`));
    expect(r.status).toBe(200);
    expect(r.head).toMatch(/\r\nContent-Length: \d+/);
    expect(r.head).not.toMatch(/Transfer-Encoding/i);
    expect(JSON.parse(r.body)).toMatchObject({ kind: 'ConfigMap', data: { a: 'b' } });
  });

  it('answers an HTTP/1.0 health check (as a load balancer sends it)', async () => {
    const r = split(await exchange(t, 'GET /readyz HTTP/1.0\r\nUser-Agent: lb-check\r\n\r\n'));
    expect(r.status).toBe(200);
    expect(r.body).toBe('ok');
  });

  it('sends an HTTP/1.0 watch unchunked; the connection ends with the stream', async () => {
    const rv = (await t.request('GET', `/api/v1/namespaces/${NS}/configmaps`)).json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
    const watching = exchange(t, `GET /api/v1/namespaces/${NS}/configmaps?watch=1&timeoutSeconds=2&resourceVersion=${rv} HTTP/1.0\r\n\r\n`);
    await new Promise((r) => setTimeout(r, 300));
    expect((await t.request('POST', `/api/v1/namespaces/${NS}/configmaps`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'two' } } })).status).toBe(201);
    const r = split(await watching);
    expect(r.status).toBe(200);
    expect(r.head).not.toMatch(/Transfer-Encoding/i);
    expect(r.head).not.toMatch(/Content-Length/i);
    // no chunk-size lines: the body is the events themselves, one JSON document per line
    const events = r.body.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string } } });
    expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED two']);
  });

  it('reads an HTTP/1.0 POST body and does not send 100 Continue', async () => {
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'three' } });
    const wire = await exchange(t, `POST /api/v1/namespaces/${NS}/configmaps HTTP/1.0\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    expect(wire).not.toContain('100 Continue');
    expect(split(wire).status).toBe(201);
  });

  it.each([
    ['a broken request line', 'GET /version\r\n\r\n', 400, 'BadRequest'],
    ['an invalid Content-Length', 'POST /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', 400, 'BadRequest'],
    ['both framings', 'POST /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n', 400, 'BadRequest'],
    ['a header line without a colon', 'GET /version HTTP/1.1\r\nHost: x\r\nbroken\r\n\r\n', 400, 'BadRequest'],
    ['an unknown method', 'BREW /version HTTP/1.1\r\nHost: x\r\n\r\n', 405, 'MethodNotAllowed'],
    ['a transfer coding other than chunked', 'POST /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n', 501, undefined],
    ['another HTTP version', 'GET /version HTTP/3.0\r\nHost: x\r\n\r\n', 505, undefined],
  ])('answers %s with a Status and closes', async (_what, raw, code, reason) => {
    // a valid request after the bad one is not read: the answer is the only one
    const wire = await exchange(t, raw + 'GET /version HTTP/1.1\r\nHost: x\r\n\r\n');
    const r = split(wire);
    expect(r.status).toBe(code);
    expect(r.head).toContain('Connection: close');
    const st = JSON.parse(r.body) as { kind: string; code: number; reason?: string };
    expect(st).toMatchObject({ kind: 'Status', code });
    expect(st.reason).toBe(reason);
    expect(wire.match(/HTTP\/1\.1 /g)).toHaveLength(1);
  });
});
