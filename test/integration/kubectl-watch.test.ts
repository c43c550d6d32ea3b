// kubectl 1.32 against a real server: `get --watch` (a list, then a Table
// watch from its resourceVersion, spec 000 §4.5/§4.6) and `get --chunk-size`
// (paged lists with continue tokens, §4.5).

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer, NO_NAMESPACE_DEFAULTS } from '../helpers/server.js';
import { eventually } from '../helpers/eventually.js';
import { startKubectl } from '../helpers/kubectl.js';

const exec = promisify(execFile);
let t: TestServer;

async function mkns(name: string): Promise<void> {
  expect((await t.request('POST', '/api/v1/namespaces', { body: { metadata: { name } } })).status).toBe(201);
}

async function cm(ns: string, name: string): Promise<void> {
  const r = await t.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name }, data: { a: '1' } } });
  expect(r.status).toBe(201);
}

beforeAll(async () => {
  t = await startTestServer({ authn: NO_NAMESPACE_DEFAULTS });
});
afterAll(async () => {
  await t?.stop();
});

describe('kubectl', () => {
  it('get configmaps --watch prints the list, then every change', async () => {
    await mkns('kw');
    await cm('kw', 'before');
    const kubectl = startKubectl(t.server.kubeconfigPath, ['-n', 'kw', 'get', 'configmaps', '--watch']);
    const out = (): string => kubectl.out();
    try {
      await eventually(() => /\bbefore\b/.test(out()), `kubectl to print the list (stderr: ${kubectl.err()})`, 20_000);
      // the watch is open once the server holds it
      await eventually(() => t.server.watch.stats().watchers >= 1, 'the kubectl watch to register', 20_000);
      for (const name of ['w1', 'w2', 'w3']) await cm('kw', name);
      expect((await t.request('DELETE', '/api/v1/namespaces/kw/configmaps/w2')).status).toBe(200);
      await eventually(() => ['w1', 'w2', 'w3'].every((n) => new RegExp(`^${n}\\s`, 'm').test(out())), `kubectl to print the new objects (got ${out()})`, 20_000);
      const lines = out().split('\n').filter((l) => l.trim());
      expect(lines[0]).toMatch(/^NAME\s+DATA\s+AGE/);
      expect(lines.some((l) => /^before\s+1\s+/.test(l))).toBe(true);
      expect(lines.filter((l) => /^w1\s+1\s+/.test(l)).length).toBeGreaterThanOrEqual(1);
      expect(kubectl.err()).not.toMatch(/error/i);
    } finally {
      await kubectl.stop();
    }
    // killing kubectl frees its watcher
    await eventually(() => t.server.watch.stats().watchers === 0, 'the watcher to be freed');
  });

  it('get configmaps --chunk-size=2 pages through many objects', async () => {
    await mkns('kc');
    const names = Array.from({ length: 15 }, (_, i) => `c-${String(i).padStart(2, '0')}`);
    await Promise.all(names.map((n) => cm('kc', n)));
    const r = await exec(
      'kubectl',
      ['--kubeconfig', t.server.kubeconfigPath, '-n', 'kc', 'get', 'configmaps', '--chunk-size=2', '-o', 'name', '-v=6'],
      { timeout: 30_000 },
    );
    expect(r.stdout.trim().split('\n')).toEqual(names.map((n) => `configmap/${n}`));
    // 15 objects in chunks of 2: the first request and 7 continues
    const requests = r.stderr.split('\n').filter((l) => /GET https:\/\/\S+\/configmaps\?\S*limit=2/.test(l));
    expect(requests).toHaveLength(8);
    expect(requests.filter((l) => l.includes('continue=')).length).toBe(7);

    // the table printer pages too
    const table = await exec('kubectl', ['--kubeconfig', t.server.kubeconfigPath, '-n', 'kc', 'get', 'configmaps', '--chunk-size=2'], {
      timeout: 30_000,
    });
    const rows = table.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^NAME\s+DATA\s+AGE/);
    expect(rows.slice(1).map((l) => l.split(/\s+/)[0])).toEqual(names);
  });
});
