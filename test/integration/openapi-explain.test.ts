// The served OpenAPI documents as kubectl 1.32 reads them (docs/schemas.md
// "Named structures"): `kubectl explain --recursive` of every served built-in
// kind names every structure as Kubernetes does (no `<Object>`, least of all
// one without fields), and client-side apply of CRDs and of the fixture
// manifests, re-applied with changes so kubectl computes a strategic merge
// patch from the documents, prints no warning.

import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KUBE_TYPE_NAMES, kubeTypeName } from '../../src/registry/openapi-type-names.js';
import { runKubectl } from '../helpers/kubectl.js';
import { NO_WORKLOAD_CONTROLLERS, type TestServer, startTestServer } from '../helpers/server.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures');

interface Schema {
  $ref?: string;
  allOf?: { $ref?: string }[];
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema;
}

interface Field {
  path: string;
  type: string;
  children: number;
}

/** the fields of `kubectl explain --recursive` output, with how many sub-fields each shows */
function explainFields(out: string): Field[] {
  const lines = out.split('\n');
  const start = lines.findIndex((l) => l.startsWith('FIELDS:'));
  if (start < 0) return [];
  const rows = lines
    .slice(start + 1)
    .map((l) => /^( +)(\S+)\t<(.*)>/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ depth: m[1]!.length / 2, name: m[2]!, type: m[3]! }));
  const out_: Field[] = [];
  const stack: string[] = [];
  rows.forEach((r, i) => {
    stack.length = r.depth - 1;
    stack.push(r.name);
    let children = 0;
    for (let j = i + 1; j < rows.length && rows[j]!.depth > r.depth; j++) if (rows[j]!.depth === r.depth + 1) children++;
    out_.push({ path: stack.join('.'), type: r.type, children });
  });
  return out_;
}

async function inBatches<T, R>(items: T[], size: number, f: (x: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map(f))));
  return out;
}

/** a copy of a fixture directory with DOMAIN (and the CRD group's domain) replaced */
function copyFixtures(sub: string, domain: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'orch-openapi-explain-'));
  cpSync(join(FIXTURES, sub), dir, { recursive: true });
  for (const f of readdirSync(dir)) {
    writeFileSync(join(dir, f), readFileSync(join(dir, f), 'utf8').replaceAll('DOMAIN', domain).replaceAll('apiextensions.orch.io', `apiextensions.${domain}`));
  }
  return dir;
}

/** every file of `dir` changed deep inside (container images, schema descriptions), so apply patches them */
function changeFixtures(dir: string): void {
  for (const f of readdirSync(dir)) {
    const text = readFileSync(join(dir, f), 'utf8');
    writeFileSync(join(dir, f), text.replace(/image: (\S+)/g, 'image: $1-b').replace(/description: (\S)/g, 'description: Changed $1'));
  }
}

describe.each(['k8s.io', 'orch.io'])('OpenAPI documents read by kubectl (--api-domain %s)', (domain) => {
  let t: TestServer;
  const dirs: string[] = [];
  const kubectl = (...args: string[]) => runKubectl(t.server.kubeconfigPath, args);

  beforeAll(async () => {
    t = await startTestServer({ apiDomain: domain, authn: NO_WORKLOAD_CONTROLLERS });
  });
  afterAll(async () => {
    await t?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('kubectl explain --recursive names every structure of every served built-in kind', async () => {
    const listed = await kubectl('api-resources', '--no-headers');
    expect(listed.code, listed.stderr).toBe(0);
    // NAME [SHORTNAMES] APIVERSION NAMESPACED KIND; `<plural>.<group>` would not do: explain reads dots as fields
    const resources = listed.stdout.split('\n').filter(Boolean).map((l) => {
      const cols = l.trim().split(/\s+/);
      return { name: cols[0]!, apiVersion: cols.find((c, i) => i > 0 && /^([a-z0-9.-]+\/)?v\d+\w*$/.test(c))! };
    });
    expect(resources.length).toBeGreaterThan(50);
    const bad = await inBatches(resources, 4, async ({ name, apiVersion }) => {
      const r = `${name} (${apiVersion})`;
      const e = await kubectl('explain', name, '--api-version', apiVersion, '--recursive');
      if (e.code !== 0) return [`${r}: ${e.stderr.trim()}`];
      const fields = explainFields(e.stdout);
      if (fields.length === 0) return [`${r}: no fields`];
      // Kubernetes names every structure of its built-in kinds; `<Object>` is an inline schema, and one
      // without sub-fields an opaque one: add its name to src/registry/openapi-type-names.ts
      return fields.filter((f) => /^(\[\]|map\[string\])?Object$/.test(f.type)).map((f) => `${r} ${f.path} <${f.type}>${f.children === 0 ? ' without fields' : ''}`);
    });
    expect(bad.flat()).toEqual([]);
  });

  it('uses every entry of the name table in the served /openapi/v2 (a stale or misspelt entry fails here)', async () => {
    const r = await t.request('GET', '/openapi/v2', { headers: { Accept: 'application/json' } });
    expect(r.status).toBe(200);
    const defs = (r.json() as { definitions: Record<string, Schema> }).definitions;
    const rev = domain.split('.').reverse().join('.');
    const refOf = (s: Schema | undefined): string | undefined => (s?.$ref ?? s?.allOf?.[0]?.$ref)?.replace('#/definitions/', '');
    const unused: string[] = [];
    for (const [owner, props] of Object.entries(KUBE_TYPE_NAMES)) {
      for (const prop of Object.keys(props)) {
        const p = defs[`${rev}.${owner}`]?.properties?.[prop];
        if (![refOf(p), refOf(p?.items), refOf(p?.additionalProperties)].includes(`${rev}.${kubeTypeName(owner, prop)}`)) unused.push(`${owner}.${prop}`);
      }
    }
    expect(unused).toEqual([]);
  });

  it.each([
    ['deployment.spec.template.spec.containers', '[]Container', 'livenessProbe\t<Probe>'],
    ['pod.spec.volumes.projected', 'ProjectedVolumeSource', 'sources\t<[]VolumeProjection>'],
    ['service.spec.ports', '[]ServicePort', 'targetPort\t<IntOrString>'],
    ['job.spec.template', 'PodTemplateSpec', 'spec\t<PodSpec>'],
    ['node.status.conditions', '[]NodeCondition', 'lastHeartbeatTime\t<string>'],
    ['deployment.spec.strategy.rollingUpdate', 'RollingUpdateDeployment', 'maxSurge\t<IntOrString>'],
    ['pod.metadata.managedFields', '[]ManagedFieldsEntry', 'fieldsV1\t<FieldsV1>'],
    ['crd.spec.versions.schema.openAPIV3Schema', 'JSONSchemaProps', 'properties\t<map[string]JSONSchemaProps>'],
  ])('kubectl explain %s is <%s> with typed fields', async (path, type, field) => {
    const r = await kubectl('explain', path);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`<${type}>`);
    expect(r.stdout).toContain(field);
  });

  it("client-side apply clears what kube's retainKeys strategies clear: a defaulted rollingUpdate, a volume's old source", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-openapi-explain-'));
    dirs.push(dir);
    const deployment = (strategy: string, volume: string) => `apiVersion: apps/v1
kind: Deployment
metadata: {name: retain, namespace: default}
spec:
  ${strategy}
  selector: {matchLabels: {app: retain}}
  template:
    metadata: {labels: {app: retain}}
    spec:
      containers: [{name: c, image: nginx}]
      volumes: [{name: v, ${volume}}]
`;
    const file = join(dir, 'deployment.yaml');
    writeFileSync(file, deployment('', 'emptyDir: {}'));
    expect((await kubectl('apply', '-f', file)).stderr).toBe('');
    writeFileSync(file, deployment('strategy: {type: Recreate}', 'configMap: {name: settings}'));
    const r = await kubectl('apply', '-f', file);
    expect(r.stderr).toBe('');
    const spec = JSON.parse((await kubectl('get', 'deployment', 'retain', '-o', 'json')).stdout).spec;
    expect(spec.strategy).toEqual({ type: 'Recreate' });
    expect(spec.template.spec.volumes).toEqual([{ name: 'v', configMap: { name: 'settings', defaultMode: 420 } }]);
  });

  it('applies the fixture CRDs, and changes to them, client-side and server-side without a warning; explain shows a custom kind', async () => {
    const dir = copyFixtures('crds', domain);
    dirs.push(dir);
    for (const f of readdirSync(dir).sort()) {
      const file = join(dir, f);
      // the operator fixture's custom object maps only once its CRD is established (as in Kubernetes)
      const first = await kubectl('apply', '-f', file);
      if (first.code !== 0) expect(first.stderr).toContain('ensure CRDs are installed first');
      else expect(first.stderr).toBe('');
    }
    await expect.poll(async () => (await kubectl('get', 'webapps')).code).toBe(0);
    const again = await kubectl('apply', '-f', dir);
    expect(again.stderr).toBe('');
    changeFixtures(dir);
    const changed = await kubectl('apply', '-f', dir);
    expect(changed.stderr).toBe('');
    expect(changed.stdout).toContain('webapps.apps.example.com configured');
    const crd = JSON.parse((await kubectl('get', 'crd', 'webapps.apps.example.com', '-o', 'json')).stdout);
    expect(crd.spec.versions[0].schema.openAPIV3Schema.description).toMatch(/^Changed /);
    const ssa = await kubectl('apply', '--server-side', '--force-conflicts', '-f', dir);
    expect(ssa.stderr).toBe('');
    expect(ssa.code).toBe(0);
    const explain = await kubectl('explain', 'webapps.spec');
    expect(explain.code, explain.stderr).toBe(0);
    expect(explain.stdout).toMatch(/image\t<string> -required-/);
    expect(explain.stdout).toMatch(/replicas\t<integer>/);
  });

  it('applies every fixture manifest, then changes to them, client-side and server-side without a warning', async () => {
    const dir = copyFixtures(domain === 'k8s.io' ? 'manifests-k8s' : 'manifests', domain);
    dirs.push(dir);
    const first = await kubectl('apply', '-f', dir);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    changeFixtures(dir);
    const changed = await kubectl('apply', '-f', dir);
    expect(changed.stderr).toBe('');
    expect(changed.stdout).toMatch(/deployment\.apps\/web configured/);
    const ssa = await kubectl('apply', '--server-side', '--force-conflicts', '-f', dir);
    expect(ssa.stderr).toBe('');
    expect(ssa.code).toBe(0);
  });
});
