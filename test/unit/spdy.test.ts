// The SPDY/3.1 server framing of the port-forward tunnel (src/nodeagent/streaming/spdy.ts):
// header blocks compressed by a peer with the SPDY/3 dictionary and one zlib context for the
// session, our replies readable by a persistent inflater, data frames with FIN, PING echoed.
import { constants, createDeflate, createInflate } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { SPDY3_DICTIONARY, SpdyServerSession } from '../../src/nodeagent/streaming/spdy.js';
import { headerBlock, synStream } from '../helpers/spdy-client.js';

describe('SPDY/3.1 server session', () => {
  it('reads streams whose headers share one compression context, and answers in order', async () => {
    const z = createDeflate({ dictionary: SPDY3_DICTIONARY });
    const streams: [number, string, string, boolean][] = [];
    const data: [number, string, boolean][] = [];
    const sent: Buffer[] = [];
    const s = new SpdyServerSession((b) => sent.push(b), {
      onStream: (id, h, fin) => {
        streams.push([id, h.get('streamtype')!, h.get('port')!, fin]);
        s.reply(id);
      },
      onData: (id, d, fin) => data.push([id, d.toString(), fin]),
      onReset: () => undefined,
      onEnd: (r) => {
        throw new Error(r);
      },
    });
    const a = synStream(1, await headerBlock(z, { streamtype: 'error', port: '8080', requestid: '0' }));
    const b = synStream(3, await headerBlock(z, { streamtype: 'data', port: '8080', requestid: '0' }));
    const dataFrame = Buffer.from([0, 0, 0, 3, 1, 0, 0, 4, ...Buffer.from('ping')]);
    const ping = Buffer.from([0x80, 3, 0, 6, 0, 0, 0, 4, 0, 0, 0, 7]);
    // split at awkward places: frames may arrive in any pieces
    const all = Buffer.concat([a, b, dataFrame, ping]);
    for (let i = 0; i < all.length; i += 5) s.feed(all.subarray(i, i + 5));
    expect(streams).toEqual([[1, 'error', '8080', false], [3, 'data', '8080', false]]);
    expect(data).toEqual([[3, 'ping', true]]);
    // two SYN_REPLYs then the PING echo
    expect(sent.map((f) => f.readUInt16BE(2))).toEqual([2, 2, 6]);
    expect(sent[2]!.subarray(8)).toEqual(Buffer.from([0, 0, 0, 7]));
    // the reply header blocks are one zlib stream: a persistent inflater reads 4 zero bytes from each
    const inflate = createInflate();
    const got: Buffer[] = [];
    inflate.on('data', (d: Buffer) => got.push(d));
    for (const f of sent.slice(0, 2)) {
      inflate.write(f.subarray(12));
      await new Promise<void>((r) => inflate.flush(constants.Z_SYNC_FLUSH, () => r()));
    }
    expect(Buffer.concat(got)).toEqual(Buffer.alloc(8));
    z.close();
  });

  it("reads every header block of a long session: 2,000 streams, well past deflate's 32 KiB window", async () => {
    // a long kubectl port-forward: two streams per forwarded connection, each block referring back into the ones before
    const z = createDeflate({ dictionary: SPDY3_DICTIONARY });
    const got: string[] = [];
    const s = new SpdyServerSession(() => undefined, {
      onStream: (id, h) => got.push(`${id} ${h.get('streamtype')} ${h.get('port')} ${h.get('requestid')} ${h.get('x-note')}`),
      onData: () => undefined,
      onReset: () => undefined,
      onEnd: (r) => {
        throw new Error(r);
      },
    });
    const want: string[] = [];
    for (let i = 0; i < 1000; i++) {
      for (const [k, type] of [[0, 'error'], [1, 'data']] as const) {
        const id = 4 * i + 2 * k + 1;
        // a value unique to the block, so that every block carries some literal bytes
        const note = `n${i * 7919}-${type}`;
        want.push(`${id} ${type} 8080 ${i} ${note}`);
        s.feed(synStream(id, await headerBlock(z, { streamtype: type, port: '8080', requestid: String(i), 'x-note': note })));
      }
    }
    expect(got.length).toBe(2000);
    expect(got).toEqual(want);
    z.close();
  });

  it('ends the session, instead of inflating it, on a header block that inflates past 256 KiB', async () => {
    const z = createDeflate({ dictionary: SPDY3_DICTIONARY });
    let ended = '';
    const streams: number[] = [];
    const s = new SpdyServerSession(() => undefined, { onStream: (id) => streams.push(id), onData: () => undefined, onReset: () => undefined, onEnd: (r) => (ended = r) });
    s.feed(synStream(1, await headerBlock(z, { streamtype: 'data', port: '1' })));
    // a 4 MiB value compresses to a few KiB
    s.feed(synStream(3, await headerBlock(z, { streamtype: 'data', 'x-bomb': 'a'.repeat(4 << 20) })));
    expect(streams).toEqual([1]);
    expect(ended).toMatch(/^bad SPDY frame: /);
    z.close();
  });

  it('writes data frames of at most 32 KiB, FIN on the last', () => {
    const sent: Buffer[] = [];
    const s = new SpdyServerSession((b) => sent.push(b), { onStream: () => undefined, onData: () => undefined, onReset: () => undefined, onEnd: () => undefined });
    s.data(5, Buffer.alloc(40 * 1024, 1), true);
    expect(sent.map((f) => [f.readUInt32BE(0), f[4], f.readUIntBE(5, 3)])).toEqual([[5, 0, 32 * 1024], [5, 1, 8 * 1024]]);
    s.data(5, Buffer.alloc(0), true);
    expect(sent[2]!.length).toBe(8);
    expect(sent[2]![4]).toBe(1);
  });

  it('ends the session on a frame of another SPDY version', () => {
    let ended = '';
    const s = new SpdyServerSession(() => undefined, { onStream: () => undefined, onData: () => undefined, onReset: () => undefined, onEnd: (r) => (ended = r) });
    s.feed(Buffer.from([0x80, 0x02, 0, 1, 0, 0, 0, 0]));
    expect(ended).toMatch(/version 2/);
  });
});
