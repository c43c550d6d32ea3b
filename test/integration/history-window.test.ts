// A single server keeps store history as long as its watch window
// (`--watch-cache-window`), as a Raft member does: the single member's store
// kept its 5 min default whatever the window was, so a short window did not
// bound its memory under a steady write load (docs/reliability.md "RSS with
// fixed data").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { type TestServer, startTestServer, NO_NAMESPACE_DEFAULTS } from '../helpers/server.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ authn: NO_NAMESPACE_DEFAULTS, watchWindowMs: 2_000 });
});
afterAll(async () => {
  await t?.stop();
});

describe('store history and the watch window', () => {
  it('compacts history older than the window on a single server', async () => {
    const created = await t.request('POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'h1' } } });
    expect(created.status).toBe(201);
    const rv = Number(created.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion);
    // a later write, so that the first one is history the window no longer needs
    expect((await t.request('PUT', '/api/v1/namespaces/default/configmaps/h1', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'h1' }, data: { a: 'b' } } })).status).toBe(200);
    await eventually(() => t.server.store.compactRevision >= rv, 'the store to compact past the first write', 20_000);
    // and a watch from before the compaction is told so (410), as kube answers
    const old = await t.request('GET', `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${rv - 1}&timeoutSeconds=1`);
    expect(old.status).toBe(200);
    expect(old.text).toContain('"code":410');
  });
});
