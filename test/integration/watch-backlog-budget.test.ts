// The server-wide watch backlog budget (issue #15, docs/reliability.md "Slow
// and broken clients", src/watch/backlog-budget.ts) on a real server over
// real sockets: many watches that never read, each allowed to fall far
// behind on its own (64 MiB), are ended with 410 once together they hold
// more than the budget (2 MiB here); the sum never exceeds it, and a watcher
// that reads gets every event and is never ended.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { closedByServer, stalledWatchersAndReader } from '../helpers/raw-tls.js';

const BUDGET = 2 * 1024 * 1024;
let t: TestServer;

beforeAll(async () => {
  t = await startTestServer({ limits: { watchBacklogBudgetBytes: BUDGET }, watchMaxBacklogBytes: 64 * 1024 * 1024 });
});
afterAll(async () => {
  await t?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));


describe('watch backlog budget (server-wide)', () => {
  it('ends non-reading watchers once together they exceed the budget; the total stays within it and a reader is unaffected', async () => {
    const ns = 'budget';
    expect((await t.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } })).status).toBe(201);
    const path = `/api/v1/namespaces/${ns}/configmaps?watch=true&resourceVersion=0`;
    const { stalled, reader, seen } = await stalledWatchersAndReader(t, path, 12);
    await sleep(300);
    const ended = () => t.server.watch.stats().budgetWatchersEnded;
    let maxTotal = 0;
    const value = 'v'.repeat(64 * 1024);
    for (let n = 0; n < 1500 && ended() < stalled.length; n++) {
      const r = await t.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${n}` }, data: { v: value } } });
      expect(r.status).toBe(201);
      maxTotal = Math.max(maxTotal, t.server.watch.stats().backlogBytes);
    }
    expect(ended()).toBe(stalled.length);
    expect(maxTotal).toBeGreaterThan(BUDGET / 2); // the stalled watchers did hold bytes
    expect(maxTotal).toBeLessThanOrEqual(BUDGET);
    expect(t.server.watch.stats().slowWatchersEnded).toBe(0);
    const metrics = (await t.request('GET', '/metrics')).text;
    expect(metrics).toMatch(new RegExp(`^orch_watch_backlog_budget_expired_total ${stalled.length}$`, 'm'));
    // reading at last, each stalled client finds the 410 at the end of what was sent
    const tails = await Promise.all(
      stalled.map((s) => {
        const closed = closedByServer(s, 30_000);
        s.resume();
        return closed;
      }),
    );
    // Each stalled client, reading at last, finds the 410 at the end of what
    // was sent, or (ended long before it read: uWS drops an ended response's
    // unsent bytes and closes after its 10 s bound, which is what frees the
    // memory) a stream cut off without its last chunk; either way its client
    // watches again.
    const with410 = tails.filter((tail) => tail.slice(-2000).includes('"code":410'));
    for (const tail of with410) expect(tail.slice(-2000)).toContain('watch buffers are full');
    for (const tail of tails.filter((x) => !with410.includes(x))) expect(tail.endsWith('\r\n0\r\n\r\n')).toBe(false);
    console.log(`budget: ${with410.length} of ${tails.length} stalled watchers read their 410; the rest were cut off; max total backlog ${maxTotal}`);
    // the reader saw every create and no 410
    const created = (await t.request('GET', `/api/v1/namespaces/${ns}/configmaps`)).json<{ items: unknown[] }>().items.length;
    for (let i = 0; i < 100 && (seen().match(/"type":"ADDED"/g) ?? []).length < created; i++) await sleep(100);
    expect((seen().match(/"type":"ADDED"/g) ?? []).length).toBe(created);
    expect(seen()).not.toContain('"code":410');
    reader.destroy();
  }, 120_000);
});
