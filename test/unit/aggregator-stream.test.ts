// A streamed answer of an aggregated server (src/server/aggregator/proxy.ts):
// written as it comes, the server's response paused while the client's queue
// is long and resumed once it drained (checked on the injected clock).

import { PassThrough } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { streamed } from '../../src/server/aggregator/proxy.js';
import type { StreamingResponse } from '../../src/endpoints/http.js';

describe('a streamed aggregated answer', () => {
  it("pauses the server's response while the client is behind and resumes it when the queue drained", async () => {
    const clock = new ManualClock(0);
    const upstream = new PassThrough() as unknown as IncomingMessage & PassThrough;
    Object.assign(upstream, { statusCode: 200, headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } });
    let aborted = false;
    const out = streamed(upstream, () => void (aborted = true), clock) as StreamingResponse;
    expect(out.headers).toEqual([['content-type', 'application/json']]);
    const written: string[] = [];
    let backlog = 0;
    let ended = false;
    out.start({ write: (c) => (written.push(String(c)), backlog === 0), backlog: () => backlog, end: () => void (ended = true) });
    upstream.write('{"type":"ADDED"}\n');
    await new Promise((r) => setImmediate(r));
    expect(written).toEqual(['{"type":"ADDED"}\n']);
    backlog = 2 * 1024 * 1024;
    upstream.write('{"type":"MODIFIED"}\n');
    await new Promise((r) => setImmediate(r));
    expect(upstream.isPaused()).toBe(true);
    clock.advance(50);
    expect(upstream.isPaused()).toBe(true);
    backlog = 0;
    clock.advance(50);
    expect(upstream.isPaused()).toBe(false);
    upstream.end();
    await new Promise((r) => setImmediate(r));
    expect(ended).toBe(true);
    out.stop();
    expect(aborted).toBe(true);
  });
});
