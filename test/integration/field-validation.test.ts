// Field validation over HTTP against a real server (spec 000 §4.8, §7):
// `Ignore` drops unknown and duplicate fields silently, `Warn` (the default)
// adds one `Warning: 299 - "..."` header per field, `Strict` rejects with a
// 400 listing all of them — on POST, PUT and every PATCH type including
// apply. Duplicate keys are found in JSON and YAML bodies. Type errors and
// missing required fields are errors at every level.

import { request as httpsRequest } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
type Obj = Record<string, any>;

const CM = '/api/v1/namespaces/default/configmaps';
const PODS = '/api/v1/namespaces/default/pods';
const LEVELS = ['Ignore', 'Warn', 'Strict'] as const;

interface Res {
  status: number;
  /** every Warning header, one entry per header line */
  warnings: string[];
  body: Obj;
}

/** raw HTTPS so that repeated Warning headers stay separate (rawHeaders) */
function send(method: string, path: string, body: string, contentType: string): Promise<Res> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port: t.server.port,
        method,
        path,
        headers: { 'Content-Type': contentType, 'Content-Length': String(Buffer.byteLength(body)) },
        ca: t.server.caPem,
        cert: t.server.adminCertPem,
        key: t.server.adminKeyPem,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const warnings: string[] = [];
          for (let i = 0; i < res.rawHeaders.length; i += 2) {
            if (res.rawHeaders[i]!.toLowerCase() === 'warning') warnings.push(res.rawHeaders[i + 1]!);
          }
          resolve({ status: res.statusCode ?? 0, warnings, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Obj });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const q = (level: string | undefined, extra = ''): string => {
  const parts = [level ? `fieldValidation=${level}` : '', extra].filter(Boolean);
  return parts.length ? `?${parts.join('&')}` : '';
};

/** the exact header Kubernetes sends for an unknown/duplicate field */
const unknownWarning = (f: string) => `299 - "unknown field \\"${f}\\""`;
const duplicateWarning = (f: string) => `299 - "duplicate field \\"${f}\\""`;

let n = 0;
const fresh = (p: string) => `${p}-${++n}`;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.stop();
});

describe('POST', () => {
  const body = (name: string) =>
    `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}","bogusMeta":1},"data":{"a":"1"},"data":{"b":"2"},"extra":true}`;

  it('Warn (default): one Warning header per unknown or duplicate field, fields dropped', async () => {
    for (const level of [undefined, 'Warn']) {
      const name = fresh('post-warn');
      const r = await send('POST', `${CM}${q(level)}`, body(name), 'application/json');
      expect(r.status).toBe(201);
      expect(r.warnings.sort()).toEqual(
        [unknownWarning('metadata.bogusMeta'), unknownWarning('extra'), duplicateWarning('data')].sort(),
      );
      expect(r.body.extra).toBeUndefined();
      expect(r.body.metadata.bogusMeta).toBeUndefined();
      // the last of the duplicates wins, as with Kubernetes' decoder
      expect(r.body.data).toEqual({ b: '2' });
    }
  });

  it('Ignore: dropped silently', async () => {
    const r = await send('POST', `${CM}${q('Ignore')}`, body(fresh('post-ignore')), 'application/json');
    expect(r.status).toBe(201);
    expect(r.warnings).toEqual([]);
    expect(r.body.extra).toBeUndefined();
  });

  it('Strict: 400 listing every unknown and duplicate field; nothing stored', async () => {
    const name = fresh('post-strict');
    const r = await send('POST', `${CM}${q('Strict')}`, body(name), 'application/json');
    expect(r.status).toBe(400);
    expect(r.body.kind).toBe('Status');
    expect(r.body.reason).toBe('BadRequest');
    // kube's create handler names the kind of a body it cannot decode strictly (transformDecodeError)
    expect(r.body.message).toMatch(/^ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: /);
    for (const f of ['unknown field "metadata.bogusMeta"', 'unknown field "extra"', 'duplicate field "data"']) {
      expect(r.body.message).toContain(f);
    }
    expect((await t.request('GET', `${CM}/${name}`)).status).toBe(404);
  });

  it('duplicates in a YAML body are found (nested too)', async () => {
    const name = fresh('post-yaml');
    const yaml = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  labels:\n    a: "1"\n    a: "2"\ndata:\n  k: v\nunknownTop: 1\n`;
    const w = await send('POST', CM, yaml, 'application/yaml');
    expect(w.status).toBe(201);
    expect(w.warnings.sort()).toEqual([duplicateWarning('metadata.labels.a'), unknownWarning('unknownTop')].sort());
    const s = await send('POST', `${CM}${q('Strict')}`, yaml.replace(name, fresh('post-yaml')), 'application/yaml');
    expect(s.status).toBe(400);
    expect(s.body.message).toContain('duplicate field "metadata.labels.a"');
    expect(s.body.message).toContain('unknown field "unknownTop"');
  });

  it('unknown fields deep in a pod spec are named by their path', async () => {
    const pod = (name: string) =>
      JSON.stringify({ metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx', imagePullPolcy: 'Always' }] } });
    const r = await send('POST', PODS, pod(fresh('pod-warn')), 'application/json');
    expect(r.status).toBe(201);
    expect(r.warnings).toEqual([unknownWarning('spec.containers[0].imagePullPolcy')]);
    const s = await send('POST', `${PODS}${q('Strict')}`, pod(fresh('pod-strict')), 'application/json');
    expect(s.status).toBe(400);
    expect(s.body.message).toContain('unknown field "spec.containers[0].imagePullPolcy"');
  });

  it("an invalid fieldValidation value is kube's 422 on CreateOptions", async () => {
    const r = await send('POST', `${CM}?fieldValidation=Loose`, `{"metadata":{"name":"${fresh('x')}"}}`, 'application/json');
    expect(r.status).toBe(422);
    expect(r.body.message).toContain('fieldValidation');
  });
});

describe('type errors and missing required fields are errors at every level', () => {
  it('a wrong type is 400 (even with Ignore), naming the field', async () => {
    for (const level of LEVELS) {
      const name = fresh('type');
      const r = await send('POST', `${CM}${q(level)}`, `{"metadata":{"name":"${name}"},"data":{"a":1}}`, 'application/json');
      expect(r.status, level).toBe(400);
      // map keys are printed in brackets, as Kubernetes does
      expect(r.body.message).toContain('data[a]');
      expect((await t.request('GET', `${CM}/${name}`)).status).toBe(404);
    }
  });

  it('with several type errors and unknown fields, the 400 names only the first type error (Strict too)', async () => {
    const name = fresh('first');
    const r = await send('POST', `${CM}${q('Strict')}`, `{"metadata":{"name":"${name}"},"data":{"a":1,"b":2},"bogus":1}`, 'application/json');
    expect(r.status).toBe(400);
    expect(r.body.message).toContain('data[a]');
    expect(r.body.message).not.toContain('data[b]');
    expect(r.body.message).not.toContain('bogus');
    expect(r.body.details.causes).toHaveLength(1);
  });

  it('a missing required field is 422 Invalid naming the field', async () => {
    for (const level of LEVELS) {
      const name = fresh('req');
      const r = await send('POST', `${PODS}${q(level)}`, JSON.stringify({ metadata: { name }, spec: { containers: [{ image: 'x' }] } }), 'application/json');
      expect(r.status, level).toBe(422);
      expect(r.body.reason).toBe('Invalid');
      expect(r.body.details.causes.map((c: Obj) => c.field)).toContain('spec.containers[0].name');
    }
  });

  it('the same holds for PUT and PATCH', async () => {
    const name = fresh('tp');
    const c = await send('POST', CM, `{"metadata":{"name":"${name}"},"data":{"a":"1"}}`, 'application/json');
    expect(c.status).toBe(201);
    for (const level of LEVELS) {
      const put = await send('PUT', `${CM}/${name}${q(level)}`, JSON.stringify({ ...c.body, data: { a: 2 } }), 'application/json');
      expect(put.status, level).toBe(400);
      const mp = await send('PATCH', `${CM}/${name}${q(level)}`, '{"data":{"a":true}}', 'application/merge-patch+json');
      expect(mp.status, level).toBe(400);
      const ap = await send('PATCH', `${CM}/${name}${q(level, 'fieldManager=m')}`, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: [1]\n`, 'application/apply-patch+yaml');
      expect(ap.status, level).toBe(400);
    }
    const stored = (await t.request('GET', `${CM}/${name}`)).json<Obj>();
    expect(stored.data).toEqual({ a: '1' });
  });
});

describe('PUT', () => {
  it('Ignore / Warn / Strict', async () => {
    const name = fresh('put');
    const c = await send('POST', CM, `{"metadata":{"name":"${name}"},"data":{"a":"1"}}`, 'application/json');
    const obj = { ...c.body, data: { a: '2' }, spurious: 'x' };
    const strict = await send('PUT', `${CM}/${name}${q('Strict')}`, JSON.stringify(obj), 'application/json');
    expect(strict.status).toBe(400);
    expect(strict.body.message).toBe('ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "spurious"');
    const ignore = await send('PUT', `${CM}/${name}${q('Ignore')}`, JSON.stringify(obj), 'application/json');
    expect(ignore.status).toBe(200);
    expect(ignore.warnings).toEqual([]);
    expect(ignore.body.spurious).toBeUndefined();
    const warn = await send('PUT', `${CM}/${name}`, JSON.stringify({ ...ignore.body, data: { a: '3' }, spurious: 'x' }), 'application/json');
    expect(warn.status).toBe(200);
    expect(warn.warnings).toEqual([unknownWarning('spurious')]);
    expect(warn.body.data).toEqual({ a: '3' });
  });

  it('duplicates in a JSON PUT body', async () => {
    const name = fresh('put-dup');
    const c = await send('POST', CM, `{"metadata":{"name":"${name}"},"data":{"a":"1"}}`, 'application/json');
    const text = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}","resourceVersion":"${c.body.metadata.resourceVersion}"},"data":{"a":"1","a":"2"}}`;
    const strict = await send('PUT', `${CM}/${name}${q('Strict')}`, text, 'application/json');
    expect(strict.status).toBe(400);
    expect(strict.body.message).toContain('duplicate field "data.a"');
    const warn = await send('PUT', `${CM}/${name}`, text, 'application/json');
    expect(warn.status).toBe(200);
    expect(warn.warnings).toEqual([duplicateWarning('data.a')]);
  });
});

describe('PATCH', () => {
  async function cm(): Promise<string> {
    const name = fresh('patch');
    const r = await send('POST', CM, `{"metadata":{"name":"${name}"},"data":{"a":"1"}}`, 'application/json');
    expect(r.status).toBe(201);
    return name;
  }

  it('merge patch: unknown fields by level', async () => {
    const name = await cm();
    const p = '{"data":{"b":"2"},"nonsense":{"x":1}}';
    const strict = await send('PATCH', `${CM}/${name}${q('Strict')}`, p, 'application/merge-patch+json');
    expect(strict.status).toBe(400);
    // a patched object is not a decoded body: kube's patch handler does not name the kind
    expect(strict.body.message).toBe('strict decoding error: unknown field "nonsense"');
    expect((await t.request('GET', `${CM}/${name}`)).json<Obj>().data).toEqual({ a: '1' });
    const warn = await send('PATCH', `${CM}/${name}${q('Warn')}`, p, 'application/merge-patch+json');
    expect(warn.status).toBe(200);
    expect(warn.warnings).toEqual([unknownWarning('nonsense')]);
    expect(warn.body.nonsense).toBeUndefined();
    const ignore = await send('PATCH', `${CM}/${name}${q('Ignore')}`, '{"nonsense":1,"data":{"c":"3"}}', 'application/merge-patch+json');
    expect(ignore.status).toBe(200);
    expect(ignore.warnings).toEqual([]);
  });

  it('merge and strategic patch bodies: duplicate keys', async () => {
    const name = await cm();
    for (const type of ['application/merge-patch+json', 'application/strategic-merge-patch+json']) {
      const p = '{"data":{"b":"2","b":"3"}}';
      const strict = await send('PATCH', `${CM}/${name}${q('Strict')}`, p, type);
      expect(strict.status, type).toBe(400);
      expect(strict.body.message).toContain('duplicate field "data.b"');
      const warn = await send('PATCH', `${CM}/${name}`, p, type);
      expect(warn.status, type).toBe(200);
      expect(warn.warnings).toEqual([duplicateWarning('data.b')]);
      expect(warn.body.data.b).toBe('3');
    }
  });

  it('JSON patch adding an unknown field', async () => {
    const name = await cm();
    const p = JSON.stringify([{ op: 'add', path: '/mystery', value: 1 }]);
    const strict = await send('PATCH', `${CM}/${name}${q('Strict')}`, p, 'application/json-patch+json');
    expect(strict.status).toBe(400);
    expect(strict.body.message).toContain('unknown field "mystery"');
    const warn = await send('PATCH', `${CM}/${name}`, p, 'application/json-patch+json');
    expect(warn.status).toBe(200);
    expect(warn.warnings).toEqual([unknownWarning('mystery')]);
  });

  it('apply: unknown and duplicate fields by level', async () => {
    const name = fresh('apply');
    const y = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: "1"\n  a: "2"\nwhatever: 1\n`;
    const strict = await send('PATCH', `${CM}/${name}${q('Strict', 'fieldManager=m')}`, y, 'application/apply-patch+yaml');
    // worded as kube's apply: the undeclared field fails the typed patch first, then the duplicate key the strict YAML decoding
    expect(strict.status).toBe(400);
    expect(strict.body.message).toBe(`failed to create typed patch object (/${name}; /v1, Kind=ConfigMap): .whatever: field not declared in schema`);
    expect((await t.request('GET', `${CM}/${name}`)).status).toBe(404);
    const dup = await send('PATCH', `${CM}/${name}${q('Strict', 'fieldManager=m')}`, y.replace('whatever: 1\n', ''), 'application/apply-patch+yaml');
    expect(dup.status).toBe(400);
    expect(dup.body.message).toBe('error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line 7: key "a" already set in map');
    expect((await t.request('GET', `${CM}/${name}`)).status).toBe(404);
    const warn = await send('PATCH', `${CM}/${name}${q('Warn', 'fieldManager=m')}`, y, 'application/apply-patch+yaml');
    expect(warn.status).toBe(201);
    expect(warn.warnings.sort()).toEqual([duplicateWarning('data.a'), unknownWarning('whatever')].sort());
    expect(warn.body.whatever).toBeUndefined();
    // the unknown field is not owned by the applier either
    expect(warn.body.metadata.managedFields[0].fieldsV1).toEqual({ 'f:data': { 'f:a': {} } });
    const ignore = await send('PATCH', `${CM}/${name}${q('Ignore', 'fieldManager=m')}`, y, 'application/apply-patch+yaml');
    expect(ignore.status).toBe(200);
    expect(ignore.warnings).toEqual([]);
    expect(ignore.body.metadata.resourceVersion).toBe(warn.body.metadata.resourceVersion);
  });
});
