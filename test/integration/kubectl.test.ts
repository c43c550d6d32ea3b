// kubectl 1.32 against a real server with the generated kubeconfig, as a new
// user would use it.

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer, NO_NAMESPACE_DEFAULTS } from '../helpers/server.js';
import { runKubectl } from '../helpers/kubectl.js';

let t: TestServer;
let dir: string;

const kubectl = (...args: string[]) => runKubectl(t.server.kubeconfigPath, args);

beforeAll(async () => {
  t = await startTestServer({ authn: NO_NAMESPACE_DEFAULTS });
  dir = await mkdtemp(join(tmpdir(), 'orch-kubectl-'));
});
afterAll(async () => {
  await t?.stop();
});

describe('kubectl', () => {
  it('get ns lists the built-in namespaces', async () => {
    const r = await kubectl('get', 'ns');
    expect(r.code, r.stderr).toBe(0);
    for (const ns of ['default', 'orch-system', 'orch-public', 'orch-node-lease']) expect(r.stdout).toContain(ns);
    expect(r.stdout).toMatch(/NAME\s+STATUS\s+AGE/);
  });

  it('create -f, get -o json, replace, apply (client side) and delete', async () => {
    const f = join(dir, 'cm.yaml');
    await writeFile(f, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kc\n  namespace: default\ndata:\n  a: "1"\n');
    let r = await kubectl('create', '-f', f);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('configmap/kc created');
    r = await kubectl('get', 'configmap', 'kc', '-o', 'json');
    expect(JSON.parse(r.stdout).data).toEqual({ a: '1' });

    await writeFile(f, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kc\n  namespace: default\ndata:\n  a: "2"\n');
    r = await kubectl('replace', '-f', f);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse((await kubectl('get', 'cm', 'kc', '-o', 'json')).stdout).data).toEqual({ a: '2' });

    const g = join(dir, 'applied.yaml');
    await writeFile(g, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kapply\n  namespace: default\ndata:\n  a: "1"\n  b: "2"\n');
    r = await kubectl('apply', '-f', g);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('configmap/kapply created');
    await writeFile(g, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kapply\n  namespace: default\ndata:\n  a: "3"\n');
    r = await kubectl('apply', '-f', g);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('configmap/kapply configured');
    expect(JSON.parse((await kubectl('get', 'cm', 'kapply', '-o', 'json')).stdout).data).toEqual({ a: '3' });

    r = await kubectl('delete', '-f', f);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('configmap "kc" deleted');
    r = await kubectl('get', 'cm', 'kc');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('NotFound');
  });

  it('create namespace, secret generic, get with labels', async () => {
    expect((await kubectl('create', 'namespace', 'kns')).code).toBe(0);
    const s = await kubectl('-n', 'kns', 'create', 'secret', 'generic', 'sec', '--from-literal=user=admin');
    expect(s.code, s.stderr).toBe(0);
    const got = JSON.parse((await kubectl('-n', 'kns', 'get', 'secret', 'sec', '-o', 'json')).stdout);
    expect(Buffer.from(got.data.user, 'base64').toString()).toBe('admin');
    const l = await kubectl('-n', 'kns', 'label', 'secret', 'sec', 'tier=db');
    expect(l.code, l.stderr).toBe(0);
    const sel = await kubectl('-n', 'kns', 'get', 'secrets', '-l', 'tier=db', '-o', 'name');
    expect(sel.stdout.trim()).toBe('secret/sec');
  });

  it('api-resources and explain work from discovery and OpenAPI', async () => {
    const r = await kubectl('api-resources');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/configmaps\s+cm\s+v1\s+true\s+ConfigMap/);
    expect(r.stdout).toMatch(/leases\s+coordination\.orch\.io\/v1\s+true\s+Lease/);
    const e = await kubectl('explain', 'configmap.data');
    expect(e.code, e.stderr).toBe(0);
    expect(e.stdout).toContain('FIELD: data');
  });

  it('version reports a server version', async () => {
    const r = await kubectl('version', '-o', 'json');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).serverVersion.major).toBe('1');
  });
});
