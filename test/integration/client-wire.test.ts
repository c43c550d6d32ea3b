// What clients written for kube-apiserver 1.32 notice on the wire, each case
// against a real server and, where a tool shows it, the real kubectl 1.32:
// answers must be what kube-apiserver returns for the same request.

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

beforeAll(async () => {
  t = await startTestServer();
  dir = await mkdtemp(join(tmpdir(), 'orch-client-wire-'));
});
afterAll(async () => {
  await t?.stop();
});

describe('empty metadata maps and lists (Go ObjectMeta omitempty)', () => {
  it('a create with labels {}, annotations {}, finalizers [] stores and serves them as absent, owning nothing', async () => {
    const r = await t.request('POST', '/api/v1/namespaces/default/configmaps', {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'empty-meta', labels: {}, annotations: {}, finalizers: [], ownerReferences: [] }, data: { a: 'b' } },
    });
    expect(r.status, r.text).toBe(201);
    const got = (await t.request('GET', '/api/v1/namespaces/default/configmaps/empty-meta')).json<Obj>();
    for (const k of ['labels', 'annotations', 'finalizers', 'ownerReferences']) expect(got.metadata).not.toHaveProperty(k);
    expect(got.metadata.managedFields[0].fieldsV1).toEqual({ 'f:data': { '.': {}, 'f:a': {} } });
  });

  it('a strategic merge patch adding annotations {} is a no-op: same resourceVersion, nothing served', async () => {
    const before = (await t.request('GET', '/api/v1/namespaces/default/configmaps/empty-meta')).json<Obj>();
    const r = await t.request('PATCH', '/api/v1/namespaces/default/configmaps/empty-meta', {
      headers: { 'Content-Type': 'application/strategic-merge-patch+json' },
      body: { metadata: { annotations: {}, labels: {} } },
    });
    expect(r.status, r.text).toBe(200);
    const after = r.json<Obj>();
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(after.metadata).not.toHaveProperty('annotations');
  });

  it('kubectl diff of an unchanged object created without kubectl apply exits 0', async () => {
    // kubectl diff patches (dry run) with `metadata.annotations: {}` when the
    // live object has no last-applied annotation
    const f = join(dir, 'diff-cm.yaml');
    await writeFile(f, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: diff-cm\n  namespace: default\ndata:\n  a: b\n');
    expect((await kubectl('create', '-f', f)).code).toBe(0);
    const r = await kubectl('diff', '-f', f);
    expect(r.stdout).toBe('');
    expect(r.code, r.stderr).toBe(0);
    await writeFile(f, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: diff-cm\n  namespace: default\ndata:\n  a: c\n');
    const changed = await kubectl('diff', '-f', f);
    expect(changed.code, changed.stderr).toBe(1);
    expect(changed.stdout).toContain('+  a: c');
    expect(changed.stdout).not.toContain('annotations');
  });
});
