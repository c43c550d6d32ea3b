// CRDs as a new user meets them, with the real kubectl 1.32 (issue #16):
// `kubectl apply -f` of an operator's CRD and custom object manifest, `kubectl
// get <plural>` / shortName / category with the printer columns, `kubectl
// explain <kind>.spec`, `kubectl scale`, edits by merge patch and server-side
// apply, a multi-version CRD and deletion of CRDs with kubectl.

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, fixture } from '../helpers/crds.js';
import { eventually } from '../helpers/eventually.js';
import { runKubectl } from '../helpers/kubectl.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
const k = (...args: string[]) => runKubectl(t.server.kubeconfigPath, args);

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.stop();
});

/** table rows of kubectl output, split on runs of spaces */
const rows = (out: string): string[][] => out.trim().split('\n').map((l) => l.trim().split(/\s{2,}/));

describe('an operator manifest with kubectl', () => {
  it('applies the CRD and its custom object (as in Kubernetes, the object maps once the CRD is there)', async () => {
    const first = await k('apply', '-f', join(FIXTURES, 'operator.yaml'));
    // kubectl resolves the object's kind before the CRD exists, exactly as against Kubernetes
    expect(first.stdout).toContain('customresourcedefinition.apiextensions.orch.io/webapps.apps.example.com created');
    expect(first.stderr).toContain('ensure CRDs are installed first');
    await eventually(async () => (await k('wait', '--for=condition=Established', 'crd/webapps.apps.example.com', '--timeout=5s')).code === 0, 'Established');
    const second = await k('apply', '-f', join(FIXTURES, 'operator.yaml'));
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('customresourcedefinition.apiextensions.orch.io/webapps.apps.example.com unchanged');
    expect(second.stdout).toContain('webapp.apps.example.com/shop created');
  });

  it('lists with the printer columns by plural, shortName and category', async () => {
    const byPlural = await k('get', 'webapps');
    expect(byPlural.code).toBe(0);
    const r = rows(byPlural.stdout);
    expect(r[0]).toEqual(['NAME', 'IMAGE', 'REPLICAS', 'READY', 'AGE']);
    expect(r[1]!.slice(0, 3)).toEqual(['shop', 'nginx:1.27', '2']);
    // READY is empty (no status yet); the age is last
    expect(r[1]![r[1]!.length - 1]).toMatch(/^\d+s$/);
    const wide = rows((await k('get', 'wa', '-o', 'wide')).stdout);
    expect(wide[0]).toEqual(['NAME', 'IMAGE', 'REPLICAS', 'READY', 'PORT', 'AGE']);
    expect(wide[1]).toContain('8080');
    const byCategory = await k('get', 'example');
    expect(byCategory.code).toBe(0);
    expect(rows(byCategory.stdout)[1]![0]).toMatch(/shop$/);
    const crds = rows((await k('get', 'crds')).stdout);
    expect(crds[0]).toEqual(['NAME', 'CREATED AT']);
    expect(crds.map((x) => x[0])).toContain('webapps.apps.example.com');
  });

  it('explains the kind from the served OpenAPI', async () => {
    const r = await k('explain', 'webapp.spec');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('KIND:       WebApp');
    expect(r.stdout).toContain('Desired state of the web application.');
    expect(r.stdout).toMatch(/image\s+<string> -required-/);
    expect(r.stdout).toContain('Container image of the application.');
    const deep = await k('explain', 'webapp.spec.replicas');
    expect(deep.stdout).toContain('Number of pods.');
  });

  it('scales, patches and server-side applies', async () => {
    expect((await k('scale', 'webapp', 'shop', '--replicas=4')).code).toBe(0);
    expect((await k('get', 'webapp', 'shop', '-o', 'jsonpath={.spec.replicas}')).stdout).toBe('4');
    const mp = await k('patch', 'webapp', 'shop', '--type=merge', '-p', '{"spec":{"tier":"backend"}}');
    expect(mp.code).toBe(0);
    // kubectl's default patch type is strategic merge: refused for custom resources with 415
    const smp = await k('patch', 'webapp', 'shop', '-p', '{"spec":{"tier":"frontend"}}');
    expect(smp.code).not.toBe(0);
    expect(smp.stderr).toMatch(/UnsupportedMediaType|415|not supported/i);
    const applyAs = async (manager: string, ports: object[]) => {
      const file = join(t.dataDir, `ssa-${manager}.yaml`);
      await writeFile(file, stringify({ apiVersion: 'apps.example.com/v1', kind: 'WebApp', metadata: { name: 'ssa', namespace: 'default' }, spec: { image: 'nginx:1.27', ports } }));
      return k('apply', '--server-side', `--field-manager=${manager}`, '-f', file);
    };
    expect((await applyAs('dev', [{ name: 'http', port: 8080 }])).code).toBe(0);
    expect((await applyAs('ops', [{ name: 'metrics', port: 9090 }])).code).toBe(0);
    const ports = JSON.parse((await k('get', 'webapp', 'ssa', '-o', 'jsonpath={.spec.ports}')).stdout);
    // x-kubernetes-list-type map keyed by name: each manager's entry is kept
    expect(ports).toEqual([{ name: 'http', port: 8080 }, { name: 'metrics', port: 9090 }]);
    const conflict = await applyAs('ops', [{ name: 'http', port: 81 }]);
    expect(conflict.code).not.toBe(0);
    expect(conflict.stderr).toContain('conflict');
  });

  it('reports a CEL rule failure to the user', async () => {
    const r = await k('patch', 'webapp', 'shop', '--type=merge', '-p', '{"spec":{"replicas":50}}');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('replicas must not exceed maxReplicas');
  });

  it('deletes the CRD and with it every object', async () => {
    const d = await k('delete', 'crd', 'webapps.apps.example.com');
    expect(d.code).toBe(0);
    expect(d.stdout).toContain('deleted');
    await eventually(async () => (await k('get', 'crd', 'webapps.apps.example.com')).code !== 0, 'CRD gone');
    expect(t.server.store.range({ key: '/registry/apps.example.com/', end: '/registry/apps.example.com0' }).count).toBe(0);
  });
});

describe('a multi-version CRD with kubectl', () => {
  it('creates, serves both versions, and deletes', async () => {
    expect((await k('apply', '-f', join(FIXTURES, 'multiversion.yaml'))).code).toBe(0);
    await eventually(async () => (await k('wait', '--for=condition=Established', 'crd/gadgets.tools.example.com', '--timeout=5s')).code === 0, 'Established');
    const file = join(t.dataDir, 'gadget.yaml');
    await writeFile(file, stringify({ apiVersion: 'tools.example.com/v1beta1', kind: 'Gadget', metadata: { name: 'g' }, spec: { size: 'small' } }));
    const c = await k('apply', '-f', file);
    expect(c.code).toBe(0);
    // the deprecation warning reaches the user
    expect(c.stderr).toContain('tools.example.com/v1beta1 Gadget is deprecated');
    expect((await k('get', 'gadgets.v1.tools.example.com', 'g', '-o', 'jsonpath={.apiVersion}')).stdout).toBe('tools.example.com/v1');
    expect((await k('get', 'gadgets.v1beta1.tools.example.com', 'g', '-o', 'jsonpath={.apiVersion}')).stdout).toBe('tools.example.com/v1beta1');
    expect((await k('get', 'crd', 'gadgets.tools.example.com', '-o', 'jsonpath={.status.storedVersions}')).stdout).toBe('["v1"]');
    expect((await k('delete', '-f', join(FIXTURES, 'multiversion.yaml'))).code).toBe(0);
    await eventually(async () => (await k('get', 'crd', 'gadgets.tools.example.com')).code !== 0, 'CRD gone');
  });

  it('creates a CRD with CEL rules and defaults from a fixture object', async () => {
    const crd = fixture('operator.yaml')[0]!;
    crd.metadata.name = 'webapps.cel.example.com';
    crd.spec.group = 'cel.example.com';
    const file = join(t.dataDir, 'cel-crd.yaml');
    await writeFile(file, stringify(crd));
    expect((await k('create', '-f', file)).code).toBe(0);
    await eventually(async () => (await k('wait', '--for=condition=Established', 'crd/webapps.cel.example.com', '--timeout=5s')).code === 0, 'Established');
    const obj = join(t.dataDir, 'cel-obj.yaml');
    await writeFile(obj, stringify({ apiVersion: 'cel.example.com/v1', kind: 'WebApp', metadata: { name: 'x', namespace: 'default' }, spec: { image: 'a:1' } }));
    expect((await k('create', '-f', obj)).code).toBe(0);
    expect((await k('get', 'webapps.cel.example.com', 'x', '-o', 'jsonpath={.spec.replicas}/{.spec.tier}')).stdout).toBe('1/frontend');
    expect((await k('delete', 'crd', 'webapps.cel.example.com')).code).toBe(0);
  });
});

describe('a CRD that preserves unknown fields at its root', () => {
  it('takes a v1 List of objects with top-level fields through client-side validation', async () => {
    const crd = {
      apiVersion: 'apiextensions.orch.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'loosies.free.example.com' },
      spec: {
        group: 'free.example.com',
        scope: 'Namespaced',
        names: { plural: 'loosies', kind: 'Loose' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    };
    const crdFile = join(t.dataDir, 'loose-crd.yaml');
    await writeFile(crdFile, stringify(crd));
    expect((await k('create', '-f', crdFile)).code).toBe(0);
    await eventually(async () => (await k('wait', '--for=condition=Established', 'crd/loosies.free.example.com', '--timeout=5s')).code === 0, 'Established');
    // a List is validated on the client against /openapi/v2, where kube publishes such a root as a bare object
    const list = { apiVersion: 'v1', kind: 'List', items: [{ apiVersion: 'free.example.com/v1', kind: 'Loose', metadata: { name: 'l1', namespace: 'default' }, someField: 'a' }] };
    const listFile = join(t.dataDir, 'loose-list.yaml');
    await writeFile(listFile, stringify(list));
    const r = await k('apply', '-f', listFile);
    expect(r.code, r.stderr).toBe(0);
    expect((await k('get', 'loosies', 'l1', '-o', 'jsonpath={.someField}')).stdout).toBe('a');
    expect((await k('delete', 'crd', 'loosies.free.example.com')).code).toBe(0);
  });
});
