// Kubernetes' e2e "[sig-api-machinery] CustomResourcePublishOpenAPI [Privileged:ClusterAdmin]" tests
// (test/e2e/apimachinery/crd_publish_openapi.go, all nine Conformance in 1.32) on a started orch server
// with kube's group names, run with the real kubectl 1.32: client-side apply and create with kubectl's
// default strict validation through the published schema, `kubectl explain` of a custom resource and its
// fields, and the definitions in /openapi/v2 (kube's waitForDefinition: the definition equals the CRD's
// schema once metadata, apiVersion, kind and the group-version-kind extension are dropped; polled with
// If-None-Match as kube does) and /openapi/v3/apis/<group>/<version> as CRDs are created, get a version
// renamed or unserved, and are deleted. Beside kube's checks: the x-kubernetes-group-version-kind
// extension, the v3 definition equal to the CRD's schema, kubectl's own validation of a `kind: List`
// against the v2 definition, and that the /openapi/v3 index's hashed URL changes with a CRD's schema
// (client-go's cached v3 client keys on it) while other group versions keep theirs. Also ported: the
// [Flaky] (not Conformance) "kubectl explain works for CR with the same resource name as built-in object",
// with kubectl's discovery cache refreshed first (the cause of kube's flake, kubernetes#65517).

import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { type KubectlResult, runKubectlInput } from '../helpers/kubectl.js';
import { CRDS, type Obj, type TestServer, call, createCrdAndWait, deleteCrdAndWait, newNamespace, useKubeServer } from '../helpers/kube-e2e.js';

let t: TestServer;
useKubeServer((s) => (t = s));

const BASE = 'crd-publish-openapi';
/** kube's wait.Poll bound (60 s); only a failure waits that long */
const WAIT = { timeoutMs: 60_000, intervalMs: 100 };

// kube's schemaFoo, schemaWaldo, schemaPreserveRoot and schemaPreserveNested
const text = (description: string, more: Obj = {}): Obj => ({ description, type: 'string', ...more });
const statusOf = (kind: string, bar: Obj): Obj => ({
  description: `Status of ${kind}`,
  type: 'object',
  properties: { bars: { description: 'List of Bars and their statuses.', type: 'array', items: { type: 'object', ...bar } } },
});
const schemaFoo: Obj = {
  description: 'Foo CRD for Testing',
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      description: 'Specification of Foo',
      properties: {
        bars: {
          description: 'List of Bars and their specs.',
          type: 'array',
          items: {
            type: 'object',
            required: ['name'],
            properties: {
              name: text('Name of Bar.'),
              age: text('Age of Bar.'),
              feeling: text('Whether Bar is feeling great.', { enum: ['Great', 'Down'] }),
              bazs: { description: 'List of Bazs.', items: { type: 'string' }, type: 'array' },
            },
          },
        },
      },
    },
    status: statusOf('Foo', {
      properties: {
        name: text('Name of Bar.'),
        available: { description: 'Whether the Bar is installed.', type: 'boolean' },
        quxType: text('Indicates to external qux type.', { pattern: 'in-tree|out-of-tree' }),
      },
    }),
  },
};
const waldo = (description: string, preserve: { root?: Obj; spec?: Obj } = {}): Obj => ({
  description,
  ...preserve.root,
  type: 'object',
  properties: {
    spec: { description: 'Specification of Waldo', type: 'object', ...preserve.spec, properties: { dummy: { description: 'Dummy property.', type: 'object' } } },
    status: statusOf('Waldo', {}),
  },
});
const schemaCustomService: Obj = {
  description: 'CustomService CRD for Testing',
  type: 'object',
  properties: { spec: { description: 'Specification of CustomService', type: 'object', properties: { dummy: text('Dummy property.') } } },
};
const PRESERVE = { 'x-kubernetes-preserve-unknown-fields': true };
const schemaWaldo = waldo('Waldo CRD for Testing');
const schemaPreserveRoot = waldo('preserve-unknown-properties at root for Testing', { root: PRESERVE });
const schemaPreserveNested = waldo('preserve-unknown-properties in nested field for Testing', { spec: PRESERVE });
/** setupCRD without a schema: kube's e2e gives such a CRD an object that keeps every field */
const PRESERVE_ALL = { type: 'object', ...PRESERVE };

interface TestCrd {
  crd: Obj;
  group: string;
  kind: string;
  plural: string;
  ns: string;
}

let suffix = 0;
/** CreateMultiVersionTestCRD: kind and singular `e2e-test-<base>-<n>-crd`, namespaced, the first version stores */
async function setupCRD(
  schema: Obj | undefined,
  groupSuffix: string,
  versions: string[],
  expect_: Obj | null = schema ?? { type: 'object' },
  opts: { names?: { plural: string; singular: string; kind: string; listKind: string; shortNames: string[] }; selectableFields?: string[] } = {},
): Promise<TestCrd> {
  const group = `${BASE}-test-${groupSuffix}.example.com`;
  const name = `e2e-test-${BASE}-${1000 + ++suffix}${Math.floor(Math.random() * 900)}-crd`;
  const n = opts.names ?? { plural: `${name}s`, singular: name, kind: name, listKind: `${name}List` };
  const [crd, ns] = await Promise.all([
    createCrdAndWait(t, {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${n.plural}.${group}` },
      spec: {
        group,
        scope: 'Namespaced',
        names: n,
        versions: versions.map((v, i) => ({
          name: v,
          served: true,
          storage: i === 0,
          schema: { openAPIV3Schema: schema ?? PRESERVE_ALL },
          ...(opts.selectableFields ? { selectableFields: opts.selectableFields.map((jsonPath) => ({ jsonPath })) } : {}),
        })),
      },
    }),
    newNamespace(t, BASE),
  ]);
  const tc = { crd, group, kind: n.kind, plural: n.plural, ns };
  await Promise.all(versions.map((v) => waitForDefinition(tc, v, expect_)));
  return tc;
}

/** kube's definitionName: openapiutil.ToRESTFriendlyName("<group>/<version>/<kind>") */
const definitionName = (c: TestCrd, version: string): string => `${c.group.split('.').reverse().join('.')}.${version}.${c.kind}`;

/** kube's dropDefaults: what the server adds to a CRD's schema */
function dropDefaults(d: Obj): Obj {
  const out = structuredClone(d);
  for (const k of ['metadata', 'apiVersion', 'kind']) delete out.properties?.[k];
  if (out.properties && Object.keys(out.properties as Obj).length === 0) delete out.properties;
  delete out['x-kubernetes-group-version-kind'];
  delete out['x-kubernetes-selectable-fields'];
  return out;
}

/** the last /openapi/v2 read, shared by the concurrent tests */
let v2Last: { etag: string; doc: Obj } | undefined;
/** /openapi/v2 fetched as waitForOpenAPISchema does: If-None-Match with the last ETag, 304 keeps that document */
async function openAPIV2(): Promise<Obj> {
  // the pair as sent: another test may replace v2Last while this request is out
  const sent = v2Last;
  const r = await t.request('GET', '/openapi/v2', { headers: { Accept: 'application/json', ...(sent ? { 'If-None-Match': sent.etag } : {}) } });
  if (r.status === 304 && sent) return sent.doc;
  expect(r.status, r.text.slice(0, 200)).toBe(200);
  v2Last = { etag: String(r.headers.etag ?? ''), doc: r.json<Obj>() };
  return v2Last.doc;
}

/** the group-version's /openapi/v3 document through the index's hashed URL, as client-go's cached client reads it */
async function openAPIV3(group: string, version: string): Promise<Obj | undefined> {
  const index = await call(t, 'GET', '/openapi/v3');
  const entry = (index.paths as Record<string, { serverRelativeURL: string }>)[`apis/${group}/${version}`];
  if (!entry) return undefined;
  expect(entry.serverRelativeURL).toMatch(new RegExp(`^/openapi/v3/apis/${group.replaceAll('.', '\\.')}/${version}\\?hash=[0-9A-F]{128}$`));
  const r = await t.request('GET', entry.serverRelativeURL);
  expect(r.status).toBe(200);
  // a hashed URL never changes its content: clients may keep it for good
  expect(r.headers['cache-control']).toBe('public, immutable');
  return r.json<Obj>();
}

const v3Definition = async (c: TestCrd, version: string): Promise<Obj | undefined> =>
  ((await openAPIV3(c.group, version))?.components?.schemas as Obj | undefined)?.[definitionName(c, version)] as Obj | undefined;

/**
 * waitForDefinition, on /openapi/v3 (first: a small document) and /openapi/v2: the v2 definition is
 * `expect_` (null: only that it exists), the v3 one the CRD's schema as written
 */
async function waitForDefinition(c: TestCrd, version: string, expect_: Obj | null): Promise<void> {
  const name = definitionName(c, version);
  const gvk = [{ group: c.group, version, kind: c.kind }];
  const written = (c.crd.spec.versions as Obj[]).find((v) => v.name === version)?.schema.openAPIV3Schema as Obj;
  await eventually(async () => {
    const d = await v3Definition(c, version);
    if (!d) return false;
    expect(d['x-kubernetes-group-version-kind']).toEqual(gvk);
    expect(dropDefaults(d)).toEqual(written);
    return true;
  }, `${name} in /openapi/v3`, WAIT);
  await eventually(async () => {
    const d = ((await openAPIV2()).definitions as Obj)[name] as Obj | undefined;
    if (!d) return false;
    expect(d['x-kubernetes-group-version-kind']).toEqual(gvk);
    if (expect_ !== null) expect(dropDefaults(d)).toEqual(expect_);
    return true;
  }, `${name} in /openapi/v2`, WAIT);
}

/** waitForDefinitionCleanup, on /openapi/v3 and /openapi/v2 */
async function waitForDefinitionCleanup(c: TestCrd, version: string): Promise<void> {
  const name = definitionName(c, version);
  await eventually(async () => (await v3Definition(c, version)) === undefined, `${name} gone from /openapi/v3`, WAIT);
  await eventually(async () => ((await openAPIV2()).definitions as Obj)[name] === undefined, `${name} gone from /openapi/v2`, WAIT);
}

/** cleanupCRD: deletes the CRD and waits until none of its versions is published */
async function cleanupCRD(c: TestCrd): Promise<void> {
  await deleteCrdAndWait(t, c.crd.metadata.name as string);
  await Promise.all((c.crd.spec.versions as Obj[]).map((v) => waitForDefinitionCleanup(c, v.name as string)));
}

const kubectl = (args: string[], input?: string): Promise<KubectlResult> => runKubectlInput(t.server.kubeconfigPath, input, args);
const output = (r: KubectlResult): string => `${r.stdout}${r.stderr}`;

/** kubectl succeeds (framework.RunKubectl(Input) without an error) */
async function ok(args: string[], input?: string): Promise<string> {
  const r = await kubectl(args, input);
  expect(r.code, `kubectl ${args.join(' ')}: ${output(r)}`).toBe(0);
  return r.stdout;
}

/** kubectl fails with one of `messages` in its output */
async function failsWith(args: string[], input: string, messages: string[]): Promise<void> {
  const r = await kubectl(args, input);
  expect(r.code, `kubectl ${args.join(' ')} should fail: ${output(r)}`).not.toBe(0);
  expect(messages.some((m) => output(r).includes(m)), `kubectl ${args.join(' ')}: ${output(r)} should say one of ${messages.join(' | ')}`).toBe(true);
}

/** verifyKubectlExplain */
async function explainMatches(what: string, pattern: RegExp): Promise<void> {
  const out = await ok(['explain', what]);
  expect(out).toMatch(pattern);
}

/** kube's metaPattern: the custom resource's kind, apiVersion and name, as JSON members */
const meta = (c: TestCrd, name: string): string => `"kind":"${c.kind}","apiVersion":"${c.group}/${c.crd.spec.versions[0].name}","metadata":{"name":"${name}"}`;

/** `kubectl create` then `kubectl apply` of a valid object, each deleted again */
async function createAndApply(c: TestCrd, cr: string, name: string): Promise<void> {
  for (const verb of ['create', 'apply']) {
    await ok([`--namespace=${c.ns}`, verb, '-f', '-'], cr);
    await ok([`--namespace=${c.ns}`, 'delete', c.plural, name]);
  }
}

/** kube's "CRs in … (two CRDs) show up in OpenAPI documentation": a Foo and a Waldo CRD published, then removed */
async function fooAndWaldo(foo: [group: string, version: string], waldo: [group: string, version: string], sameGroup: boolean): Promise<void> {
  // kube sets them up one after the other; they are independent
  const [f, w] = await Promise.all([setupCRD(schemaFoo, foo[0], [foo[1]]), setupCRD(schemaWaldo, waldo[0], [waldo[1]])]);
  expect(f.group === w.group).toBe(sameGroup);
  await waitForDefinition(w, waldo[1], schemaWaldo);
  await waitForDefinition(f, foo[1], schemaFoo);
  await Promise.all([cleanupCRD(f), cleanupCRD(w)]);
}

/** a multi-version Foo CRD, each version's definition checked again (kube's "just double check"), the last first */
async function setupMultiVersion(groupSuffix: string, versions: string[]): Promise<TestCrd> {
  const c = await setupCRD(schemaFoo, groupSuffix, versions);
  for (const v of [...versions].reverse()) await waitForDefinition(c, v, schemaFoo);
  return c;
}

// one suite, so that all its tests run concurrently (sibling suites would run one after the other)
describe.concurrent('crd_publish_openapi.go and the published documents', () => {
  describe('CustomResourcePublishOpenAPI [Privileged:ClusterAdmin] (crd_publish_openapi.go)', () => {
    it('[Conformance] works for CRD with validation schema', async () => {
      const c = await setupCRD(schemaFoo, 'foo', ['v1']);
      const ns = `--namespace=${c.ns}`;
      // kubectl validation (kubectl create and apply) allows request with known and required properties
      await createAndApply(c, `{${meta(c, 'test-foo')},"spec":{"bars":[{"name":"test-bar"}]}}`, 'test-foo');
      // … rejects request with value outside defined enum values
      const badEnum = `{${meta(c, 'test-foo')},"spec":{"bars":[{"name":"test-bar", "feeling":"NonExistentValue"}]}}`;
      const unknown = `{${meta(c, 'test-foo')},"spec":{"foo":true}}`;
      const noRequired = `{${meta(c, 'test-foo')},"spec":{"bars":[{"age":"10"}]}}`;
      // kube runs these one after the other; they are independent
      await Promise.all([
        // … rejects request with value outside defined enum values
        failsWith([ns, 'create', '-f', '-'], badEnum, ['Unsupported value: "NonExistentValue"']),
        // … rejects request with unknown properties when disallowed by the schema
        ...['create', 'apply'].map((verb) => failsWith([ns, verb, '-f', '-'], unknown, ['unknown field "foo"', 'unknown field "spec.foo"'])),
        // … rejects request without required properties
        ...['create', 'apply'].map((verb) => failsWith([ns, verb, '-f', '-'], noRequired, ['missing required field "name"', 'spec.bars[0].name: Required value'])),
        // beside kube's checks: a `kind: List` is validated by kubectl itself against the published /openapi/v2
        // definition (kubectl's strict server-side validation covers single objects only), both messages at once
        ...['create', 'apply'].map(async (verb) => {
          const list = `{"apiVersion":"v1","kind":"List","items":[{${meta(c, 'test-foo')},"spec":{"foo":true,"bars":[{"age":"10"}]}}]}`;
          await failsWith([ns, verb, '--validate=true', '-f', '-'], list, [`unknown field "foo" in ${definitionName(c, 'v1')}.spec`]);
          await failsWith([ns, verb, '--validate=true', '-f', '-'], list, [`missing required field "name" in ${definitionName(c, 'v1')}.spec.bars`]);
        }),
        // kubectl explain works to explain CR properties
        explainMatches(c.plural, /DESCRIPTION:.*Foo CRD for Testing.*FIELDS:.*apiVersion.*<string>.*APIVersion defines.*spec.*<Object>.*Specification of Foo/s),
        // … recursively
        explainMatches(`${c.plural}.metadata`, /DESCRIPTION:.*Standard object's metadata.*FIELDS:.*creationTimestamp.*<string>.*CreationTimestamp is a timestamp/s),
        explainMatches(`${c.plural}.spec`, /DESCRIPTION:.*Specification of Foo.*FIELDS:.*bars.*<\[\]Object>.*List of Bars and their specs/s),
        explainMatches(
          `${c.plural}.spec.bars`,
          /(FIELD|RESOURCE):.*bars.*<\[\]Object>.*DESCRIPTION:.*List of Bars and their specs.*FIELDS:.*bazs.*<\[\]string>.*List of Bazs.*name.*<string>.*Name of Bar/s,
        ),
        // kubectl explain works to return error when explain is called on property that doesn't exist
        (async () => {
          const missing = await kubectl(['explain', `${c.plural}.spec.bars2`]);
          expect(missing.code).not.toBe(0);
          expect(output(missing)).toContain('field "bars2" does not exist');
        })(),
      ]);
      expect((await call(t, 'GET', `/apis/${c.group}/v1/namespaces/${c.ns}/${c.plural}`)).items).toEqual([]);
      await cleanupCRD(c);
    });

    it('[Conformance] works for CRD without validation schema', async () => {
      const c = await setupCRD(undefined, 'empty', ['v1']);
      // kubectl validation (kubectl create and apply) allows request with any unknown properties
      await createAndApply(c, `{${meta(c, 'test-cr')},"a":{"b":[{"c":"d"}]}}`, 'test-cr');
      // kubectl explain works to explain CR without validation schema
      await explainMatches(c.plural, /DESCRIPTION:.*<empty>/s);
      await cleanupCRD(c);
    });

    it('[Conformance] works for CRD preserving unknown fields at the schema root', async () => {
      const c = await setupCRD(schemaPreserveRoot, 'unknown-at-root', ['v1'], null);
      await createAndApply(c, `{${meta(c, 'test-cr')},"a":{"b":[{"c":"d"}]}}`, 'test-cr');
      await explainMatches(c.plural, new RegExp(`KIND:.*${c.kind}`, 's'));
      await cleanupCRD(c);
    });

    it('[Conformance] works for CRD preserving unknown fields in an embedded object', async () => {
      const c = await setupCRD(schemaPreserveNested, 'unknown-in-nested', ['v1'], null);
      await createAndApply(c, `{${meta(c, 'test-cr')},"spec":{"a":null,"b":[{"c":"d"}]}}`, 'test-cr');
      await explainMatches(c.plural, /DESCRIPTION:.*preserve-unknown-properties in nested field for Testing/s);
      await cleanupCRD(c);
    });

    it('[Conformance] works for multiple CRDs of different groups', async () => {
      await fooAndWaldo(['foo', 'v1'], ['waldo', 'v1beta1'], false);
    });

    it('[Conformance] works for multiple CRDs of same group but different versions', async () => {
      // one multi-version CRD
      await cleanupCRD(await setupMultiVersion('multi-ver', ['v2', 'v3']));
      // two CRDs
      await fooAndWaldo(['common-group', 'v4'], ['common-group', 'v5'], true);
    });

    it('[Conformance] works for multiple CRDs of same group and version but different kinds', async () => {
      await fooAndWaldo(['common-group', 'v6'], ['common-group', 'v6'], true);
    });

    it('[Conformance] updates the published spec when one version gets renamed', async () => {
      const c = await setupMultiVersion('multi-ver', ['v2', 'v3']);
      const patch = [
        { op: 'test', path: '/spec/versions/1/name', value: 'v3' },
        { op: 'replace', path: '/spec/versions/1/name', value: 'v4' },
      ];
      c.crd = await call(t, 'PATCH', `${CRDS}/${c.crd.metadata.name}`, patch, 'application/json-patch+json');
      // the new version name is served, the old one removed, the other not changed
      await waitForDefinition(c, 'v4', schemaFoo);
      await waitForDefinitionCleanup(c, 'v3');
      await waitForDefinition(c, 'v2', schemaFoo);
      await cleanupCRD(c);
    });

    it('[Conformance] removes definition from spec when one version gets changed to not be served', async () => {
      const c = await setupMultiVersion('multi-to-single-ver', ['v5', 'v6alpha1']);
      // mark a version not served
      const cur = await call(t, 'GET', `${CRDS}/${c.crd.metadata.name}`);
      cur.spec.versions[1].served = false;
      c.crd = await call(t, 'PUT', `${CRDS}/${c.crd.metadata.name}`, cur);
      await waitForDefinitionCleanup(c, 'v6alpha1');
      await waitForDefinition(c, 'v5', schemaFoo);
      await cleanupCRD(c);
    });

    // [Flaky] in kube (kubernetes/kubernetes#65517), not Conformance
    it('kubectl explain works for CR with the same resource name as built-in object.', async () => {
      const shortName = `ksvc-${Math.random().toString(36).slice(2, 8)}`;
      const names = { plural: 'services', singular: 'service', kind: 'Service', listKind: 'ServiceList', shortNames: [shortName] };
      const c = await setupCRD(schemaCustomService, 'service', ['v1'], schemaCustomService, { names });
      // kubectl resolves a short name from its cached discovery, which predates the CRD (kube's flake): refresh it
      await ok(['api-resources', '--api-group', c.group]);
      await explainMatches(`${shortName}.spec`, /DESCRIPTION:.*Specification of CustomService.*FIELDS:.*dummy.*<string>.*Dummy property/s);
      await cleanupCRD(c);
    });
  });

  describe("published CRD definitions beyond kube's e2e", () => {
    it("with kube's API domain the documents carry kube's extension names only (no x-orch-* twins)", async () => {
      expect(JSON.stringify(await openAPIV2())).not.toContain('x-orch-');
      const crdDoc = (await openAPIV3('apiextensions.k8s.io', 'v1'))!;
      expect(JSON.stringify(crdDoc)).not.toContain('x-orch-');
      const props = Object.keys(crdDoc.components.schemas['io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps'].properties as Obj);
      expect(props.filter((p) => p.startsWith('x-'))).toEqual(props.filter((p) => p.startsWith('x-kubernetes-')));
      expect(props).toContain('x-kubernetes-preserve-unknown-fields');
    });

    it("a CRD's selectableFields are published on its definitions as x-kubernetes-selectable-fields", async () => {
      const c = await setupCRD(schemaCustomService, 'selectable', ['v1'], schemaCustomService, { selectableFields: ['.spec.dummy'] });
      const expected = [{ fieldPath: 'spec.dummy' }];
      expect((((await openAPIV2()).definitions as Obj)[definitionName(c, 'v1')] as Obj)['x-kubernetes-selectable-fields']).toEqual(expected);
      expect((await v3Definition(c, 'v1'))!['x-kubernetes-selectable-fields']).toEqual(expected);
      await cleanupCRD(c);
    });

    it("a CRD's listKind names its list: the list response and its definition, as kube's builder names it", async () => {
      const names = { plural: 'noxus', singular: 'nonenglishnoxu', kind: 'WishIHadChosenNoxu', listKind: 'NoxuItemList', shortNames: [] };
      const c = await setupCRD(schemaWaldo, 'list-kind', ['v1'], schemaWaldo, { names });
      const list = await call(t, 'GET', `/apis/${c.group}/v1/namespaces/${c.ns}/noxus`);
      expect(list.kind).toBe('NoxuItemList');
      const rev = c.group.split('.').reverse().join('.');
      const def = ((await openAPIV2()).definitions as Obj)[`${rev}.v1.NoxuItemList`] as Obj | undefined;
      expect(def?.['x-kubernetes-group-version-kind']).toEqual([{ group: c.group, version: 'v1', kind: 'NoxuItemList' }]);
      expect(((await openAPIV2()).definitions as Obj)[`${rev}.v1.WishIHadChosenNoxuList`]).toBeUndefined();
      const v3 = (await openAPIV3(c.group, 'v1'))!;
      expect(v3.paths[`/apis/${c.group}/v1/namespaces/{namespace}/noxus`].get.responses['200'].content['application/json'].schema.$ref).toBe(
        `#/components/schemas/${rev}.v1.NoxuItemList`,
      );
      await cleanupCRD(c);
    });

    it('the /openapi/v3 index hash and the /openapi/v2 ETag change when a CRD schema changes', async () => {
      const c = await setupCRD(schemaWaldo, 'hash', ['v1']);
      const indexUrl = async (path = `apis/${c.group}/v1`): Promise<string> => ((await call(t, 'GET', '/openapi/v3')).paths as Obj)[path].serverRelativeURL as string;
      const [before, coreBefore] = [await indexUrl(), await indexUrl('api/v1')];
      // kubectl caches the group-version document under its hashed URL
      expect(await ok(['explain', `${c.plural}.spec.dummy`])).toContain('Dummy property.');
      // the other tests change the document meanwhile: an ETag sent straight back is 304 once nothing changed in between
      const etag = await eventually(async () => {
        const v2 = await t.request('GET', '/openapi/v2', { headers: { Accept: 'application/json' } });
        const e = String(v2.headers.etag);
        expect(e).toMatch(/^"[0-9A-F]{128}"$/);
        return (await t.request('GET', '/openapi/v2', { headers: { Accept: 'application/json', 'If-None-Match': e } })).status === 304 && e;
      }, '304 for an unchanged /openapi/v2', WAIT);

      const cur = await call(t, 'GET', `${CRDS}/${c.crd.metadata.name}`);
      cur.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.dummy.description = 'Changed dummy property.';
      await call(t, 'PUT', `${CRDS}/${c.crd.metadata.name}`, cur);
      const after = await eventually(async () => {
        const u = await indexUrl();
        return u !== before && u;
      }, 'a new hash in the /openapi/v3 index', WAIT);
      // a client holding the old index is sent on to the new document (kube-openapi's 301)
      const stale = await t.request('GET', before);
      expect([stale.status, stale.headers.location]).toEqual([301, after]);
      // documents of other group versions keep their URLs: clients keep what they cached of them
      expect(await indexUrl('api/v1')).toBe(coreBefore);
      const doc = (await t.request('GET', after)).json<Obj>();
      expect(doc.components.schemas[definitionName(c, 'v1')].properties.spec.properties.dummy.description).toBe('Changed dummy property.');
      expect((await t.request('GET', '/openapi/v2', { headers: { Accept: 'application/json', 'If-None-Match': etag } })).status).toBe(200);
      // kubectl explain (openapi v3 through its cache) sees the change
      expect(await ok(['explain', `${c.plural}.spec.dummy`])).toContain('Changed dummy property.');
      await cleanupCRD(c);
    });
  });
});
