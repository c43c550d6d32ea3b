// The request pipeline without a socket (issue #9 item 1): the filter chain of
// src/endpoints/chain.ts driven with neutral requests, over a real registry,
// generic store and watch cacher. create → get → patch → watch, the 404/405
// rules of the installer, a kind registered at run time (as a CRD does), and
// the 401/403 answers of the authentication and authorization filters, and
// capabilities (src/registry/capabilities.ts) served on decoded bodies.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChain } from '../../src/endpoints/chain.js';
import type { HttpRequest, HttpResponse, StreamingResponse } from '../../src/endpoints/http.js';
import { systemClock } from '../../src/core/clock.js';
import type { HandlerContext } from '../../src/endpoints/handlers/context.js';
import { GenericStore } from '../../src/registry/generic-store.js';
import { ContinueTokens } from '../../src/registry/list.js';
import { Registry } from '../../src/registry/registry.js';
import type { CapabilityContext } from '../../src/registry/capabilities.js';
import type { ApiObject, ResourceDefinition } from '../../src/registry/types.js';
import type { LocalStore } from '../../src/store/local-store.js';
import { WatchService } from '../../src/watch/service.js';
import { RecordingSink, cleanupDirs, configMaps, openStore, widgets } from '../watch/helpers.js';

let store: LocalStore;
let watch: WatchService;
let registry: Registry;
let handle: (req: HttpRequest) => Promise<HttpResponse>;
let allow = true;
/** evaluation errors the test authorizer reports with its no-opinion/deny (spec 001 §5.16) */
let authzErrors: string[] | undefined;

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
    authz: { authorize: async () => (allow ? { decision: 'allow', errors: authzErrors } : { decision: 'deny', reason: 'no', errors: authzErrors }) },
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
  if ('upgrade' in res || 'tunnel' in res || res.stream) throw new Error('expected a plain response');
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
    expect(json(await handle(request('GET', '/api/v1/namespaces/default/configmaps?limit=ten'))).status).toBe(400);
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
      // an authorizer error with no allow: kube's responsewriters.InternalError, a plain-text 500
      authzErrors = ['webhook w: connect ECONNREFUSED', 'x <y> & z'];
      const failed = await handle(request('GET', '/api/v1/namespaces/default/configmaps?limit=1'));
      expect(failed.status).toBe(500);
      expect(failed.headers).toContainEqual(['Content-Type', 'text/plain; charset=utf-8']);
      expect(String((failed as { body: unknown }).body)).toBe(
        'Internal Server Error: "/api/v1/namespaces/default/configmaps?limit=1": [webhook w: connect ECONNREFUSED, x &lt;y&gt; &amp; z]\n',
      );
      // an allow goes on whatever the errors
      allow = true;
      expect(json(await handle(request('GET', '/api/v1/namespaces/default/configmaps'))).status).toBe(200);
    } finally {
      allow = true;
      authzErrors = undefined;
    }
    const health = await handle(request('GET', '/healthz'));
    expect(health.status).toBe(200);
    expect(json(await handle(request('GET', '/version'))).body).toEqual({ major: '1' });
    expect(json(await handle(request('POST', '/version'))).status).toBe(405);
    expect(json(await handle(request('GET', '/nothing'))).status).toBe(404);
    // every answer carries an Audit-Id, audit policy or not
    expect(health.headers.some(([k]) => k === 'Audit-Id')).toBe(true);
  });

  it('capabilities get decoded objects: a virtual kind create and a sub-resource with its own kind', async () => {
    const seen: Array<{ ctx: Omit<CapabilityContext, 'store'>; obj: ApiObject }> = [];
    const record = async ({ store: _s, ...ctx }: CapabilityContext, obj: ApiObject) => {
      seen.push({ ctx, obj });
      return { status: 201, object: { apiVersion: obj.apiVersion, kind: obj.kind, echo: obj.spec ?? null } };
    };
    const probes: ResourceDefinition = {
      group: 'example.orch.io', version: 'v1', kind: 'Probe', resource: 'probes', singular: 'probe', scope: 'Namespaced',
      verbs: ['create'], schema: { type: 'object' }, strategy: {}, capabilities: { '': { create: record } },
    };
    const things: ResourceDefinition = {
      group: 'example.orch.io', version: 'v1', kind: 'Thing', resource: 'things', singular: 'thing', scope: 'Namespaced',
      subresources: ['stamp'], schema: { type: 'object' }, strategy: {},
      capabilities: { stamp: { body: { kind: { kind: 'Stamp', apiVersions: ['example.orch.io/v1', 'stamps.io/v1'] } }, create: record } },
    };
    registry.add(probes);
    registry.add(things);
    try {
      // a YAML body arrives as an object, type meta filled in; the answer is encoded as negotiated
      const yaml = 'spec:\n  x: 1\n';
      const r = json(await handle(request('POST', '/apis/example.orch.io/v1/namespaces/default/probes?dryRun=All', { body: yaml, contentType: 'application/yaml' })));
      expect(r).toEqual({ status: 201, body: { apiVersion: 'example.orch.io/v1', kind: 'Probe', echo: { x: 1 } } });
      expect(seen[0]!.ctx).toMatchObject({ user: { username: 'alice', groups: ['system:authenticated'] }, namespace: 'default', name: '', dryRun: true });
      // the endpoint refuses what the capability must not see: a bad dryRun, another kind, a non-object
      const refused = [
        json(await handle(request('POST', '/apis/example.orch.io/v1/namespaces/default/probes?dryRun=Some', { body: { spec: {} }, contentType: 'application/json' }))),
        json(await handle(request('POST', '/apis/example.orch.io/v1/namespaces/default/probes', { body: { kind: 'Widget' }, contentType: 'application/json' }))),
        json(await handle(request('POST', '/apis/example.orch.io/v1/namespaces/default/probes', { body: '[1]', contentType: 'application/json' }))),
      ];
      expect(refused.map((x) => [x.status, x.body.message])).toEqual([
        [422, 'CreateOptions.meta.orch.io "" is invalid: dryRun: Unsupported value: []string{"Some"}: supported values: "All"'],
        [400, 'the kind in the data (Widget) does not match the expected kind (Probe)'],
        [400, 'the body of the request must be a single Probe object'],
      ]);
      expect(seen).toHaveLength(1);
      // a sub-resource's own kind: either accepted apiVersion; the first is filled in when absent
      const stamp = json(await handle(request('POST', '/apis/example.orch.io/v1/namespaces/default/things/t1/stamp', { body: { kind: 'Stamp', spec: { y: 2 } }, contentType: 'application/json' })));
      expect(stamp).toEqual({ status: 201, body: { apiVersion: 'example.orch.io/v1', kind: 'Stamp', echo: { y: 2 } } });
      expect(seen[1]!.ctx).toMatchObject({ namespace: 'default', name: 't1', dryRun: false });
      const other = json(await handle(request('POST', '/apis/example.orch.io/v1/namespaces/default/things/t1/stamp', { body: { apiVersion: 'v1', kind: 'Stamp' }, contentType: 'application/json' })));
      expect([other.status, other.body.message]).toEqual([400, 'the API version in the data (v1) does not match the expected API version (example.orch.io/v1)']);
      // verbs the capabilities do not serve are 405 on a sub-resource
      expect(json(await handle(request('PUT', '/apis/example.orch.io/v1/namespaces/default/things/t1/stamp', { body: { kind: 'Stamp' }, contentType: 'application/json' }))).status).toBe(405);
      expect(json(await handle(request('GET', '/apis/example.orch.io/v1/namespaces/default/things/t1/stamp'))).status).toBe(405);
    } finally {
      registry.remove('example.orch.io', 'v1', 'probes');
      registry.remove('example.orch.io', 'v1', 'things');
    }
  });
});
