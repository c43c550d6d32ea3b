// More of what clients written for kube-apiserver 1.32 read on the wire (the
// first part is client-wire.test.ts): each case against a real server, the
// bytes and fields a strict client decodes.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_WORKLOAD_CONTROLLERS, type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
type Obj = Record<string, any>;

beforeAll(async () => {
  t = await startTestServer({ authn: NO_WORKLOAD_CONTROLLERS });
});
afterAll(async () => {
  await t?.stop();
});

describe("invalid ListOptions: kube's ValidateListOptions answer (422 Invalid, ListOptions.meta.k8s.io)", () => {
  const base = '/api/v1/namespaces/default/configmaps';
  const invalidStatus = (summary: string, causes: Obj[]): Obj => ({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `ListOptions.meta.k8s.io "" is invalid: ${summary}`,
    reason: 'Invalid',
    details: { group: 'meta.k8s.io', kind: 'ListOptions', causes },
    code: 422,
  });
  const forbidden = (field: string, why: string) => ({ reason: 'FieldValueForbidden', message: `Forbidden: ${why}`, field });

  it('list: resourceVersionMatch without resourceVersion', async () => {
    const r = await t.request('GET', `${base}?resourceVersionMatch=NotOlderThan`);
    expect(r.status).toBe(422);
    const why = 'resourceVersionMatch is forbidden unless resourceVersion is provided';
    expect(r.json<Obj>()).toEqual(invalidStatus(`resourceVersionMatch: Forbidden: ${why}`, [forbidden('resourceVersionMatch', why)]));
  });

  it('list: Exact at resourceVersion 0 (kube writes "exact" in lower case)', async () => {
    const r = await t.request('GET', `${base}?resourceVersionMatch=Exact&resourceVersion=0`);
    const why = 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"';
    expect(r.json<Obj>()).toEqual(invalidStatus(`resourceVersionMatch: Forbidden: ${why}`, [forbidden('resourceVersionMatch', why)]));
  });

  it('list: every rule broken is one cause, the message lists them in brackets', async () => {
    const r = await t.request('GET', `${base}?resourceVersionMatch=Newest&continue=abc&sendInitialEvents=false`);
    const body = r.json<Obj>();
    expect(body.code).toBe(422);
    expect(body.details.causes).toEqual([
      forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'),
      forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'),
      {
        reason: 'FieldValueNotSupported',
        message: 'Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""',
        field: 'resourceVersionMatch',
      },
      forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'),
    ]);
    expect(body.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, ' +
        'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided, ' +
        'resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", "", ' +
        'sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list]',
    );
  });

  it('deletecollection checks the same ListOptions and deletes nothing', async () => {
    expect((await t.request('POST', base, { body: { metadata: { name: 'lo-keep' } } })).status).toBe(201);
    const r = await t.request('DELETE', `${base}?resourceVersionMatch=Exact`);
    expect(r.status).toBe(422);
    expect(r.json<Obj>().details.kind).toBe('ListOptions');
    expect((await t.request('GET', `${base}/lo-keep`)).status).toBe(200);
  });

  it('continue with a non-zero resourceVersion stays 400 BadRequest (kube refuses it in storage, not in validation)', async () => {
    const first = (await t.request('GET', `${base}?limit=1`)).json<Obj>();
    expect(first.metadata.continue).toBeTruthy();
    const r = await t.request('GET', `${base}?limit=1&resourceVersion=1&continue=${encodeURIComponent(first.metadata.continue)}`);
    expect(r.status).toBe(400);
    expect(r.json<Obj>().reason).toBe('BadRequest');
  });

  it('watch: sendInitialEvents without resourceVersionMatch=NotOlderThan, and a match other than NotOlderThan', async () => {
    const r = await t.request('GET', `${base}?watch=1&sendInitialEvents=true&resourceVersionMatch=Exact`);
    expect(r.status).toBe(422);
    const body = r.json<Obj>();
    expect(body.details.causes).toEqual([
      forbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'),
      { reason: 'FieldValueNotSupported', message: 'Unsupported value: "Exact": supported values: "NotOlderThan"', field: 'resourceVersionMatch' },
    ]);
    const r2 = await t.request('GET', `${base}?watch=1&resourceVersionMatch=NotOlderThan`);
    expect(r2.status).toBe(422);
    const why = 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided';
    expect(r2.json<Obj>()).toEqual(invalidStatus(`resourceVersionMatch: Forbidden: ${why}`, [forbidden('resourceVersionMatch', why)]));
  });
});

describe('/openapi/v3/<group-version>?hash= (kube-openapi handler3)', () => {
  it('a wrong hash is 301 Moved Permanently to the current hash, which is served immutable', async () => {
    const index = (await t.request('GET', '/openapi/v3')).json<Obj>();
    const url = index.paths['apis/apps/v1'].serverRelativeURL as string;
    const hash = new URL(url, 'http://x').searchParams.get('hash')!;
    expect(hash).toMatch(/^[0-9A-F]{128}$/);
    const moved = await t.request('GET', '/openapi/v3/apis/apps/v1?hash=0123ABCD');
    expect(moved.status).toBe(301);
    expect(moved.headers.location).toBe(url);
    expect(moved.headers.etag).toBe(`"${hash}"`);
    expect(moved.headers['cache-control']).toBe('no-cache, private');
    expect(moved.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(moved.text).toBe(`<a href="${url}">Moved Permanently</a>.\n\n`);
    const current = await t.request('GET', url);
    expect(current.status).toBe(200);
    expect(current.headers['cache-control']).toBe('public, immutable');
    expect(new Date(current.headers.expires as string).getTime()).toBeGreaterThan(Date.now() + 300 * 24 * 3600 * 1000);
    expect(current.json<Obj>().openapi).toMatch(/^3\./);
    // no hash: an ordinary answer, not cached for good
    const plain = await t.request('GET', '/openapi/v3/apis/apps/v1');
    expect(plain.status).toBe(200);
    expect(plain.headers['cache-control'] ?? '').not.toContain('immutable');
  });
});
