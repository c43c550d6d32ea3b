// HTTP/2 on the TLS front (src/gateway/h2-bridge.ts, docs/tls.md "HTTP/2"):
// a node:http2 client negotiates h2 by ALPN, and every stream is bridged to
// the uWS gateway with the session's client-certificate identity. Reads,
// writes, concurrent watches on one session, cancellation (the server-side
// watch must stop), protobuf watches, large bodies, authentication and
// HTTP/1.1 on the same port.
import { readFile } from 'node:fs/promises';
import { type ClientHttp2Session, type ClientHttp2Stream, connect, constants } from 'node:http2';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENVELOPE_PREFIX } from '../../src/machinery/protobuf/envelope.js';
import { eventually } from '../helpers/eventually.js';
import { lineSplitter } from '../helpers/json-lines.js';
import { kubeconfigFor, userCert } from '../helpers/identities.js';
import { runKubectl } from '../helpers/kubectl.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.stop();
});

interface Cred {
  certPem: string;
  keyPem: string;
}

function session(server: TestServer, cred?: Cred): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const s = connect(`https://127.0.0.1:${server.server.port}`, {
      ca: server.server.caPem,
      ...(cred ? { cert: cred.certPem, key: cred.keyPem } : {}),
    });
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
}

interface H2Response {
  status: number;
  headers: Record<string, unknown>;
  body: Buffer;
  text: string;
  json<T = Record<string, unknown>>(): T;
}

function call(s: ClientHttp2Session, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<H2Response> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const req = s.request({
      ':method': method,
      ':path': path,
      ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    });
    let status = 0;
    let hdrs: Record<string, unknown> = {};
    const chunks: Buffer[] = [];
    req.on('response', (h) => {
      status = Number(h[':status']);
      hdrs = h as Record<string, unknown>;
    });
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const buf = Buffer.concat(chunks);
      const text = buf.toString('utf8');
      resolve({ status, headers: hdrs, body: buf, text, json: <T>() => JSON.parse(text) as T });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** a watch stream whose newline-delimited JSON events are collected as they arrive */
function watch(s: ClientHttp2Session, path: string): { stream: ClientHttp2Stream; events: Record<string, unknown>[]; status: Promise<number> } {
  const stream = s.request({ ':method': 'GET', ':path': path });
  const events: Record<string, unknown>[] = [];
  stream.setEncoding('utf8');
  stream.on('data', lineSplitter((line) => events.push(JSON.parse(line) as Record<string, unknown>)));
  stream.on('error', () => undefined);
  const status = new Promise<number>((resolve) => stream.once('response', (h) => resolve(Number(h[':status']))));
  return { stream, events, status };
}

const cm = (name: string, data: Record<string, string> = { a: '1' }) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
const nameOf = (e: Record<string, unknown>) => ((e['object'] as { metadata?: { name?: string } })?.metadata?.name ?? '');

describe('HTTP/2 on the TLS port', () => {
  it('negotiates h2 by ALPN and serves GET, POST, PATCH, DELETE on one session', async () => {
    const s = await session(t, { certPem: t.server.adminCertPem, keyPem: t.server.adminKeyPem });
    try {
      expect(s.alpnProtocol).toBe('h2');
      const created = await call(s, 'POST', '/api/v1/namespaces/default/configmaps', cm('h2-crud'));
      expect(created.status).toBe(201);
      expect(created.headers['content-type']).toBe('application/json');
      // no HTTP/1.1 connection headers leak into HTTP/2 (they are malformed there)
      expect(created.headers['connection']).toBeUndefined();
      expect(created.headers['transfer-encoding']).toBeUndefined();
      const got = await call(s, 'GET', '/api/v1/namespaces/default/configmaps/h2-crud');
      expect(got.status).toBe(200);
      expect(got.json()).toMatchObject({ data: { a: '1' } });
      const patched = await call(s, 'PATCH', '/api/v1/namespaces/default/configmaps/h2-crud', { data: { b: '2' } }, { 'content-type': 'application/merge-patch+json' });
      expect(patched.status).toBe(200);
      expect(patched.json()).toMatchObject({ data: { a: '1', b: '2' } });
      const deleted = await call(s, 'DELETE', '/api/v1/namespaces/default/configmaps/h2-crud');
      expect(deleted.status).toBe(200);
      const gone = await call(s, 'GET', '/api/v1/namespaces/default/configmaps/h2-crud');
      expect(gone.status).toBe(404);
      expect(gone.json()).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404 });
      // a malformed body is answered with a Status, as over HTTP/1.1
      const bad = await call(s, 'POST', '/api/v1/namespaces/default/configmaps', '{"kind":');
      expect(bad.status).toBe(400);
      expect(bad.json()).toMatchObject({ kind: 'Status', code: 400 });
    } finally {
      s.close();
    }
  });

  it('authenticates each session by its own client certificate, and not by another session on the same port', async () => {
    const alice = await userCert(t, 'alice', ['team-a']);
    const [sa, sAnon] = await Promise.all([session(t, alice), session(t)]);
    try {
      const review = await call(sa, 'POST', '/apis/authentication.orch.io/v1/selfsubjectreviews', { kind: 'SelfSubjectReview' });
      expect(review.status).toBe(201);
      expect(review.json()).toMatchObject({ status: { userInfo: { username: 'alice', groups: expect.arrayContaining(['team-a', 'system:authenticated']) } } });
      // interleaved on two sessions: the pooled backend connections never mix identities
      const [forbidden, anon] = await Promise.all([call(sa, 'GET', '/api/v1/namespaces'), call(sAnon, 'GET', '/api/v1/namespaces')]);
      expect(forbidden.status).toBe(403);
      expect(forbidden.json<{ message: string }>().message).toContain('User "alice"');
      expect(anon.status).toBe(403);
      expect(anon.json<{ message: string }>().message).toContain('User "system:anonymous"');
      const token = await call(sAnon, 'GET', '/api/v1/namespaces', undefined, { authorization: 'Bearer nope' });
      expect(token.status).toBe(401);
      expect(token.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    } finally {
      sa.close();
      sAnon.close();
    }
  });

  it('answers 401 to a certificate that does not verify as a client certificate', async () => {
    // the serving certificate: signed by the CA, but without the clientAuth usage
    const pki = join(t.dataDir, 'pki');
    const serving = { certPem: await readFile(join(pki, 'apiserver.crt'), 'utf8'), keyPem: await readFile(join(pki, 'apiserver.key'), 'utf8') };
    const s = await session(t, serving);
    try {
      const r = await call(s, 'GET', '/api/v1/namespaces');
      expect(r.status).toBe(401);
      expect(r.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    } finally {
      s.close();
    }
  });

  it('delivers events to several concurrent watches on one session', async () => {
    const s = await session(t, { certPem: t.server.adminCertPem, keyPem: t.server.adminKeyPem });
    const watches = Array.from({ length: 8 }, () => watch(s, '/api/v1/namespaces/default/configmaps?watch=true&labelSelector=h2w%3Dyes'));
    try {
      for (const w of watches) expect(await w.status).toBe(200);
      for (let i = 0; i < 3; i++) {
        const r = await call(s, 'POST', '/api/v1/namespaces/default/configmaps', { ...cm(`h2w-${i}`), metadata: { name: `h2w-${i}`, labels: { h2w: 'yes' } } });
        expect(r.status).toBe(201);
      }
      await eventually(async () => watches.every((w) => w.events.length >= 3), 'every watch saw three events');
      for (const w of watches) {
        expect(w.events.map((e) => e['type'])).toEqual(['ADDED', 'ADDED', 'ADDED']);
        expect(w.events.map(nameOf)).toEqual(['h2w-0', 'h2w-1', 'h2w-2']);
      }
    } finally {
      for (const w of watches) w.stream.close(constants.NGHTTP2_CANCEL);
      s.close();
    }
  });

  it('a cancelled stream (RST_STREAM) ends the watch on the server', async () => {
    const s = await session(t, { certPem: t.server.adminCertPem, keyPem: t.server.adminKeyPem });
    try {
      const before = t.server.watch.stats().watchers;
      const w = watch(s, '/api/v1/namespaces/default/secrets?watch=true');
      expect(await w.status).toBe(200);
      await eventually(async () => t.server.watch.stats().watchers === before + 1, 'the watch is registered');
      w.stream.close(constants.NGHTTP2_CANCEL);
      await eventually(async () => t.server.watch.stats().watchers === before, 'the watch ended on the server');
      // the session is still usable
      expect((await call(s, 'GET', '/version')).status).toBe(200);
    } finally {
      s.close();
    }
  });

  it('closing the session ends its watches on the server', async () => {
    const s = await session(t, { certPem: t.server.adminCertPem, keyPem: t.server.adminKeyPem });
    const before = t.server.watch.stats().watchers;
    const ws = [watch(s, '/api/v1/namespaces/default/secrets?watch=true'), watch(s, '/api/v1/namespaces/default/pods?watch=true')];
    for (const w of ws) expect(await w.status).toBe(200);
    await eventually(async () => t.server.watch.stats().watchers === before + 2, 'both watches registered');
    s.destroy();
    await eventually(async () => t.server.watch.stats().watchers === before, 'both watches ended');
  });

  it('streams protobuf watch events', async () => {
    const s = await session(t, { certPem: t.server.adminCertPem, keyPem: t.server.adminKeyPem });
    try {
      const stream = s.request({ ':method': 'GET', ':path': '/api/v1/namespaces/default/configmaps?watch=true&fieldSelector=metadata.name%3Dh2-pb', accept: 'application/vnd.kubernetes.protobuf;stream=watch' });
      const chunks: Buffer[] = [];
      let contentType = '';
      stream.on('response', (h) => (contentType = String(h['content-type'])));
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('error', () => undefined);
      await eventually(async () => contentType !== '', 'the watch started');
      expect(contentType).toBe('application/vnd.kubernetes.protobuf;stream=watch');
      expect((await call(s, 'POST', '/api/v1/namespaces/default/configmaps', cm('h2-pb'))).status).toBe(201);
      // one length-prefixed frame: a WatchEvent whose object is an envelope holding the ConfigMap
      await eventually(async () => {
        const b = Buffer.concat(chunks);
        return b.length >= 4 && b.length >= 4 + b.readUInt32BE(0);
      }, 'a whole frame arrived');
      const all = Buffer.concat(chunks);
      const frame = all.subarray(4, 4 + all.readUInt32BE(0));
      expect(frame.includes(Buffer.from('ADDED'))).toBe(true);
      expect(frame.includes(Buffer.from(ENVELOPE_PREFIX))).toBe(true);
      expect(frame.includes(Buffer.from('h2-pb'))).toBe(true);
      // the gateway's flush byte is not part of the stream
      expect(all[0]).not.toBe(0x0a);
      stream.close(constants.NGHTTP2_CANCEL);
    } finally {
      s.close();
    }
  });

  it('carries request and response bodies larger than the flow-control windows', async () => {
    const s = await session(t, { certPem: t.server.adminCertPem, keyPem: t.server.adminKeyPem });
    try {
      const big = 'x'.repeat(300 * 1024);
      const created = await call(s, 'POST', '/api/v1/namespaces/default/configmaps', cm('h2-big', { big }));
      expect(created.status).toBe(201);
      const got = await call(s, 'GET', '/api/v1/namespaces/default/configmaps/h2-big');
      expect(got.status).toBe(200);
      expect(got.body.length).toBeGreaterThan(300 * 1024);
      expect(got.json<{ data: { big: string } }>().data.big).toBe(big);
      // gzip as over HTTP/1.1 when asked for (kube compresses bodies of 128 KiB and more)
      const list = await call(s, 'GET', '/api/v1/namespaces/default/configmaps', undefined, { 'accept-encoding': 'gzip' });
      expect(list.status).toBe(200);
      expect(list.headers['content-encoding']).toBe('gzip');
    } finally {
      s.close();
    }
  });

  it('answers 413 with a Status to bodies over the limits (the gateway\'s 3 MiB, the bridge\'s 4 MiB)', async () => {
    const s = await session(t, { certPem: t.server.adminCertPem, keyPem: t.server.adminKeyPem });
    try {
      for (const size of [3.5 * 1024 * 1024, 5 * 1024 * 1024]) {
        const r = await new Promise<{ status: number; text: string }>((resolve) => {
          const req = s.request({ ':method': 'POST', ':path': '/api/v1/namespaces/default/configmaps', 'content-type': 'application/json' });
          let status = 0;
          let text = '';
          req.on('response', (h) => (status = Number(h[':status'])));
          req.setEncoding('utf8');
          req.on('data', (c: string) => (text += c));
          // the server may reset the rest of the upload once it has answered
          req.on('error', () => resolve({ status, text }));
          req.on('close', () => resolve({ status, text }));
          req.end(Buffer.alloc(size, 0x20));
        });
        expect(r.status).toBe(413);
        expect(JSON.parse(r.text)).toMatchObject({ kind: 'Status', code: 413 });
      }
      expect((await call(s, 'GET', '/version')).status).toBe(200);
    } finally {
      s.close();
    }
  });

  it('refuses CONNECT (WebSockets stay on HTTP/1.1) with a Status', async () => {
    const s = await session(t, { certPem: t.server.adminCertPem, keyPem: t.server.adminKeyPem });
    try {
      const r = await new Promise<H2Response>((resolve, reject) => {
        const req = s.request({ ':method': 'CONNECT', ':authority': `127.0.0.1:${t.server.port}` });
        let status = 0;
        const chunks: Buffer[] = [];
        req.on('response', (h) => (status = Number(h[':status'])));
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          resolve({ status, headers: {}, body: Buffer.concat(chunks), text, json: <T>() => JSON.parse(text) as T });
        });
        req.on('error', reject);
        req.end();
      });
      expect(r.status).toBe(405);
      expect(r.json()).toMatchObject({ kind: 'Status', reason: 'MethodNotAllowed', code: 405 });
    } finally {
      s.close();
    }
  });

  it('still serves HTTP/1.1 on the same port (clients that offer http/1.1 or no ALPN)', async () => {
    const offered = await new Promise<string | false>((resolve, reject) => {
      const c = tlsConnect({ host: '127.0.0.1', port: t.server.port, ca: t.server.caPem, ALPNProtocols: ['http/1.1'], servername: 'localhost' }, () => {
        resolve(c.alpnProtocol ?? false);
        c.end();
      });
      c.on('error', reject);
    });
    expect(offered).toBe('http/1.1');
    const r = await t.request('GET', '/api/v1/namespaces/default/configmaps');
    expect(r.status).toBe(200);
  });
});

describe('kubectl (client-go) over HTTP/2', () => {
  it('negotiates h2 and authenticates by its client certificate', async () => {
    const carol = await kubeconfigFor(t, 'carol', await userCert(t, 'carol'));
    const kc = await kubeconfigFor(t, 'dave', await userCert(t, 'dave', ['system:masters']));
    // Go's HTTP/2 debug log shows which protocol the transport used
    const saved = process.env['GODEBUG'];
    process.env['GODEBUG'] = 'http2debug=1';
    try {
      const denied = await runKubectl(carol, ['get', 'namespaces']);
      expect(denied.code).not.toBe(0);
      expect(denied.stderr).toContain('User "carol" cannot list resource "namespaces"');
      expect(denied.stderr).toContain('http2: Transport');
      const created = await runKubectl(kc, ['create', 'configmap', 'h2-kubectl', '--from-literal=k=v', '-n', 'default']);
      expect(created.code).toBe(0);
      const got = await runKubectl(kc, ['get', 'configmap', 'h2-kubectl', '-n', 'default', '-o', 'jsonpath={.data.k}']);
      expect(got.stdout).toBe('v');
    } finally {
      if (saved === undefined) delete process.env['GODEBUG'];
      else process.env['GODEBUG'] = saved;
    }
  }, 60_000);
});

describe('HTTP/2 through TLS worker processes', () => {
  let tw: TestServer;
  beforeAll(async () => {
    tw = await startTestServer({ tlsWorkers: 1 });
  }, 60_000);
  afterAll(async () => {
    await tw?.stop();
  });

  it('registers the session identity with the parent before its first stream, and watches work', async () => {
    const bob = await userCert(tw, 'bob', ['system:masters']);
    const s = await session(tw, bob);
    try {
      expect(s.alpnProtocol).toBe('h2');
      const w = watch(s, '/api/v1/namespaces/default/configmaps?watch=true&fieldSelector=metadata.name%3Dh2-worker');
      expect(await w.status).toBe(200);
      expect((await call(s, 'POST', '/api/v1/namespaces/default/configmaps', cm('h2-worker'))).status).toBe(201);
      await eventually(async () => w.events.length >= 1, 'the watch saw the create');
      expect(w.events[0]).toMatchObject({ type: 'ADDED' });
      const review = await call(s, 'POST', '/apis/authentication.orch.io/v1/selfsubjectreviews', { kind: 'SelfSubjectReview' });
      expect(review.json()).toMatchObject({ status: { userInfo: { username: 'bob' } } });
      w.stream.close(constants.NGHTTP2_CANCEL);
    } finally {
      s.close();
    }
  });
});
