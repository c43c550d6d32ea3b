// Protobuf watch streams at the byte level (issue #11, spec 000 §2.5, §2.7,
// §4.3): `Content-Type: <media type>;stream=watch`, each event one complete
// HTTP chunk holding exactly one frame — a 4-byte big-endian length, then a
// raw (un-enveloped) WatchEvent {type = 1, object = 2: RawExtension {raw = 1}}
// whose raw bytes are the enveloped object (`k8s\0` + Unknown), as client-go's
// protobuf stream decoder reads them. No client on this machine speaks it
// (client-node and kubectl watch in JSON), so the frames are decoded here
// with an independent hand-written protobuf reader.

import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProtobufCatalog } from '../../src/registry/protobuf-catalog.js';
import { ENVELOPE_PREFIX, decodeEnvelope } from '../../src/machinery/protobuf/envelope.js';
import type { ResourceDefinition } from '../../src/registry/types.js';
import { eventually } from '../helpers/eventually.js';
import { NO_NAMESPACE_DEFAULTS, type TestServer, startTestServer } from '../helpers/server.js';

const K8S_PB = 'application/vnd.kubernetes.protobuf';
const ORCH_PB = 'application/vnd.orch.protobuf';
const BOUND_MS = 10_000;

/** reads the HTTP head, then whole chunks, from a raw TLS socket */
class ChunkReader {
  private buf = Buffer.alloc(0);
  private waiters: (() => void)[] = [];
  ended = false;

  constructor(readonly socket: TLSSocket) {
    socket.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.wake();
    });
    socket.on('close', () => {
      this.ended = true;
      this.wake();
    });
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  get pending(): number {
    return this.buf.length;
  }

  private async until<T>(take: () => T | undefined): Promise<T> {
    const end = Date.now() + BOUND_MS;
    for (;;) {
      const v = take();
      if (v !== undefined) return v;
      const left = end - Date.now();
      if (left <= 0 || this.ended) throw new Error(`nothing complete arrived (${this.buf.length} bytes pending)`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  readHead(): Promise<string> {
    return this.until(() => {
      const at = this.buf.indexOf('\r\n\r\n');
      if (at < 0) return undefined;
      const head = this.buf.subarray(0, at + 4).toString('latin1');
      this.buf = this.buf.subarray(at + 4);
      return head;
    });
  }

  /** the data of one complete chunk (size line, data, CRLF); empty for the last chunk */
  readChunk(): Promise<Buffer> {
    return this.until(() => {
      const nl = this.buf.indexOf('\r\n');
      if (nl < 0) return undefined;
      const size = parseInt(this.buf.subarray(0, nl).toString('latin1'), 16);
      if (!Number.isFinite(size)) throw new Error('not a chunk size line');
      const end = nl + 2 + size + 2;
      if (this.buf.length < end) return undefined;
      expect(this.buf.subarray(end - 2, end).toString('latin1')).toBe('\r\n');
      const data = Buffer.from(this.buf.subarray(nl + 2, nl + 2 + size));
      this.buf = this.buf.subarray(end);
      return data;
    });
  }
}

// ---- an independent protobuf reader (varints and length-delimited fields only)

function varint(b: Buffer, at: number): [number, number] {
  let v = 0;
  let shift = 0;
  for (;;) {
    const byte = b[at++]!;
    v += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) return [v, at];
    shift += 7;
  }
}

/** the length-delimited fields of a message, by field number */
function fields(b: Buffer): Map<number, Buffer[]> {
  const out = new Map<number, Buffer[]>();
  let at = 0;
  while (at < b.length) {
    const [tag, a1] = varint(b, at);
    const wt = tag & 7;
    const n = Math.floor(tag / 8);
    if (wt === 0) {
      at = varint(b, a1)[1];
      continue;
    }
    expect(wt, `field ${n} wire type`).toBe(2);
    const [len, a2] = varint(b, a1);
    const list = out.get(n) ?? [];
    list.push(b.subarray(a2, a2 + len));
    out.set(n, list);
    at = a2 + len;
  }
  return out;
}

interface Frame {
  type: string;
  /** the enveloped object bytes (RawExtension.raw) */
  raw: Buffer;
}

/** one chunk = exactly one frame: length prefix, then a raw WatchEvent */
function parseFrame(chunk: Buffer): Frame {
  expect(chunk.length).toBeGreaterThan(4);
  const len = chunk.readUInt32BE(0);
  expect(len, 'the length prefix covers the rest of the chunk exactly').toBe(chunk.length - 4);
  const msg = chunk.subarray(4);
  // the WatchEvent itself is not enveloped (client-go's raw stream serializer)
  expect([...msg.subarray(0, 4)]).not.toEqual([...ENVELOPE_PREFIX]);
  const f = fields(msg);
  const type = f.get(1)![0]!.toString('utf8');
  const ext = fields(f.get(2)![0]!);
  const raw = ext.get(1)![0]!;
  expect([...raw.subarray(0, 4)], 'the embedded object starts with the envelope prefix').toEqual([...ENVELOPE_PREFIX]);
  return { type, raw: Buffer.from(raw) };
}

let t: TestServer;
let catalog: ProtobufCatalog;

function decodeObject(raw: Buffer): Record<string, unknown> {
  const env = decodeEnvelope(raw);
  const [group, version] = env.typeMeta.apiVersion.includes('/') ? env.typeMeta.apiVersion.split('/') : ['', env.typeMeta.apiVersion];
  const def = t.server.registry.lookupKind(group!, version!, env.typeMeta.kind) ?? t.server.registry.lookupKind('', 'v1', 'ConfigMap')!;
  return catalog.decodeBody(raw, def, env.typeMeta.kind);
}

function open(path: string, accept: string): { socket: TLSSocket; reader: ChunkReader; ready: Promise<void> } {
  const socket = tlsConnect({ host: '127.0.0.1', port: t.server.port, ca: t.server.caPem, cert: t.server.adminCertPem, key: t.server.adminKeyPem, servername: 'localhost' });
  const reader = new ChunkReader(socket);
  const ready = new Promise<void>((r) => socket.once('secureConnect', () => r())).then(() => {
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAccept: ${accept}\r\n\r\n`);
  });
  return { socket, reader, ready };
}

const cm = (name: string, v: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: v } });

beforeAll(async () => {
  t = await startTestServer({ authn: NO_NAMESPACE_DEFAULTS });
  catalog = new ProtobufCatalog(t.server.registry);
  await t.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'pbw' } } });
});
afterAll(async () => {
  await t?.stop();
});

describe('protobuf watch streams', () => {
  it('frames ADDED, MODIFIED and DELETED, one complete chunk per event, under the media type name asked for', async () => {
    const { socket, reader, ready } = open('/api/v1/namespaces/pbw/configmaps?watch=true', `${K8S_PB};stream=watch`);
    try {
      await ready;
      const head = await reader.readHead();
      expect(head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(head).toMatch(/\r\nContent-Type: application\/vnd\.kubernetes\.protobuf;stream=watch\r\n/i);
      await t.request('GET', '/api/v1/namespaces/pbw/configmaps');
      expect(reader.pending, 'nothing but the head before the first event').toBe(0);

      expect((await t.request('POST', '/api/v1/namespaces/pbw/configmaps', { body: cm('a', '1') })).status).toBe(201);
      const added = parseFrame(await reader.readChunk());
      expect(added.type).toBe('ADDED');
      const env = decodeEnvelope(added.raw);
      expect(env.typeMeta).toEqual({ apiVersion: 'v1', kind: 'ConfigMap' });
      const obj = decodeObject(added.raw);
      expect(obj).toMatchObject({ metadata: { name: 'a', namespace: 'pbw' }, data: { k: '1' } });
      const rv1 = Number((obj.metadata as { resourceVersion: string }).resourceVersion);

      const put = await t.request('PUT', '/api/v1/namespaces/pbw/configmaps/a', { body: cm('a', '2') });
      expect(put.status).toBe(200);
      const modified = parseFrame(await reader.readChunk());
      expect(modified.type).toBe('MODIFIED');
      const mobj = decodeObject(modified.raw);
      expect(mobj).toMatchObject({ data: { k: '2' } });
      expect(Number((mobj.metadata as { resourceVersion: string }).resourceVersion)).toBeGreaterThan(rv1);

      expect((await t.request('DELETE', '/api/v1/namespaces/pbw/configmaps/a')).status).toBe(200);
      const deleted = parseFrame(await reader.readChunk());
      expect(deleted.type).toBe('DELETED');
      expect(decodeObject(deleted.raw)).toMatchObject({ metadata: { name: 'a' } });
      expect(reader.pending).toBe(0);
    } finally {
      socket.destroy();
    }
  });

  it('answers the plain protobuf name on a watch (as client-go asks) and sends the initial-events-end bookmark', async () => {
    await t.request('POST', '/api/v1/namespaces/pbw/configmaps', { body: cm('b', 'x') });
    const { socket, reader, ready } = open(
      '/api/v1/namespaces/pbw/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true',
      `${ORCH_PB}, application/json`,
    );
    try {
      await ready;
      const head = await reader.readHead();
      expect(head).toMatch(/\r\nContent-Type: application\/vnd\.orch\.protobuf;stream=watch\r\n/i);
      const first = parseFrame(await reader.readChunk());
      expect(first.type).toBe('ADDED');
      expect(decodeObject(first.raw)).toMatchObject({ metadata: { name: 'b' } });
      const bm = parseFrame(await reader.readChunk());
      expect(bm.type).toBe('BOOKMARK');
      const bobj = decodeObject(bm.raw);
      expect(bobj).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { annotations: { 'k8s.io/initial-events-end': 'true' } } });
      expect(Number((bobj.metadata as { resourceVersion: string }).resourceVersion)).toBeGreaterThan(0);
      expect(Object.keys(bobj).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
    } finally {
      socket.destroy();
    }
  });

  it('ends with an ERROR frame holding a v1 Status 410 Expired when the watch expires', async () => {
    const rv = t.request('GET', '/api/v1/namespaces/pbw/configmaps').then((r) => (r.json().metadata as { resourceVersion: string }).resourceVersion);
    const { socket, reader, ready } = open(`/api/v1/namespaces/pbw/configmaps?watch=1&resourceVersion=${await rv}`, K8S_PB);
    try {
      await ready;
      await reader.readHead();
      await eventually(async () => t.server.watch.stats().watchers >= 1, 'the watcher to register');
      expect(t.server.watch.expireWatchers()).toBeGreaterThanOrEqual(1);
      const err = parseFrame(await reader.readChunk());
      expect(err.type).toBe('ERROR');
      expect(decodeEnvelope(err.raw).typeMeta).toEqual({ apiVersion: 'v1', kind: 'Status' });
      expect(decodeObject(err.raw)).toMatchObject({ status: 'Failure', reason: 'Expired', code: 410 });
      // then the stream ends: the last (zero-size) chunk
      expect((await reader.readChunk()).length).toBe(0);
    } finally {
      socket.destroy();
    }
  });

  it('JSON watches are unchanged, and stream=watch is not a protobuf media type for a get', async () => {
    const r = await t.request('GET', '/api/v1/namespaces/pbw/configmaps/b', { headers: { Accept: `${K8S_PB};stream=watch` } });
    expect(r.status).toBe(406);
    const { socket, reader, ready } = open('/api/v1/namespaces/pbw/configmaps?watch=1', 'application/json;stream=watch');
    try {
      await ready;
      expect(await reader.readHead()).toMatch(/\r\nContent-Type: application\/json\r\n/i);
    } finally {
      socket.destroy();
    }
  });

  it('kinds without protobuf answer 406 to a protobuf-only watch and JSON when JSON is acceptable too', async () => {
    const def: ResourceDefinition = {
      group: 'example.com',
      version: 'v1',
      kind: 'Widget',
      resource: 'widgets',
      singular: 'widget',
      scope: 'Namespaced',
      customResource: true,
      schema: { type: 'object', properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object', 'x-orch-preserve-unknown-fields': true } } },
      strategy: {},
    };
    t.server.registry.add(def);
    const path = '/apis/example.com/v1/namespaces/pbw/widgets?watch=1&timeoutSeconds=1';
    const only = await t.request('GET', path, { headers: { Accept: `${K8S_PB};stream=watch` } });
    expect(only.status).toBe(406);
    expect(only.json()).toMatchObject({ kind: 'Status', reason: 'NotAcceptable', code: 406 });
    const both = await t.request('GET', path, { headers: { Accept: `${K8S_PB};stream=watch, application/json` } });
    expect(both.status).toBe(200);
    expect(both.headers['content-type']).toBe('application/json');
  });
});
