// The write paths as a new user drives them with kubectl 1.32 (spec 000
// §4.3, §4.7, §4.8, §4.9): `kubectl apply --server-side` (create, update,
// conflict with another manager, --force-conflicts), `kubectl patch --type
// json|merge|strategic`, `--dry-run=server` on create/apply/delete, and
// `--validate=strict|warn` with an unknown field. Manifests are given with
// `-f` (kubectl's typed generators send protobuf, which is built elsewhere).

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { runKubectl } from '../helpers/kubectl.js';

let t: TestServer;
let dir: string;
type Obj = Record<string, any>;

const kubectl = (...args: string[]) => runKubectl(t.server.kubeconfigPath, args);

async function getJson(...args: string[]): Promise<Obj> {
  const r = await kubectl('get', ...args, '-o', 'json', '--show-managed-fields');
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Obj;
}

async function manifest(name: string, text: string): Promise<string> {
  const f = join(dir, name);
  await writeFile(f, text);
  return f;
}

const cm = (name: string, data: Record<string, string>, extra = ''): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: default\n${extra}data:\n${Object.entries(data)
    .map(([k, v]) => `  ${k}: "${v}"`)
    .join('\n')}\n`;

const pod = (name: string, images: [string, string][]): string =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n  containers:\n${images
    .map(([n, i]) => `  - name: ${n}\n    image: ${i}\n`)
    .join('')}`;

beforeAll(async () => {
  t = await startTestServer();
  dir = await mkdtemp(join(tmpdir(), 'orch-kubectl-writes-'));
});
afterAll(async () => {
  await t?.stop();
});

describe('kubectl apply --server-side', () => {
  it('creates, re-applies without change, updates', async () => {
    const f = await manifest('ssa1.yaml', cm('ssa1', { a: '1', b: '2' }));
    let r = await kubectl('apply', '--server-side', '-f', f);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('configmap/ssa1 serverside-applied');
    const first = await getJson('cm', 'ssa1');
    expect(first.data).toEqual({ a: '1', b: '2' });
    const mf = first.metadata.managedFields as Obj[];
    expect(mf).toHaveLength(1);
    expect(mf[0]).toMatchObject({ manager: 'kubectl', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1' });
    expect(mf[0]!.fieldsV1).toEqual({ 'f:data': { 'f:a': {}, 'f:b': {} } });

    r = await kubectl('apply', '--server-side', '-f', f);
    expect(r.code, r.stderr).toBe(0);
    expect((await getJson('cm', 'ssa1')).metadata.resourceVersion).toBe(first.metadata.resourceVersion);

    await manifest('ssa1.yaml', cm('ssa1', { a: '10' }));
    r = await kubectl('apply', '--server-side', '-f', f);
    expect(r.code, r.stderr).toBe(0);
    // b was given up by its only manager: removed
    expect((await getJson('cm', 'ssa1')).data).toEqual({ a: '10' });
  });

  it('a second manager conflicts, then takes the field with --force-conflicts', async () => {
    const f = await manifest('ssa2.yaml', cm('ssa2', { a: '1', b: '2' }));
    expect((await kubectl('apply', '--server-side', '-f', f)).code).toBe(0);

    const g = await manifest('ssa2-other.yaml', cm('ssa2', { a: 'other' }));
    let r = await kubectl('apply', '--server-side', '--field-manager=other', '-f', g);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('Apply failed with 1 conflict: conflict with "kubectl": .data.a');
    expect(r.stderr).toContain('--force-conflicts');
    expect((await getJson('cm', 'ssa2')).data).toEqual({ a: '1', b: '2' });

    r = await kubectl('apply', '--server-side', '--field-manager=other', '--force-conflicts', '-f', g);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('configmap/ssa2 serverside-applied');
    const o = await getJson('cm', 'ssa2');
    expect(o.data).toEqual({ a: 'other', b: '2' });
    const byManager = Object.fromEntries((o.metadata.managedFields as Obj[]).map((e) => [e.manager, e.fieldsV1]));
    expect(byManager).toEqual({ kubectl: { 'f:data': { 'f:b': {} } }, other: { 'f:data': { 'f:a': {} } } });

    // the first manager now conflicts with "other" on a
    r = await kubectl('apply', '--server-side', '-f', f);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('conflict with "other": .data.a');
  });

  it('after a client-side apply, kubectl apply --server-side takes the fields it applied before without a conflict', async () => {
    const f = await manifest('csa1.yaml', cm('csa1', { a: '1', b: '2' }));
    expect((await kubectl('apply', '-f', f)).code).toBe(0);
    const g = await manifest('csa1b.yaml', cm('csa1', { a: 'changed', b: '2' }));
    const r = await kubectl('apply', '--server-side', '-f', g);
    expect(r.code, r.stderr).toBe(0);
    const o = await getJson('configmap', 'csa1');
    expect(o.data).toEqual({ a: 'changed', b: '2' });
    // the annotation follows the server-side configuration, as kube's lastAppliedUpdater keeps it
    expect(JSON.parse(o.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).data).toEqual({ a: 'changed', b: '2' });
    // kubectl then hands the client-side applier's fields to its own manager and keeps the annotation under kubectl-last-applied
    // (kube sorts entries by operation, then time in seconds, then manager: the order follows the two commands' seconds)
    expect((o.metadata.managedFields as Obj[]).map((e) => `${e.manager} ${e.operation}`).sort()).toEqual(['kubectl Apply', 'kubectl-last-applied Apply']);
  });

  it('conflicts with a field set by kubectl patch name the patcher and its API version', async () => {
    const f = await manifest('ssa3.yaml', pod('ssa3', [['web', 'nginx:1.25'], ['side', 'busybox:1']]));
    expect((await kubectl('apply', '--server-side', '-f', f)).code).toBe(0);
    const p = await kubectl('patch', 'pod', 'ssa3', '--type', 'strategic', '-p', '{"spec":{"containers":[{"name":"side","image":"busybox:2"}]}}');
    expect(p.code, p.stderr).toBe(0);
    const r = await kubectl('apply', '--server-side', '-f', f);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('conflict with "kubectl-patch" using v1: .spec.containers[name="side"].image');
  });
});

describe('kubectl patch', () => {
  it('--type json, merge and strategic', async () => {
    const f = await manifest('p1.yaml', cm('p1', { a: '1', b: '2' }));
    expect((await kubectl('create', '-f', f)).code).toBe(0);
    let r = await kubectl('patch', 'cm', 'p1', '--type', 'json', '-p', '[{"op":"replace","path":"/data/a","value":"json"},{"op":"remove","path":"/data/b"}]');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('configmap/p1 patched');
    r = await kubectl('patch', 'cm', 'p1', '--type', 'merge', '-p', '{"data":{"m":"merge"}}');
    expect(r.code, r.stderr).toBe(0);
    r = await kubectl('patch', 'cm', 'p1', '--type', 'strategic', '-p', '{"data":{"s":"strategic"}}');
    expect(r.code, r.stderr).toBe(0);
    expect((await getJson('cm', 'p1')).data).toEqual({ a: 'json', m: 'merge', s: 'strategic' });
    // the same patch again changes nothing
    r = await kubectl('patch', 'cm', 'p1', '--type', 'merge', '-p', '{"data":{"m":"merge"}}');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('(no change)');
    const mf = (await getJson('cm', 'p1')).metadata.managedFields as Obj[];
    expect(mf.map((e) => `${e.manager}/${e.operation}`).sort()).toEqual(['kubectl-create/Update', 'kubectl-patch/Update']);
  });

  it('a failed JSON Patch test is reported and changes nothing', async () => {
    const f = await manifest('p2.yaml', cm('p2', { a: '1' }));
    expect((await kubectl('create', '-f', f)).code).toBe(0);
    const r = await kubectl('patch', 'cm', 'p2', '--type', 'json', '-p', '[{"op":"test","path":"/data/a","value":"2"},{"op":"remove","path":"/data/a"}]');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('The request is invalid');
    expect(r.stderr).toContain('test');
    expect((await getJson('cm', 'p2')).data).toEqual({ a: '1' });
  });

  it('strategic merge of pod containers by name', async () => {
    const f = await manifest('p3.yaml', pod('p3', [['web', 'nginx:1.25'], ['side', 'busybox:1']]));
    expect((await kubectl('create', '-f', f)).code).toBe(0);
    const r = await kubectl('patch', 'pod', 'p3', '-p', '{"spec":{"containers":[{"name":"web","image":"nginx:1.26"}]}}');
    expect(r.code, r.stderr).toBe(0);
    const o = await getJson('pod', 'p3');
    expect((o.spec.containers as Obj[]).map((c) => `${c.name}=${c.image}`)).toEqual(['web=nginx:1.26', 'side=busybox:1']);
  });
});

describe('--dry-run=server', () => {
  it('create, apply (client and server side) and delete persist nothing', async () => {
    const f = await manifest('d1.yaml', pod('d1', [['web', 'nginx:1.25']]));
    let r = await kubectl('create', '-f', f, '--dry-run=server', '-o', 'json');
    expect(r.code, r.stderr).toBe(0);
    const would = JSON.parse(r.stdout) as Obj;
    // server defaults are in the answer
    expect(would.spec.containers[0].imagePullPolicy).toBe('IfNotPresent');
    expect(would.spec.restartPolicy).toBe('Always');
    expect(would.metadata.uid).toBeTruthy();
    r = await kubectl('get', 'pod', 'd1');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('NotFound');

    r = await kubectl('apply', '--server-side', '-f', f, '--dry-run=server');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('(server dry run)');
    r = await kubectl('apply', '-f', f, '--dry-run=server');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('pod/d1 created (server dry run)');
    expect((await kubectl('get', 'pod', 'd1')).code).not.toBe(0);

    expect((await kubectl('create', '-f', f)).code).toBe(0);
    const before = await getJson('pod', 'd1');
    const g = await manifest('d1b.yaml', pod('d1', [['web', 'nginx:1.27']]));
    r = await kubectl('apply', '--server-side', '--force-conflicts', '-f', g, '--dry-run=server', '-o', 'json');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).spec.containers[0].image).toBe('nginx:1.27');
    r = await kubectl('delete', 'pod', 'd1', '--dry-run=server');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('pod "d1" deleted (server dry run)');
    const after = await getJson('pod', 'd1');
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(after.spec.containers[0].image).toBe('nginx:1.25');
  });
});

describe('--validate', () => {
  const bad = (name: string) => `${cm(name, { a: '1' })}dataa:\n  b: "2"\n`;

  it('strict: an unknown field is an error naming it; nothing created', async () => {
    const f = await manifest('v1.yaml', bad('v1'));
    const r = await kubectl('create', '--validate=strict', '-f', f);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('BadRequest');
    expect(r.stderr).toContain('unknown field "dataa"');
    expect((await kubectl('get', 'cm', 'v1')).code).not.toBe(0);
    const a = await kubectl('apply', '--server-side', '--validate=strict', '-f', f);
    expect(a.code).not.toBe(0);
    // kube's wording for an apply: structured-merge-diff's typed patch error
    expect(a.stderr).toContain('failed to create typed patch object (default/v1; /v1, Kind=ConfigMap): .dataa: field not declared in schema');
  });

  it('warn: created, with the warning printed', async () => {
    const f = await manifest('v2.yaml', bad('v2'));
    const r = await kubectl('create', '--validate=warn', '-f', f);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('Warning: unknown field "dataa"');
    expect(r.stdout).toContain('configmap/v2 created');
    const o = await getJson('cm', 'v2');
    expect(o.dataa).toBeUndefined();
    expect(o.data).toEqual({ a: '1' });
  });

  it('warn: a warning naming a non-ASCII field reaches kubectl over HTTP/2 as UTF-8 (Go refuses a mangled header value)', async () => {
    const f = await manifest('utf8.yaml', cm('utf8', { a: '1' }, 'don’t: 1\n日本: 2\n'));
    const r = await kubectl('create', '--validate=warn', '-f', f);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('Warning: unknown field "don’t"');
    expect(r.stderr).toContain('Warning: unknown field "日本"');
    expect(r.stdout).toContain('configmap/utf8 created');
  });

  // (kubectl converts YAML manifests to JSON itself, keeping the last of duplicate
  // keys, so duplicates never reach the server from kubectl; they are covered
  // over raw HTTP in field-validation.test.ts.)
  it('strict and warn on replace (PUT)', async () => {
    const f = await manifest('v3.yaml', cm('v3', { a: '1' }));
    expect((await kubectl('create', '-f', f)).code).toBe(0);
    const g = await manifest('v3b.yaml', bad('v3'));
    const r = await kubectl('replace', '--validate=strict', '-f', g);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('unknown field "dataa"');
    const w = await kubectl('replace', '--validate=warn', '-f', g);
    expect(w.code, w.stderr).toBe(0);
    expect(w.stderr).toContain('Warning: unknown field "dataa"');
  });

  it('replace with resourceVersion "0" is unconditional (kube parses it as version 0), also for a cluster-scoped kind', async () => {
    const node = (annotations: string, rv: string) =>
      JSON.stringify({ kind: 'Node', apiVersion: 'v1', metadata: { name: 'node-rv0', ...(annotations ? { annotations: { a: annotations } } : {}), ...(rv ? { resourceVersion: rv } : {}) } });
    expect((await kubectl('create', '-f', await manifest('n0.json', node('', '')))).code).toBe(0);
    const f = await manifest('n1.json', node('b', '0'));
    const dry = await kubectl('replace', '--dry-run=server', '-f', f);
    expect(dry.code, dry.stderr).toBe(0);
    const r = await kubectl('replace', '-f', f);
    expect(r.code, r.stderr).toBe(0);
    expect((await getJson('node', 'node-rv0')).metadata.annotations).toEqual({ a: 'b' });
    const stale = await kubectl('replace', '-f', await manifest('n2.json', node('c', '1')));
    expect(stale.stderr).toContain('the object has been modified');
    expect((await kubectl('delete', 'node', 'node-rv0')).code).toBe(0);
  });

  it('create --raw with a YAML manifest: kube\'s 400 for a body it cannot read a kind from', async () => {
    const f = await manifest('raw-pod.yaml', pod('raw-pod', [['c', 'nginx']]));
    const r = await kubectl('create', '--raw', '/api/v1/namespaces', '-f', f);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("the object provided is unrecognized (must be of type Namespace): couldn't get version/kind; json parse error: invalid character 'a' looking for beginning of value (");
  });
});
