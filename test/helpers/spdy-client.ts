// The client half of SPDY/3.1 as far as tests of the agent's server half need it
// (src/nodeagent/streaming/spdy.ts): SYN_STREAM frames whose header blocks share
// one zlib context primed with the SPDY/3 dictionary, and DATA frames.
import { constants, type Deflate } from 'node:zlib';

/** a name/value block as a SPDY/3 client writes it: one zlib context, sync-flushed per block */
export function headerBlock(z: Deflate, headers: Record<string, string>): Promise<Buffer> {
  const parts: Buffer[] = [];
  const n = Buffer.alloc(4);
  n.writeUInt32BE(Object.keys(headers).length);
  parts.push(n);
  for (const [k, v] of Object.entries(headers)) {
    for (const s of [k, v]) {
      const l = Buffer.alloc(4);
      l.writeUInt32BE(s.length);
      parts.push(l, Buffer.from(s));
    }
  }
  return new Promise((resolve) => {
    const out: Buffer[] = [];
    const onData = (d: Buffer) => out.push(d);
    z.on('data', onData);
    z.write(Buffer.concat(parts));
    z.flush(constants.Z_SYNC_FLUSH, () => {
      z.off('data', onData);
      resolve(Buffer.concat(out));
    });
  });
}

export function synStream(id: number, block: Buffer, fin = false): Buffer {
  const body = Buffer.alloc(10 + block.length);
  body.writeUInt32BE(id);
  block.copy(body, 10);
  const head = Buffer.from([0x80, 0x03, 0x00, 0x01, fin ? 1 : 0, 0, 0, 0]);
  head.writeUIntBE(body.length, 5, 3);
  return Buffer.concat([head, body]);
}

/** a DATA frame of stream `id` */
export function dataFrame(id: number, data: Buffer | string, fin = false): Buffer {
  const body = Buffer.from(data);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(id & 0x7fffffff);
  head[4] = fin ? 1 : 0;
  head.writeUIntBE(body.length, 5, 3);
  return Buffer.concat([head, body]);
}

/** the DATA frames among what a server wrote: stream id, payload, FIN */
export function dataFrames(written: Buffer[]): { id: number; data: Buffer; fin: boolean }[] {
  const all = Buffer.concat(written);
  const out: { id: number; data: Buffer; fin: boolean }[] = [];
  for (let at = 0; at + 8 <= all.length; ) {
    const len = all.readUIntBE(at + 5, 3);
    if ((all[at]! & 0x80) === 0) out.push({ id: all.readUInt32BE(at), data: all.subarray(at + 8, at + 8 + len), fin: (all[at + 4]! & 1) === 1 });
    at += 8 + len;
  }
  return out;
}
