// More of what clients written for kube-apiserver 1.32 read on the wire (the
// first part is client-wire.test.ts): each case against a real server, the
// bytes and fields a strict client decodes.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_WORKLOAD_CONTROLLERS, type TestServer, startTestServer } from '../helpers/server.js';
import { CRDS, createCrd, openCrd } from '../helpers/crds.js';
import { runKubectl } from '../helpers/kubectl.js';

let t: TestServer;
type Obj = Record<string, any>;

beforeAll(async () => {
  t = await startTestServer({ authn: NO_WORKLOAD_CONTROLLERS });
});
afterAll(async () => {
  await t?.stop();
});

describe("invalid ListOptions: kube's ValidateListOptions answer (422 Invalid, ListOptions.meta.orch.io (meta.k8s.io under --api-domain k8s.io))", () => {
  const base = '/api/v1/namespaces/default/configmaps';
  const invalidStatus = (summary: string, causes: Obj[]): Obj => ({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `ListOptions.meta.orch.io "" is invalid: ${summary}`,
    reason: 'Invalid',
    details: { group: 'meta.orch.io', kind: 'ListOptions', causes },
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
      'ListOptions.meta.orch.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, ' +
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

describe('PUT of an absent object creates it, for every kind (spec 000 §1, §4.1: "update (or create when absent)")', () => {
  // kube-apiserver creates on PUT only where the kind's strategy allows it (Services, Endpoints,
  // Events, LimitRanges, RBAC, Leases) and answers 404 elsewhere; the specification makes it one
  // rule for every kind (docs/writes.md "PUT of an absent object")
  it('ConfigMaps, Deployments, Services and custom resources are created (201) and readable', async () => {
    const crd = openCrd({ group: 'put.example.com', plural: 'widgets', kind: 'Widget' });
    await createCrd(t, crd);
    const cases: [string, Obj][] = [
      ['/api/v1/namespaces/default/configmaps/pc-cm', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pc-cm' }, data: { a: 'b' } }],
      ['/api/v1/namespaces/default/services/pc-svc', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'pc-svc' }, spec: { ports: [{ port: 80 }] } }],
      [
        '/apis/apps/v1/namespaces/default/deployments/pc-d',
        {
          apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'pc-d' },
          spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
        },
      ],
      ['/apis/put.example.com/v1/namespaces/default/widgets/w1', { apiVersion: 'put.example.com/v1', kind: 'Widget', metadata: { name: 'w1' } }],
    ];
    for (const [path, body] of cases) {
      const r = await t.request('PUT', path, { body });
      expect(r.status, `${path} ${r.text}`).toBe(201);
      const got = await t.request('GET', path);
      expect(got.status, path).toBe(200);
      expect(got.json<Obj>().metadata.uid, path).toBeTruthy();
    }
  });

  it('a PUT that names a resourceVersion of an absent object is 409 Conflict and creates nothing (the precondition cannot hold)', async () => {
    const r = await t.request('PUT', '/api/v1/namespaces/default/configmaps/pc-rv', {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pc-rv', resourceVersion: '5' } },
    });
    expect(r.status, r.text).toBe(409);
    expect(r.json<Obj>().reason).toBe('Conflict');
    expect((await t.request('GET', '/api/v1/namespaces/default/configmaps/pc-rv')).status).toBe(404);
  });
});

/** protobuf wire fields by number (varints as numbers, length-delimited as bytes): read without orch's schemas */
function fields(buf: Uint8Array): Map<number, (number | Uint8Array)[]> {
  const out = new Map<number, (number | Uint8Array)[]>();
  let p = 0;
  const varint = (): number => {
    let v = 0;
    let shift = 0;
    for (;;) {
      const b = buf[p++]!;
      v += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return v;
      shift += 7;
    }
  };
  while (p < buf.length) {
    const tag = varint();
    const wire = tag & 7;
    let v: number | Uint8Array;
    if (wire === 0) v = varint();
    else if (wire === 2) {
      const len = varint();
      v = buf.subarray(p, p + len);
      p += len;
    } else throw new Error(`wire type ${wire}`);
    out.set(tag >>> 3, [...(out.get(tag >>> 3) ?? []), v]);
  }
  return out;
}
const bytesOf = (m: Map<number, (number | Uint8Array)[]>, n: number): Uint8Array => m.get(n)![0] as Uint8Array;
const textOf = (m: Map<number, (number | Uint8Array)[]>, n: number): string | undefined => {
  const v = m.get(n)?.[0];
  return v === undefined ? undefined : new TextDecoder().decode(v as Uint8Array);
};
/** the k8s\0 envelope: TypeMeta (apiVersion = 1, kind = 2) and raw = 2 */
function envelope(body: Buffer): { apiVersion?: string; kind?: string; raw: Uint8Array } {
  expect([...body.subarray(0, 4)]).toEqual([0x6b, 0x38, 0x73, 0x00]);
  const unknown = fields(body.subarray(4));
  const typeMeta = fields(bytesOf(unknown, 1));
  return { apiVersion: textOf(typeMeta, 1), kind: textOf(typeMeta, 2), raw: bytesOf(unknown, 2) };
}

describe('protobuf for PartialObjectMetadata(List) and Scale (client-go with ContentType protobuf)', () => {
  const PB = 'application/vnd.kubernetes.protobuf';
  const base = '/api/v1/namespaces/default/configmaps';

  beforeAll(async () => {
    for (const name of ['pbm-1', 'pbm-2']) {
      expect((await t.request('POST', base, { body: { metadata: { name, labels: { pbm: 'yes' } }, data: { secret: 'not in metadata' } } })).status).toBe(201);
    }
  });

  it('GET as=PartialObjectMetadata answers the meta.k8s.io/v1 message: ObjectMeta = 1 and nothing else', async () => {
    const r = await t.request('GET', `${base}/pbm-1`, {
      headers: { Accept: `${PB};as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json` },
    });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe(PB);
    const env = envelope(r.raw);
    expect(env).toMatchObject({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata' });
    const msg = fields(env.raw);
    expect([...msg.keys()]).toEqual([1]);
    const meta = fields(bytesOf(msg, 1));
    // ObjectMeta: name = 1, namespace = 3, uid = 5, resourceVersion = 6, labels = 11
    expect(textOf(meta, 1)).toBe('pbm-1');
    expect(textOf(meta, 3)).toBe('default');
    expect(textOf(meta, 5)).toMatch(/^[0-9a-f-]{36}$/);
    expect(textOf(meta, 6)).toMatch(/^\d+$/);
    const label = fields(bytesOf(meta, 11));
    expect([textOf(label, 1), textOf(label, 2)]).toEqual(['pbm', 'yes']);
    expect(Buffer.from(r.raw).includes('not in metadata')).toBe(false);
  });

  it('LIST as=PartialObjectMetadataList: ListMeta = 1 (continue = 3), items = 2 each an ObjectMeta', async () => {
    const r = await t.request('GET', `${base}?labelSelector=pbm%3Dyes&limit=1`, {
      headers: { Accept: `${PB};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json` },
    });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe(PB);
    const env = envelope(r.raw);
    expect(env).toMatchObject({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadataList' });
    const msg = fields(env.raw);
    const listMeta = fields(bytesOf(msg, 1));
    expect(textOf(listMeta, 2)).toMatch(/^\d+$/);
    expect(textOf(listMeta, 3)).toBeTruthy();
    expect(msg.get(2)).toHaveLength(1);
    const item = fields(msg.get(2)![0] as Uint8Array);
    expect([...item.keys()]).toEqual([1]);
    expect(textOf(fields(bytesOf(item, 1)), 1)).toBe('pbm-1');
  });

  it('the scale sub-resource answers autoscaling/v1 Scale in protobuf (spec = 2, status = 3)', async () => {
    const dep = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'pb-scale' },
      spec: { replicas: 3, selector: { matchLabels: { a: 'pb' } }, template: { metadata: { labels: { a: 'pb' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
    };
    expect((await t.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: dep })).status).toBe(201);
    const r = await t.request('GET', '/apis/apps/v1/namespaces/default/deployments/pb-scale/scale', { headers: { Accept: `${PB}, application/json` } });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe(PB);
    const env = envelope(r.raw);
    expect(env).toMatchObject({ apiVersion: 'autoscaling/v1', kind: 'Scale' });
    const msg = fields(env.raw);
    expect(textOf(fields(bytesOf(msg, 1)), 1)).toBe('pb-scale');
    expect(fields(bytesOf(msg, 2)).get(1)).toEqual([3]);
    // status.selector = 2 (replicas 0 is not written, as Go's proto omits a zero int32)
    expect(textOf(fields(bytesOf(msg, 3)), 2)).toBe('a=pb');
  });
});

describe('apiregistration/v1 APIService (kubectl get apiservices)', () => {
  const AS = '/apis/apiregistration.orch.io/v1/apiservices';

  it('a local APIService per served group/version: no spec.service, kube priorities, Available=True (Local)', async () => {
    await expect.poll(async () => (await t.request('GET', `${AS}/v1.apps`)).status).toBe(200);
    const apps = (await t.request('GET', `${AS}/v1.apps`)).json<Obj>();
    expect(apps.kind).toBe('APIService');
    expect(apps.metadata.labels).toEqual({ 'kube-aggregator.kubernetes.io/automanaged': 'onstart' });
    expect(apps.spec).toEqual({ group: 'apps', version: 'v1', groupPriorityMinimum: 17800, versionPriority: 15 });
    expect(apps.status.conditions).toEqual([
      { type: 'Available', status: 'True', lastTransitionTime: expect.stringMatching(/Z$/), reason: 'Local', message: 'Local APIServices are always available' },
    ]);
    const core = (await t.request('GET', `${AS}/v1.`)).json<Obj>();
    expect(core.spec).toEqual({ group: '', version: 'v1', groupPriorityMinimum: 18000, versionPriority: 1 });
    const names = ((await t.request('GET', AS)).json<Obj>().items as Obj[]).map((i) => i.metadata.name as string);
    expect(names).toEqual(expect.arrayContaining(['v1.', 'v1.apps', 'v1.batch', 'v2.autoscaling', 'v1.apiregistration.orch.io', 'v1.rbac.authorization.orch.io']));
  });

  it('one that points at a Service is stored and its availability checked: a missing Service is Available=False (ServiceNotFound)', async () => {
    const body = {
      apiVersion: 'apiregistration.orch.io/v1',
      kind: 'APIService',
      metadata: { name: 'v1beta1.metrics.example.com' },
      spec: {
        group: 'metrics.example.com', version: 'v1beta1', service: { namespace: 'kube-system', name: 'metrics', port: 443 },
        insecureSkipTLSVerify: true, groupPriorityMinimum: 100, versionPriority: 100,
      },
    };
    const r = await t.request('POST', AS, { body });
    expect(r.status, r.text).toBe(201);
    // kube's strategy clears the status on create; the availability controller reports the check that failed
    expect(r.json<Obj>().status).toEqual({});
    await expect.poll(async () => (await t.request('GET', `${AS}/v1beta1.metrics.example.com`)).json<Obj>().status?.conditions?.[0]).toMatchObject({
      type: 'Available', status: 'False', reason: 'ServiceNotFound', message: 'service/metrics in "kube-system" is not present',
    });
    const bad = await t.request('POST', AS, { body: { ...body, metadata: { name: 'wrong' } } });
    expect(bad.status).toBe(422);
    expect(bad.json<Obj>().details.causes[0]).toEqual({ reason: 'FieldValueInvalid', message: 'Invalid value: "wrong": must be v1beta1.metrics.example.com', field: 'metadata.name' });
  });

  it("a CRD's group/version gets its local APIService (kube's 1000/100), removed with the CRD", async () => {
    const crd = openCrd({ group: 'as.example.com', plural: 'gadgets', kind: 'Gadget', version: 'v2', scope: 'Cluster' });
    await createCrd(t, crd);
    await expect.poll(async () => (await t.request('GET', `${AS}/v2.as.example.com`)).status).toBe(200);
    const got = (await t.request('GET', `${AS}/v2.as.example.com`)).json<Obj>();
    expect(got.metadata.labels).toEqual({ 'kube-aggregator.kubernetes.io/automanaged': 'true' });
    expect(got.spec).toEqual({ group: 'as.example.com', version: 'v2', groupPriorityMinimum: 1000, versionPriority: 100 });
    // kube's `true`: kept continuously, so deleted it is made again (a new uid)
    expect((await t.request('DELETE', `${AS}/v2.as.example.com`)).status).toBe(200);
    // made again: a uid, and not the old one (a 404 in between has none)
    await expect.poll(async () => (await t.request('GET', `${AS}/v2.as.example.com`)).json<Obj>().metadata?.uid ?? got.metadata.uid, { timeout: 10_000 }).not.toBe(got.metadata.uid);
    expect((await t.request('GET', `${AS}/v2.as.example.com`)).json<Obj>().spec).toEqual(got.spec);
    expect((await t.request('DELETE', `${CRDS}/gadgets.as.example.com`)).status).toBe(200);
    await expect.poll(async () => (await t.request('GET', `${AS}/v2.as.example.com`)).status, { timeout: 10_000 }).toBe(404);
  });

  it("a built-in's local APIService (kube's `onstart`) deleted stays deleted while this leader runs, as kube's autoregister", async () => {
    const name = `${AS}/v1.coordination.orch.io`;
    expect((await t.request('GET', name)).json<Obj>().metadata.labels).toEqual({ 'kube-aggregator.kubernetes.io/automanaged': 'onstart' });
    expect((await t.request('DELETE', name)).status).toBe(200);
    // a change of the served set runs a pass: the CRD's APIService comes, the deleted built-in does not
    const crd = openCrd({ group: 'once.example.com', plural: 'widgets', kind: 'Widget', version: 'v1', scope: 'Cluster' });
    await createCrd(t, crd);
    await expect.poll(async () => (await t.request('GET', `${AS}/v1.once.example.com`)).status).toBe(200);
    expect((await t.request('GET', name)).status).toBe(404);
    expect((await t.request('DELETE', `${CRDS}/widgets.once.example.com`)).status).toBe(200);
  });

  it('kubectl get apiservices prints NAME, SERVICE, AVAILABLE, AGE as against kube', async () => {
    const r = await runKubectl(t.server.kubeconfigPath, ['get', 'apiservices']);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+SERVICE\s+AVAILABLE\s+AGE$/);
    expect(lines.find((l) => l.startsWith('v1.apps '))).toMatch(/^v1\.apps\s+Local\s+True\s+\S+$/);
    expect(lines.find((l) => l.startsWith('v1beta1.metrics.example.com'))).toMatch(/kube-system\/metrics\s+False \(ServiceNotFound\)/);
  });
});

describe("invalid dryRun and fieldValidation: kube's 422 on the write's options kind", () => {
  const base = '/api/v1/namespaces/default/configmaps';
  const invalidOptions = (kind: string, field: string, message: string): Obj => ({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `${kind}.meta.orch.io "" is invalid: ${field}: ${message}`,
    reason: 'Invalid',
    details: { group: 'meta.orch.io', kind, causes: [{ reason: 'FieldValueNotSupported', message, field }] },
    code: 422,
  });

  it('dryRun other than All: the values as a Go slice, on CreateOptions, UpdateOptions, PatchOptions, DeleteOptions', async () => {
    expect((await t.request('POST', base, { body: { metadata: { name: 'wo-1' } } })).status).toBe(201);
    const msg = 'Unsupported value: []string{"Foo"}: supported values: "All"';
    const create = await t.request('POST', `${base}?dryRun=Foo`, { body: { metadata: { name: 'wo-2' } } });
    expect(create.status).toBe(422);
    expect(create.json<Obj>()).toEqual(invalidOptions('CreateOptions', 'dryRun', msg));
    const put = await t.request('PUT', `${base}/wo-1?dryRun=Foo`, { body: { metadata: { name: 'wo-1' } } });
    expect(put.json<Obj>()).toEqual(invalidOptions('UpdateOptions', 'dryRun', msg));
    const patch = await t.request('PATCH', `${base}/wo-1?dryRun=Foo`, { headers: { 'Content-Type': 'application/merge-patch+json' }, body: {} });
    expect(patch.json<Obj>()).toEqual(invalidOptions('PatchOptions', 'dryRun', msg));
    const del = await t.request('DELETE', `${base}/wo-1?dryRun=All&dryRun=Foo`);
    expect(del.json<Obj>()).toEqual(invalidOptions('DeleteOptions', 'dryRun', 'Unsupported value: []string{"All", "Foo"}: supported values: "All"'));
    // nothing was written or deleted
    expect((await t.request('GET', `${base}/wo-1`)).status).toBe(200);
    expect((await t.request('GET', `${base}/wo-2`)).status).toBe(404);
  });

  it('fieldValidation other than Ignore/Warn/Strict: kube lists its sorted set, the empty value first', async () => {
    const r = await t.request('POST', `${base}?fieldValidation=Loose`, { body: { metadata: { name: 'wo-3' } } });
    expect(r.status).toBe(422);
    expect(r.json<Obj>()).toEqual(invalidOptions('CreateOptions', 'fieldValidation', 'Unsupported value: "Loose": supported values: "", "Ignore", "Strict", "Warn"'));
  });
});
