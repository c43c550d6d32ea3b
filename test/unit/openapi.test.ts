import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aggregatedDiscovery, apiGroup, apiGroupList, apiResourceList, apiVersions, compareVersions, serveDiscovery, storageVersionHash } from '../../src/registry/discovery.js';
import { builtinDefinitions, builtinSchemaDefinitions } from '../../src/registry/kinds/index.js';
import { Registry } from '../../src/registry/registry.js';
import { definitionName } from '../../src/machinery/schema/naming.js';
import { OpenAPIDocuments, buildOpenAPIV2 } from '../../src/registry/openapi.js';
import { customDefinitions } from '../../src/registry/crd/convert.js';

const run = promisify(execFile);
type J = Record<string, any>;

function newRegistry(domain = 'orch.io'): Registry {
  return new Registry(domain, builtinSchemaDefinitions(domain), builtinDefinitions(domain));
}

/** every `$ref` string anywhere in a document */
function refs(v: unknown, out: string[] = []): string[] {
  if (Array.isArray(v)) for (const x of v) refs(x, out);
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (k === '$ref' && typeof x === 'string') out.push(x);
      else refs(x, out);
    }
  }
  return out;
}

describe('OpenAPI v2', () => {
  const reg = newRegistry();
  const doc = buildOpenAPIV2(reg) as J;

  it('is a Swagger 2.0 document whose refs all resolve', () => {
    expect(doc.swagger).toBe('2.0');
    const all = refs(doc);
    expect(all.length).toBeGreaterThan(100);
    for (const r of all) {
      expect(r.startsWith('#/definitions/')).toBe(true);
      expect(doc.definitions[r.slice('#/definitions/'.length)], r).toBeDefined();
    }
  });

  it('names definitions from the reversed domain and tags every kind with its GVK (both twins)', () => {
    for (const d of reg.all()) {
      const name = definitionName('orch.io', d.group, d.version, d.kind);
      const def = doc.definitions[name];
      expect(def, name).toBeDefined();
      const gvk = [{ group: d.group, kind: d.kind, version: d.version }];
      expect(def['x-kubernetes-group-version-kind']).toEqual(gvk);
      expect(def['x-orch-group-version-kind']).toEqual(gvk);
      if (d.verbs && !d.verbs.includes('list')) expect(doc.definitions[`${name}List`], `${name}List`).toBeUndefined();
      else expect(doc.definitions[`${name}List`]['x-kubernetes-group-version-kind'][0].kind).toBe(`${d.kind}List`);
    }
    expect(doc.definitions['io.orch.api.core.v1.ConfigMap']).toBeDefined();
    expect(doc.definitions['io.orch.api.rbac.v1.RoleBinding']).toBeDefined();
    // the shared meta kinds, as Kubernetes tags them: Status as core v1, DeleteOptions per served group version
    expect(doc.definitions['io.orch.apimachinery.pkg.apis.meta.v1.Status']['x-kubernetes-group-version-kind']).toEqual([{ group: '', kind: 'Status', version: 'v1' }]);
    const deleteOptions = doc.definitions['io.orch.apimachinery.pkg.apis.meta.v1.DeleteOptions']['x-kubernetes-group-version-kind'];
    expect(deleteOptions).toContainEqual({ group: 'apps', kind: 'DeleteOptions', version: 'v1' });
    expect(deleteOptions).toContainEqual({ group: '', kind: 'DeleteOptions', version: 'v1' });
    expect(doc.definitions['io.orch.apimachinery.pkg.apis.meta.v1.ObjectMeta']).toBeDefined();
  });

  it('emits each x-orch marker with its x-kubernetes twin', () => {
    const spec = doc.definitions['io.orch.api.core.v1.PodSpec'];
    expect(spec.properties.containers['x-kubernetes-patch-merge-key']).toBe('name');
    expect(spec.properties.containers['x-orch-patch-merge-key']).toBe('name');
    expect(spec.properties.containers['x-kubernetes-list-type']).toBe('map');
    expect(spec.properties.containers['x-kubernetes-list-map-keys']).toEqual(['name']);
    const ports = doc.definitions['io.orch.api.core.v1.Container'].properties.ports;
    expect(ports['x-kubernetes-patch-merge-key']).toBe('containerPort');
    expect(ports['x-kubernetes-list-map-keys']).toEqual(['containerPort', 'protocol']);
    // a preserved sub-structure (the volume sources and affinity have schemas since the protobuf audits)
    expect(doc.definitions['io.orch.apimachinery.pkg.apis.meta.v1.WatchEvent'].properties.object.$ref).toBe('#/definitions/io.orch.apimachinery.pkg.runtime.RawExtension');
    expect(doc.definitions['io.orch.apimachinery.pkg.runtime.RawExtension']['x-kubernetes-preserve-unknown-fields']).toBe(true);
    expect(doc.definitions['io.orch.api.core.v1.Volume'].properties.csi.$ref).toBe('#/definitions/io.orch.api.core.v1.CSIVolumeSource');
    expect(doc.definitions['io.orch.api.core.v1.CSIVolumeSource'].properties.driver.type).toBe('string');
    expect(spec.properties.affinity.$ref).toBe('#/definitions/io.orch.api.core.v1.Affinity');
    expect(doc.definitions['io.orch.apimachinery.pkg.util.intstr.IntOrString']).toMatchObject({ type: 'string', format: 'int-or-string', 'x-kubernetes-int-or-string': true });
  });

  it('has every resource path with actions and the write query parameters', () => {
    const item = doc.paths['/api/v1/namespaces/{namespace}/configmaps/{name}'];
    expect(Object.keys(item).sort()).toEqual(['delete', 'get', 'parameters', 'patch', 'put']);
    expect(item.patch['x-kubernetes-action']).toBe('patch');
    expect(item.patch['x-kubernetes-group-version-kind']).toEqual({ group: '', kind: 'ConfigMap', version: 'v1' });
    const names = (op: J) => op.parameters.map((p: J) => p.name);
    expect(names(item.patch)).toEqual(expect.arrayContaining(['body', 'dryRun', 'fieldManager', 'fieldValidation', 'force']));
    expect(names(item.put)).toEqual(expect.arrayContaining(['dryRun', 'fieldManager', 'fieldValidation']));
    const coll = doc.paths['/api/v1/namespaces/{namespace}/configmaps'];
    expect(names(coll.get)).toEqual(expect.arrayContaining(['limit', 'continue', 'labelSelector', 'fieldSelector', 'watch', 'resourceVersion', 'resourceVersionMatch']));
    // the phrases kubectl's own swagger check greps /openapi/v2 for
    const text = JSON.stringify(doc);
    for (const phrase of ['list of returned', 'List of services', 'Watch for changes to the described resources']) expect(text).toContain(phrase);
    expect(coll.post['x-kubernetes-action']).toBe('post');
    expect(coll.delete['x-kubernetes-action']).toBe('deletecollection');
    expect(doc.paths['/api/v1/configmaps'].get.operationId).toBe('listCoreV1ConfigMapForAllNamespaces');
    expect(doc.paths['/api/v1/namespaces/{namespace}/pods/{name}/status'].patch).toBeDefined();
    expect(doc.paths['/api/v1/nodes/{name}'].get.operationId).toBe('readCoreV1Node');
    expect(doc.paths['/apis/rbac.authorization.orch.io/v1/clusterrolebindings/{name}'].patch.operationId).toBe('patchRbacAuthorizationV1ClusterRoleBinding');
    expect(item.parameters.map((p: J) => p.name)).toEqual(['name', 'namespace', 'pretty']);
  });
});

describe('OpenAPI v3', () => {
  const reg = newRegistry();
  const docs = new OpenAPIDocuments(reg);

  it('indexes one document per group-version with matching SHA-512 hashes', () => {
    const index = JSON.parse(docs.v3Index().json) as J;
    expect(Object.keys(index.paths).sort()).toEqual([
      'api/v1', 'apis/apiregistration.orch.io/v1', 'apis/apps/v1', 'apis/autoscaling/v1', 'apis/autoscaling/v2', 'apis/batch/v1', 'apis/certificates.orch.io/v1', 'apis/coordination.orch.io/v1',
      'apis/discovery.orch.io/v1', 'apis/events.orch.io/v1', 'apis/flowcontrol.apiserver.orch.io/v1', 'apis/networking.orch.io/v1', 'apis/node.orch.io/v1', 'apis/policy/v1', 'apis/rbac.authorization.orch.io/v1',
      'apis/scheduling.orch.io/v1', 'apis/storage.orch.io/v1',
    ]);
    for (const [path, entry] of Object.entries<J>(index.paths)) {
      const served = docs.v3(path)!;
      const hash = createHash('sha512').update(served.json).digest('hex').toUpperCase();
      expect(entry.serverRelativeURL).toBe(`/openapi/v3/${path}?hash=${hash}`);
      expect(served.hash).toBe(hash);
    }
  });

  it('every document resolves its refs and carries the GVK of its kinds', () => {
    for (const [path, defs] of [['api/v1', reg.all().filter((d) => d.group === '')], ['apis/rbac.authorization.orch.io/v1', reg.all().filter((d) => d.group.startsWith('rbac.'))]] as const) {
      const doc = docs.v3(path)!.doc as J;
      expect(doc.openapi).toBe('3.0.0');
      for (const r of refs(doc)) {
        expect(r.startsWith('#/components/schemas/')).toBe(true);
        expect(doc.components.schemas[r.slice('#/components/schemas/'.length)], r).toBeDefined();
      }
      for (const d of defs) {
        const s = doc.components.schemas[definitionName('orch.io', d.group, d.version, d.kind)];
        expect(s['x-kubernetes-group-version-kind']).toEqual([{ group: d.group, kind: d.kind, version: d.version }]);
        expect(s['x-orch-group-version-kind']).toEqual([{ group: d.group, kind: d.kind, version: d.version }]);
      }
    }
  });

  it('PATCH operations carry the GVK and the fieldValidation query parameter (kubectl\'s server-side validation probe)', () => {
    const doc = docs.v3('api/v1')!.doc as J;
    let patches = 0;
    for (const item of Object.values<J>(doc.paths)) {
      if (!item.patch) continue;
      patches++;
      expect(item.patch['x-kubernetes-group-version-kind'].version).toBe('v1');
      expect(item.patch.parameters.some((p: J) => p.name === 'fieldValidation' && p.in === 'query')).toBe(true);
      expect(Object.keys(item.patch.requestBody.content)).toContain('application/apply-patch+yaml');
    }
    expect(patches).toBeGreaterThanOrEqual(8);
  });

  it('caches documents until the definitions change', () => {
    const a = docs.v3('api/v1')!;
    expect(docs.v3('api/v1')).toBe(a);
    const v2 = docs.v2();
    expect(docs.v2()).toBe(v2);
    const before = docs.v3Index().json;
    const pod = reg.lookup('', 'v1', 'pods')!;
    reg.add({ ...pod, group: 'example.com', kind: 'Widget', resource: 'widgets', singular: 'widget', shortNames: ['wd'] });
    expect(docs.v3Index().json).not.toBe(before);
    expect(docs.v3('apis/example.com/v1')!.doc).toHaveProperty(['components', 'schemas', 'com.example.v1.Widget']);
    expect(docs.v2()).not.toBe(v2);
    expect(docs.v3('apis/nope/v1')).toBeUndefined();
  });

  it.each(['orch.io', 'k8s.io'])('rebuilds only what a CRD write changed, and serves what a full build gives (--api-domain %s)', (domain) => {
    const r = newRegistry(domain);
    const d = new OpenAPIDocuments(r, { title: 't' });
    const crd = (group: string, kind: string, description: string) =>
      customDefinitions(
        {
          group,
          scope: 'Namespaced',
          names: { plural: `${kind.toLowerCase()}s`, kind },
          versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', description, properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } } }],
        },
        domain,
        { plural: `${kind.toLowerCase()}s`, kind },
      );
    for (const def of [...crd('a.example.com', 'Apple', 'a'), ...crd('b.example.com', 'Berry', 'b')]) r.add(def);
    const core = d.v3('api/v1')!;
    const apple = d.v3('apis/a.example.com/v1')!;
    const berry = d.v3('apis/b.example.com/v1')!;
    expect(d.v2().json).toBe(JSON.stringify(buildOpenAPIV2(r, { title: 't' })));
    // Berry's schema changes: the registrar replaces its definitions
    r.remove('b.example.com', 'v1', 'berrys');
    for (const def of crd('b.example.com', 'Berry', 'changed')) r.add(def);
    expect(d.v3('api/v1')).toBe(core);
    expect(d.v3('apis/a.example.com/v1')).toBe(apple);
    expect(d.v3('apis/b.example.com/v1')!.hash).not.toBe(berry.hash);
    expect(JSON.parse(d.v3Index().json).paths['apis/b.example.com/v1'].serverRelativeURL).toBe(`/openapi/v3/apis/b.example.com/v1?hash=${d.v3('apis/b.example.com/v1')!.hash}`);
    expect(d.v2().json).toBe(JSON.stringify(buildOpenAPIV2(r, { title: 't' })));
    expect(d.v2().json).toContain('"changed"');
    // a custom group under the API domain keeps kube's reversed-group name (not the built-in `<rev>.api.<x>` one)
    for (const def of crd(`snapshot.storage.${domain}`, 'VolumeSnapshot', 's')) r.add(def);
    const rev = domain.split('.').reverse().join('.');
    expect(d.v3(`apis/snapshot.storage.${domain}/v1`)!.doc).toHaveProperty(['components', 'schemas', `${rev}.storage.snapshot.v1.VolumeSnapshot`]);
    expect(d.v2().doc).toHaveProperty(['definitions', `${rev}.storage.snapshot.v1.VolumeSnapshotList`]);
    // only kube's extension names under kube's domain
    expect(d.v2().json.includes('x-orch-')).toBe(domain === 'orch.io');
    expect(d.v3('apis/b.example.com/v1')!.json.includes('x-orch-')).toBe(domain === 'orch.io');
  });

  it.each([['orch.io', 'application/vnd.orch.protobuf'], ['k8s.io', 'application/vnd.kubernetes.protobuf']])('lists the protobuf media type by its name under the domain (--api-domain %s: %s), plain and as a watch stream', (domain, protobuf) => {
    const d = new OpenAPIDocuments(newRegistry(domain), { title: 't' });
    const pods = `/api/v1/namespaces/{namespace}/pods`;
    const v3 = d.v3('api/v1')!.doc as J;
    expect(Object.keys(v3.paths[`${pods}/{name}`].get.responses['200'].content)).toEqual(['application/json', 'application/yaml', protobuf]);
    expect(Object.keys(v3.paths[pods].get.responses['200'].content)).toEqual(['application/json', 'application/yaml', protobuf, 'application/json;stream=watch', `${protobuf};stream=watch`]);
    expect((d.v2().doc as J).paths[`${pods}/{name}`].get.produces).toEqual(['application/json', 'application/yaml', protobuf]);
    const other = domain === 'k8s.io' ? 'vnd.orch.protobuf' : 'vnd.kubernetes.protobuf';
    expect(d.v2().json.includes(other)).toBe(false);
    expect(d.v3('apis/apps/v1')!.json.includes(other)).toBe(false);
  });
});

describe('discovery', () => {
  const defs = builtinDefinitions('orch.io');

  it('builds /api, /api/v1 and the group documents', () => {
    expect(apiVersions(defs, '10.0.0.1:6443')).toEqual({ kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '10.0.0.1:6443' }] });
    const core = apiResourceList(defs, '', 'v1')!;
    expect(core.groupVersion).toBe('v1');
    const pods = core.resources.find((r) => r.name === 'pods')!;
    expect(pods).toMatchObject({ singularName: 'pod', namespaced: true, kind: 'Pod', shortNames: ['po'], categories: ['all'] });
    expect(pods.verbs).toEqual(['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
    expect(pods.storageVersionHash).toBe(storageVersionHash('', 'v1', 'Pod'));
    expect(core.resources.find((r) => r.name === 'pods/status')).toMatchObject({ kind: 'Pod', verbs: ['get', 'patch', 'update'], singularName: '' });
    expect(core.resources.find((r) => r.name === 'namespaces')!.namespaced).toBe(false);
    const groups = apiGroupList(defs) as J;
    expect(groups.groups.map((g: J) => g.name)).toEqual([
      'coordination.orch.io', 'events.orch.io', 'rbac.authorization.orch.io', 'apps', 'batch', 'networking.orch.io', 'discovery.orch.io',
      'policy', 'autoscaling', 'storage.orch.io', 'scheduling.orch.io', 'certificates.orch.io', 'apiregistration.orch.io', 'node.orch.io', 'flowcontrol.apiserver.orch.io',
    ]);
    expect(groups.groups[0].preferredVersion).toEqual({ groupVersion: 'coordination.orch.io/v1', version: 'v1' });
    expect(apiGroup(defs, 'rbac.authorization.orch.io')!.versions).toEqual([{ groupVersion: 'rbac.authorization.orch.io/v1', version: 'v1' }]);
    expect(apiResourceList(defs, 'nope', 'v1')).toBeUndefined();
    expect(serveDiscovery({ all: () => defs }, '/apis/events.orch.io/v1')).toMatchObject({ groupVersion: 'events.orch.io/v1' });
    expect(serveDiscovery({ all: () => defs }, '/healthz')).toBeUndefined();
  });

  it("lists the groups in kube's order under the registry's domain: priority, then name; custom resource groups after kube's own", () => {
    // kube-apiserver 1.32's /apis (SortedByGroupAndVersion over DefaultGenericAPIServicePriorities)
    const kube = ['apiregistration', 'apps', 'events', 'authentication', 'authorization', 'autoscaling', 'batch', 'certificates', 'networking', 'policy', 'rbac.authorization', 'storage', 'admissionregistration', 'apiextensions', 'scheduling', 'coordination', 'node', 'discovery', 'flowcontrol.apiserver'];
    const named = (g: string) => (['apps', 'autoscaling', 'batch', 'policy'].includes(g) ? g : `${g}.k8s.io`);
    const k8s = builtinDefinitions('k8s.io');
    const crd = (group: string) => ({ ...k8s.find((d) => d.resource === 'configmaps')!, group, version: 'v1', resource: 'widgets', kind: 'Widget', customResource: true });
    const all = [crd('zeta.example.com'), ...k8s, crd('alpha.example.com')];
    const served = new Set(all.map((d) => d.group));
    const expected = [...kube.map(named).filter((g) => served.has(g)), 'alpha.example.com', 'zeta.example.com'];
    expect(expected.length).toBeGreaterThan(12);
    expect(((apiGroupList(all, 'k8s.io') as J).groups as J[]).map((g) => g.name)).toEqual(expected);
    expect(((serveDiscovery({ all: () => all, apiDomain: 'k8s.io' }, '/apis') as J).groups as J[]).map((g) => g.name)).toEqual(expected);
    expect(((aggregatedDiscovery(all, 'apis', 'v2', 'k8s.io') as J).items as J[]).map((i) => i.metadata.name)).toEqual(expected);
  });

  it('writes each resource with the keys in the order of kube APIResource fields', () => {
    // kubectl's own tests match the JSON text of /api/v1 (`..."shortNames":["cm"],"storageVersionHash":...`)
    const core = apiResourceList(defs, '', 'v1')!;
    expect(Object.keys(core.resources.find((r) => r.name === 'pods')!)).toEqual(['name', 'singularName', 'namespaced', 'kind', 'verbs', 'shortNames', 'categories', 'storageVersionHash']);
    expect(JSON.stringify(core)).toContain('"verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"shortNames":["cm"],"storageVersionHash":');
    const eviction = core.resources.find((r) => r.name === 'pods/eviction')!;
    expect(Object.keys(eviction)).toEqual(['name', 'singularName', 'namespaced', 'group', 'version', 'kind', 'verbs']);
  });

  it('prefers GA over beta over alpha', () => {
    expect(['v1alpha1', 'v2beta1', 'v1', 'v1beta2', 'v2', 'foo'].sort(compareVersions)).toEqual(['v2', 'v1', 'v2beta1', 'v1beta2', 'v1alpha1', 'foo']);
  });
});

const hasKubectl = ['/usr/bin/kubectl', '/usr/local/bin/kubectl'].some((p) => existsSync(p));

describe.skipIf(!hasKubectl)('kubectl against the served documents', () => {
  let server: http.Server;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    const reg = newRegistry();
    const docs = new OpenAPIDocuments(reg);
    server = http.createServer((req, res) => {
      const p = new URL(req.url ?? '/', 'http://x').pathname;
      let body: string | undefined;
      if (p === '/openapi/v2') body = docs.v2().json;
      else if (p === '/openapi/v3') body = docs.v3Index().json;
      else if (p.startsWith('/openapi/v3/')) body = docs.v3(p.slice('/openapi/v3/'.length))?.json;
      else if (p === '/version') body = JSON.stringify({ major: '1', minor: '32', gitVersion: 'v1.32.0' });
      else {
        const d = serveDiscovery(reg, p, '127.0.0.1');
        if (d) body = JSON.stringify(d);
      }
      if (body === undefined) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    dir = await mkdtemp(join(tmpdir(), 'orch-kubectl-'));
    const kubeconfig = join(dir, 'kubeconfig');
    await writeFile(
      kubeconfig,
      `apiVersion: v1\nkind: Config\nclusters:\n- name: t\n  cluster:\n    server: http://127.0.0.1:${port}\ncontexts:\n- name: t\n  context:\n    cluster: t\n    user: u\ncurrent-context: t\nusers:\n- name: u\n  user: {}\n`,
    );
    env = { ...process.env, KUBECONFIG: kubeconfig, HOME: dir, KUBECACHEDIR: join(dir, 'cache') };
  });

  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await rm(dir, { recursive: true, force: true });
  });

  const kubectl = async (...args: string[]) => (await run('kubectl', ['--cache-dir', join(dir, 'cache'), ...args], { env, timeout: 60_000 })).stdout;

  it('kubectl explain configmap.data', async () => {
    const out = await kubectl('explain', 'configmap.data');
    expect(out).toContain('KIND:       ConfigMap');
    expect(out).toMatch(/FIELD: data <map\[string\]string>/);
    expect(out).toContain('Configuration data');
  }, 60_000);

  it('kubectl explain pods.spec.containers.ports', async () => {
    const out = await kubectl('explain', 'pods.spec.containers.ports');
    expect(out).toContain('KIND:       Pod');
    expect(out).toContain('FIELD: ports <[]ContainerPort>');
    expect(out).toMatch(/containerPort\s+<integer> -required-/);
    expect(out).toContain('Port to expose on the pod IP address');
    expect(out).toMatch(/protocol\s+<string>/);
  }, 60_000);

  it('kubectl explain a named-group kind and an int-or-string field', async () => {
    const out = await kubectl('explain', 'rolebindings.roleRef');
    expect(out).toContain('GROUP:      rbac.authorization.orch.io');
    expect(out).toContain('FIELD: roleRef <RoleRef>');
    expect(await kubectl('explain', 'svc.spec.ports.targetPort')).toContain('FIELD: targetPort <IntOrString>');
  }, 60_000);

  it('kubectl api-resources lists the kinds with short names', async () => {
    const out = await kubectl('api-resources');
    const rows = out.trim().split('\n').slice(1).map((l) => l.trim().split(/\s+/));
    const find = (name: string, apiVersion: string) => rows.find((r) => r[0] === name && r.includes(apiVersion));
    expect(find('pods', 'v1')).toEqual(['pods', 'po', 'v1', 'true', 'Pod']);
    expect(find('configmaps', 'v1')).toEqual(['configmaps', 'cm', 'v1', 'true', 'ConfigMap']);
    expect(find('namespaces', 'v1')).toEqual(['namespaces', 'ns', 'v1', 'false', 'Namespace']);
    expect(find('services', 'v1')?.[1]).toBe('svc');
    expect(find('secrets', 'v1')).toEqual(['secrets', 'v1', 'true', 'Secret']);
    expect(find('leases', 'coordination.orch.io/v1')).toEqual(['leases', 'coordination.orch.io/v1', 'true', 'Lease']);
    expect(find('clusterrolebindings', 'rbac.authorization.orch.io/v1')?.[2]).toBe('false');
    expect(rows.filter((r) => r[0] === 'events')).toHaveLength(2);
  }, 60_000);
});
