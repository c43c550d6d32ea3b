// The channel frames' binary heads (src/gateway/head-codec.ts) against the
// JSON heads they replace: a head read back equals what JSON.stringify and
// JSON.parse made of it, for any strings (non-ASCII, lone surrogates), any
// number of header fields and bodies of every size class; a truncated head
// is refused, not misread.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readRequest, readResponse } from '../../src/gateway/head-codec.js';
import { FrameBatch, FrameReader, FrameType, TEXT_INLINE, type RequestHead, type ResponseHead } from '../../src/gateway/mux-frames.js';

/** the previous encoding: JSON text */
const viaJson = <T>(head: T): T => JSON.parse(JSON.stringify(head)) as T;

const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom('\ud800', 'a\udc00b', '\udbff\udfff', 'x'.repeat(5000), ''),
);
const pairs = fc.array(fc.tuple(text, text), { maxLength: 12 });
const bodyArb = fc.constantFrom(0, 1, 1300, 16 * 1024 - 1, 16 * 1024, 70 * 1024).map((n) => Buffer.alloc(n, n & 0xff));

const requestHead: fc.Arbitrary<RequestHead> = fc
  .record({ method: text, path: text, query: text, proxiedAddress: text, headers: pairs, bodyFollows: fc.option(fc.boolean(), { nil: undefined }) })
  .map((h) => {
    const out: RequestHead = { method: h.method, path: h.path, query: h.query, proxiedAddress: h.proxiedAddress, headers: h.headers };
    if (h.bodyFollows !== undefined) out.bodyFollows = h.bodyFollows;
    return out;
  });
const responseHead: fc.Arbitrary<ResponseHead> = fc
  .record({ status: fc.integer({ min: 100, max: 599 }), headers: pairs, length: fc.option(fc.maxSafeNat(), { nil: undefined }) })
  .map((h) => (h.length === undefined ? { status: h.status, headers: h.headers } : { status: h.status, headers: h.headers, length: h.length }));

function frames(batch: FrameBatch): { type: number; id: number; payload: Buffer }[] {
  const got: { type: number; id: number; payload: Buffer }[] = [];
  const r = new FrameReader((type, id, payload) => got.push({ type, id, payload }));
  for (const chunk of batch.take()) expect(r.push(chunk)).toBe(true);
  return got;
}

describe('binary frame heads', () => {
  it('a request head reads back as its JSON round trip, with the body', () => {
    fc.assert(
      fc.property(requestHead, bodyArb, fc.integer({ min: 1, max: 0xfffffffe }), (head, body, id) => {
        const batch = new FrameBatch();
        batch.request(id, head, body);
        const [f] = frames(batch);
        expect([f!.type, f!.id]).toEqual([FrameType.Request, id]);
        const got = readRequest(f!.payload);
        expect(got.head).toEqual(viaJson(head));
        expect(got.body.equals(body)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('a response head reads back as its JSON round trip, with the body', () => {
    fc.assert(
      fc.property(responseHead, bodyArb, fc.constantFrom(FrameType.Response, FrameType.Head), (head, body, type) => {
        const batch = new FrameBatch();
        batch.response(type, 9, head, body);
        const [f] = frames(batch);
        expect([f!.type, f!.id]).toEqual([type, 9]);
        const got = readResponse(f!.payload);
        expect(got.head).toEqual(viaJson(head));
        expect(got.body.equals(body)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('a response body given as text reads back as its UTF-8 bytes, inline or not', () => {
    const textBody = fc.oneof(text, fc.constantFrom(TEXT_INLINE - 1, TEXT_INLINE, TEXT_INLINE + 1).chain((n) => fc.constantFrom('a', 'é', '😀', '\ud800').map((c) => c.repeat(Math.ceil(n / c.length)).slice(0, n))));
    fc.assert(
      fc.property(responseHead, fc.array(textBody, { minLength: 1, maxLength: 4 }), (head, bodies) => {
        const batch = new FrameBatch();
        bodies.forEach((b, i) => batch.response(FrameType.Response, i + 1, head, b));
        const got = frames(batch);
        expect(got.length).toBe(bodies.length);
        bodies.forEach((b, i) => {
          const r = readResponse(got[i]!.payload);
          expect(r.head).toEqual(viaJson(head));
          expect(r.body.equals(Buffer.from(b))).toBe(true);
        });
      }),
      { numRuns: 100 },
    );
  });

  it('many heads of one turn read back in order', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(requestHead, responseHead), { minLength: 1, maxLength: 30 }), (heads) => {
        const batch = new FrameBatch();
        heads.forEach(([q, a], i) => {
          batch.request(2 * i + 1, q, Buffer.from(`q${i}`));
          batch.response(FrameType.Response, 2 * i + 2, a, Buffer.from(`a${i}`));
        });
        const got = frames(batch);
        expect(got.length).toBe(2 * heads.length);
        heads.forEach(([q, a], i) => {
          const rq = readRequest(got[2 * i]!.payload);
          const ra = readResponse(got[2 * i + 1]!.payload);
          expect([rq.head, rq.body.toString()]).toEqual([viaJson(q), `q${i}`]);
          expect([ra.head, ra.body.toString()]).toEqual([viaJson(a), `a${i}`]);
        });
      }),
      { numRuns: 60 },
    );
  });

  it('refuses a head cut short, whatever the cut', () => {
    fc.assert(
      fc.property(requestHead, responseHead, fc.double({ min: 0, max: 1, noNaN: true }), (q, a, at) => {
        for (const [write, read] of [
          [(b: FrameBatch) => b.request(1, q, Buffer.alloc(64, 7)), readRequest],
          [(b: FrameBatch) => b.response(FrameType.Response, 1, a, Buffer.alloc(64, 7)), readResponse],
        ] as const) {
          const batch = new FrameBatch();
          write(batch);
          const payload = frames(batch)[0]!.payload;
          const headBytes = payload.readUInt32BE(0);
          // the head length says less than the head: the rest reads as body, and the field that runs past the head is refused
          const cut = Math.floor(at * headBytes);
          if (cut === headBytes) continue;
          const broken = Buffer.from(payload);
          broken.writeUInt32BE(cut, 0);
          expect(() => read(broken)).toThrow(RangeError);
        }
      }),
      { numRuns: 300 },
    );
    expect(() => readRequest(Buffer.from([0, 0]))).toThrow(RangeError);
    expect(() => readResponse(Buffer.from([0, 0, 0, 9, 1]))).toThrow(RangeError);
  });
});
