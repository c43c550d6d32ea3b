// The aggregator filter (src/endpoints/filters/aggregator.ts): which requests
// are proxied, to which APIService, and what an ordinary request pays (only
// /apis/ paths look the group up, once).

import { describe, expect, it } from 'vitest';
import { type AggregatedGroup, type AggregatedVersion, type ProxiedRequest, aggregatorFilter } from '../../src/endpoints/filters/aggregator.js';
import type { RequestState } from '../../src/endpoints/filters/state.js';
import type { HttpResponse } from '../../src/endpoints/http.js';
import type { RequestInfo } from '../../src/endpoints/request.js';
import { StatusError } from '../../src/core/errors.js';

const version = (v: string, available = true): AggregatedVersion => ({
  name: `${v}.wardle.example.com`, group: 'wardle.example.com', version: v, service: { namespace: 'w', name: 'api', port: 443 }, insecureSkipTLSVerify: false, available,
});

function setup(groups: Record<string, AggregatedGroup>) {
  const lookups: string[] = [];
  const proxied: ProxiedRequest[] = [];
  const filter = aggregatorFilter({
    group: (g) => {
      lookups.push(g);
      return groups[g];
    },
    proxy: async (r) => {
      proxied.push(r);
      return { status: 200, headers: [], body: 'proxied' };
    },
  });
  const next = async (): Promise<HttpResponse> => ({ status: 200, headers: [], body: 'local' });
  const run = (path: string, info: Partial<RequestInfo> = {}) => {
    const s: RequestState = {
      http: { method: 'GET', path, query: new URLSearchParams(), headers: new Map(), proxiedAddress: '', body: new Uint8Array(), signal: new AbortController().signal },
      info: { isResourceRequest: false, path, verb: 'get', group: '', version: '', namespace: '', resource: '', subresource: '', name: '', ...info },
      accept: { format: 'json', pretty: false },
      user: { username: 'u', groups: [] },
    };
    return filter(s, next);
  };
  return { lookups, proxied, run };
}

const v1 = version('v1');
const v2 = version('v2beta1');
const wardle = { versions: new Map([['v1', v1], ['v2beta1', v2]]), preferred: v1 };

describe('aggregator filter', () => {
  it('a path outside /apis/ never looks a group up; a served group is one lookup and goes on', async () => {
    const t = setup({ 'wardle.example.com': wardle });
    expect((await t.run('/api/v1/namespaces/default/pods', { isResourceRequest: true, version: 'v1', resource: 'pods' })) as { body: string }).toMatchObject({ body: 'local' });
    expect(await t.run('/apis')).toMatchObject({ body: 'local' });
    expect(t.lookups).toEqual([]);
    expect(await t.run('/apis/apps/v1/deployments', { isResourceRequest: true, group: 'apps', version: 'v1', resource: 'deployments' })).toMatchObject({ body: 'local' });
    expect(t.lookups).toEqual(['apps']);
  });

  it('a resource request of an aggregated group/version goes to that APIService; an unknown version stays local', async () => {
    const t = setup({ 'wardle.example.com': wardle });
    await t.run('/apis/wardle.example.com/v2beta1/flunders', { isResourceRequest: true, group: 'wardle.example.com', version: 'v2beta1', resource: 'flunders' });
    expect(t.proxied.map((p) => p.target.name)).toEqual(['v2beta1.wardle.example.com']);
    expect(await t.run('/apis/wardle.example.com/v9/flunders', { isResourceRequest: true, group: 'wardle.example.com', version: 'v9', resource: 'flunders' })).toMatchObject({ body: 'local' });
  });

  it('/apis/<group> goes to the preferred version, /apis/<group>/<version> to that version', async () => {
    const t = setup({ 'wardle.example.com': wardle });
    await t.run('/apis/wardle.example.com');
    await t.run('/apis/wardle.example.com/v2beta1');
    expect(t.proxied.map((p) => p.target.version)).toEqual(['v1', 'v2beta1']);
  });

  it("an APIService that is not Available answers kube's 503 ServiceUnavailable and calls nothing", async () => {
    const down = version('v1', false);
    const t = setup({ 'wardle.example.com': { versions: new Map([['v1', down]]), preferred: down } });
    const err = await t.run('/apis/wardle.example.com/v1/flunders', { isResourceRequest: true, group: 'wardle.example.com', version: 'v1', resource: 'flunders' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StatusError);
    expect(err).toMatchObject({ code: 503, reason: 'ServiceUnavailable', message: 'service unavailable' });
    expect(t.proxied).toEqual([]);
  });
});
