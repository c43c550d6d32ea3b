// The TLS front writes an upgraded connection frame by frame, each write after
// the one before has completed, so no TLS record holds bytes of two frames
// (src/gateway/ws-record-writer.ts): the Kubernetes Python client's
// port-forward loop select()s on the raw socket and reads one frame, and a
// second frame decrypted with the first waited in OpenSSL's buffer until more
// bytes arrived.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ResponseChunkFramer } from '../../src/gateway/response-chunk-framer.js';
import { WebSocketRecordWriter } from '../../src/gateway/ws-record-writer.js';

/** a server frame (unmasked, FIN) with a binary payload */
function wsFrame(payload: Buffer, opcode = 0x2): Buffer {
  const n = payload.length;
  const head = n < 126 ? Buffer.from([0x80 | opcode, n]) : n < 65536 ? Buffer.from([0x80 | opcode, 126, n >> 8, n & 0xff]) : Buffer.concat([Buffer.from([0x80 | opcode, 127]), (() => { const b = Buffer.alloc(8); b.writeBigUInt64BE(BigInt(n)); return b; })()]);
  return Buffer.concat([head, payload]);
}

/** a sink whose writes complete only when the test says so */
function manualSink() {
  const writes: Buffer[] = [];
  const callbacks: (() => void)[] = [];
  let ended = false;
  return {
    writes,
    get ended() {
      return ended;
    },
    get inFlight() {
      return callbacks.length;
    },
    complete() {
      callbacks.shift()?.();
    },
    sink: {
      write(data: Buffer, cb: (err?: Error | null) => void) {
        writes.push(Buffer.from(data));
        callbacks.push(() => cb());
        return true;
      },
      end() {
        ended = true;
      },
    },
  };
}

const noFlow = { pause: () => undefined, resume: () => undefined };

describe('WebSocketRecordWriter', () => {
  it('writes each frame of one backend read alone, the next only after the previous write completed', () => {
    const s = manualSink();
    const w = new WebSocketRecordWriter(s.sink, noFlow);
    const frames = [wsFrame(Buffer.from([0, 0xd2, 0x04])), wsFrame(Buffer.from([1, 0xd2, 0x04])), wsFrame(Buffer.from('\x00hello', 'latin1'))];
    w.push(Buffer.concat(frames));
    expect(s.writes).toEqual([frames[0]]);
    expect(s.inFlight).toBe(1);
    s.complete();
    expect(s.writes).toEqual(frames.slice(0, 2));
    s.complete();
    s.complete();
    expect(s.writes).toEqual(frames);
  });

  it('keeps the 101 head a record of its own and ends the sink only after the queue is written', () => {
    const s = manualSink();
    const w = new WebSocketRecordWriter(s.sink, noFlow);
    const head = Buffer.from('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n');
    const close = wsFrame(Buffer.from([0x03, 0xe8]), 0x8);
    w.pushRecord(head);
    w.push(close);
    w.end();
    expect(s.ended).toBe(false);
    s.complete();
    expect(s.ended).toBe(false);
    s.complete();
    expect(s.writes).toEqual([head, close]);
    expect(s.ended).toBe(true);
  });

  it('never puts bytes of two frames in one write, however the reads split them (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 70_000 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.integer({ min: 1, max: 40_000 }), { minLength: 1, maxLength: 20 }),
        (sizes, cuts) => {
          const frames = sizes.map((n, i) => wsFrame(Buffer.alloc(n, i)));
          const all = Buffer.concat(frames);
          const s = manualSink();
          const w = new WebSocketRecordWriter(s.sink, noFlow, Number.MAX_SAFE_INTEGER);
          let at = 0;
          for (const c of cuts) {
            if (at >= all.length) break;
            w.push(all.subarray(at, Math.min(all.length, at + c)));
            at += c;
          }
          if (at < all.length) w.push(all.subarray(at));
          while (s.inFlight > 0) s.complete();
          expect(Buffer.concat(s.writes).equals(all)).toBe(true);
          // each write lies inside one frame
          const bounds = frames.reduce<number[]>((acc, f) => [...acc, acc[acc.length - 1]! + f.length], [0]);
          let pos = 0;
          for (const wr of s.writes) {
            const frameIdx = bounds.findIndex((b) => b > pos) - 1;
            expect(pos + wr.length).toBeLessThanOrEqual(bounds[frameIdx + 1]!);
            pos += wr.length;
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('pauses the backend while more than the high-water mark waits, and resumes it once half is written', () => {
    const s = manualSink();
    const flow: string[] = [];
    const w = new WebSocketRecordWriter(s.sink, { pause: () => flow.push('pause'), resume: () => flow.push('resume') }, 100);
    for (let i = 0; i < 4; i++) w.push(wsFrame(Buffer.alloc(40)));
    expect(flow).toEqual(['pause']);
    expect(w.holding).toBe(true);
    s.complete();
    s.complete();
    expect(flow).toEqual(['pause']);
    s.complete();
    expect(flow).toEqual(['pause', 'resume']);
    expect(w.holding).toBe(false);
  });
});

describe('ResponseChunkFramer before a WebSocket', () => {
  it('gives the 101 head alone and leaves the frames after it to the caller', () => {
    const f = new ResponseChunkFramer();
    const head = 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n';
    const frames = Buffer.concat([wsFrame(Buffer.from([0, 1, 2])), wsFrame(Buffer.from([1, 1, 2]))]);
    const out = f.frame(Buffer.concat([Buffer.from(head, 'latin1'), frames]));
    expect(out?.toString('latin1')).toBe(head);
    expect(f.webSocket).toBe(true);
    expect(f.takeWebSocketBytes()?.equals(frames)).toBe(true);
    expect(f.takeWebSocketBytes()).toBeUndefined();
  });
});
