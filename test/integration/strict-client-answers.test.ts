// Answers a strict client can decode: Kubernetes' Java client refuses a JSON
// object with a field its model lacks or without a required field, Rust's
// k8s-openapi one with a required field missing or null or a value of the
// wrong JSON type. A representative set of objects (including those written
// with members kube decodes to Go zero values, numeric quantities and times
// not in Go's form) is read back through every list of the server, single
// gets, status and scale sub-resources, review answers, error Statuses and
// watch events, and each JSON object is checked against the server's own
// /openapi/v3 documents, which carry kube 1.32's `required` lists
// (src/registry/openapi-kube-required.ts): required members present (null only
// for a zero metav1.Time, which kube writes so), each value of its schema's
// type, times as Go writes them, and no member the schema does not define.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer } from '../helpers/server.js';

type J = Record<string, unknown>;
let t: TestServer;
const schemas: Record<string, J> = {};
const byGvk = new Map<string, string>();
const NS = '/api/v1/namespaces/default';

const META = { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' };
const str = { type: 'string' };
const KUBE_SUBRESOURCE_BODIES: Record<string, J> = {
  'io.k8s.api.autoscaling.v1.Scale': {
    type: 'object', 'x-kubernetes-group-version-kind': [{ group: 'autoscaling', version: 'v1', kind: 'Scale' }],
    properties: {
      apiVersion: str, kind: str, metadata: META,
      spec: { type: 'object', properties: { replicas: { type: 'integer' } } },
      status: { type: 'object', required: ['replicas'], properties: { replicas: { type: 'integer' }, selector: str } },
    },
  },
  'io.k8s.api.authentication.v1.TokenRequest': {
    type: 'object', required: ['spec'], 'x-kubernetes-group-version-kind': [{ group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' }],
    properties: {
      apiVersion: str, kind: str, metadata: META,
      spec: {
        type: 'object', required: ['audiences'],
        properties: {
          audiences: { type: 'array', items: str }, expirationSeconds: { type: 'integer' },
          boundObjectRef: { type: 'object', properties: { apiVersion: str, kind: str, name: str, uid: str } },
        },
      },
      status: { type: 'object', required: ['token', 'expirationTimestamp'], properties: { token: str, expirationTimestamp: { type: 'string', format: 'date-time' } } },
    },
  },
};
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z$/;
const isObj = (v: unknown): v is J => typeof v === 'object' && v !== null && !Array.isArray(v);

function deref(s: J): [J, string] {
  let name = '';
  for (let i = 0; i < 8; i++) {
    const ref = (s.$ref ?? (Array.isArray(s.allOf) && s.allOf.length === 1 ? (s.allOf[0] as J).$ref : undefined)) as string | undefined;
    if (!ref) break;
    name = ref.split('/').pop()!;
    s = schemas[name]!;
  }
  return [s, name];
}

/** the problems of `v` against schema `s`, as `path: problem` */
function check(v: unknown, s0: J, path: string, errs: string[]): void {
  const [s, name] = deref(s0);
  if (!s) return void errs.push(`${path}: no schema`);
  const isTime = s.format === 'date-time';
  // kube writes null for an optional pointer without omitempty (a TokenRequest's boundObjectRef); a required one is checked by its owner
  if (v === null) return;
  if (name.endsWith('.IntOrString') || s['x-kubernetes-int-or-string']) {
    if (typeof v !== 'string' && !Number.isInteger(v)) errs.push(`${path}: not an int-or-string: ${JSON.stringify(v)}`);
    return;
  }
  if (name.endsWith('.Quantity')) {
    if (typeof v !== 'string') errs.push(`${path}: a quantity that is no string: ${JSON.stringify(v)}`);
    return;
  }
  if (/\.(RawExtension|FieldsV1|JSON)$/.test(name) || (s['x-kubernetes-preserve-unknown-fields'] && !s.properties)) return;
  switch (s.type) {
    case 'string':
      if (typeof v !== 'string') errs.push(`${path}: not a string: ${JSON.stringify(v)}`);
      else if (isTime && !TIME.test(v)) errs.push(`${path}: a time not as Go writes it: ${v}`);
      return;
    case 'integer':
      if (!Number.isInteger(v)) errs.push(`${path}: not an integer: ${JSON.stringify(v)}`);
      return;
    case 'number':
      if (typeof v !== 'number') errs.push(`${path}: not a number: ${JSON.stringify(v)}`);
      return;
    case 'boolean':
      if (typeof v !== 'boolean') errs.push(`${path}: not a boolean: ${JSON.stringify(v)}`);
      return;
    case 'array':
      if (!Array.isArray(v)) return void errs.push(`${path}: not an array`);
      if (isObj(s.items)) v.forEach((x, i) => check(x, s.items as J, `${path}[${i}]`, errs));
      return;
    case 'object': {
      if (!isObj(v)) return void errs.push(`${path}: not an object`);
      const props = (s.properties ?? {}) as Record<string, J>;
      for (const r of (s.required ?? []) as string[]) {
        if (!(r in v)) errs.push(`${path}.${r}: required, missing (${name})`);
        else if (v[r] === null && deref(props[r] ?? {})[0]?.format !== 'date-time') errs.push(`${path}.${r}: required, null (${name})`);
      }
      for (const [k, x] of Object.entries(v)) {
        if (props[k]) check(x, props[k], `${path}.${k}`, errs);
        else if (isObj(s.additionalProperties)) check(x, s.additionalProperties, `${path}[${k}]`, errs);
        else if (!s.additionalProperties && !s['x-kubernetes-preserve-unknown-fields']) errs.push(`${path}.${k}: not in the schema (${name})`);
      }
    }
  }
}

/** `o` against the definition of its apiVersion and kind */
function problems(o: unknown, where: string): string[] {
  if (!isObj(o)) return [`${where}: no object`];
  const def = byGvk.get(`${o.apiVersion}/${o.kind}`) ?? (o.kind === 'Status' ? 'io.k8s.apimachinery.pkg.apis.meta.v1.Status' : undefined);
  if (!def) return o.apiVersion === 'example.com/v1' ? [] : [`${where}: no definition for ${o.apiVersion} ${o.kind}`];
  const errs: string[] = [];
  check(o, { $ref: `#/components/schemas/${def}` }, where, errs);
  return errs;
}

async function json(method: string, path: string, body?: object): Promise<J> {
  const r = await t.request(method, path, body === undefined ? {} : { body });
  return r.json();
}

async function create(path: string, body: J): Promise<J> {
  const r = await t.request('POST', path, { body });
  expect(r.status, `${path}: ${r.text}`).toBeLessThan(300);
  return r.json();
}

const found: string[] = [];
const seen = (o: unknown, where: string): J => {
  found.push(...problems(o, where));
  return o as J;
};

beforeAll(async () => {
  // the status writes below are a client's: no disruption or autoscaling controller rewrites them meanwhile
  t = await startTestServer({ apiDomain: 'k8s.io', authn: { controllers: ['*', '-disruption', '-horizontalpodautoscaling'] } });
  const index = await json('GET', '/openapi/v3');
  for (const { serverRelativeURL } of Object.values(index.paths as Record<string, { serverRelativeURL: string }>)) {
    const doc = await json('GET', serverRelativeURL);
    Object.assign(schemas, (doc.components as J).schemas);
  }
  // sub-resource bodies orch's documents do not define (they publish no sub-resource paths): kube 1.32's
  Object.assign(schemas, KUBE_SUBRESOURCE_BODIES);
  for (const [n, s] of Object.entries(schemas)) {
    for (const g of (s['x-kubernetes-group-version-kind'] ?? []) as { group: string; version: string; kind: string }[]) {
      if (!/\.(DeleteOptions|WatchEvent)$/.test(n)) byGvk.set(`${g.group ? `${g.group}/` : ''}${g.version}/${g.kind}`, n);
    }
  }
  const containers = [{ name: 'c', image: 'nginx', resources: { limits: { cpu: 2, memory: '1.5Gi' }, requests: { cpu: '1000m' } } }];
  const labels = { app: 'web' };
  // objects written with members kube decodes to zero values, numeric quantities, times not in Go's form
  await create(`${NS}/pods`, {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'affine', labels },
    spec: { containers, affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1 }] } } },
  });
  await create('/apis/apps/v1/namespaces/default/deployments', {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 2, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers } } },
  });
  await create('/apis/apps/v1/namespaces/default/statefulsets', {
    apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db' },
    spec: {
      serviceName: 'db', replicas: 0, selector: { matchLabels: { app: 'db' } }, template: { metadata: { labels: { app: 'db' } }, spec: { containers } },
      volumeClaimTemplates: [{ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: 1073741824 } } } }],
    },
  });
  const svc = await create(`${NS}/services`, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { type: 'LoadBalancer', selector: labels, ports: [{ port: 80 }] } });
  await create(`${NS}/services`, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'headless' }, spec: { clusterIP: 'None', selector: labels } });
  const s = await t.request('PUT', `${NS}/services/web/status`, { body: { ...svc, status: { conditions: [{ type: 'Ready', status: 'True' }] } } });
  expect(s.status, s.text).toBe(200);
  const pdb = await create('/apis/policy/v1/namespaces/default/poddisruptionbudgets', { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'web' }, spec: { minAvailable: 1, selector: { matchLabels: labels } } });
  const p = await t.request('PUT', '/apis/policy/v1/namespaces/default/poddisruptionbudgets/web/status', {
    body: { ...pdb, status: { ...(pdb.status as J), conditions: [{ type: 'Checked', status: 'True', reason: 'ByHand', lastTransitionTime: '2026-01-01T01:00:00.5+01:00' }] } },
  });
  expect(p.status, p.text).toBe(200);
  const hpa = await create('/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers', {
    apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'web' }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 3 },
  });
  const h = await t.request('PUT', '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/web/status', {
    body: { ...hpa, status: { desiredReplicas: 1, currentMetrics: [{ type: 'Resource', resource: { name: 'cpu' } }, { type: 'Pods', pods: {} }] } },
  });
  expect(h.status, h.text).toBe(200);
  await create('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'manual' }, addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.1'], hints: { forZones: [{}] } }], ports: [{ port: 80 }],
  });
  await create(`${NS}/resourcequotas`, { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, spec: { hard: { pods: 10, 'requests.cpu': 1.5 } } });
  await create(`${NS}/limitranges`, { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'l' }, spec: { limits: [{ type: 'Container', max: { cpu: 4 }, maxLimitRequestRatio: { cpu: 4 } }] } });
  await create('/apis/coordination.k8s.io/v1/namespaces/default/leases', {
    apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l' }, spec: { holderIdentity: 'me', acquireTime: '2026-01-01T02:00:00+02:00', renewTime: '2026-01-01T00:00:00Z' },
  });
  await create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'widgets.example.com' },
    spec: { group: 'example.com', names: { plural: 'widgets', kind: 'Widget' }, scope: 'Namespaced', versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] },
  });
  await create('/apis/storage.k8s.io/v1/storageclasses', { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'zonal' }, provisioner: 'x.io/p', allowedTopologies: [{ matchLabelExpressions: [{ key: 'zone', values: ['a'] }] }] });
  await create('/apis/networking.k8s.io/v1/ingressclasses', { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: 'ic' }, spec: { controller: 'x.io/c', parameters: { kind: 'K', name: 'p' } } });
  // controllers at work: replica sets, pods, endpoints, events
  await new Promise((r) => setTimeout(r, 1500));
}, 60_000);

afterAll(async () => {
  await t?.stop();
});

describe('answers a strict client decodes', () => {
  it('every list and every object in it, each get and its status and scale', async () => {
    const gvs = ['v1', ...((await json('GET', '/apis')).groups as { versions: { groupVersion: string }[] }[]).flatMap((g) => g.versions.map((v) => v.groupVersion))];
    let objects = 0;
    for (const gv of gvs) {
      const base = gv === 'v1' ? '/api/v1' : `/apis/${gv}`;
      const resources = (await json('GET', base)).resources as { name: string; namespaced: boolean; verbs: string[] }[];
      for (const r of resources.filter((x) => !x.name.includes('/') && x.verbs.includes('list'))) {
        const list = seen(await json('GET', `${base}/${r.name}`), `${base}/${r.name}`);
        for (const item of (list.items ?? []) as J[]) {
          const m = item.metadata as { name: string; namespace?: string };
          const path = `${base}${r.namespaced ? `/namespaces/${m.namespace}` : ''}/${r.name}/${m.name}`;
          seen(await json('GET', path), path);
          objects++;
          for (const sub of ['status', 'scale']) {
            if (!resources.some((x) => x.name === `${r.name}/${sub}`)) continue;
            const a = await t.request('GET', `${path}/${sub}`);
            if (a.status === 200) seen(a.json(), `${path}/${sub}`);
          }
        }
      }
    }
    expect(objects).toBeGreaterThan(50);
    expect(found).toEqual([]);
  });

  it('the values kube writes back in Go\'s form', async () => {
    const pod = await json('GET', `${NS}/pods/affine`);
    expect(pod.spec).toMatchObject({ affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, preference: {} }] } } });
    // (kube defaults the unset memory request to the limit)
    expect((pod.spec as { containers: J[] }).containers[0]!.resources).toEqual({ limits: { cpu: '2', memory: '1536Mi' }, requests: { cpu: '1', memory: '1536Mi' } });
    const sts = await json('GET', '/apis/apps/v1/namespaces/default/statefulsets/db');
    expect((sts.spec as { volumeClaimTemplates: J[] }).volumeClaimTemplates[0]).toMatchObject({
      apiVersion: 'v1', kind: 'PersistentVolumeClaim', spec: { resources: { requests: { storage: '1073741824' } } }, status: { phase: 'Pending' },
    });
    expect((await json('GET', `${NS}/services/web`)).status).toMatchObject({ conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: null, reason: '', message: '' }] });
    expect((await json('GET', '/apis/policy/v1/namespaces/default/poddisruptionbudgets/web')).status).toMatchObject({ conditions: [{ message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }] });
    expect((await json('GET', '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/web')).status).toMatchObject({
      currentMetrics: [{ resource: { name: 'cpu', current: {} } }, { pods: { metric: { name: '' }, current: {} } }],
    });
    expect((await json('GET', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/manual')).endpoints).toMatchObject([{ hints: { forZones: [{ name: '' }] } }]);
    expect((await json('GET', `${NS}/resourcequotas/q`)).spec).toEqual({ hard: { pods: '10', 'requests.cpu': '1500m' } });
    expect((await json('GET', '/apis/coordination.k8s.io/v1/namespaces/default/leases/l')).spec).toMatchObject({ acquireTime: '2026-01-01T00:00:00.000000Z', renewTime: '2026-01-01T00:00:00.000000Z' });
    expect((await json('GET', '/apis/networking.k8s.io/v1/ingressclasses/ic')).spec).toMatchObject({ parameters: { scope: 'Cluster' } });
  });

  it('review answers, error Statuses and watch events', async () => {
    const tr = await create(`${NS}/serviceaccounts/default/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} });
    seen(tr, 'TokenRequest');
    const token = (tr.status as { token: string }).token;
    seen(await create('/apis/authentication.k8s.io/v1/tokenreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } }), 'TokenReview');
    seen(await create('/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }), 'SelfSubjectReview');
    const sar = seen(await create('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview',
      spec: { user: 'bob', resourceAttributes: { verb: 'list', resource: 'pods', fieldSelector: { requirements: [{ key: 'spec.nodeName', values: ['n'] }] } } },
    }), 'SubjectAccessReview');
    expect(sar.spec).toMatchObject({ resourceAttributes: { fieldSelector: { requirements: [{ key: 'spec.nodeName', operator: '' }] } } });
    seen(await create('/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: 'default' } }), 'SelfSubjectRulesReview');
    seen(await create('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'get', resource: 'pods' } } }), 'SelfSubjectAccessReview');
    for (const [method, path, body] of [
      ['GET', `${NS}/pods/nope`], ['POST', `${NS}/services`, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { ports: [{ port: 1 }] } }],
      ['POST', `${NS}/pods`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'bad' }, spec: { containers: [{ name: 'c', image: 'x' }], topologySpreadConstraints: [{ topologyKey: 'zone' }] } }],
      ['DELETE', `${NS}/configmaps/nope`],
    ] as [string, string, object?][]) {
      const r = await t.request(method, path, body ? { body } : {});
      expect(r.status).toBeGreaterThanOrEqual(400);
      seen(r.json(), `${method} ${path}`);
    }
    for (const path of [`${NS}/pods`, '/apis/apps/v1/deployments', '/apis/autoscaling/v2/horizontalpodautoscalers', `${NS}/events`, '/apis/events.k8s.io/v1/events']) {
      const r = await t.request('GET', `${path}?watch=1&resourceVersion=0&timeoutSeconds=1`);
      const events = r.text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { type: string; object: J });
      expect(events.length, path).toBeGreaterThan(0);
      for (const e of events) seen(e.object, `watch ${path} ${e.type}`);
    }
    expect(found).toEqual([]);
  });
});
