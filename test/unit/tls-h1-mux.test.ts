// The TLS front's HTTP/1.1 side of the multiplexed channel
// (src/gateway/tls-h1-mux.ts) against a real mux server
// (src/gateway/mux-server.ts) with a small handler: the rules with short
// bounds that a whole server does not expose (408 for a later head, 504 for
// a trickled body), HEAD on a stream, and the channel going away.

import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpRequest, HttpResponse, StreamingResponse } from '../../src/endpoints/http.js';
import type { StreamSink } from '../../src/core/stream.js';
import { startMuxServer, type MuxServer } from '../../src/gateway/mux-server.js';
import { startTlsFront, type TlsFront } from '../../src/gateway/tls-front.js';
import { pkiAndUnixBackend, type UnixBackendFixture } from '../helpers/unix-backend.js';
import { WireReader } from '../helpers/raw-tls.js';

let fixture: UnixBackendFixture;
let mux: MuxServer;
let front: TlsFront;
/** the sinks of the streams the handler started, and whether each was stopped */
const streams: { sink?: StreamSink; stopped: boolean }[] = [];
const bodies: string[] = [];

function handle(req: HttpRequest): Promise<HttpResponse> {
  if (req.path === '/stream') {
    const st = { stopped: false } as { sink?: StreamSink; stopped: boolean };
    streams.push(st);
    const out: StreamingResponse = { stream: true, status: 200, headers: [['Content-Type', 'application/json']], start: (sink) => (st.sink = sink), stop: () => (st.stopped = true) };
    return Promise.resolve(out);
  }
  if (req.path === '/hang') return new Promise(() => undefined);
  if (req.method === 'POST') bodies.push(Buffer.from(req.body).toString());
  return Promise.resolve({ status: 200, headers: [['Content-Type', 'text/plain']], body: `${req.method} ${req.path}` });
}

beforeAll(async () => {
  // nothing should reach the uWS stand-in: every request here is carried over the channel
  fixture = await pkiAndUnixBackend('orch-tls-h1-mux-', (s) => s.destroy());
  mux = await startMuxServer({ path: join(fixture.dir, 'mux.sock'), handle, maxBodyBytes: 1024 * 1024, tooLarge: () => ({ status: 413, headers: [], body: '' }) });
  front = await startTlsFront({
    host: '127.0.0.1',
    port: 0,
    key: fixture.pki.serving.keyPem,
    cert: fixture.pki.serving.certPem,
    clientCA: fixture.pki.ca.certPem,
    backendSocketPath: fixture.socketPath,
    muxSocketPath: mux.path,
    http2: false,
    headHoldMs: 300,
    requestBodyTimeoutMs: 300,
  });
});
afterAll(async () => {
  await front.close();
  await mux.close(100);
  await fixture.close();
});

function client(): Promise<{ s: TLSSocket; r: WireReader }> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port: front.port, ca: fixture.pki.ca.certPem, servername: 'localhost' }, () => resolve({ s, r: new WireReader(s) }));
    s.on('error', reject);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('HTTP/1.1 over the channel, at the front', () => {
  it('answers 408 and closes when a later request head does not complete within the bound', async () => {
    const { s, r } = await client();
    s.write('GET /one HTTP/1.1\r\nHost: x\r\n\r\nGET /two HTTP/1.1\r\nHo');
    const first = await r.response();
    expect(first.body.toString()).toBe('GET /one');
    const timedOut = await r.response();
    expect(timedOut.status).toBe(408);
    expect(JSON.parse(timedOut.body.toString())).toMatchObject({ kind: 'Status', reason: 'Timeout', code: 408 });
    await new Promise((resolve) => s.once('close', resolve));
  });

  it('answers 504 and closes when a body does not complete within the bound, and the handler never sees it', async () => {
    const { s, r } = await client();
    const before = bodies.length;
    s.write('POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc');
    const answer = await r.response();
    expect(answer.status).toBe(504);
    expect(JSON.parse(answer.body.toString())).toMatchObject({ kind: 'Status', reason: 'Timeout', code: 504 });
    await new Promise((resolve) => s.once('close', resolve));
    expect(bodies.length).toBe(before);
  });

  it('sends a body that arrives after its head in a Body frame', async () => {
    const { s, r } = await client();
    s.write('POST /later HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc');
    await sleep(50);
    s.write('defghij');
    expect((await r.response()).body.toString()).toBe('POST /later');
    expect(bodies.at(-1)).toBe('abcdefghij');
    s.destroy();
  });

  it('answers HEAD on a stream with the head alone and stops the stream; the connection serves on', async () => {
    const { s, r } = await client();
    s.write('HEAD /stream HTTP/1.1\r\nHost: x\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\n\r\n');
    const head = await r.response(true);
    expect(head.head).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*\r\nTransfer-Encoding: chunked\r\n\r\n$/);
    expect((await r.response()).body.toString()).toBe('GET /after');
    await sleep(50);
    expect(streams.at(-1)!.stopped).toBe(true);
    s.destroy();
  });

  it('writes a stream as chunks, one per write, and the last chunk at its end', async () => {
    const { s, r } = await client();
    s.write('GET /stream HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await r.head()).toMatch(/\r\nTransfer-Encoding: chunked\r\n\r\n$/);
    for (let i = 0; i < 50 && !streams.at(-1)?.sink; i++) await sleep(10);
    const sink = streams.at(-1)!.sink!;
    sink.write('{"n":1}\n');
    expect((await r.chunk()).framed.toString()).toBe('8\r\n{"n":1}\n\r\n');
    sink.write('{"n":2}\n');
    expect((await r.chunk()).data.toString()).toBe('{"n":2}\n');
    sink.end();
    expect((await r.chunk()).framed.toString()).toBe('0\r\n\r\n');
    s.destroy();
  });

  // last: the channel does not come back
  it('answers 503 to a request whose channel went away before its answer', async () => {
    const { s, r } = await client();
    s.write('GET /hang HTTP/1.1\r\nHost: x\r\n\r\n');
    for (let i = 0; i < 100 && mux.connections === 0; i++) await sleep(10);
    await mux.close(50);
    const answer = await r.response();
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body.toString())).toMatchObject({ kind: 'Status', reason: 'ServiceUnavailable', code: 503 });
    s.destroy();
  });
});
