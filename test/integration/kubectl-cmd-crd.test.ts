// Port of kube's kubectl command tests for custom resources and discovery (kubernetes/kubernetes
// test/cmd/crd.sh and test/cmd/discovery.sh, with the api-resources lines of legacy-script.sh), run with
// the real kubectl 1.32 against orch with kube's group names. Ported:
//   run_crd_tests / run_non_native_resource_tests — CRDs whose kind and resource differ, `-o name` as
//     kind.group, the resource's other names (singular, plural.group, plural.version.group), every
//     printer, merge patches (also --record, null, -f), strategic merge refused locally, label and
//     annotate --all, describe, watch, deletion with background and orphan propagation, client-side
//     apply of fields added / changed / removed (one object and a List of two kinds), apply --prune with
//     an allowlist, and a namespace's deletion taking its custom resources;
//   run_RESTMapper_evaluation_tests, api-resources (every listable namespaced resource can be listed),
//   run_assert_short_name_tests / run_assert_singular_name_tests — discovery's exact JSON for
//     configmaps, and a CRD that claims `pod` as short or singular name does not shadow pods;
//   run_assert_categories_tests, run_resource_aliasing_tests (`all -l`), run_crd_deletion_recreation_tests
//     (a CRD re-made with another scope), run_kubectl_explain_tests, run_swagger_tests.
// Skipped: kube's v1beta1 CRD manifests (apiextensions v1beta1 is gone in 1.22+; the same CRDs are
// written as v1 with x-kubernetes-preserve-unknown-fields, as kube's current crd.sh does).

import { describe, expect, it } from 'vitest';
import { type Obj, cmdEnv } from '../helpers/kubectl-cmd.js';
import { startKubectl } from '../helpers/kubectl.js';

const env = cmdEnv();
const { ok, run, fails, json, file, until, api } = env;
/** kube's `{{range.items}}{{.metadata.name}}:{{end}}` */
const names = async (...args: string[]): Promise<string> => (await env.names(...args)).map((x) => `${x}:`).join('');
const namespace = env.newNs;

function crd(plural: string, group: string, kind: string, opts: { version?: string; scope?: string; singular?: string; shortNames?: string[]; schema?: Obj } = {}): Obj {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: opts.scope ?? 'Namespaced',
      names: { plural, kind, ...(opts.singular ? { singular: opts.singular } : {}), ...(opts.shortNames ? { shortNames: opts.shortNames } : {}) },
      versions: [{ name: opts.version ?? 'v1', served: true, storage: true, schema: { openAPIV3Schema: opts.schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  };
}
const established = (name: string): Promise<unknown> =>
  until(async () => ((await api(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`))!.status.conditions as Obj[] | undefined)?.some((c) => c.type === 'Established' && c.status === 'True'), `${name} established`);
/** the object at `path` is gone (404) */
const gone = (path: string, what: string): Promise<unknown> => until(async () => (await env.ts().request('GET', path)).status === 404, what);

function custom(kind: string, name: string, fields: Obj): Obj {
  return { apiVersion: 'company.com/v1', kind, metadata: { name, labels: { pruneGroup: 'true' } }, ...fields };
}
const fooFields = { someField: 'field1', otherField: 'field2', nestedField: { someSubfield: 'subfield1', otherSubfield: 'subfield2' } };

// one suite, so that all its tests run concurrently (sibling suites would run one after the other)
describe.concurrent('kubectl custom resources and discovery (test/cmd/crd.sh, discovery.sh)', () => {
  describe('kubectl custom resources (test/cmd/crd.sh)', () => {
    const defs = [
      crd('foos', 'company.com', 'Foo'),
      crd('bars', 'company.com', 'Bar'),
      crd('resources', 'mygroup.example.com', 'Kind', { version: 'v1alpha1', singular: 'resource' }),
      crd('validfoos', 'company.com', 'ValidFoo', { schema: { type: 'object', properties: { spec: { type: 'array', items: { type: 'number' } } } } }),
    ];
    /** run_crd_tests: the CRDs, made once; the custom resource tests below run concurrently, each in its namespace */
    let ready: Promise<void> | undefined;
    const crds = (): Promise<void> =>
      (ready ??= (async () => {
        for (const d of defs) await ok('create', '-f', await file(`${d.metadata.name}.json`, d));
        const ours = ((await json('customresourcedefinitions')).items as Obj[]).map((c) => c.metadata.name as string).filter((x) => /company\.com|mygroup/.test(x));
        expect(ours).toEqual(['bars.company.com', 'foos.company.com', 'resources.mygroup.example.com', 'validfoos.company.com']);
        await Promise.all(defs.map((d) => established(d.metadata.name)));
        for (const p of ['/apis/company.com/v1', '/apis/company.com/v1/foos', '/apis/company.com/v1/bars']) await ok('get', '--raw', p);
      })());
    const fooFile = (): Promise<string> => file('foo.json', custom('Foo', 'test', fooFields));
    const barFile = (): Promise<string> => file('bar.json', custom('Bar', 'test', fooFields));

    it('run_non_native_resource_tests: names, printers, patch, label, annotate, describe', async () => {
      await crds();
      const n = await namespace('non-native');
      expect(await Promise.all(['foos', 'bars', 'resources'].map((r) => names('-n', n, r)))).toEqual(['', '', '']);

      // a kind that is not its resource's name: -o name says kind.group
      const kind = { apiVersion: 'mygroup.example.com/v1alpha1', kind: 'Kind', metadata: { name: 'myobj' }, key: 'value' };
      await ok('-n', n, 'create', '-f', await file('resource.json', kind));
      for (const r of ['resource/myobj', 'resources/myobj', 'kind.mygroup.example.com/myobj']) expect(await ok('-n', n, 'get', r, '-o', 'name')).toBe('kind.mygroup.example.com/myobj\n');
      await ok('-n', n, 'delete', 'resources', 'myobj', '--cascade=background');
      await until(async () => (await names('-n', n, 'resources')) === '', 'myobj gone');

      const fooPath = await fooFile();
      await ok('-n', n, 'create', '-f', fooPath);
      for (const r of ['foos', 'foo', 'foos.company.com', 'foos.v1.company.com']) expect(await names('-n', n, r)).toBe('test:');
      const printed = await Promise.all([
        ok('-n', n, 'get', 'foos'),
        ok('-n', n, 'get', 'foos/test', '-o', 'wide'),
        ok('-n', n, 'get', 'foos', '-o', 'name'),
        ok('-n', n, 'get', 'foos/test', '-o', 'yaml'),
        ok('-n', n, 'get', 'foos', '-o', 'jsonpath={.items[*].someField}', '--allow-missing-template-keys=false'),
        ok('-n', n, 'get', 'foos/test', '-o', 'jsonpath={.someField}', '--allow-missing-template-keys=false'),
        ok('-n', n, 'get', 'foos', '-o', 'go-template={{range .items}}{{.someField}}{{end}}', '--allow-missing-template-keys=false'),
        ok('-n', n, 'get', 'foos/test', '-o', 'go-template={{.someField}}', '--allow-missing-template-keys=false'),
      ]);
      expect(printed[0]).toMatch(/^NAME\s+AGE\ntest\s+\d+s\n$/);
      expect(printed[1]).toMatch(/^NAME\s+AGE\ntest\s+\d+s\n$/);
      expect(printed[2]).toBe('foo.company.com/test\n');
      expect(printed[3]).toContain('someField: field1');
      expect(printed.slice(4)).toEqual(['field1', 'field1', 'field1', 'field1']);

      const patched = async (): Promise<unknown> => (await json('-n', n, 'foos/test')).patched;
      await ok('-n', n, 'patch', 'foos/test', '-p', '{"patched":"value1"}', '--type=merge');
      expect(await patched()).toBe('value1');
      await ok('-n', n, 'patch', 'foos/test', '-p', '{"patched":"value2"}', '--type=merge', '--record');
      expect(await patched()).toBe('value2');
      await ok('-n', n, 'patch', 'foos/test', '-p', '{"patched":null}', '--type=merge', '--record');
      expect(await patched()).toBeUndefined();
      const local = await file('foo-live.json', await ok('-n', n, 'get', 'foos/test', '-o', 'json'));
      expect(await fails('-n', n, 'patch', '--local', '-f', local, '-p', '{"patched":"value3"}')).toContain('try --type merge');
      expect(JSON.parse(await ok('-n', n, 'patch', '--local', '-f', local, '-p', '{"patched":"value3"}', '--type=merge', '-o', 'json')).patched).toBe('value3');
      expect(await patched()).toBeUndefined();
      await ok('-n', n, 'patch', '--record', '-f', local, '-p', '{"patched":"value3"}', '--type=merge', '-o', 'json');
      expect(await patched()).toBe('value3');

      await ok('-n', n, 'label', 'foos', '--all', 'listlabel=true');
      await ok('-n', n, 'label', 'foo/test', 'itemlabel=true');
      await ok('-n', n, 'annotate', 'foos', '--all', 'listannotation=true');
      await ok('-n', n, 'annotate', 'foo/test', 'itemannotation=true');
      const described = await ok('-n', n, 'describe', 'foos');
      for (const s of ['listlabel=true', 'itemlabel=true', 'listannotation: true', 'itemannotation: true']) expect(described).toContain(s);
      expect(await ok('-n', n, 'describe', 'foos/test')).toMatch(/Kind:\s+Foo/);
      await ok('-n', n, 'delete', 'foos', 'test', '--cascade=background');
      await until(async () => (await names('-n', n, 'foos')) === '', 'foo gone');

    });

    it('run_non_native_resource_tests: watch, and client-side apply of one object and of a List', async () => {
      await crds();
      const n = await namespace('non-native-apply');
      // watch: a change made after the watch started arrives as a line of -o name
      const [fooF, barF] = [await fooFile(), await barFile()];
      await ok('-n', n, 'create', '-f', barF);
      expect(await names('-n', n, 'bars')).toBe('test:');
      const watch = startKubectl(env.ts().server.kubeconfigPath, ['-n', n, 'get', 'bars', '--request-timeout=1m', '--watch-only', '-o', 'name']);
      try {
        let tries = 0;
        await until(async () => {
          await ok('-n', n, 'patch', 'bars/test', '-p', `{"patched":"${++tries}"}`, '--type=merge');
          return watch.out().includes('bar.company.com/test\n');
        }, 'the watch event');
      } finally {
        await watch.stop();
      }
      await ok('-n', n, 'delete', 'bars', 'test', '--cascade=orphan');
      await until(async () => (await names('-n', n, 'bars')) === '', 'bar gone');

      // client-side apply: re-apply, change, remove and add a nested field
      const foo = async (): Promise<Obj> => json('-n', n, 'foos/test');
      await ok('-n', n, 'apply', '-f', fooF);
      await ok('-n', n, 'apply', '-f', fooF);
      expect(await foo()).toMatchObject(fooFields);
      await ok('-n', n, 'apply', '-f', await file('foo-updated.json', custom('Foo', 'test', { ...fooFields, nestedField: { someSubfield: 'modifiedSubfield', otherSubfield: 'subfield2' } })));
      expect((await foo()).nestedField).toEqual({ someSubfield: 'modifiedSubfield', otherSubfield: 'subfield2' });
      await ok('-n', n, 'apply', '-f', await file('foo-deleted.json', custom('Foo', 'test', { ...fooFields, nestedField: { someSubfield: 'modifiedSubfield' } })));
      expect((await foo()).nestedField).toEqual({ someSubfield: 'modifiedSubfield' });
      await ok('-n', n, 'apply', '-f', await file('foo-added.json', custom('Foo', 'test', { ...fooFields, nestedField: { someSubfield: 'modifiedSubfield', newSubfield: 'subfield3' } })));
      expect((await foo()).nestedField).toEqual({ someSubfield: 'modifiedSubfield', newSubfield: 'subfield3' });
      await ok('-n', n, 'delete', '-f', fooF);
      expect(await names('-n', n, 'foos')).toBe('');

      // a List of two kinds
      const list = (fields: Obj): Obj => ({ apiVersion: 'v1', kind: 'List', items: [custom('Foo', 'test-list', fields), custom('Bar', 'test-list', fields)] });
      const both = async (): Promise<Obj[]> => Promise.all([json('-n', n, 'foos/test-list'), json('-n', n, 'bars/test-list')]);
      const listFile = await file('list.json', list({ someField: 'field1' }));
      await ok('-n', n, 'apply', '-f', listFile);
      await ok('-n', n, 'apply', '-f', listFile);
      expect((await both()).map((o) => o.someField)).toEqual(['field1', 'field1']);
      await ok('-n', n, 'apply', '-f', await file('list-updated.json', list({ someField: 'modifiedField', otherField: 'field2' })));
      expect((await both()).map((o) => [o.someField, o.otherField])).toEqual([['modifiedField', 'field2'], ['modifiedField', 'field2']]);
      await ok('-n', n, 'apply', '-f', await file('list-deleted.json', list({ someField: 'modifiedField' })));
      expect((await both()).map((o) => o.otherField)).toEqual([undefined, undefined]);
      await ok('-n', n, 'apply', '-f', await file('list-added.json', list({ someField: 'modifiedField', newField: 'field3' })));
      expect((await both()).map((o) => o.newField)).toEqual(['field3', 'field3']);
      await ok('-n', n, 'delete', '-f', listFile);
      expect([await names('-n', n, 'foos'), await names('-n', n, 'bars')]).toEqual(['', '']);

    });

    it('run_non_native_resource_tests: apply --prune, and a namespace deletion', async () => {
      await crds();
      const n = await namespace('non-native-prune');
      const [foo, bar] = [await fooFile(), await barFile()];
      // apply --prune over two custom kinds
      const allow = ['--prune-allowlist=company.com/v1/Foo', '--prune-allowlist=company.com/v1/Bar'];
      await ok('-n', n, 'apply', '--prune', '-l', 'pruneGroup=true', '-f', foo, ...allow);
      expect([await names('-n', n, 'foos'), await names('-n', n, 'bars')]).toEqual(['test:', '']);
      await ok('-n', n, 'apply', '--prune', '-l', 'pruneGroup=true', '-f', bar, ...allow);
      await until(async () => (await names('-n', n, 'foos')) === '', 'foo pruned');
      expect(await names('-n', n, 'bars')).toBe('test:');
      await ok('-n', n, 'delete', '-f', bar);

      // a namespace's deletion takes its custom resources
      await ok('create', 'namespace', 'non-native-resources');
      await ok('create', '-f', bar, '--namespace=non-native-resources');
      expect(((await json('bars', '--namespace=non-native-resources')).items as Obj[]).length).toBe(1);
      await ok('delete', 'namespace', 'non-native-resources', '--wait=false');
      await gone('/api/v1/namespaces/non-native-resources', 'the namespace gone');
      expect((await run('get', 'namespace', 'non-native-resources')).stderr).toContain('namespaces "non-native-resources" not found');
    });
  });

  describe('kubectl discovery (test/cmd/discovery.sh)', () => {
    it('run_RESTMapper_evaluation_tests and api-resources: every listable namespaced resource lists', async () => {
      expect(await fails('get', 'unknownresourcetype')).toContain("the server doesn't have a resource type");
      // the custom resources of the concurrent tests come and go: the built-in ones are listed
      const resources = (await ok('api-resources', '--verbs=list', '--namespaced', '-o', 'name')).trim().split('\n').filter((r) => !/\.(test|company|example)\.com$/.test(r));
      expect(resources).toEqual(expect.arrayContaining(['pods', 'configmaps', 'deployments.apps', 'cronjobs.batch', 'events.events.k8s.io', 'leases.coordination.k8s.io']));
      const all = await run('get', resources.join(','), '-o', 'name', '-A');
      expect(all.stderr).toBe('');
      expect(all.code).toBe(0);
    });

    it('run_assert_short_name_tests and run_assert_categories_tests: discovery of core kinds', async () => {
      const core = await ok('get', '--raw=/api/v1');
      expect(core).toContain('{"name":"configmaps","singularName":"configmap","namespaced":true,"kind":"ConfigMap","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"shortNames":["cm"],"storageVersionHash":');
      expect(/"name":"pods"[^}]*}/.exec(core)?.[0]).toContain('"categories":["all"]');
      // kube's namespaces have no deletecollection (and a DELETE of the collection is 405)
      expect(core).toContain('{"name":"namespaces","singularName":"namespace","namespaced":false,"kind":"Namespace","verbs":["create","delete","get","list","patch","update","watch"],"shortNames":["ns"],');
      // sub-resources answer as kube names their kinds
      expect(core).toContain('{"name":"serviceaccounts/token","singularName":"","namespaced":true,"group":"authentication.k8s.io","version":"v1","kind":"TokenRequest","verbs":["create"]}');
      for (const [sub, kind] of [['pods/proxy', 'PodProxyOptions'], ['nodes/proxy', 'NodeProxyOptions'], ['services/proxy', 'ServiceProxyOptions'], ['pods/log', 'Pod'], ['pods/eviction', 'Eviction']]) {
        expect(new RegExp(`"name":"${sub}",[^}]*"kind":"${kind}"`).test(core), `${sub} as ${kind}`).toBe(true);
      }
      const podSubs = (JSON.parse(core) as Obj).resources.map((r: Obj) => r.name as string).filter((x: string) => x.startsWith('pods/'));
      expect(podSubs).toEqual(['attach', 'binding', 'ephemeralcontainers', 'eviction', 'exec', 'log', 'portforward', 'proxy', 'status'].map((x) => `pods/${x}`));
      expect(await fails('delete', '--raw', '/api/v1/namespaces')).toContain('the server does not allow this method on the requested resource');
    });

    for (const [what, names_] of [['short', { singular: 'example', shortNames: ['pod'] }], ['singular', { singular: 'pod' }]] as [string, { singular: string; shortNames?: string[] }][]) {
      it(`run_assert_${what}_name_tests: a CRD whose ${what} name is pod does not shadow pods`, async () => {
        const group = `${what}.test.com`;
        const def = crd('examples', group, 'Example', { ...names_, schema: { type: 'object', properties: { spec: { type: 'object', properties: { test: { type: 'string' } } } } } });
        const n = await namespace(`${what}-name`);
        expect(await ok('-n', n, 'get', 'pod')).not.toContain('test-crd-example');
        await ok('create', '-f', await file(`${what}-crd.json`, def));
        await established(`examples.${group}`);
        await ok('-n', n, 'create', '-f', await file(`${what}-ex.json`, { apiVersion: `${group}/v1`, kind: 'Example', metadata: { name: 'test-crd-example' }, spec: { test: 'test' } }));
        for (let pass = 0; pass < 2; pass++) {
          expect(await ok('-n', n, 'get', `examples.${group}`)).toContain('test-crd-example');
          expect(await run('-n', n, 'get', 'pod')).not.toMatchObject({ stdout: expect.stringContaining('test-crd-example') });
          if (pass === 0) await ok('api-resources');
        }
        await ok('-n', n, 'delete', `examples.${group}/test-crd-example`);
        await ok('delete', 'customresourcedefinition', `examples.${group}`);
      });
    }

    it('run_resource_aliasing_tests: all -l', async () => {
      const n = await namespace('alias');
      const labels = { app: 'cassandra' };
      await ok('-n', n, 'create', '-f', await file('cassandra-rc.json', {
        apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'cassandra', labels },
        spec: { replicas: 1, selector: labels, template: { metadata: { labels }, spec: { containers: [{ name: 'cassandra', image: 'registry.k8s.io/cassandra' }] } } },
      }));
      await ok('-n', n, 'create', '-f', await file('cassandra-svc.json', {
        apiVersion: 'v1', kind: 'Service', metadata: { name: 'cassandra', labels }, spec: { ports: [{ port: 9042 }], selector: labels },
      }));
      await until(async () => {
        const kinds = ((await json('-n', n, 'all', '-l', 'app=cassandra')).items as Obj[]).map((o) => `${o.kind}:${o.metadata.labels.app}`);
        return kinds.join(',') === 'Pod:cassandra,ReplicationController:cassandra,Service:cassandra';
      }, 'the pod, the controller and the service under all');
      await ok('-n', n, 'delete', 'all', '-l', 'app=cassandra');
    });

    it('run_crd_deletion_recreation_tests: a CRD made again with another scope', async () => {
      const n = await namespace('recreate');
      const clusterDef = crd('examples', 'recreate.test.com', 'Example', { scope: 'Cluster' });
      const nsDef = crd('examples', 'recreate.test.com', 'Example');
      const ex = { apiVersion: 'recreate.test.com/v1', kind: 'Example', metadata: { name: 'test' } };
      const clusterFile = await file('crd-cluster.json', clusterDef);
      expect(await ok('apply', '-f', clusterFile)).toContain('created');
      await established('examples.recreate.test.com');
      expect(await ok('apply', '-f', await file('ex-cluster.json', ex))).toContain('created');
      expect(await ok('delete', '-f', clusterFile)).toContain('deleted');
      await gone('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/examples.recreate.test.com', 'the CRD gone');
      await ok('api-resources');
      expect(await ok('apply', '-f', await file('crd-ns.json', nsDef))).toContain('created');
      await established('examples.recreate.test.com');
      expect(await ok('-n', n, 'apply', '-f', await file('ex-ns.json', ex))).toContain('created');
      expect((await json('-n', n, 'examples.recreate.test.com', 'test')).metadata.namespace).toBe(n);
      await ok('delete', 'crd', 'examples.recreate.test.com');
    });

    it('run_kubectl_explain_tests and run_swagger_tests', async () => {
      const [pods, po, message, cronjob] = await Promise.all([ok('explain', 'pods'), ok('explain', 'po'), ok('explain', 'po.status.message'), ok('explain', 'cronjob')]);
      expect(pods).toMatch(/^KIND:\s+Pod\nVERSION:\s+v1\n/);
      expect(po).toBe(pods);
      expect(message).toMatch(/FIELD:\s+message <string>/);
      expect(cronjob).toMatch(/^GROUP:\s+batch\nKIND:\s+CronJob\nVERSION:\s+v1\n/);
      const v2 = (await env.ts().request('GET', '/openapi/v2')).text;
      for (const s of ['list of returned', 'List of services', 'Watch for changes to the described resources']) expect(v2).toContain(s);
    });
  });
});
