// The HTTP/2 channel's framing and its writer (src/gateway/mux-frames.ts,
// src/gateway/mux-writer.ts) over a real unix socket: frames survive any
// split of the byte stream; a run of one Buffer to many streams crosses once;
// a prompt frame (a request's answer) is not queued behind bulk fan-out.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FrameBatch, FrameReader, FrameType, frameHeader, multiHeader, readMulti } from '../../src/gateway/mux-frames.js';
import { readRequest } from '../../src/gateway/head-codec.js';
import { MuxWriter } from '../../src/gateway/mux-writer.js';

interface Frame {
  type: number;
  id: number;
  payload: Buffer;
}

describe('FrameReader', () => {
  it('yields the same frames however the byte stream is split', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ type: fc.constantFrom(1, 2, 16, 18, 20), id: fc.integer({ min: 1, max: 0xfffffff }), payload: fc.uint8Array({ maxLength: 300 }) }), { maxLength: 20 }),
        fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 50 }),
        (frames, cuts) => {
          const wire = Buffer.concat(frames.flatMap((f) => [frameHeader(f.type as FrameType, f.id, f.payload.length), Buffer.from(f.payload)]));
          const got: Frame[] = [];
          const r = new FrameReader((type, id, payload) => got.push({ type, id, payload: Buffer.from(payload) }));
          let at = 0;
          for (let i = 0; at < wire.length; i++) {
            const n = cuts[i % cuts.length]!;
            expect(r.push(wire.subarray(at, at + n))).toBe(true);
            at += n;
          }
          expect(got.map((f) => [f.type, f.id, f.payload.toString('hex')])).toEqual(frames.map((f) => [f.type, f.id, Buffer.from(f.payload).toString('hex')]));
        },
      ),
    );
  });

  it('refuses a length beyond the frame limit (the connection is dropped)', () => {
    const r = new FrameReader(() => undefined);
    const bad = Buffer.alloc(9);
    bad.writeUInt32BE(64 * 1024 * 1024, 0);
    expect(r.push(bad)).toBe(false);
  });

  it('round-trips headed and MultiData payloads', () => {
    const batch = new FrameBatch();
    batch.request(7, { method: 'POST', path: '/x', query: '', proxiedAddress: 'c1', headers: [] }, Buffer.from('body'));
    const parts = batch.take();
    const frames: Frame[] = [];
    new FrameReader((type, id, payload) => frames.push({ type, id, payload })).push(Buffer.concat(parts));
    expect(frames[0]!.id).toBe(7);
    const { head, body } = readRequest(frames[0]!.payload);
    expect(head.method).toBe('POST');
    expect(body.toString()).toBe('body');
    const m = Buffer.concat([multiHeader([3, 5, 9], 2), Buffer.from('ev')]);
    const multi: Frame[] = [];
    new FrameReader((type, id, payload) => multi.push({ type, id, payload })).push(m);
    expect(multi[0]!.type).toBe(FrameType.MultiData);
    const { ids, data } = readMulti(multi[0]!.payload);
    expect(ids).toEqual([3, 5, 9]);
    expect(data.toString()).toBe('ev');
  });
});

describe('MuxWriter over a unix socket', () => {
  let dir: string;
  let server: Server;
  let client: Socket;
  let peer: Socket;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mux-writer-'));
    const path = join(dir, 's.sock');
    const accepted = new Promise<Socket>((resolve) => {
      server = createServer(resolve);
    });
    await new Promise<void>((resolve) => server.listen(path, resolve));
    client = connect(path);
    peer = await accepted;
  });
  afterEach(async () => {
    client.destroy();
    peer.destroy();
    await new Promise((r) => server.close(r));
    await rm(dir, { recursive: true, force: true });
  });

  const collect = (s: Socket, until: (frames: Frame[]) => boolean): Promise<Frame[]> =>
    new Promise((resolve) => {
      const frames: Frame[] = [];
      const r = new FrameReader((type, id, payload) => frames.push({ type, id, payload: Buffer.from(payload) }));
      s.on('data', (c: Buffer) => {
        r.push(c);
        if (until(frames)) resolve(frames);
      });
    });

  it('sends one Buffer written to many streams in a row as one MultiData frame', async () => {
    const w = new MuxWriter(client);
    const shared = Buffer.from('{"type":"ADDED"}\n');
    const other = Buffer.from('{"type":"DELETED"}\n');
    for (const id of [1, 2, 3, 4]) w.data(id, shared);
    w.data(5, other);
    w.bulkFrame(FrameType.End, 5);
    const frames = await collect(peer, (f) => f.length >= 3);
    expect(frames.map((f) => f.type)).toEqual([FrameType.MultiData, FrameType.Data, FrameType.End]);
    expect(readMulti(frames[0]!.payload)).toEqual({ ids: [1, 2, 3, 4], data: shared });
    expect(frames[1]!.id).toBe(5);
    expect(frames[1]!.payload.equals(other)).toBe(true);
  });

  it('a prompt frame goes out ahead of bulk the socket has not taken', async () => {
    const w = new MuxWriter(client);
    peer.pause();
    // 8 MiB of fan-out for stream 1, far beyond what the socket takes while nobody reads
    const piece = Buffer.alloc(64 * 1024, 'e');
    for (let i = 0; i < 128; i++) w.data(1, Buffer.from(piece));
    await new Promise((r) => setTimeout(r, 50));
    // the backlog counts what the socket did not take
    expect(w.queuedFor(1)).toBeGreaterThan(4 * 1024 * 1024);
    w.promptResponse(FrameType.Response, 2, { status: 201, headers: [] }, Buffer.from('created'));
    const frames = collect(peer, (f) => f.filter((x) => x.type === FrameType.Data).length === 128 && f.some((x) => x.type === FrameType.Response));
    peer.resume();
    const got = await frames;
    const answerAt = got.findIndex((f) => f.type === FrameType.Response);
    const dataBefore = got.slice(0, answerAt).filter((f) => f.type === FrameType.Data).length;
    // only what the socket already held (its low-water mark and the kernel's buffer) precedes the answer
    expect(dataBefore).toBeLessThan(64);
    expect(w.queuedFor(1)).toBe(0);
  });
});
