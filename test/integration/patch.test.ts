// PATCH over HTTP against a real server (spec 000 §4.3, §4.4): every patch
// type on configmaps, pods and services; JSON Patch `test` failures; a
// resourceVersion in the patch body as a precondition; 415 for unknown types
// and for strategic merge on custom-resource kinds.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResourceDefinition } from '../../src/registry/types.js';
import { NO_WORKLOAD_CONTROLLERS, type RawResponse, type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;

const JSON_PATCH = 'application/json-patch+json';
const MERGE = 'application/merge-patch+json';
const SMP = 'application/strategic-merge-patch+json';
const APPLY = 'application/apply-patch+yaml';

type Obj = Record<string, any>;

function patch(path: string, type: string, body: unknown, query = ''): Promise<RawResponse> {
  return t.request('PATCH', `${path}${query}`, {
    body: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'Content-Type': type },
  });
}

async function get(path: string): Promise<Obj> {
  const r = await t.request('GET', path);
  expect(r.status, r.text).toBe(200);
  return r.json<Obj>();
}

const CM = '/api/v1/namespaces/default/configmaps';
const PODS = '/api/v1/namespaces/default/pods';
const SVCS = '/api/v1/namespaces/default/services';

async function createCm(name: string, data: Record<string, string>): Promise<Obj> {
  const r = await t.request('POST', CM, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data } });
  expect(r.status, r.text).toBe(201);
  return r.json<Obj>();
}

beforeAll(async () => {
  t = await startTestServer({ authn: NO_WORKLOAD_CONTROLLERS });
});
afterAll(async () => {
  await t?.stop();
});

describe('JSON Patch (RFC 6902)', () => {
  it('applies add/replace/remove/copy/move and bumps the resourceVersion', async () => {
    const before = await createCm('jp1', { a: '1', b: '2' });
    const r = await patch(`${CM}/jp1`, JSON_PATCH, [
      { op: 'replace', path: '/data/a', value: 'one' },
      { op: 'remove', path: '/data/b' },
      { op: 'add', path: '/data/c', value: '3' },
      { op: 'copy', from: '/data/c', path: '/data/d' },
      { op: 'move', from: '/data/d', path: '/data/e' },
      { op: 'add', path: '/metadata/labels', value: { app: 'x' } },
    ]);
    expect(r.status, r.text).toBe(200);
    const body = r.json<Obj>();
    expect(body.data).toEqual({ a: 'one', c: '3', e: '3' });
    expect(body.metadata.labels).toEqual({ app: 'x' });
    expect(Number(body.metadata.resourceVersion)).toBeGreaterThan(Number(before.metadata.resourceVersion));
    expect((await get(`${CM}/jp1`)).data).toEqual({ a: 'one', c: '3', e: '3' });
  });

  it('a failed `test` is 422 Invalid (as kube-apiserver) and nothing is stored', async () => {
    const before = await createCm('jp2', { a: '1' });
    const r = await patch(`${CM}/jp2`, JSON_PATCH, [
      { op: 'replace', path: '/data/a', value: 'changed' },
      { op: 'test', path: '/data/a', value: 'nope' },
    ]);
    expect(r.status).toBe(422);
    const s = r.json<Obj>();
    expect(s.kind).toBe('Status');
    expect(s.reason).toBe('Invalid');
    expect(s.message).toContain('test');
    const after = await get(`${CM}/jp2`);
    expect(after.data).toEqual({ a: '1' });
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });

  it('a passing `test` guards the change', async () => {
    await createCm('jp3', { a: '1' });
    const r = await patch(`${CM}/jp3`, JSON_PATCH, [
      { op: 'test', path: '/data/a', value: '1' },
      { op: 'replace', path: '/data/a', value: '2' },
    ]);
    expect(r.status, r.text).toBe(200);
    expect(r.json<Obj>().data).toEqual({ a: '2' });
  });

  it('a path that does not exist is 422 and a malformed body is 400', async () => {
    await createCm('jp4', { a: '1' });
    const r = await patch(`${CM}/jp4`, JSON_PATCH, [{ op: 'replace', path: '/data/missing', value: 'x' }]);
    expect(r.status).toBe(422);
    expect(r.json<Obj>().reason).toBe('Invalid');
    const m = await patch(`${CM}/jp4`, JSON_PATCH, '[{"op":');
    expect(m.status).toBe(400);
    expect(m.json<Obj>().reason).toBe('BadRequest');
    for (const notList of [{ op: 'add', path: '/data/x', value: 'y' }, 'x', 1]) {
      const r2 = await patch(`${CM}/jp4`, JSON_PATCH, JSON.stringify(notList));
      expect(r2.status, JSON.stringify(notList)).toBe(400);
      expect(r2.json<Obj>().reason).toBe('BadRequest');
    }
    const badOp = await patch(`${CM}/jp4`, JSON_PATCH, [{ op: 'bogus', path: '/data/a' }]);
    expect(badOp.status).toBe(422);
    expect((await get(`${CM}/jp4`)).data).toEqual({ a: '1' });
  });

  it('a resourceVersion set by the patch is a precondition (stale → 409, current → 200)', async () => {
    const c = await createCm('jp5', { a: '1' });
    const rv = c.metadata.resourceVersion as string;
    expect((await patch(`${CM}/jp5`, MERGE, { data: { a: '2' } })).status).toBe(200);
    const stale = await patch(`${CM}/jp5`, JSON_PATCH, [
      { op: 'replace', path: '/metadata/resourceVersion', value: rv },
      { op: 'replace', path: '/data/a', value: '3' },
    ]);
    expect(stale.status).toBe(409);
    expect(stale.json<Obj>().reason).toBe('Conflict');
    expect((await get(`${CM}/jp5`)).data).toEqual({ a: '2' });
    const cur = (await get(`${CM}/jp5`)).metadata.resourceVersion as string;
    const ok = await patch(`${CM}/jp5`, JSON_PATCH, [
      { op: 'replace', path: '/metadata/resourceVersion', value: cur },
      { op: 'replace', path: '/data/a', value: '3' },
    ]);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json<Obj>().data).toEqual({ a: '3' });
  });
});

describe('If-Match', () => {
  it('carries a resourceVersion precondition on a JSON Patch (stale → 409, current → 200)', async () => {
    const c = await createCm('im1', { a: '1' });
    const rv = c.metadata.resourceVersion as string;
    const ops = JSON.stringify([{ op: 'replace', path: '/data/a', value: '2' }]);
    const ok = await t.request('PATCH', `${CM}/im1`, { body: ops, headers: { 'Content-Type': JSON_PATCH, 'If-Match': `"${rv}"` } });
    expect(ok.status, ok.text).toBe(200);
    const stale = await t.request('PATCH', `${CM}/im1`, {
      body: JSON.stringify([{ op: 'replace', path: '/data/a', value: '3' }]),
      headers: { 'Content-Type': JSON_PATCH, 'If-Match': rv },
    });
    expect(stale.status).toBe(409);
    expect(stale.json<Obj>().reason).toBe('Conflict');
    expect((await get(`${CM}/im1`)).data).toEqual({ a: '2' });
  });
});

describe('JSON Merge Patch (RFC 7386)', () => {
  it('merges maps and deletes with null', async () => {
    await createCm('mp1', { a: '1', b: '2' });
    const r = await patch(`${CM}/mp1`, MERGE, { metadata: { labels: { x: 'y' } }, data: { a: null, c: '3' } });
    expect(r.status, r.text).toBe(200);
    expect(r.json<Obj>().data).toEqual({ b: '2', c: '3' });
    expect((await get(`${CM}/mp1`)).metadata.labels).toEqual({ x: 'y' });
  });

  it('replaces lists wholesale (pod containers)', async () => {
    const r = await t.request('POST', PODS, {
      body: { metadata: { name: 'mp-pod' }, spec: { containers: [{ name: 'a', image: 'nginx:1' }, { name: 'b', image: 'redis:1' }] } },
    });
    expect(r.status, r.text).toBe(201);
    const p = await patch(`${PODS}/mp-pod`, MERGE, { metadata: { annotations: { note: 'n' } } });
    expect(p.status, p.text).toBe(200);
    expect(p.json<Obj>().spec.containers).toHaveLength(2);
    expect(p.json<Obj>().metadata.annotations).toEqual({ note: 'n' });
  });

  it('a stale resourceVersion in the body is 409; nothing stored', async () => {
    const c = await createCm('mp2', { a: '1' });
    await patch(`${CM}/mp2`, MERGE, { data: { a: '2' } });
    const r = await patch(`${CM}/mp2`, MERGE, { metadata: { resourceVersion: c.metadata.resourceVersion }, data: { a: '3' } });
    expect(r.status).toBe(409);
    expect(r.json<Obj>().message).toContain('the object has been modified');
    expect((await get(`${CM}/mp2`)).data).toEqual({ a: '2' });
  });

  it('a body that is not an object is 400', async () => {
    await createCm('mp3', { a: '1' });
    for (const body of ['[1,2]', '"s"', '42', 'null']) {
      const r = await patch(`${CM}/mp3`, MERGE, body);
      expect(r.status, body).toBe(400);
      expect(r.json<Obj>().reason).toBe('BadRequest');
    }
    expect((await get(`${CM}/mp3`)).data).toEqual({ a: '1' });
  });

  it('patching an absent object is 404', async () => {
    const r = await patch(`${CM}/nope`, MERGE, { data: { a: '1' } });
    expect(r.status).toBe(404);
    expect(r.json<Obj>().reason).toBe('NotFound');
  });

  it('may not change the name', async () => {
    await createCm('mp4', { a: '1' });
    const r = await patch(`${CM}/mp4`, MERGE, { metadata: { name: 'other' } });
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect((await get(`${CM}/mp4`)).metadata.name).toBe('mp4');
  });
});

describe('strategic merge patch', () => {
  it('merges a pod’s containers by name', async () => {
    const r = await t.request('POST', PODS, {
      body: {
        metadata: { name: 'smp-pod' },
        spec: { containers: [{ name: 'web', image: 'nginx:1.25' }, { name: 'side', image: 'busybox:1' }] },
      },
    });
    expect(r.status, r.text).toBe(201);
    const p = await patch(`${PODS}/smp-pod`, SMP, { spec: { containers: [{ name: 'side', image: 'busybox:2' }] } });
    expect(p.status, p.text).toBe(200);
    const containers = p.json<Obj>().spec.containers as Obj[];
    expect(containers.map((c) => [c.name, c.image])).toEqual([
      ['web', 'nginx:1.25'],
      ['side', 'busybox:2'],
    ]);
    // the same body as a merge patch would have replaced the list
    const stored = await get(`${PODS}/smp-pod`);
    expect((stored.spec.containers as Obj[]).map((c) => c.image)).toEqual(['nginx:1.25', 'busybox:2']);
  });

  it('$patch: delete removes an item of a merge list (service ports by port)', async () => {
    const r = await t.request('POST', SVCS, {
      body: {
        metadata: { name: 'smp-svc' },
        spec: { selector: { app: 'x' }, ports: [{ name: 'http', port: 80 }, { name: 'https', port: 443 }] },
      },
    });
    expect(r.status, r.text).toBe(201);
    const p = await patch(`${SVCS}/smp-svc`, SMP, { spec: { ports: [{ port: 443, $patch: 'delete' }] } });
    expect(p.status, p.text).toBe(200);
    expect((p.json<Obj>().spec.ports as Obj[]).map((x) => x.port)).toEqual([80]);
    const m = await patch(`${SVCS}/smp-svc`, SMP, { metadata: { labels: { tier: 'web' } }, spec: { selector: { app: 'y' } } });
    expect(m.status, m.text).toBe(200);
    expect(m.json<Obj>().spec.selector).toEqual({ app: 'y' });
  });

  it('on configmaps works like a merge patch for maps', async () => {
    await createCm('smp-cm', { a: '1', b: '2' });
    const r = await patch(`${CM}/smp-cm`, SMP, { data: { a: null, c: '3' } });
    expect(r.status, r.text).toBe(200);
    expect(r.json<Obj>().data).toEqual({ b: '2', c: '3' });
  });

  it('a result of the wrong type is 400 naming the patch and the converter error as kube words it (a merge patch: naming the kind)', async () => {
    await createCm('smp-type', { a: '1' });
    const r = await patch(`${CM}/smp-type`, SMP, { metadata: { labels: 'invalid' }, data: { n: 5 } });
    expect(r.status, r.text).toBe(400);
    const st = r.json<Obj>();
    expect(st.reason).toBe('BadRequest');
    expect(st.message).toBe('patch: Invalid value: "map[data:map[n:5] metadata:map[labels:invalid]]": cannot restore map from string');
    expect(st.details.causes).toEqual([
      { reason: 'FieldValueInvalid', message: 'Invalid value: "map[data:map[n:5] metadata:map[labels:invalid]]": cannot restore map from string', field: 'patch' },
    ]);
    const merge = await patch(`${CM}/smp-type`, MERGE, { metadata: { labels: 'invalid' } });
    expect(merge.status, merge.text).toBe(400);
    expect(merge.json<Obj>().message).toContain('ConfigMap in version "v1" cannot be handled as a ConfigMap');
    expect((await get(`${CM}/smp-type`)).metadata.labels).toBeUndefined();
  });

  it('is refused with 415 for custom-resource kinds', async () => {
    // a custom-resource-like kind registered at run time, with the standard ObjectMeta schema
    const objectMeta = t.server.registry.lookup('', 'v1', 'configmaps')!.schema.properties!.metadata!;
    const def: ResourceDefinition = {
      group: 'example.com',
      version: 'v1',
      kind: 'Widget',
      resource: 'widgets',
      singular: 'widget',
      scope: 'Namespaced',
      customResource: true,
      schema: {
        type: 'object',
        properties: {
          apiVersion: { type: 'string' },
          kind: { type: 'string' },
          metadata: objectMeta,
          spec: { type: 'object', 'x-orch-preserve-unknown-fields': true },
        },
      },
      strategy: {},
    };
    t.server.registry.add(def);
    const path = '/apis/example.com/v1/namespaces/default/widgets';
    const c = await t.request('POST', path, { body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1 } } });
    expect(c.status, c.text).toBe(201);
    const r = await patch(`${path}/w`, SMP, { spec: { size: 2 } });
    expect(r.status).toBe(415);
    expect(r.json<Obj>().reason).toBe('UnsupportedMediaType');
    const m = await patch(`${path}/w`, MERGE, { spec: { size: 3 } });
    expect(m.status, m.text).toBe(200);
    expect(m.json<Obj>().spec).toEqual({ size: 3 });
  });
});

describe('patch media types', () => {
  it('an unknown patch type is 415 and names the accepted ones', async () => {
    await createCm('mt1', { a: '1' });
    for (const type of ['application/json', 'text/plain', 'application/x-patch']) {
      const r = await patch(`${CM}/mt1`, type, { data: { a: '2' } });
      expect(r.status, type).toBe(415);
      const s = r.json<Obj>();
      expect(s.reason).toBe('UnsupportedMediaType');
      expect(s.message).toContain('application/merge-patch+json');
    }
    expect((await get(`${CM}/mt1`)).data).toEqual({ a: '1' });
  });

  it('accepts a charset parameter on the Content-Type', async () => {
    await createCm('mt2', { a: '1' });
    const r = await patch(`${CM}/mt2`, `${MERGE}; charset=utf-8`, { data: { a: '2' } });
    expect(r.status, r.text).toBe(200);
  });

  it('force on a non-apply patch is 422', async () => {
    await createCm('mt3', { a: '1' });
    const r = await patch(`${CM}/mt3`, MERGE, { data: { a: '2' } }, '?force=true');
    expect(r.status).toBe(422);
    const s = r.json<Obj>();
    expect(s.reason).toBe('Invalid');
    expect(s.details.causes[0]).toMatchObject({ field: 'force', reason: 'FieldValueForbidden' });
    expect((await get(`${CM}/mt3`)).data).toEqual({ a: '1' });
  });

  it('apply-patch+yaml is server-side apply (create when absent)', async () => {
    const r = await patch(`${CM}/mt4`, APPLY, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mt4\ndata:\n  k: v\n', '?fieldManager=tester');
    expect(r.status, r.text).toBe(201);
    expect(r.json<Obj>().data).toEqual({ k: 'v' });
  });

  it('a no-op patch does not change the resourceVersion', async () => {
    const c = await createCm('mt5', { a: '1' });
    const r = await patch(`${CM}/mt5`, MERGE, { data: { a: '1' } });
    expect(r.status).toBe(200);
    expect(r.json<Obj>().metadata.resourceVersion).toBe(c.metadata.resourceVersion);
  });
});

describe('the status sub-resource', () => {
  const podBody = (name: string) => ({ metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx:1' }] } });

  it('a write to /status changes the status and metadata, never the spec; managedFields name the sub-resource', async () => {
    expect((await t.request('POST', PODS, { body: podBody('st1') })).status).toBe(201);
    const r = await patch(`${PODS}/st1/status?fieldManager=kubelet`, MERGE, {
      metadata: { labels: { sneaky: 'x' } },
      spec: { containers: [{ name: 'c', image: 'evil:1' }] },
      status: { phase: 'Running' },
    });
    expect(r.status, r.text).toBe(200);
    const o = r.json<Obj>();
    expect(o.status.phase).toBe('Running');
    expect(o.spec.containers[0].image).toBe('nginx:1');
    // kube's podStatusStrategy resets the spec (and ownerReferences), not the labels
    expect(o.metadata.labels).toEqual({ sneaky: 'x' });
    const e = (o.metadata.managedFields as Obj[]).find((m) => m.manager === 'kubelet');
    expect(e).toMatchObject({ operation: 'Update', subresource: 'status' });
    expect(e!.fieldsV1['f:status']['f:phase']).toEqual({});
    expect(e!.fieldsV1['f:spec']).toBeUndefined();
  });

  it('a write to the main resource keeps the stored status', async () => {
    const c = (await t.request('POST', PODS, { body: podBody('st2') })).json<Obj>();
    const r = await patch(`${PODS}/st2`, MERGE, { status: { phase: 'Failed' } });
    expect(r.status, r.text).toBe(200);
    expect(r.json<Obj>().status.phase).toBe('Pending');
    expect(r.json<Obj>().metadata.resourceVersion).toBe(c.metadata.resourceVersion);
    const put = await t.request('PUT', `${PODS}/st2`, { body: { ...c, metadata: { ...c.metadata, labels: { a: 'b' } }, status: { phase: 'Succeeded' } } });
    expect(put.status, put.text).toBe(200);
    expect(put.json<Obj>().status.phase).toBe('Pending');
    expect(put.json<Obj>().metadata.labels).toEqual({ a: 'b' });
  });

  it('PUT and apply on /status: 404 when absent; apply records a status entry', async () => {
    const absent = await t.request('PUT', `${PODS}/st-none/status`, { body: podBody('st-none') });
    expect(absent.status).toBe(404);
    const absentApply = await patch(`${PODS}/st-none/status`, APPLY, 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: st-none\nstatus:\n  phase: Running\n', '?fieldManager=k');
    expect(absentApply.status).toBe(404);
    expect((await t.request('GET', `${PODS}/st-none`)).status).toBe(404);

    expect((await t.request('POST', PODS, { body: podBody('st3') })).status).toBe(201);
    const a = await patch(
      `${PODS}/st3/status`,
      APPLY,
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: st3\nspec:\n  nodeName: ignored\nstatus:\n  phase: Running\n  message: up\n',
      '?fieldManager=kubelet',
    );
    expect(a.status, a.text).toBe(200);
    const o = a.json<Obj>();
    expect(o.status).toMatchObject({ phase: 'Running', message: 'up' });
    expect(o.spec.nodeName).toBeUndefined();
    const e = (o.metadata.managedFields as Obj[]).find((m) => m.manager === 'kubelet');
    expect(e).toMatchObject({ operation: 'Apply', subresource: 'status' });
    expect(e!.fieldsV1).toEqual({ 'f:status': { 'f:message': {}, 'f:phase': {} } });
    // re-applying is a no-op
    const again = await patch(
      `${PODS}/st3/status`,
      APPLY,
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: st3\nstatus:\n  phase: Running\n  message: up\n',
      '?fieldManager=kubelet',
    );
    expect(again.status).toBe(200);
    expect(again.json<Obj>().metadata.resourceVersion).toBe(o.metadata.resourceVersion);
  });

  it('apply on /status may set labels and annotations, as PUT and PATCH there may (kube resets only the spec)', async () => {
    expect((await t.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'st-ns' } } })).status).toBe(201);
    const a = await patch('/api/v1/namespaces/st-ns/status', APPLY,
      'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: st-ns\n  annotations:\n    applied: "yes"\nspec:\n  finalizers: []\nstatus:\n  conditions:\n  - type: Applied\n    status: "True"\n',
      '?fieldManager=applier');
    expect(a.status, a.text).toBe(200);
    const o = a.json<Obj>();
    expect(o.metadata.annotations).toEqual({ applied: 'yes' });
    expect(o.spec.finalizers).toEqual(['kubernetes']);
    expect(o.status.conditions).toMatchObject([{ type: 'Applied', status: 'True' }]);
    const e = (o.metadata.managedFields as Obj[]).find((m) => m.manager === 'applier');
    expect(e).toMatchObject({ operation: 'Apply', subresource: 'status' });
    expect(e!.fieldsV1['f:metadata']).toEqual({ 'f:annotations': { 'f:applied': {} } });
    expect(e!.fieldsV1['f:spec']).toBeUndefined();
  });
});
