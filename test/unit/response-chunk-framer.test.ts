// The TLS front re-frames uWS's chunked responses so each chunk is complete
// when written (src/gateway/response-chunk-framer.ts, issue #11, spec 000
// §2.5, §4.5). Input is what uWS writes; output must be standard HTTP/1.1
// framing however the input is split into reads.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ResponseChunkFramer } from '../../src/gateway/response-chunk-framer.js';

/** runs `parts` through a framer; returns what came out for each input write */
function frame(parts: (string | Buffer)[]): string[] {
  const f = new ResponseChunkFramer();
  const outs: string[] = [];
  for (const p of parts) {
    let got = '';
    const onData = (d: Buffer): void => void (got += d.toString('latin1'));
    f.on('data', onData);
    f.write(typeof p === 'string' ? Buffer.from(p, 'latin1') : p);
    f.off('data', onData);
    outs.push(got);
  }
  return outs;
}

const HEAD = 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Orch-Flush: 1\r\nTransfer-Encoding: chunked\r\n';
const OUT_HEAD = 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n';

/** what uWS writes for a stream of `events` (after the gateway's flush byte) */
function uwsStream(events: string[], end = true): string[] {
  const writes = [`${HEAD}\r\n1\r\n\n`];
  for (const e of events) writes.push(`\r\n${e.length.toString(16)}\r\n${e}`);
  if (end) writes.push('\r\n0\r\n\r\n');
  return writes;
}

describe('ResponseChunkFramer', () => {
  it('sends the head alone, then every event as a complete chunk in the same write', () => {
    const ev1 = '{"type":"ADDED"}\n';
    const ev2 = '{"type":"MODIFIED","object":{"x":"' + 'y'.repeat(300) + '"}}\n';
    const outs = frame(uwsStream([ev1, ev2]));
    expect(outs[0]).toBe(OUT_HEAD);
    expect(outs[1]).toBe(`${ev1.length.toString(16)}\r\n${ev1}\r\n`);
    expect(outs[2]).toBe(`${ev2.length.toString(16)}\r\n${ev2}\r\n`);
    expect(outs[3]).toBe('0\r\n\r\n');
  });

  it('counts Content-Length bodies (also a HEAD answer uWS sends one for) and frames the next response', () => {
    const body = '\r\n1\r\nnot a chunk';
    const plain = `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const outs = frame([plain, ...uwsStream(['{"a":1}\n'])]);
    expect(outs[0]).toBe(plain);
    expect(outs.slice(1).join('')).toBe(`${OUT_HEAD}8\r\n{"a":1}\n\r\n0\r\n\r\n`);
  });

  it('passes a head it does not understand, and everything after it, through unchanged', () => {
    const odd = ['HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n', '\x81\x05hello', '\r\n3\r\nabc'];
    expect(frame(odd).join('')).toBe(odd.join(''));
  });

  it('is not between responses after an interim 100 Continue, only after the final response (the front retires idle backend connections by this)', () => {
    const f = new ResponseChunkFramer();
    expect(f.betweenResponses).toBe(true);
    expect(f.frame(Buffer.from('HTTP/1.1 100 Continue\r\n\r\n'))?.toString()).toBe('HTTP/1.1 100 Continue\r\n\r\n');
    expect(f.betweenResponses).toBe(false);
    f.frame(Buffer.from('HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\no'));
    expect(f.betweenResponses).toBe(false);
    f.frame(Buffer.from('k'));
    expect(f.betweenResponses).toBe(true);
  });

  it('gives standard framing however the input is split (property)', () => {
    const event = fc.string({ minLength: 1, maxLength: 40 }).map((s) => `${s}\n`);
    fc.assert(
      fc.property(fc.array(event, { maxLength: 6 }), fc.array(fc.nat(), { maxLength: 20 }), (events, cuts) => {
        const whole = Buffer.from(uwsStream(events).join(''), 'latin1');
        const points = [...new Set(cuts.map((c) => c % (whole.length + 1)))].sort((a, b) => a - b);
        const parts: Buffer[] = [];
        let from = 0;
        for (const p of [...points, whole.length]) {
          parts.push(whole.subarray(from, p));
          from = p;
        }
        const expected = OUT_HEAD + events.map((e) => `${Buffer.byteLength(e, 'latin1').toString(16)}\r\n${e}\r\n`).join('') + '0\r\n\r\n';
        expect(frame(parts.filter((p) => p.length > 0)).join('')).toBe(expected);
      }),
      // splits inside the head's end are rare among random cuts: many runs
      { numRuns: 2000 },
    );
  });
  it("keeps the gateway's internal 101 of a SPDY hand-over to itself and reads its token (byte-tunnels.ts)", () => {
    const f = new ResponseChunkFramer();
    const token = 'ab'.repeat(32);
    const before = f.frame(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok', 'latin1'));
    expect(before?.toString('latin1')).toBe('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
    expect(f.tunnelToken).toBeUndefined();
    const out = f.frame(Buffer.from(`HTTP/1.1 101 Switching Protocols\r\nX-Orch-Tunnel: ${token}\r\nContent-Length: 0\r\n\r\n`, 'latin1'));
    expect(out).toBeUndefined();
    expect(f.tunnelToken).toBe(token);
    // a WebSocket's 101 is no hand-over
    const ws = new ResponseChunkFramer();
    ws.frame(Buffer.from('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n', 'latin1'));
    expect(ws.tunnelToken).toBeUndefined();
    expect(ws.webSocket).toBe(true);
  });
});
