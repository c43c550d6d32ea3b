// Field validation over HTTP against a real server (spec 000 §4.8, §7):
// `Ignore` drops unknown and duplicate fields silently, `Warn` (the default)
// adds one `Warning: 299 - "..."` header per field, `Strict` rejects with a
// 400 listing all of them — on POST, PUT and every PATCH type including
// apply. Duplicate keys are found in JSON and YAML bodies. Type errors and
// missing required fields are errors at every level.

import { request as httpsRequest } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { cronSpecSchema, portsSchema } from '../helpers/kube-e2e.js';

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
  // kube's group names (apps, apiextensions.k8s.io): the port of kube's field_validation_test.go below uses them
  t = await startTestServer({ apiDomain: 'k8s.io' });
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
    // worded as yaml.v2 (kube's strict YAML decoding): the line of the repeated key, before the unknown fields
    expect(w.warnings).toEqual([`299 - "line 7: key \\"a\\" already set in map"`, unknownWarning('unknownTop')]);
    const s = await send('POST', `${CM}${q('Strict')}`, yaml.replace(name, fresh('post-yaml')), 'application/yaml');
    expect(s.status).toBe(400);
    expect(s.body.message).toMatch(/strict decoding error: yaml: unmarshal errors:\n {2}line 7: key "a" already set in map, unknown field "unknownTop"$/);
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
    expect(warn.warnings).toEqual([`299 - "line 7: key \\"a\\" already set in map"`, unknownWarning('whatever')]);
    expect(warn.body.whatever).toBeUndefined();
    // the unknown field is not owned by the applier either
    expect(warn.body.metadata.managedFields[0].fieldsV1).toEqual({ 'f:data': { 'f:a': {} } });
    const ignore = await send('PATCH', `${CM}/${name}${q('Ignore', 'fieldManager=m')}`, y, 'application/apply-patch+yaml');
    expect(ignore.status).toBe(200);
    expect(ignore.warnings).toEqual([]);
    expect(ignore.body.metadata.resourceVersion).toBe(warn.body.metadata.resourceVersion);
  });
});

// ---------------------------------------------------------------------------
// Port of kube 1.32's test/integration/apiserver/field_validation_test.go
// (TestFieldValidation): the exact warning texts, their count and order, and
// the Strict error's suffix, for built-in kinds and custom resources, JSON and
// YAML bodies, every patch type and apply. Bodies and expectations are kube's;
// each case names its kube test case.

/** Go's fmt.Sprintf for `%s` only: a missing argument prints `%!s(MISSING)` (kube's POST of crdInvalidBody) */
function goSprintf(format: string, ...args: string[]): string {
  let i = 0;
  return format.replace(/%s/g, () => (i < args.length ? args[i++]! : '%!s(MISSING)'));
}

/** the texts of a response's Warning headers (`299 - "<text>"`), in order */
const warningTexts = (r: Res): string[] =>
  r.warnings.map((w) => {
    const m = /^299 - "(.*)"$/.exec(w);
    return m ? m[1]!.replace(/\\(.)/g, '$1') : w;
  });

interface KubeCase {
  name: string;
  level?: 'Strict' | 'Warn' | 'Ignore';
  body: string;
  contentType?: string;
  strictDecodingError?: string;
  strictDecodingWarnings?: string[];
}

/** kube's check: an error ends with strictDecodingError, warnings are exactly strictDecodingWarnings */
async function expectKube(tc: KubeCase, r: Res): Promise<void> {
  if (tc.strictDecodingError !== undefined) {
    expect(r.status, `${tc.name}: ${JSON.stringify(r.body)}`).toBe(400);
    expect(r.body.message, tc.name).toMatch(new RegExp(`${escapeRe(tc.strictDecodingError)}$`));
  } else {
    expect(r.status, `${tc.name}: ${JSON.stringify(r.body)}`).toBeLessThan(300);
  }
  expect(warningTexts(r), tc.name).toEqual(tc.strictDecodingWarnings ?? []);
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const fv = (level: string | undefined, extra?: string): string => q(level, extra);

const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';

/** the unknown spec fields kube's invalid bodies and patches start with (one of them twice) */
const UNKNOWN_SPEC_FIELDS = `"unknown1": "val1",
"unknownDupe": "valDupe",
"unknownDupe": "valDupe2",`;
/** the first operations of kube's JSON patches: an unknown field in [0], a duplicate path in [1] (whose value is `value`) */
const jsonPatchHead = (value: string): string => `{"op": "add", "path": "/spec/unknown1", "value": "val1", "foo": "bar"},
{"op": "add", "path": "/spec/unknown2", "path": "/spec/unknown3", "value": "${value}"},
{"op": "add", "path": "/spec/unknownDupe", "value": "valDupe"},
{"op": "add", "path": "/spec/unknownDupe", "value": "valDupe2"},`;

// kube's bodies, their repeated parts shared; each keeps kube's lines, whose numbers
// the YAML and apply cases report

/** the selector and pod template of kube's Deployment bodies: `container` is the nginx container's fields after its name */
const podTemplate = (container: string): string => `"selector": {
	"matchLabels": {
		"app": "nginx"
	}
},
"template": {
	"metadata": {
		"labels": {
			"app": "nginx"
		}
	},
	"spec": {
		"containers": [{
			"name":  "nginx",
${container}
		}]
	}
}`;
const invalidBodyJSON = `
	{
		"apiVersion": "apps/v1",
		"kind": "Deployment",
		"metadata": {
			"name": "dupename",
			"name": "%s",
			"labels": {"app": "nginx"},
			"unknownMeta": "metaVal"
		},
		"spec": {
${UNKNOWN_SPEC_FIELDS}
			"paused": true,
			"paused": false,
${podTemplate('"image": "nginx:latest",\n"unknownNested": "val1",\n"imagePullPolicy": "Always",\n"imagePullPolicy": "Never"')}
		}
	}
		`;
const validBodyJSON = `
{
	"apiVersion": "apps/v1",
	"kind": "Deployment",
	"metadata": {
		"name": "%s",
		"labels": {"app": "nginx"},
		"annotations": {"a1": "foo", "a2": "bar"}
	},
	"spec": {
${podTemplate('"image": "nginx:latest",\n"imagePullPolicy": "Always"')},
		"replicas": 2
	}
}`;
const invalidBodyYAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: dupename
  name: %s
  unknownMeta: metaVal
  labels:
    app: nginx
spec:
  unknown1: val1
  unknownDupe: valDupe
  unknownDupe: valDupe2
  paused: true
  paused: false
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:latest
        unknownNested: val1
        imagePullPolicy: Always
        imagePullPolicy: Never`;
const applyInvalidBody = `{
		"apiVersion": "apps/v1",
		"kind": "Deployment",
		"metadata": {
			"name": "%s",
			"labels": {"app": "nginx"}
		},
		"spec": {
			"paused": false,
			"paused": true,
${podTemplate('"image": "nginx:latest",\n"imagePullPolicy": "Never",\n"imagePullPolicy": "Always"')}
		}
	}`;

/** the ports of kube's custom resource bodies: `port` is the port's fields after its protocol */
const crPorts = (port: string): string => `"ports": [{
	"name": "portName",
	"containerPort": 8080,
	"protocol": "TCP",
${port}
}]`;
/** their embedded ConfigMap: `meta` is its metadata's fields */
const crEmbedded = (meta: string): string => `"embeddedObj": {
	"apiVersion": "v1",
	"kind": "ConfigMap",
	"metadata": {
${meta}
	}
}`;
const crdInvalidBody = `
{
	"apiVersion": "%s",
	"kind": "%s",
	"metadata": {
		"name": "dupename",
		"name": "%s",
		"unknownMeta": "metaVal",
		"resourceVersion": "%s"
	},
	"spec": {
${UNKNOWN_SPEC_FIELDS}
		"knownField1": "val1",
		"knownField1": "val2",
${crPorts('"hostPort": 8081,\n"hostPort": 8082,\n"unknownNested": "val"')},
${crEmbedded('"name": "my-cm",\n"namespace": "my-ns",\n"unknownEmbeddedMeta": "foo"')}
	}
}`;
const crdValidBody = `
{
	"apiVersion": "%s",
	"kind": "%s",
	"metadata": {
		"name": "%s",
		"resourceVersion": "%s"
	},
	"spec": {
		"knownField1": "val1",
${crPorts('"hostPort": 8081')},
${crEmbedded('"name": "my-cm"')}
	}
}
	`;
const crdInvalidBodyYAML = `
apiVersion: "%s"
kind: "%s"
metadata:
  name: dupename
  name: "%s"
  resourceVersion: "%s"
  unknownMeta: metaVal
spec:
  unknown1: val1
  unknownDupe: valDupe
  unknownDupe: valDupe2
  knownField1: val1
  knownField1: val2
  ports:
  - name: portName
    containerPort: 8080
    protocol: TCP
    hostPort: 8081
    hostPort: 8082
    unknownNested: val
  embeddedObj:
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: my-cm
      namespace: my-ns
      unknownEmbeddedMeta: foo`;
/** crdApplyInvalidBody and crdApplyValidBody: `spec` is what comes before the ports */
const crdApplyBody = (spec: string, port: string): string => `
{
	"apiVersion": "%s",
	"kind": "%s",
	"metadata": {
		"name": "%s"
	},
	"spec": {
${spec}
${crPorts(port)},
${crEmbedded('"name": "my-cm",\n"namespace": "my-ns"')}
	}
}`;
const crdApplyInvalidBody = crdApplyBody('"knownField1": "val1",\n"knownField1": "val2",', '"hostPort": 8081,\n"hostPort": 8082');
const crdApplyValidBody = crdApplyBody('"knownField1": "val1",', '"hostPort": 8082');
/** testFieldValidationPatchCRD's own patchYAMLBody */
const crdPatchYAMLBody = `
apiVersion: %s
kind: %s
metadata:
  name: %s
  finalizers:
  - test/finalizer
spec:
  cronSpec: "* * * * */5"
  ports:
  - name: x
    containerPort: 80
    protocol: TCP`;

/** crdSchemaBase; `schemaless` adds x-kubernetes-preserve-unknown-fields to spec (setupCRD) */
function crdSchema(schemaless: boolean): Obj {
  return {
    openAPIV3Schema: {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          ...(schemaless ? { 'x-kubernetes-preserve-unknown-fields': true } : {}),
          properties: {
            cronSpec: cronSpecSchema,
            knownField1: { type: 'string' },
            embeddedObj: {
              'x-kubernetes-embedded-resource': true,
              type: 'object',
              properties: { apiversion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object' } },
            },
            ports: portsSchema,
          },
        },
      },
    },
  };
}

/** setupCRD: the noxu fixture (cluster-scoped, v1beta1) in the given group, with crdSchemaBase */
async function setupCRD(group: string, schemaless: boolean): Promise<{ path: string; apiVersion: string; kind: string }> {
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `noxus.${group}` },
    spec: {
      group,
      versions: [{ name: 'v1beta1', served: true, storage: true, schema: crdSchema(schemaless) }],
      names: { plural: 'noxus', singular: 'nonenglishnoxu', kind: 'WishIHadChosenNoxu', shortNames: ['foo', 'bar', 'abc', 'def'], listKind: 'NoxuItemList', categories: ['all'] },
      scope: 'Cluster',
    },
  };
  const r = await send('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', JSON.stringify(crd), 'application/json');
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  const path = `/apis/${group}/v1beta1/noxus`;
  for (let i = 0; i < 200; i++) {
    if ((await t.request('GET', path)).status === 200) break;
    await new Promise((res) => setTimeout(res, 25));
  }
  return { path, apiVersion: `${group}/v1beta1`, kind: 'WishIHadChosenNoxu' };
}

// the warnings of invalidBodyJSON / invalidBodyYAML (testFieldValidationPost, testFieldValidationPut)
const typedJSONStrict = 'strict decoding error: duplicate field "metadata.name", unknown field "metadata.unknownMeta", unknown field "spec.unknown1", unknown field "spec.unknownDupe", duplicate field "spec.paused", unknown field "spec.template.spec.containers[0].unknownNested", duplicate field "spec.template.spec.containers[0].imagePullPolicy"';
const typedJSONWarnings = [
  'duplicate field "metadata.name"',
  'unknown field "metadata.unknownMeta"',
  'unknown field "spec.unknown1"',
  'unknown field "spec.unknownDupe"',
  'duplicate field "spec.paused"',
  // note: fields that are both unknown and duplicated will only be detected as unknown for typed resources (kube)
  'unknown field "spec.template.spec.containers[0].unknownNested"',
  'duplicate field "spec.template.spec.containers[0].imagePullPolicy"',
];
const typedYAMLStrict = 'strict decoding error: yaml: unmarshal errors:\n  line 5: key "name" already set in map\n  line 12: key "unknownDupe" already set in map\n  line 14: key "paused" already set in map\n  line 28: key "imagePullPolicy" already set in map, unknown field "metadata.unknownMeta", unknown field "spec.template.spec.containers[0].unknownNested", unknown field "spec.unknown1", unknown field "spec.unknownDupe"';
const typedYAMLWarnings = [
  'line 5: key "name" already set in map',
  'line 12: key "unknownDupe" already set in map',
  'line 14: key "paused" already set in map',
  'line 28: key "imagePullPolicy" already set in map',
  'unknown field "metadata.unknownMeta"',
  'unknown field "spec.template.spec.containers[0].unknownNested"',
  'unknown field "spec.unknown1"',
  'unknown field "spec.unknownDupe"',
];

/** the warnings of kube's merge-patch-warn-validation and smp-warn-validation: the patch's duplicates, then the unknown fields in sorted-JSON order */
const typedPatchWarnings = [
  'duplicate field "spec.unknownDupe"',
  'duplicate field "spec.paused"',
  'duplicate field "spec.template.spec.containers[0].imagePullPolicy"',
  'unknown field "spec.template.spec.containers[0].unknownNested"',
  'unknown field "spec.unknown1"',
  'unknown field "spec.unknownDupe"',
];
/** those of nonconflicting-merge-patch-warn-validation and nonconflicting-smp-warn-validation */
const nonconflictingWarnings = ['duplicate field "spec.paused"', 'duplicate field "spec.template.spec.containers[0].imagePullPolicy"'];

/** the cases of testFieldValidationPost / testFieldValidationPut, prefixed `post` or `put` */
function postPutCases(verb: 'post' | 'put'): KubeCase[] {
  return [
    { name: `${verb}-strict-validation`, level: 'Strict', body: invalidBodyJSON, strictDecodingError: typedJSONStrict },
    { name: `${verb}-warn-validation`, level: 'Warn', body: invalidBodyJSON, strictDecodingWarnings: typedJSONWarnings },
    { name: `${verb}-ignore-validation`, level: 'Ignore', body: invalidBodyJSON },
    { name: `${verb}-no-validation`, body: invalidBodyJSON, strictDecodingWarnings: typedJSONWarnings },
    { name: `${verb}-strict-validation-yaml`, level: 'Strict', body: invalidBodyYAML, contentType: 'application/yaml', strictDecodingError: typedYAMLStrict },
    { name: `${verb}-warn-validation-yaml`, level: 'Warn', body: invalidBodyYAML, contentType: 'application/yaml', strictDecodingWarnings: typedYAMLWarnings },
    { name: `${verb}-ignore-validation-yaml`, level: 'Ignore', body: invalidBodyYAML, contentType: 'application/yaml' },
    { name: `${verb}-no-validation-yaml`, body: invalidBodyYAML, contentType: 'application/yaml', strictDecodingWarnings: typedYAMLWarnings },
  ];
}

/** the four levels of one body: Strict fails with `error`, Warn and the default warn with `warnings`, Ignore is silent */
function levelCases(prefix: string, body: string, error: string, warnings: string[], contentType?: string): KubeCase[] {
  const ct = contentType ? { contentType } : {};
  return [
    { name: `${prefix}strict-validation`, level: 'Strict', body, ...ct, strictDecodingError: error },
    { name: `${prefix}warn-validation`, level: 'Warn', body, ...ct, strictDecodingWarnings: warnings },
    { name: `${prefix}ignore-validation`, level: 'Ignore', body, ...ct },
    { name: `${prefix}no-validation`, body, ...ct, strictDecodingWarnings: warnings },
  ];
}

const strictOf = (warnings: string[]): string => `strict decoding error: ${warnings.join(', ')}`;

describe('TestFieldValidation (kube test/integration/apiserver/field_validation_test.go)', () => {
  it('Post (testFieldValidationPost)', async () => {
    for (const tc of postPutCases('post')) {
      const r = await send('POST', `${DEPLOYMENTS}${fv(tc.level)}`, goSprintf(tc.body, `test-deployment-${tc.name}`), tc.contentType ?? 'application/json');
      await expectKube(tc, r);
    }
  });

  it('Put (testFieldValidationPut)', async () => {
    const deployName = 'test-deployment-put';
    expect((await send('POST', DEPLOYMENTS, goSprintf(validBodyJSON, deployName), 'application/json')).status).toBe(201);
    for (const tc of postPutCases('put')) {
      const r = await send('PUT', `${DEPLOYMENTS}/${deployName}${fv(tc.level)}`, goSprintf(tc.body, deployName), tc.contentType ?? 'application/json');
      await expectKube(tc, r);
    }
  });

  it('PatchTyped (testFieldValidationPatchTyped)', async () => {
    const deployName = 'test-deployment-patch-typed';
    expect((await send('POST', DEPLOYMENTS, goSprintf(validBodyJSON, deployName), 'application/json')).status).toBe(201);
    /** the template part of kube's merge patches: `fields` follow the nginx container's name and image */
    const templatePatch = (fields: string): string => `"template": {
	"spec": {
		"containers": [{
			"name": "nginx",
			"image": "nginx:latest",
${fields}
		}]
	}
}`;
    const mergePatchBody = `
{
	"spec": {
${UNKNOWN_SPEC_FIELDS}
		"paused": true,
		"paused": false,
${templatePatch('"unknownNested": "val1",\n"imagePullPolicy": "Always",\n"imagePullPolicy": "Never"')}
	}
}
	`;
    const jsonPatchBody = `
			[
${jsonPatchHead('val1')}
				{"op": "add", "path": "/spec/paused", "value": true},
				{"op": "add", "path": "/spec/paused", "value": false},
				{"op": "add", "path": "/spec/template/spec/containers/0/unknownNested", "value": "val1"},
				{"op": "add", "path": "/spec/template/spec/containers/0/imagePullPolicy", "value": "Always"},
				{"op": "add", "path": "/spec/template/spec/containers/0/imagePullPolicy", "value": "Never"}
			]
			`;
    const nonconflictingMergePatchBody = `
{
	"spec": {
		"paused": true,
		"paused": false,
${templatePatch('"imagePullPolicy": "Always",\n"imagePullPolicy": "Never"')}
	}
}
			`;
    // note (kube): duplicate fields in the patch itself are dropped by evanphx/json-patch; those of its ops are detected
    const jsonPatchWarnings = [
      'json patch unknown field "[0].foo"',
      'json patch duplicate field "[1].path"',
      'unknown field "spec.template.spec.containers[0].unknownNested"',
      'unknown field "spec.unknown1"',
      'unknown field "spec.unknown3"',
      'unknown field "spec.unknownDupe"',
    ];
    const cases: (KubeCase & { type: string })[] = [
      ...levelCases('merge-patch-', mergePatchBody, strictOf(typedPatchWarnings), typedPatchWarnings).map((c) => ({ ...c, type: 'application/merge-patch+json' })),
      ...levelCases('json-patch-', jsonPatchBody, strictOf(jsonPatchWarnings), jsonPatchWarnings).map((c) => ({ ...c, type: 'application/json-patch+json' })),
      ...levelCases('nonconflicting-merge-patch-', nonconflictingMergePatchBody, strictOf(nonconflictingWarnings), nonconflictingWarnings).map((c) => ({ ...c, type: 'application/merge-patch+json' })),
    ];
    for (const tc of cases) {
      await expectKube(tc, await send('PATCH', `${DEPLOYMENTS}/${deployName}${fv(tc.level)}`, tc.body, tc.type));
    }
  });

  it('SMP (testFieldValidationSMP)', async () => {
    const nonconflictingSMPBody = `
	{
		"spec": {
			"paused": true,
			"paused": false,
${podTemplate('"imagePullPolicy": "Always",\n"imagePullPolicy": "Never"')}
		}
	}
	`;
    const smpBody = `
	{
		"spec": {
${UNKNOWN_SPEC_FIELDS}
			"paused": true,
			"paused": false,
${podTemplate('"unknownNested": "val1",\n"imagePullPolicy": "Always",\n"imagePullPolicy": "Never"')}
		}
	}
	`;
    const cases = [
      ...levelCases('smp-', smpBody, strictOf(typedPatchWarnings), typedPatchWarnings),
      ...levelCases('nonconflicting-smp-', nonconflictingSMPBody, strictOf(nonconflictingWarnings), nonconflictingWarnings),
    ];
    for (const tc of cases) {
      const created = await send('PATCH', `${DEPLOYMENTS}/${tc.name}?fieldManager=apply_test`, goSprintf(validBodyJSON, tc.name), 'application/apply-patch+yaml');
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      await expectKube(tc, await send('PATCH', `${DEPLOYMENTS}/${tc.name}${fv(tc.level)}`, tc.body, 'application/strategic-merge-patch+json'));
    }
  });

  const applyError = 'error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line 10: key "paused" already set in map\n  line 27: key "imagePullPolicy" already set in map';
  const applyWarnings = ['line 10: key "paused" already set in map', 'line 27: key "imagePullPolicy" already set in map'];

  it('ApplyCreate (testFieldValidationApplyCreate)', async () => {
    for (const tc of levelCases('', applyInvalidBody, applyError, applyWarnings)) {
      const name = `apply-create-deployment-${tc.name}`;
      await expectKube(tc, await send('PATCH', `${DEPLOYMENTS}/${name}${fv(tc.level, 'fieldManager=mgr')}`, goSprintf(tc.body, name), 'application/apply-patch+yaml'));
    }
  });

  it('ApplyUpdate (testFieldValidationApplyUpdate)', async () => {
    for (const tc of levelCases('', applyInvalidBody, applyError, applyWarnings)) {
      const name = `apply-update-deployment-${tc.name}`;
      const created = await send('PATCH', `${DEPLOYMENTS}/${name}${fv(tc.level, 'fieldManager=mgr')}`, goSprintf(validBodyJSON, name), 'application/apply-patch+yaml');
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      await expectKube(tc, await send('PATCH', `${DEPLOYMENTS}/${name}${fv(tc.level, 'fieldManager=mgr')}`, goSprintf(tc.body, name), 'application/apply-patch+yaml'));
    }
  });

  for (const schemaless of [false, true]) {
    const group = schemaless ? 'schemaless.example.com' : 'schema.example.com';
    const s = schemaless ? 'schemaless-' : '';
    const S = schemaless ? 'Schemaless' : '';
    let crd: { path: string; apiVersion: string; kind: string } | undefined;
    const theCrd = async () => (crd ??= await setupCRD(group, schemaless));

    // the unknown fields of crdInvalidBody: spec's own are kept by the schemaless CRD
    const crdUnknown = schemaless
      ? ['unknown field "metadata.unknownMeta"', 'unknown field "spec.ports[0].unknownNested"', 'unknown field "spec.embeddedObj.metadata.unknownEmbeddedMeta"']
      : ['unknown field "metadata.unknownMeta"', 'unknown field "spec.ports[0].unknownNested"', 'unknown field "spec.unknown1"', 'unknown field "spec.unknownDupe"', 'unknown field "spec.embeddedObj.metadata.unknownEmbeddedMeta"'];
    const crdJSONWarnings = [
      'duplicate field "metadata.name"',
      'duplicate field "spec.unknownDupe"',
      'duplicate field "spec.knownField1"',
      'duplicate field "spec.ports[0].hostPort"',
      ...crdUnknown,
    ];
    const crdYAMLLines = [
      'line 6: key "name" already set in map',
      'line 12: key "unknownDupe" already set in map',
      'line 14: key "knownField1" already set in map',
      'line 20: key "hostPort" already set in map',
    ];
    const crdYAMLStrict = `strict decoding error: yaml: unmarshal errors:\n  ${crdYAMLLines.join('\n  ')}, ${crdUnknown.join(', ')}`;
    const crdPostPutCases = (verb: string): KubeCase[] => [
      ...levelCases(`${s}crd-${verb}-`, crdInvalidBody, strictOf(crdJSONWarnings), crdJSONWarnings),
      ...levelCases(`${s}crd-${verb}-`, crdInvalidBodyYAML, crdYAMLStrict, [...crdYAMLLines, ...crdUnknown], 'application/yaml')
        .map((c) => ({ ...c, name: `${c.name}-yaml` })),
    ];

    it(`PostCRD${S} (testFieldValidationPostCRD${S})`, async () => {
      const { path, apiVersion, kind } = await theCrd();
      for (const tc of crdPostPutCases('post')) {
        await expectKube(tc, await send('POST', `${path}${fv(tc.level)}`, goSprintf(tc.body, apiVersion, kind, tc.name), tc.contentType ?? 'application/json'));
      }
    });

    it(`PutCRD${S} (testFieldValidationPutCRD${S})`, async () => {
      const { path, apiVersion, kind } = await theCrd();
      for (const tc of crdPostPutCases('put')) {
        const created = await send('POST', `${path}${fv(tc.level)}`, goSprintf(crdValidBody, apiVersion, kind, tc.name), 'application/json');
        expect(created.status, JSON.stringify(created.body)).toBe(201);
        const rv = created.body.metadata.resourceVersion as string;
        await expectKube(tc, await send('PUT', `${path}/${tc.name}${fv(tc.level)}`, goSprintf(tc.body, apiVersion, kind, tc.name, rv), tc.contentType ?? 'application/json'));
      }
    });

    it(`PatchCRD${S} (testFieldValidationPatchCRD${S})`, async () => {
      const { path, apiVersion, kind } = await theCrd();
      const mergePatchBody = `
{
	"spec": {
${UNKNOWN_SPEC_FIELDS}
		"knownField1": "val1",
		"knownField1": "val2",
${crPorts('"hostPort": 8081,\n"hostPort": 8082,\n"unknownNested": "val"')}
	}
}
	`;
      const jsonPatchBody = `
			[
${jsonPatchHead('val2')}
				{"op": "add", "path": "/spec/knownField1", "value": "val1"},
				{"op": "add", "path": "/spec/knownField1", "value": "val2"},
				{"op": "add", "path": "/spec/ports/0/name", "value": "portName"},
				{"op": "add", "path": "/spec/ports/0/containerPort", "value": 8080},
				{"op": "add", "path": "/spec/ports/0/protocol", "value": "TCP"},
				{"op": "add", "path": "/spec/ports/0/hostPort", "value": 8081},
				{"op": "add", "path": "/spec/ports/0/hostPort", "value": 8082},
				{"op": "add", "path": "/spec/ports/0/unknownNested", "value": "val"}
			]
			`;
      const patchUnknown = schemaless
        ? ['unknown field "spec.ports[0].unknownNested"']
        : ['unknown field "spec.ports[0].unknownNested"', 'unknown field "spec.unknown1"', 'unknown field "spec.unknownDupe"'];
      const jsonPatchUnknown = schemaless
        ? ['unknown field "spec.ports[0].unknownNested"']
        : ['unknown field "spec.ports[0].unknownNested"', 'unknown field "spec.unknown1"', 'unknown field "spec.unknown3"', 'unknown field "spec.unknownDupe"'];
      const crdMergeWarnings = ['duplicate field "spec.unknownDupe"', 'duplicate field "spec.knownField1"', 'duplicate field "spec.ports[0].hostPort"', ...patchUnknown];
      const jsonPatchWarnings = ['json patch unknown field "[0].foo"', 'json patch duplicate field "[1].path"', ...jsonPatchUnknown];
      const cases: (KubeCase & { type: string })[] = [
        ...levelCases(`${s}crd-merge-patch-`, mergePatchBody, strictOf(crdMergeWarnings), crdMergeWarnings).map((c) => ({ ...c, type: 'application/merge-patch+json' })),
        ...levelCases(`${s}crd-json-patch-`, jsonPatchBody, strictOf(jsonPatchWarnings), jsonPatchWarnings).map((c) => ({ ...c, type: 'application/json-patch+json' })),
      ];
      for (const tc of cases) {
        const created = await send('PATCH', `${path}/${tc.name}?fieldManager=apply_test`, goSprintf(crdPatchYAMLBody, apiVersion, kind, tc.name), 'application/apply-patch+yaml');
        expect(created.status, JSON.stringify(created.body)).toBe(201);
        await expectKube(tc, await send('PATCH', `${path}/${tc.name}${fv(tc.level)}`, tc.body, tc.type));
      }
    });

    const crdApplyError = 'error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line 10: key "knownField1" already set in map\n  line 16: key "hostPort" already set in map';
    const crdApplyWarnings = ['line 10: key "knownField1" already set in map', 'line 16: key "hostPort" already set in map'];

    it(`ApplyCreateCRD${S} (testFieldValidationApplyCreateCRD${S})`, async () => {
      const { path, apiVersion, kind } = await theCrd();
      for (const tc of levelCases(s, crdApplyInvalidBody, crdApplyError, crdApplyWarnings)) {
        const name = `apply-create-crd-${tc.name}`;
        await expectKube(tc, await send('PATCH', `${path}/${name}${fv(tc.level, 'fieldManager=mgr')}`, goSprintf(tc.body, apiVersion, kind, name), 'application/apply-patch+yaml'));
      }
    });

    it(`ApplyUpdateCRD${S} (testFieldValidationApplyUpdateCRD${S})`, async () => {
      const { path, apiVersion, kind } = await theCrd();
      for (const tc of levelCases(s, crdApplyInvalidBody, crdApplyError, crdApplyWarnings)) {
        const name = `apply-update-crd-${tc.name}`;
        const created = await send('PATCH', `${path}/${name}${fv(tc.level, 'fieldManager=mgr')}`, goSprintf(crdApplyValidBody, apiVersion, kind, name), 'application/apply-patch+yaml');
        expect(created.status, JSON.stringify(created.body)).toBe(201);
        await expectKube(tc, await send('PATCH', `${path}/${name}${fv(tc.level, 'fieldManager=mgr')}`, goSprintf(tc.body, apiVersion, kind, name), 'application/apply-patch+yaml'));
      }
    });
  }
});
