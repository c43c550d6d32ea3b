// Shared steps of the ports of Kubernetes' apimachinery e2e tests
// (test/integration/e2e-apimachinery-*.test.ts): a server with kube's group
// names, a namespace per test as the e2e framework makes one, and the
// apiextensions fixtures those tests build their CRDs from (a random-name
// cluster-scoped CRD of group mygroup.example.com whose kind is its lower-case
// singular, its two-version variant, and the "noxu" CRD).

import { afterAll, beforeAll, expect } from 'vitest';
import { eventually } from './eventually.js';
import { type RawResponse, type TestServer, startTestServer } from './server.js';
import { openWatch } from './watch-stream.js';

export type Obj = Record<string, any>;

export const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
export const GROUP = 'mygroup.example.com';
export const TABLE_V1 = 'application/json;as=Table;v=v1;g=meta.k8s.io';
export const TABLE_V1BETA1 = 'application/json;as=Table;v=v1beta1;g=meta.k8s.io';

/** a started server with kube's group names (apps, apiextensions.k8s.io, …) */
export function startKubeServer(): Promise<TestServer> {
  return startTestServer({ apiDomain: 'k8s.io' });
}

/** one such server for a test file: started before its tests (handed to `set`), stopped after them */
export function useKubeServer(set: (t: TestServer) => void): void {
  let t: TestServer | undefined;
  beforeAll(async () => {
    t = await startKubeServer();
    set(t);
  });
  afterAll(async () => {
    await t?.stop();
  });
}

/** sends a request, expects a 2xx answer (or `want`) and returns the body */
export async function call(t: TestServer, method: string, path: string, body?: unknown, contentType = 'application/merge-patch+json', want?: number): Promise<Obj> {
  const r = await t.request(method, path, { body: body as object | undefined, headers: method === 'PATCH' ? { 'content-type': contentType } : {} });
  if (want === undefined) expect(r.status, `${method} ${path}: ${r.text}`).toBeLessThan(300);
  else expect(r.status, `${method} ${path}: ${r.text}`).toBe(want);
  return r.text ? r.json<Obj>() : {};
}

/** the object, or undefined on 404 */
export async function getOrUndefined(t: TestServer, path: string): Promise<Obj | undefined> {
  const r = await t.request('GET', path);
  if (r.status === 404) return undefined;
  expect(r.status, r.text).toBe(200);
  return r.json<Obj>();
}

export async function listItems(t: TestServer, path: string): Promise<Obj[]> {
  return (await call(t, 'GET', path)).items as Obj[];
}

let seq = 0;
/** a fresh namespace, as the e2e framework gives each test */
export async function newNamespace(t: TestServer, base: string): Promise<string> {
  const name = `${base}-${++seq}-${Math.random().toString(36).slice(2, 7)}`;
  await call(t, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return name;
}

/** a name as names.SimpleNameGenerator makes it: the base and five random characters */
export function generateName(base: string): string {
  return `${base}${Math.random().toString(36).slice(2, 7).padEnd(5, 'x')}`;
}

const allowAll = (): Obj => ({ openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } });

/** NewRandomNameV1CustomResourceDefinition: one version v1beta1, the kind is the lower-case singular */
export function randomNameCrd(scope: 'Cluster' | 'Namespaced' = 'Cluster'): Obj {
  const g = generateName('foo');
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${g}s.${GROUP}` },
    spec: {
      group: GROUP,
      versions: [{ name: 'v1beta1', served: true, storage: true, schema: allowAll() }],
      names: { plural: `${g}s`, singular: g, kind: g, listKind: `${g}List` },
      scope,
    },
  };
}

/** NewRandomNameMultipleVersionCustomResourceDefinition: v1beta1 and v1 (the storage version), both served */
export function randomNameMultiVersionCrd(scope: 'Cluster' | 'Namespaced' = 'Cluster'): Obj {
  const crd = randomNameCrd(scope);
  crd.spec.versions = [
    { name: 'v1beta1', served: true, storage: false, schema: allowAll() },
    { name: 'v1', served: true, storage: true, schema: allowAll() },
  ];
  return crd;
}

/** NewNoxuV1CustomResourceDefinition */
export function noxuCrd(scope: 'Cluster' | 'Namespaced' = 'Cluster'): Obj {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `noxus.${GROUP}` },
    spec: {
      group: GROUP,
      versions: [{ name: 'v1beta1', served: true, storage: true, schema: allowAll() }],
      names: { plural: 'noxus', singular: 'nonenglishnoxu', kind: 'WishIHadChosenNoxu', shortNames: ['foo', 'bar', 'abc', 'def'], listKind: 'NoxuItemList', categories: ['all'] },
      scope,
    },
  };
}

/** NewNoxuInstance */
export function noxuInstance(name: string, namespace?: string): Obj {
  return {
    apiVersion: `${GROUP}/v1beta1`,
    kind: 'WishIHadChosenNoxu',
    metadata: { name, ...(namespace ? { namespace } : {}) },
    content: { key: 'value' },
    num: { num1: Number.MAX_SAFE_INTEGER, num2: 1000000 },
  };
}

/** the `ports` of the field validation tests' CRD schemas (kube's e2e field_validation.go, integration crdSchemaBase) */
export const portsSchema = {
  type: 'array',
  'x-kubernetes-list-map-keys': ['containerPort', 'protocol'],
  'x-kubernetes-list-type': 'map',
  items: {
    type: 'object',
    required: ['containerPort', 'protocol'],
    properties: {
      containerPort: { format: 'int32', type: 'integer' },
      hostIP: { type: 'string' },
      hostPort: { format: 'int32', type: 'integer' },
      name: { type: 'string' },
      protocol: { type: 'string' },
    },
  },
};
/** their `cronSpec` */
export const cronSpecSchema = { type: 'string', pattern: '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$' };

/** the path of a CRD's resource in its first version */
export function crPath(crd: Obj, version: string = crd.spec.versions[0].name): string {
  return `/apis/${crd.spec.group}/${version}/${crd.spec.names.plural}`;
}

function established(crd: Obj | undefined): boolean {
  return ((crd?.status?.conditions ?? []) as Obj[]).some((c) => c.type === 'Established' && c.status === 'True');
}

/**
 * CreateNewV1CustomResourceDefinition(WatchUnsafe): creates the CRD, waits for
 * Established and for every served version to be in discovery
 */
export async function createCrdAndWait(t: TestServer, crd: Obj): Promise<Obj> {
  const created = await call(t, 'POST', CRDS, crd, undefined, 201);
  const name = crd.metadata.name as string;
  const done = await eventually(async () => {
    const cur = await getOrUndefined(t, `${CRDS}/${name}`);
    return established(cur) ? cur : undefined;
  }, `${name} Established`);
  for (const v of crd.spec.versions as Obj[]) {
    if (!v.served) continue;
    await eventually(async () => {
      const r = await t.request('GET', `/apis/${crd.spec.group}/${v.name}`);
      return r.status === 200 && (r.json<Obj>().resources as Obj[]).some((res) => res.name === crd.spec.names.plural);
    }, `${crd.spec.names.plural} in discovery of ${v.name}`);
  }
  expect(created.metadata.name).toBe(name);
  return done;
}

/** DeleteV1CustomResourceDefinition: deletes it and waits until it is gone */
export async function deleteCrdAndWait(t: TestServer, name: string): Promise<void> {
  await call(t, 'DELETE', `${CRDS}/${name}`);
  await eventually(async () => (await getOrUndefined(t, `${CRDS}/${name}`)) === undefined, `${name} deleted`);
}

export const annotations = (o: Obj): Record<string, string> => (o.metadata?.annotations ?? {}) as Record<string, string>;

/**
 * the API-operations e2e tests' patch, update and watch: a watch opened at the list's
 * resourceVersion (`rv`) with `selector` replays no ADDED events; a merge patch sets the annotation
 * `patched`, an update of what it returned adds `updated`, and every event up to the patched object
 * is MODIFIED
 */
export async function patchUpdateAndWatch(t: TestServer, collection: string, object: string, rv: string, selector: string): Promise<void> {
  const w = openWatch(t.server, `${collection}?watch=true&resourceVersion=${rv}&labelSelector=${encodeURIComponent(selector)}`);
  try {
    const patched = await call(t, 'PATCH', object, { metadata: { annotations: { patched: 'true' } } });
    expect(annotations(patched).patched).toBe('true');
    const toUpdate = structuredClone(patched);
    toUpdate.metadata.annotations.updated = 'true';
    expect(annotations(await call(t, 'PUT', object, toUpdate)).updated).toBe('true');
    const ev = await w.waitUntil((e) => e.type !== 'MODIFIED' || annotations(e.object).patched === 'true');
    expect(w.events.map((e) => e.type)).toEqual(w.events.map(() => 'MODIFIED'));
    expect(annotations(ev.object).patched).toBe('true');
    // client-go decodes a watch event's object by its apiVersion and kind
    expect([ev.object.apiVersion, ev.object.kind]).toEqual([patched.apiVersion, patched.kind]);
    expect(patched.kind).toBeTruthy();
  } finally {
    w.close();
  }
}

/** the API-operations e2e tests' end: one deleted (then 404, `left` remain), the rest by collection */
export async function deleteOneThenCollection(t: TestServer, collection: string, object: string, selector: string, left: number): Promise<void> {
  const byLabel = `${collection}?labelSelector=${encodeURIComponent(selector)}`;
  await call(t, 'DELETE', object);
  expect((await t.request('GET', object)).status).toBe(404);
  expect(await listItems(t, byLabel)).toHaveLength(left);
  await call(t, 'DELETE', byLabel);
  expect(await listItems(t, byLabel)).toHaveLength(0);
}

export type { RawResponse, TestServer };
