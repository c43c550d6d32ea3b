// Protobuf for CustomResourceDefinition and ValidatingWebhookConfiguration over
// real HTTPS (spec 000 §2.7, §4.3; docs/protobuf.md): bodies built and read by
// protobufjs from Kubernetes' numbers (test/helpers/k8s-proto-extensions.ts),
// as a client-go client configured for protobuf sends and reads them. Create,
// get, list, update and watch in protobuf; what is stored equals what the same
// object sent as JSON stores, and the CRD created in protobuf serves its kind
// with the schema intact (its validations reject a bad custom object).

import { request as httpsRequest } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProtobufCatalog } from '../../src/registry/protobuf-catalog.js';
import { decodeEnvelope } from '../../src/machinery/protobuf/envelope.js';
import { eventually } from '../helpers/eventually.js';
import { k8sEnvelope, k8sExtensionsProto, k8sUnenvelope } from '../helpers/k8s-proto-extensions.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const PB = 'application/vnd.kubernetes.protobuf';
const CRD_GV = 'apiextensions.orch.io/v1';
const CRDS = `/apis/${CRD_GV}/customresourcedefinitions`;
const ADM_GV = 'admissionregistration.orch.io/v1';
const VWCS = `/apis/${ADM_GV}/validatingwebhookconfigurations`;

type J = Record<string, unknown>;

let t: TestServer;
let catalog: ProtobufCatalog;

beforeAll(async () => {
  t = await startTestServer();
  catalog = new ProtobufCatalog(t.server.registry);
});
afterAll(async () => {
  await t?.stop();
});

/** a protobuf response decoded by orch's catalog (for comparing with the JSON answer) */
function orchDecode(raw: Buffer): J {
  const env = decodeEnvelope(raw);
  const [group, version] = env.typeMeta.apiVersion.split('/') as [string, string];
  return catalog.decodeBody(raw, t.server.registry.lookupKind(group, version, env.typeMeta.kind)!, env.typeMeta.kind);
}

// ---------------------------------------------------------------- a CRD, in JSON and in Kubernetes' protobuf shape

const widgetSchema: J = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['size'],
      'x-kubernetes-validations': [{ rule: 'self.size != 7', message: 'seven is unlucky' }],
      properties: {
        size: { type: 'integer', minimum: 0, maximum: 10, default: 1 },
        color: { type: 'string', enum: ['red', 'blue'] },
        tags: { type: 'array', items: { type: 'string', maxLength: 16 }, 'x-kubernetes-list-type': 'set' },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
    status: { type: 'object', properties: { size: { type: 'integer' } } },
  },
};

function crd(group: string): J {
  return {
    apiVersion: CRD_GV,
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${group}`, labels: { via: 'test' } },
    spec: {
      group,
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', shortNames: ['wdg'], categories: ['all'] },
      scope: 'Namespaced',
      versions: [{
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: widgetSchema },
        subresources: { status: {}, scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.size' } },
        additionalPrinterColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size', priority: 1 }],
      }],
    },
  };
}

/** JSONSchemaProps JSON → the protobufjs shape of Kubernetes' message (this test's own mapping) */
function pbSchema(j: J): J {
  const out: J = {};
  const raw = (v: unknown) => ({ raw: Buffer.from(JSON.stringify(v)) });
  for (const [k, v] of Object.entries(j)) {
    if (k === 'properties') out.properties = Object.fromEntries(Object.entries(v as J).map(([p, s]) => [p, pbSchema(s as J)]));
    else if (k === 'items') out.items = { schema: pbSchema(v as J) };
    else if (k === 'additionalProperties') out.additionalProperties = typeof v === 'boolean' ? { allows: v } : { allows: true, schema: pbSchema(v as J) };
    else if (k === 'default') out.default = raw(v);
    else if (k === 'enum') out.enum = (v as unknown[]).map(raw);
    else if (k.startsWith('x-kubernetes-')) out[`xKubernetes${k.slice(13).replace(/(^|-)([a-z])/g, (_, _d, c: string) => c.toUpperCase())}`] = v;
    else out[k] = v;
  }
  return out;
}

function crdPb(group: string): J {
  const j = crd(group) as { metadata: J; spec: { versions: J[] } & J };
  const v = j.spec.versions[0] as { schema: { openAPIV3Schema: J } };
  return { metadata: j.metadata, spec: { ...j.spec, versions: [{ ...v, schema: { openAPIV3Schema: pbSchema(v.schema.openAPIV3Schema) } }] } };
}

/** the parts of a stored object that do not depend on when and under which name it was made */
// Entries sort by operation, then time in whole seconds (as kube's), so two made in
// different seconds may change places: compare them without time, in one order.
function byManager(entries: J[]): J[] {
  const key = (e: J) => `${String(e.manager)}/${String(e.subresource ?? '')}`;
  return entries.map(({ time: _t, ...rest }) => rest).sort((a, b) => key(a).localeCompare(key(b)));
}

function comparable(o: J, name: string, group?: string): J {
  const m = o.metadata as J;
  const text = JSON.stringify({
    metadata: { labels: m.labels, finalizers: m.finalizers, generation: m.generation, managedFields: byManager(m.managedFields as J[]) },
    spec: o.spec,
    webhooks: o.webhooks,
  });
  return JSON.parse(group ? text.split(group).join('GROUP') : text.split(name).join('NAME')) as J;
}

// ---------------------------------------------------------------- a watch read as length-prefixed WatchEvent frames

interface Frames {
  next(): Promise<{ type: string; raw: Buffer }>;
  close(): void;
  contentType: Promise<string>;
}

function watch(path: string): Frames {
  let buf = Buffer.alloc(0);
  let setType: (s: string) => void = () => {};
  const contentType = new Promise<string>((r) => (setType = r));
  const req = httpsRequest({ host: '127.0.0.1', port: t.server.port, path, method: 'GET', headers: { Accept: PB }, ca: t.server.caPem, cert: t.server.adminCertPem, key: t.server.adminKeyPem, agent: false }, (res) => {
    setType(String(res.headers['content-type']));
    res.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
    });
  });
  req.on('error', () => {});
  req.end();
  const event = k8sExtensionsProto.lookupType('k8s.WatchEvent');
  return {
    contentType,
    close: () => req.destroy(),
    async next() {
      await eventually(() => buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0), 'a complete watch frame');
      const len = buf.readUInt32BE(0);
      const e = event.toObject(event.decode(buf.subarray(4, 4 + len)), { bytes: Buffer }) as { type: string; object: { raw: Buffer } };
      buf = buf.subarray(4 + len);
      return { type: e.type, raw: e.object.raw };
    },
  };
}

describe('protobuf for CustomResourceDefinition', () => {
  it('creates, gets, lists, updates and watches a CRD in protobuf; it stores what JSON stores and serves its kind', async () => {
    const list0 = await t.request('GET', CRDS, { headers: { Accept: PB } });
    expect(list0.status).toBe(200);
    expect(list0.headers['content-type']).toBe(PB);
    const rv0 = (k8sUnenvelope(list0.raw, 'k8s.CustomResourceDefinitionList').obj.metadata as J).resourceVersion as string;
    const w = watch(`${CRDS}?watch=true&resourceVersion=${rv0}`);
    try {
      expect(await w.contentType).toBe(`${PB};stream=watch`);

      const c = await t.request('POST', CRDS, { body: k8sEnvelope(CRD_GV, 'CustomResourceDefinition', 'k8s.CustomResourceDefinition', crdPb('pb.example.com')), headers: { 'Content-Type': PB, Accept: `${PB}, application/json` } });
      expect(c.status, c.text).toBe(201);
      expect(c.headers['content-type']).toBe(PB);
      const created = k8sUnenvelope(c.raw, 'k8s.CustomResourceDefinition');
      expect(created.typeMeta).toEqual({ apiVersion: CRD_GV, kind: 'CustomResourceDefinition' });
      const spec = created.obj.spec as { versions: { schema: { openAPIV3Schema: J } }[] };
      expect(spec.versions[0]!.schema.openAPIV3Schema).toEqual(pbSchema(widgetSchema));

      const j = await t.request('POST', CRDS, { body: crd('json.example.com') });
      expect(j.status, j.text).toBe(201);

      // the custom kind is served from the protobuf-made CRD, its schema in force
      const widgets = '/apis/pb.example.com/v1/namespaces/default/widgets';
      await eventually(async () => (await t.request('GET', widgets)).status === 200, 'the Widget kind served');
      const widget = (spec: J) => ({ body: { apiVersion: 'pb.example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec } });
      const unlucky = await t.request('POST', widgets, widget({ size: 7 }));
      expect(unlucky.status, unlucky.text).toBe(422);
      expect(unlucky.text).toContain('seven is unlucky');
      const green = await t.request('POST', widgets, widget({ size: 2, color: 'green' }));
      expect(green.status, green.text).toBe(422);
      // an enum error is blocking: kube adds that the CEL rules were not checked (docs/crds.md)
      expect(green.json<{ details: { causes: J[] } }>().details.causes).toEqual([
        expect.objectContaining({ field: 'spec.color', reason: 'FieldValueNotSupported' }),
        expect.objectContaining({ field: '<nil>', message: expect.stringContaining('some validation rules were not checked') }),
      ]);
      const good = await t.request('POST', widgets, widget({ tags: ['a'] }));
      expect(good.status, good.text).toBe(201);
      expect(good.json().spec).toEqual({ size: 1, tags: ['a'] });

      const pbStored = (await t.request('GET', `${CRDS}/widgets.pb.example.com`)).json();
      const jsonStored = (await t.request('GET', `${CRDS}/widgets.json.example.com`)).json();
      expect(comparable(pbStored, 'widgets.pb.example.com', 'pb.example.com')).toEqual(comparable(jsonStored, 'widgets.json.example.com', 'json.example.com'));

      // GET in protobuf carries the whole stored object (no fallback to JSON)
      const g = await t.request('GET', `${CRDS}/widgets.pb.example.com`, { headers: { Accept: `${PB}, application/json` } });
      expect(g.headers['content-type']).toBe(PB);
      const established = await eventually(async () => {
        const cur = (await t.request('GET', `${CRDS}/widgets.pb.example.com`)).json<{ status?: { conditions?: { type: string; status: string }[] } }>();
        return cur.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True') ? cur : undefined;
      }, 'the CRD Established');
      const g2 = await t.request('GET', `${CRDS}/widgets.pb.example.com`, { headers: { Accept: PB } });
      expect(orchDecode(g2.raw)).toEqual(established);
      const viaK8s = k8sUnenvelope(g2.raw, 'k8s.CustomResourceDefinition').obj as { status: { conditions: { type: string }[]; acceptedNames: J; storedVersions: string[] } };
      expect(viaK8s.status.conditions.map((x) => x.type)).toEqual(expect.arrayContaining(['Established', 'NamesAccepted']));
      expect(viaK8s.status.acceptedNames).toMatchObject({ plural: 'widgets', kind: 'Widget' });
      expect(viaK8s.status.storedVersions).toEqual(['v1']);

      const l = await t.request('GET', CRDS, { headers: { Accept: PB } });
      const list = k8sUnenvelope(l.raw, 'k8s.CustomResourceDefinitionList');
      expect(list.typeMeta).toEqual({ apiVersion: CRD_GV, kind: 'CustomResourceDefinitionList' });
      expect((list.obj.items as { metadata: { name: string } }[]).map((i) => i.metadata.name)).toEqual(expect.arrayContaining(['widgets.pb.example.com', 'widgets.json.example.com']));

      // update in protobuf: a new printer column
      const cur = k8sUnenvelope(g2.raw, 'k8s.CustomResourceDefinition').obj as { metadata: J; spec: { versions: J[] } & J };
      const next = { ...cur, spec: { ...cur.spec, versions: [{ ...cur.spec.versions[0], additionalPrinterColumns: [{ name: 'Color', type: 'string', jsonPath: '.spec.color' }] }] } };
      const u = await t.request('PUT', `${CRDS}/widgets.pb.example.com`, { body: k8sEnvelope(CRD_GV, 'CustomResourceDefinition', 'k8s.CustomResourceDefinition', next), headers: { 'Content-Type': PB } });
      expect(u.status, u.text).toBe(200);
      expect((u.json<{ spec: { versions: J[] } }>().spec.versions[0] as J).additionalPrinterColumns).toEqual([{ name: 'Color', type: 'string', jsonPath: '.spec.color' }]);
      expect(u.json<{ spec: { versions: { schema: J }[] } }>().spec.versions[0]!.schema).toEqual({ openAPIV3Schema: widgetSchema });

      // the watch saw every change of the pb CRD with the whole object (nothing dropped from the frames)
      const seen: { type: string; obj: J }[] = [];
      await eventually(async () => {
        const f = await w.next();
        const d = k8sUnenvelope(f.raw, 'k8s.CustomResourceDefinition');
        expect(d.typeMeta.kind).toBe('CustomResourceDefinition');
        if ((d.obj.metadata as J).name === 'widgets.pb.example.com') seen.push({ type: f.type, obj: d.obj });
        const last = seen.at(-1)?.obj.spec as { versions: J[] } | undefined;
        return (last?.versions[0]?.additionalPrinterColumns as J[] | undefined)?.[0]?.name === 'Color';
      }, 'the update in the watch');
      expect(seen[0]!.type).toBe('ADDED');
      expect((seen[0]!.obj.spec as { versions: { schema: J }[] }).versions[0]!.schema).toEqual({ openAPIV3Schema: pbSchema(widgetSchema) });
      expect(seen.at(-1)!.type).toBe('MODIFIED');
    } finally {
      w.close();
    }
  });
});

// ---------------------------------------------------------------- a ValidatingWebhookConfiguration

const ca = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');

function vwc(name: string): J {
  return {
    apiVersion: ADM_GV,
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name },
    webhooks: [{
      name: 'check.example.com',
      clientConfig: { url: 'https://127.0.0.1:1/validate', caBundle: ca.toString('base64') },
      // nothing this test creates matches: the webhook is never called
      rules: [{ operations: ['CREATE'], apiGroups: ['nothing.example.com'], apiVersions: ['v1'], resources: ['gadgets'], scope: 'Namespaced' }],
      failurePolicy: 'Ignore',
      namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] },
      objectSelector: { matchLabels: { checked: 'yes' } },
      sideEffects: 'None',
      timeoutSeconds: 3,
      admissionReviewVersions: ['v1'],
      matchConditions: [{ name: 'always', expression: 'true' }],
    }],
  };
}

function vwcPb(name: string): J {
  const j = vwc(name) as { metadata: J; webhooks: ({ rules: J[]; clientConfig: J } & J)[] };
  return {
    metadata: j.metadata,
    webhooks: j.webhooks.map((h) => ({
      ...h,
      clientConfig: { url: h.clientConfig.url, caBundle: ca },
      rules: h.rules.map(({ operations, ...rule }) => ({ operations, rule })),
    })),
  };
}

describe('protobuf for ValidatingWebhookConfiguration', () => {
  it('creates, gets, lists and watches in protobuf; it stores what JSON stores', async () => {
    const list0 = await t.request('GET', VWCS, { headers: { Accept: PB } });
    expect(list0.headers['content-type']).toBe(PB);
    const rv0 = (k8sUnenvelope(list0.raw, 'k8s.ValidatingWebhookConfigurationList').obj.metadata as J).resourceVersion as string;
    const w = watch(`${VWCS}?watch=true&resourceVersion=${rv0}`);
    try {
      const c = await t.request('POST', VWCS, { body: k8sEnvelope(ADM_GV, 'ValidatingWebhookConfiguration', 'k8s.ValidatingWebhookConfiguration', vwcPb('pb-hooks')), headers: { 'Content-Type': PB, Accept: PB } });
      expect(c.status, c.text).toBe(201);
      const created = k8sUnenvelope(c.raw, 'k8s.ValidatingWebhookConfiguration').obj as { webhooks: J[] };
      // defaulted like the JSON path (matchPolicy Equivalent); the Rule inlined in RuleWithOperations at 2
      expect(created.webhooks[0]).toMatchObject({ ...(vwcPb('x').webhooks as J[])[0], matchPolicy: 'Equivalent' });

      const j = await t.request('POST', VWCS, { body: vwc('json-hooks') });
      expect(j.status, j.text).toBe(201);
      const pbStored = (await t.request('GET', `${VWCS}/pb-hooks`)).json();
      const jsonStored = (await t.request('GET', `${VWCS}/json-hooks`)).json();
      expect(comparable(pbStored, 'pb-hooks')).toEqual(comparable(jsonStored, 'json-hooks'));

      const g = await t.request('GET', `${VWCS}/pb-hooks`, { headers: { Accept: `${PB}, application/json` } });
      expect(g.headers['content-type']).toBe(PB);
      expect(orchDecode(g.raw)).toEqual(pbStored);

      const l = await t.request('GET', VWCS, { headers: { Accept: PB } });
      const items = k8sUnenvelope(l.raw, 'k8s.ValidatingWebhookConfigurationList').obj.items as { metadata: { name: string }; webhooks: J[] }[];
      expect(items.find((i) => i.metadata.name === 'pb-hooks')!.webhooks).toEqual(created.webhooks);

      expect((await t.request('DELETE', `${VWCS}/pb-hooks`)).status).toBe(200);
      const events: string[] = [];
      await eventually(async () => {
        const f = await w.next();
        const d = k8sUnenvelope(f.raw, 'k8s.ValidatingWebhookConfiguration').obj as { metadata: { name: string }; webhooks: J[] };
        if (d.metadata.name !== 'pb-hooks') return false;
        events.push(f.type);
        expect(d.webhooks).toEqual(created.webhooks);
        return f.type === 'DELETED';
      }, 'the DELETED event');
      expect(events).toEqual(['ADDED', 'DELETED']);
    } finally {
      w.close();
    }
  });
});
