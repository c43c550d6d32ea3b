// Force deletion of corrupt objects (spec 000 §4.10, §3.3): the feature gate
// AllowUnsafeMalformedObjectDeletion and the delete option
// ignoreStoreReadErrorWithClusterBreakingPotential.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const CMS = '/api/v1/namespaces/default/configmaps';
const OPT = 'ignoreStoreReadErrorWithClusterBreakingPotential';
const keyOf = (ns: string, name: string) => `/registry/core/configmaps/${ns}/${name}`;

async function create(s: TestServer, name: string, meta: Record<string, unknown> = {}, ns = 'default'): Promise<void> {
  const r = await s.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
    body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...meta } },
  });
  expect(r.status, r.text).toBe(201);
}

/** overwrites the stored bytes with something that does not decode */
async function corrupt(s: TestServer, key: string): Promise<void> {
  const res = await s.server.store.txn({
    compare: [],
    success: [{ type: 'put', key, value: new Uint8Array([0xff, 0x00, 0x7b, 0x22, 0x67, 0x61, 0x72]) }],
    failure: [],
  });
  expect(res.succeeded).toBe(true);
}

describe('without the feature gate', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('the option is refused with a message naming the gate', async () => {
    await create(t, 'nogate');
    await corrupt(t, keyOf('default', 'nogate'));
    const r = await t.request('DELETE', `${CMS}/nogate?${OPT}=true`);
    expect(r.status).toBe(403);
    expect(r.text).toContain('AllowUnsafeMalformedObjectDeletion');
    // the corrupt object is still there and reported as such
    const g = await t.request('GET', `${CMS}/nogate`);
    expect(g.status).toBe(500);
  });

  it('an unknown feature gate fails the start', async () => {
    await expect(startTestServer({ featureGates: { NoSuchGate: true } })).rejects.toThrow(/unrecognized feature gate: NoSuchGate/);
  });
});

describe('with AllowUnsafeMalformedObjectDeletion=true', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ featureGates: { AllowUnsafeMalformedObjectDeletion: true } });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('a readable object is refused and left alone', async () => {
    await create(t, 'readable');
    const r = await t.request('DELETE', `${CMS}/readable?${OPT}=true`);
    expect(r.status).toBe(400);
    expect(r.text).toContain('is readable');
    expect((await t.request('GET', `${CMS}/readable`)).status).toBe(200);
  });

  it('a corrupt object makes get and paged lists fail with a 500 naming the key', async () => {
    await create(t, 'broken-read');
    const key = keyOf('default', 'broken-read');
    await corrupt(t, key);
    const g = await t.request('GET', `${CMS}/broken-read`);
    expect(g.status).toBe(500);
    const status = g.json<{ kind: string; reason: string; message: string }>();
    expect(status.kind).toBe('Status');
    expect(status.message).toContain(key);
    const l = await t.request('GET', `${CMS}?limit=500`);
    expect(l.status).toBe(500);
    expect(l.text).toContain(key);
    // the server keeps serving everything else
    expect((await t.request('GET', '/api/v1/namespaces/default')).status).toBe(200);
    // a normal delete cannot read it either
    const d = await t.request('DELETE', `${CMS}/broken-read`);
    expect(d.status).toBe(500);
    expect(d.text).toContain(OPT);
    expect((await t.request('DELETE', `${CMS}/broken-read?${OPT}=true`)).status).toBe(200);
  });

  it('the other delete options must be unset', async () => {
    await create(t, 'opts');
    await corrupt(t, keyOf('default', 'opts'));
    for (const [q, body] of [
      [`${OPT}=true&dryRun=All`, undefined],
      [`${OPT}=true&gracePeriodSeconds=0`, undefined],
      [`${OPT}=true&propagationPolicy=Background`, undefined],
      [`${OPT}=true&orphanDependents=false`, undefined],
      ['', { [OPT]: true, preconditions: { uid: 'x' } }],
    ] as const) {
      const r = await t.request('DELETE', `${CMS}/opts${q ? `?${q}` : ''}`, body ? { body } : {});
      expect(r.status, `${q} ${JSON.stringify(body)}`).toBe(400);
      expect(r.text).toContain('must be unset');
    }
    expect((await t.request('GET', `${CMS}/opts`)).status).toBe(500);
  });

  it('a corrupt object is removed ignoring finalizers and preconditions', async () => {
    await create(t, 'broken', { finalizers: ['example.com/never'] });
    await corrupt(t, keyOf('default', 'broken'));
    const r = await t.request('DELETE', `${CMS}/broken`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', [OPT]: true } });
    expect(r.status, r.text).toBe(200);
    expect(r.json<{ status: string }>().status).toBe('Success');
    expect((await t.request('GET', `${CMS}/broken`)).status).toBe(404);
    expect(t.server.store.range({ key: keyOf('default', 'broken') }).kvs).toHaveLength(0);
  });

  it('deletecollection does not take the option', async () => {
    const r = await t.request('DELETE', `${CMS}?${OPT}=true`);
    expect(r.status).toBe(400);
  });

  it('a corrupt object holds its namespace Terminating until it is force-deleted', async () => {
    expect((await t.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'corrupt-ns' } } })).status).toBe(201);
    await create(t, 'bad', {}, 'corrupt-ns');
    await corrupt(t, keyOf('corrupt-ns', 'bad'));
    expect((await t.request('DELETE', '/api/v1/namespaces/corrupt-ns')).status).toBe(200);
    const ns = await t.request('GET', '/api/v1/namespaces/corrupt-ns');
    expect(ns.json<{ status: { phase: string } }>().status.phase).toBe('Terminating');
    // the namespace's conditions point at the corrupt key
    type Cond = { type: string; status: string; message: string };
    await eventually(async () => {
      const n = await t.request('GET', '/api/v1/namespaces/corrupt-ns');
      const c = (n.json<{ status: { conditions?: Cond[] } }>().status.conditions ?? []).find((x) => x.type === 'NamespaceDeletionContentFailure');
      return c?.status === 'True' && c.message.includes(keyOf('corrupt-ns', 'bad'));
    }, 'content failure condition names the key');
    const r = await t.request('DELETE', `/api/v1/namespaces/corrupt-ns/configmaps/bad?${OPT}=true`);
    expect(r.status, r.text).toBe(200);
    await eventually(async () => (await t.request('GET', '/api/v1/namespaces/corrupt-ns')).status === 404, 'namespace removed');
  });
});
