// The request pipeline without a socket (issue #9 item 1): the filter chain of
// src/endpoints/chain.ts driven with neutral requests, over a real registry,
// generic store and watch cacher. create → get → patch → watch, the 404/405
// rules of the installer, a kind registered at run time (as a CRD does), and
// the 401/403 answers of the authentication and authorization filters.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChain } from '../../src/endpoints/chain.js';
import type { HttpRequest, HttpResponse, StreamingResponse } from '../../src/endpoints/http.js';
import { systemClock } from '../../src/core/clock.js';
import type { HandlerContext } from '../../src/endpoints/handlers/context.js';
import { GenericStore } from '../../src/registry/generic-store.js';
import { ContinueTokens } from '../../src/registry/list.js';
import { Registry } from '../../src/registry/registry.js';
import type { ResourceDefinition } from '../../src/registry/types.js';
import type { LocalStore } from '../../src/store/local-store.js';
import { WatchService } from '../../src/watch/service.js';
import { RecordingSink, cleanupDirs, configMaps, openStore, widgets } from '../watch/helpers.js';

let store: LocalStore;
let watch: WatchService;
let registry: Registry;
let handle: (req: HttpRequest) => Promise<HttpResponse>;
let allow = true;

beforeAll(async () => {
  store = await openStore();
  watch = new WatchService(store, { bookmarkIntervalMs: 60_000 });
  registry = new Registry('orch.io', {}, [configMaps]);
  const stores = new Map<ResourceDefinition, GenericStore>();
  const ctx: HandlerContext = {
    registry,
    storeFor: (def) => {
      let gs = stores.get(def);
      if (!gs) {
        gs = new GenericStore(def, store, { admit: () => ({ errors: [], unknownFields: [] }), validateMeta: () => [] });
        stores.set(def, gs);
      }
      return gs;
    },
    tokens: new ContinueTokens(),
    clock: systemClock,
  };
  handle = createChain({
    ctx,
    apiDomain: 'orch.io',
    authn: {
      authenticate: async (r) => (r.headers.get('authorization') === 'Bearer bad' ? { error: 'Unauthorized' } : { user: { username: 'alice', groups: ['system:authenticated'] } }),
    },
    authz: { authorize: async () => (allow ? { decision: 'allow' } : { decision: 'deny', reason: 'no' }) },
    health: { serve: async (path) => (path === '/healthz' ? { status: 200, body: 'ok' } : undefined) },
    watch,
    nonResource: (path) => (path === '/version' ? { status: 200, body: { major: '1' } } : undefined),
    peerFor: () => undefined,
    requestTimeoutMs: 0,
  });
});

afterAll(async () => {
  watch.close();
  await store.close();
  await cleanupDirs();
});

function request(method: string, path: string, o: { body?: unknown; contentType?: string; headers?: Record<string, string> } = {}): HttpRequest {
  const [p, q] = path.split('?');
  const headers = new Map(Object.entries(o.headers ?? {}));
  if (o.contentType) headers.set('content-type', o.contentType);
  return {
    method,
    path: p!,
    query: new URLSearchParams(q ?? ''),
    headers,
    proxiedAddress: '',
    body: o.body === undefined ? new Uint8Array(0) : new TextEncoder().encode(typeof o.body === 'string' ? o.body : JSON.stringify(o.body)),
    signal: new AbortController().signal,
  };
}

function json(res: HttpResponse): { status: number; body: Record<string, unknown> } {
  if ('upgrade' in res || res.stream) throw new Error('expected a plain response');
  return { status: res.status, body: JSON.parse(typeof res.body === 'string' ? res.body : new TextDecoder().decode(res.body)) as Record<string, unknown> };
}

const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });

describe('the filter chain without a socket', () => {
  it('create, get and patch a ConfigMap; the patch answers with the patched object', async () => {
    const created = json(await handle(request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('one'), contentType: 'application/json' })));
    expect(created.status).toBe(201);
    expect((created.body.metadata as { resourceVersion?: string }).resourceVersion).toMatch(/^\d+$/);
    const got = json(await handle(request('GET', '/api/v1/namespaces/default/configmaps/one')));
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual({ a: '1' });
    const patched = json(
      await handle(request('PATCH', '/api/v1/namespaces/default/configmaps/one', { body: { data: { b: '2' } }, contentType: 'application/merge-patch+json' })),
    );
    expect(patched.status).toBe(200);
    expect(patched.body.data).toEqual({ a: '1', b: '2' });
    const badPatch = json(await handle(request('PATCH', '/api/v1/namespaces/default/configmaps/one', { body: '{not json', contentType: 'application/merge-patch+json' })));
    expect(badPatch.status).toBe(400);
  });

  it('a watch is an ordinary verb: a stream of the current state from resourceVersion=0', async () => {
    const res = await handle(request('GET', '/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0'));
    expect(res.stream).toBe(true);
    const stream = res as StreamingResponse;
    expect(stream.headers).toContainEqual(['Content-Type', 'application/json']);
    expect(stream.headers).toContainEqual(['Cache-Control', 'no-cache, private']);
    const sink = new RecordingSink();
    stream.start(sink);
    await expect.poll(() => sink.summary()).toEqual(['ADDED one']);
    stream.stop();
    // the watch checks its own ListOptions with the parser list uses
    expect(json(await handle(request('GET', '/api/v1/namespaces/default/configmaps?watch=1&continue=abc'))).status).toBe(400);
    expect(json(await handle(request('GET', '/api/v1/namespaces/default/configmaps?limit=-1'))).status).toBe(400);
  });

  it('404 and 405 as the installer decides them', async () => {
    expect(json(await handle(request('GET', '/api/v1/namespaces/default/nothings'))).status).toBe(404);
    expect(json(await handle(request('GET', '/api/v1/namespaces/default/configmaps/one/status'))).status).toBe(404);
    // POST names a collection, PUT and PATCH an object
    expect(json(await handle(request('POST', '/api/v1/namespaces/default/configmaps/one', { body: cm('one'), contentType: 'application/json' }))).status).toBe(405);
    expect(json(await handle(request('PUT', '/api/v1/namespaces/default/configmaps', { body: cm('one'), contentType: 'application/json' }))).status).toBe(405);
    expect(json(await handle(request('PATCH', '/api/v1/namespaces/default/configmaps', { body: {}, contentType: 'application/merge-patch+json' }))).status).toBe(405);
  });

  it('a kind registered at run time is routed at once (the table is rebuilt on registry change)', async () => {
    expect(json(await handle(request('GET', '/apis/example.orch.io/v1/widgets'))).status).toBe(404);
    registry.add(widgets);
    const list = json(await handle(request('GET', '/apis/example.orch.io/v1/widgets')));
    expect(list.status).toBe(200);
    expect(list.body.kind).toBe('WidgetList');
    // cluster-scoped: a namespace in the path is no such resource
    expect(json(await handle(request('GET', '/apis/example.orch.io/v1/namespaces/default/widgets'))).status).toBe(404);
    registry.remove('example.orch.io', 'v1', 'widgets');
    expect(json(await handle(request('GET', '/apis/example.orch.io/v1/widgets'))).status).toBe(404);
  });

  it('401, 403, health and non-resource documents come from their filters', async () => {
    const unauth = json(await handle(request('GET', '/api/v1/namespaces/default/configmaps', { headers: { authorization: 'Bearer bad' } })));
    expect(unauth.status).toBe(401);
    expect(unauth.body.reason).toBe('Unauthorized');
    allow = false;
    try {
      expect(json(await handle(request('GET', '/api/v1/namespaces/default/configmaps'))).status).toBe(403);
    } finally {
      allow = true;
    }
    const health = await handle(request('GET', '/healthz'));
    expect(health.status).toBe(200);
    expect(json(await handle(request('GET', '/version'))).body).toEqual({ major: '1' });
    expect(json(await handle(request('POST', '/version'))).status).toBe(405);
    expect(json(await handle(request('GET', '/nothing'))).status).toBe(404);
    // every answer carries an Audit-Id, audit policy or not
    expect(health.headers.some(([k]) => k === 'Audit-Id')).toBe(true);
  });
});
