import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { HeadCoalescer, RequestHeadCoalescer } from '../../src/gateway/request-head-coalescer.js';

function run(prefix: Buffer | undefined, chunks: Buffer[]): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const c = new RequestHeadCoalescer(prefix);
    const out: Buffer[] = [];
    c.on('data', (d: Buffer) => out.push(d));
    c.on('end', () => resolve(out));
    c.on('error', reject);
    for (const ch of chunks) c.write(ch);
    c.end();
  });
}

const head = (n: number) => Buffer.from(`GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${'a'.repeat(n)}\r\n\r\n`);

describe('RequestHeadCoalescer', () => {
  it('forwards a head split into pieces as one write, with the prefix in front', async () => {
    const h = head(20_000);
    const pieces = [h.subarray(0, 4096), h.subarray(4096, 8192), h.subarray(8192)];
    const out = await run(Buffer.from('PROXY'), pieces);
    expect(out).toHaveLength(1);
    expect(out[0]!.equals(Buffer.concat([Buffer.from('PROXY'), h]))).toBe(true);
  });

  it('passes body bytes and complete heads straight through', async () => {
    const out = await run(undefined, [head(10), Buffer.from('{"a":1}'), Buffer.from('more body')]);
    expect(out.map((b) => b.toString())).toEqual([head(10).toString(), '{"a":1}', 'more body']);
  });

  it('finds a head end that straddles two pieces', async () => {
    const h = head(100);
    const out = await run(undefined, [h.subarray(0, h.length - 2), h.subarray(h.length - 2)]);
    expect(out).toHaveLength(1);
    expect(out[0]!.equals(h)).toBe(true);
  });

  it('holds a head whose pieces arrive seconds apart, and forwards it whole (a loaded host spaces one client write out)', () => {
    const clock = new ManualClock(0);
    const out: Buffer[] = [];
    const c = new HeadCoalescer((b) => out.push(b), Buffer.from('P'), clock);
    const h = head(20_000);
    for (let i = 0; i < h.length; i += 1024) {
      c.write(h.subarray(i, i + 1024));
      if (i + 1024 < h.length) clock.advance(400);
    }
    expect(out).toHaveLength(1);
    expect(out[0]!.equals(Buffer.concat([Buffer.from('P'), h]))).toBe(true);
    c.destroy();
  });

  it('releases a head still incomplete at the hold bound as it is, unless the owner answers the client', () => {
    const clock = new ManualClock(0);
    const partial = Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n');
    const released: Buffer[] = [];
    const plain = new HeadCoalescer((b) => released.push(b), undefined, clock, { holdMs: 1000 });
    plain.write(partial);
    clock.advance(999);
    expect(released).toHaveLength(0);
    clock.advance(1);
    expect(released.map(String)).toEqual([partial.toString()]);

    // the owner answers (408): nothing held goes on; `first` says whether anything went before
    const asked: boolean[] = [];
    const emitted: Buffer[] = [];
    const owned = new HeadCoalescer((b) => emitted.push(b), Buffer.from('P'), clock, { holdMs: 1000, expired: (first) => (asked.push(first), true) });
    owned.write(partial);
    clock.advance(1000);
    expect(asked).toEqual([true]);
    expect(emitted).toHaveLength(0);
    owned.write(head(10));
    owned.write(partial);
    clock.advance(1000);
    expect(asked).toEqual([true, false]);
    expect(emitted.map(String)).toEqual([`P${head(10).toString()}`]);
  });

  it('never alters or reorders bytes, however the stream is cut', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 3000 }), { minLength: 1, maxLength: 8 }), fc.integer({ min: 0, max: 9000 }), async (cuts, n) => {
        const stream = Buffer.concat([head(n), Buffer.from('body'), head(n % 500)]);
        const pieces: Buffer[] = [];
        let at = 0;
        for (const c of cuts) {
          if (at >= stream.length) break;
          pieces.push(stream.subarray(at, at + c));
          at += c;
        }
        if (at < stream.length) pieces.push(stream.subarray(at));
        const out = await run(Buffer.from('P'), pieces);
        expect(Buffer.concat(out).equals(Buffer.concat([Buffer.from('P'), stream]))).toBe(true);
      }),
      { numRuns: 60 },
    );
  });
});

describe('header names uWS refuses', () => {
  it('are carried escaped and decoded back; other heads are untouched', async () => {
    const { escapeHeaderNames, decodeHeaderName } = await import('../../src/gateway/request-head-coalescer.js');
    const plain = Buffer.from('GET / HTTP/1.1\r\nHost: x\r\nX-A-b: 1\r\n\r\nbody: not-a-header');
    expect(escapeHeaderNames(plain)).toBe(plain);
    const odd = Buffer.from('GET / HTTP/1.1\r\nHost: x\r\nImpersonate-Extra-acme.com%2Fproject: p1\r\n\r\nx.y: body');
    const out = escapeHeaderNames(odd).toString('latin1');
    const line = out.split('\r\n')[2]!;
    const name = line.slice(0, line.indexOf(':'));
    expect(name).toMatch(/^X-Orch-Hn-[0-9a-f]+$/);
    expect(line.slice(name.length)).toBe(': p1');
    expect(out.endsWith('\r\n\r\nx.y: body')).toBe(true);
    expect(decodeHeaderName(name.toLowerCase())).toBe('impersonate-extra-acme.com%2fproject');
    expect(decodeHeaderName('x-a-b')).toBe('x-a-b');
  });
});
