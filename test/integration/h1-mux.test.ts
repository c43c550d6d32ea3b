// HTTP/1.1 over the multiplexed channel (docs/tls.md "HTTP/1.1 over the
// multiplexed channel"): raw TLS clients against a started server. The
// per-connection uWS path is still reachable on the same server: a
// connection whose first request head arrives in two pieces is handed to it
// (src/gateway/tls-h1-mux.ts), which lets the answers of both paths be
// compared byte for byte.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TLSSocket } from 'node:tls';
import { NO_NAMESPACE_DEFAULTS, type TestServer, startTestServer } from '../helpers/server.js';
import { adminTls, closedByServer, WireReader, type WireResponse } from '../helpers/raw-tls.js';
import { eventually } from '../helpers/eventually.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const NS = 'h1mux';

const cm = (name: string, data: Record<string, string> = { a: 'b' }) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
const post = (path: string, body: string, extra = '') => `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: x\r\n${extra}\r\n`;

/** the head without the fields that differ per request (Date, Audit-Id) */
const stable = (r: WireResponse) => r.head.replace(/\r\nDate: [^\r]*/, '\r\nDate: -').replace(/\r\nAudit-Id: [^\r]*/, '\r\nAudit-Id: -');

interface Conn {
  s: TLSSocket;
  r: WireReader;
}

describe('HTTP/1.1 over the multiplexed channel', () => {
  let t: TestServer;
  const open: TLSSocket[] = [];

  beforeAll(async () => {
    t = await startTestServer({ authn: NO_NAMESPACE_DEFAULTS });
    expect((await t.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } })).status).toBe(201);
  });
  afterAll(async () => {
    for (const s of open) s.destroy();
    await t.stop();
  });

  const conn = async (): Promise<Conn> => {
    const s = await adminTls(t);
    open.push(s);
    return { s, r: new WireReader(s) };
  };
  /** a connection on the uWS path: its first head arrives in two pieces */
  const uwsConn = async (): Promise<Conn> => {
    const c = await conn();
    const before = t.server.muxRequests();
    c.s.write('GET /version HTTP/1.1\r\nHo');
    await sleep(50);
    c.s.write('st: x\r\n\r\n');
    expect((await c.r.response()).status).toBe(200);
    expect(t.server.muxRequests()).toBe(before);
    return c;
  };

  it('answers byte for byte as the uWS path does (Date and Audit-Id aside), over the channel', async () => {
    const base = `/api/v1/namespaces/${NS}/configmaps`;
    const rv = (await t.request('GET', base)).json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
    expect((await t.request('POST', base, { body: JSON.parse(cm('same')) as object })).status).toBe(201);
    // two large objects: the list is over 1 MiB, which crosses the channel as Head, Data… and End
    for (const n of ['big-1', 'big-2']) expect((await t.request('POST', base, { body: JSON.parse(cm(n, { x: 'y'.repeat(700_000) })) as object })).status).toBe(201);
    const requests: [string, boolean][] = [
      [get(`${base}/same`), false],
      [`HEAD ${base}/same HTTP/1.1\r\nHost: x\r\n\r\n`, true],
      [get(`${base}/missing`), false],
      [get(base), false],
      [get(base, 'Accept-Encoding: gzip\r\n'), false],
      [get(`${base}?watch=1&resourceVersion=${rv}&timeoutSeconds=1`), false],
      [post(base, '{"kind":'), false],
      [`DELETE ${base}/missing HTTP/1.1\r\nHost: x\r\n\r\n`, false],
    ];
    const viaMux = await conn();
    const viaUws = await uwsConn();
    for (const [req, isHead] of requests) {
      const before = t.server.muxRequests();
      viaMux.s.write(req);
      const m = await viaMux.r.response(isHead);
      expect(t.server.muxRequests(), 'the request crossed the channel').toBe(before + 1);
      viaUws.s.write(req);
      const u = await viaUws.r.response(isHead);
      expect(t.server.muxRequests(), 'the request went through uWS').toBe(before + 1);
      // a HEAD's Content-Length: the GET's over the channel (RFC 9110 §9.3.2), 0 from uWS (http-server.ts)
      const headLength = (x: string) => (isHead ? x.replace(/\r\nContent-Length: \d+\r\n/, '\r\nContent-Length: N\r\n') : x);
      if (isHead) expect(m.head).toMatch(/\r\nContent-Length: [1-9]\d*\r\n/);
      expect(headLength(stable(m)), req.split('\r\n')[0]).toBe(headLength(stable(u)));
      expect(m.framed.equals(u.framed), `${req.split('\r\n')[0]}: the body as framed`).toBe(true);
    }
    // nothing more on either connection
    await sleep(100);
    expect(viaMux.r.pending).toBe(0);
    expect(viaUws.r.pending).toBe(0);
  }, 60_000);

  it('answers pipelined requests in order, HEAD with the GET\'s Content-Length and without a body', async () => {
    const base = `/api/v1/namespaces/${NS}/configmaps`;
    expect((await t.request('POST', base, { body: JSON.parse(cm('pipe-a')) as object })).status).toBe(201);
    const c = await conn();
    const before = t.server.muxRequests();
    c.s.write(get(`${base}/pipe-a`) + post(base, cm('pipe-b')) + get('/version') + `HEAD ${base}/pipe-a HTTP/1.1\r\nHost: x\r\n\r\n` + get(`${base}/pipe-none`));
    const a = await c.r.response();
    const b = await c.r.response();
    const v = await c.r.response();
    const h = await c.r.response(true);
    const none = await c.r.response();
    expect([a.status, b.status, v.status, h.status, none.status]).toEqual([200, 201, 200, 200, 404]);
    expect(JSON.parse(a.body.toString())).toMatchObject({ metadata: { name: 'pipe-a' } });
    expect(JSON.parse(b.body.toString())).toMatchObject({ metadata: { name: 'pipe-b' } });
    expect(JSON.parse(v.body.toString())).toHaveProperty('gitVersion');
    // the GET's length, no body (RFC 9110 §9.3.2): the next answer is read right after the head
    expect(h.head).toMatch(new RegExp(`\r\nContent-Length: ${a.body.length}\r\n`));
    expect(a.body.length).toBeGreaterThan(0);
    expect(t.server.muxRequests()).toBe(before + 5);
  });

  it('reads a chunked request body, in pieces', async () => {
    const c = await conn();
    const body = cm('chunked-body', { k: 'v'.repeat(3000) });
    const before = t.server.muxRequests();
    c.s.write(`POST /api/v1/namespaces/${NS}/configmaps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
    const cut = 1000;
    c.s.write(`${cut.toString(16)}\r\n${body.slice(0, cut)}\r\n`);
    await sleep(30);
    c.s.write(`${(body.length - cut).toString(16)}\r\n${body.slice(cut)}\r\n0\r\n\r\n`);
    const r = await c.r.response();
    expect(r.status).toBe(201);
    expect(t.server.muxRequests()).toBe(before + 1);
    const got = await t.request('GET', `/api/v1/namespaces/${NS}/configmaps/chunked-body`);
    expect(got.json<{ data: { k: string } }>().data.k).toBe('v'.repeat(3000));
  });

  it('answers Expect: 100-continue before the body is sent', async () => {
    const c = await conn();
    const body = cm('continued');
    c.s.write(`POST /api/v1/namespaces/${NS}/configmaps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\n\r\n`);
    const interim = await c.r.response();
    expect(interim.head).toBe('HTTP/1.1 100 Continue\r\n\r\n');
    c.s.write(body);
    expect((await c.r.response()).status).toBe(201);
  });

  it('closes the connection after answering a request with Connection: close', async () => {
    const c = await conn();
    const closed = closedByServer(c.s, 10_000);
    c.s.write(get('/version', 'Connection: close\r\n') + get('/version'));
    const got = await closed;
    // one answer, and nothing for the request after it
    expect(got.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(1);
  });

  it('ends the server\'s watch when the client goes away mid-watch', async () => {
    await eventually(() => t.server.watch.stats().watchers === 0, 'no watch left from earlier tests');
    const c = await conn();
    c.s.write(get(`/api/v1/namespaces/${NS}/configmaps?watch=1`));
    expect(await c.r.head()).toMatch(/\r\nTransfer-Encoding: chunked\r\n/);
    expect(t.server.watch.stats().watchers).toBe(1);
    expect((await t.request('POST', `/api/v1/namespaces/${NS}/configmaps`, { body: JSON.parse(cm('seen-by-watch')) as object })).status).toBe(201);
    let ev = '';
    while (!ev.includes('seen-by-watch')) ev = (await c.r.chunk()).data.toString();
    c.s.destroy();
    await eventually(() => t.server.watch.stats().watchers === 0, 'the watch to end on the server');
  });

  it('leaves upgrade requests to the uWS path', async () => {
    const c = await conn();
    const before = t.server.muxRequests();
    c.s.write(`GET /version HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`);
    const r = await c.r.response();
    // /version is not a WebSocket route: uWS passes it on as a plain GET
    expect(r.status).toBe(200);
    expect(t.server.muxRequests()).toBe(before);
  });
});

describe('--http1-over-mux=false', () => {
  it('sends HTTP/1.1 requests through uWS', async () => {
    await using t = await startTestServer({ authn: NO_NAMESPACE_DEFAULTS, limits: { http1OverMux: false } });
    const s = await adminTls(t);
    const r = new WireReader(s);
    s.write(get('/version') + get('/version'));
    expect((await r.response()).status).toBe(200);
    expect((await r.response()).status).toBe(200);
    expect(t.server.muxRequests()).toBe(0);
    // uWS encodes a string as UTF-8: a Warning's UTF-8 bytes reach the client once, not encoded twice
    s.write(post('/api/v1/namespaces/default/configmaps?fieldValidation=Warn&dryRun=All', JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w' }, 日本: 1 })));
    const w = await r.response();
    expect(w.status).toBe(201);
    const warning = /\r\nWarning: ([^\r]*)/i.exec(w.head)?.[1];
    expect(Buffer.from(warning ?? '', 'latin1').toString('utf8')).toBe('299 - "unknown field \\"日本\\""');
    s.destroy();
  });
});

describe('HTTP/1.1 over the channel from TLS worker processes', () => {
  it('serves pipelined requests and watches', async () => {
    await using t = await startTestServer({ authn: NO_NAMESPACE_DEFAULTS, tlsWorkers: 1 });
    const s = await adminTls(t);
    const r = new WireReader(s);
    const before = t.server.muxRequests();
    // pipelined requests run concurrently (as through uWS): the second does not depend on the first
    s.write(post('/api/v1/namespaces/default/configmaps', cm('w1')) + get('/version'));
    expect((await r.response()).status).toBe(201);
    expect(JSON.parse((await r.response()).body.toString())).toHaveProperty('gitVersion');
    s.write(get('/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1'));
    const w = await r.response();
    expect(w.body.toString()).toContain('"name":"w1"');
    expect(t.server.muxRequests()).toBe(before + 3);
    s.destroy();
  }, 30_000);
});
