// Objects survive a graceful restart and a kill -9 of the real server process
// (issue: "objects survive a kill -9 of the server and a restart").

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPki } from '../../src/server/pki.js';
import { rawRequest, startTestServer, NO_NAMESPACE_DEFAULTS } from '../helpers/server.js';
import type { RunningServer } from '../../src/server/server.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

function startCli(dataDir: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'server', '--data-dir', dataDir, '--secure-port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /serving on https:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => reject(new Error(`server exited early (${code}): ${out}\nstderr: ${err.slice(-4000)}`)));
  });
}

async function client(dataDir: string, port: number): Promise<RunningServer> {
  const pki = await loadPki(join(dataDir, 'pki'));
  return { port, caPem: pki.ca.certPem, adminCertPem: pki.admin.certPem, adminKeyPem: pki.admin.keyPem } as RunningServer;
}

describe('persistence', () => {
  it('survives a graceful restart', async () => {
    const t = await startTestServer({ authn: NO_NAMESPACE_DEFAULTS });
    dirs.push(t.dataDir);
    const created = await t.request('POST', '/api/v1/namespaces/default/configmaps', {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'keep' }, data: { a: 'b' } },
    });
    expect(created.status).toBe(201);
    await t.stop(true);
    const t2 = await startTestServer({ dataDir: t.dataDir, authn: NO_NAMESPACE_DEFAULTS });
    const got = await t2.request('GET', '/api/v1/namespaces/default/configmaps/keep');
    expect(got.status).toBe(200);
    expect(got.json()).toMatchObject({ data: { a: 'b' }, metadata: { uid: created.json<{ metadata: { uid: string } }>().metadata.uid } });
    await t2.stop(true);
  });

  it('loses no acknowledged write on kill -9', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'orch-kill-'));
    dirs.push(dataDir);
    const first = await startCli(dataDir);
    const srv = await client(dataDir, first.port);
    const acked: { name: string; rv: string }[] = [];
    // writes in flight while the process is killed: only acknowledged ones count
    let stop = false;
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; !stop && i < 1000; i++) {
        const name = `w${w}-${i}`;
        try {
          const r = await rawRequest(srv, 'POST', '/api/v1/namespaces/default/configmaps', {
            body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { i: String(i) } },
          });
          if (r.status === 201) acked.push({ name, rv: r.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion });
        } catch {
          return;
        }
      }
    });
    while (acked.length < 60) await new Promise((r) => setTimeout(r, 10));
    first.child.kill('SIGKILL');
    stop = true;
    await Promise.all(writers);
    if (first.child.exitCode === null && first.child.signalCode === null) await new Promise((r) => first.child.once('exit', r));

    const second = await startCli(dataDir);
    try {
      const srv2 = await client(dataDir, second.port);
      const list = await rawRequest(srv2, 'GET', '/api/v1/namespaces/default/configmaps');
      const items = list.json<{ items: { metadata: { name: string; resourceVersion: string } }[] }>().items;
      const byName = new Map(items.map((i) => [i.metadata.name, i.metadata.resourceVersion]));
      for (const a of acked) expect(byName.get(a.name), a.name).toBe(a.rv);
    } finally {
      second.child.kill('SIGTERM');
      await new Promise((r) => second.child.once('exit', r));
    }
  });
});

describe('continue tokens across a restart', () => {
  it('a token issued before a restart still pages the same snapshot afterwards', async () => {
    const t = await startTestServer({ authn: NO_NAMESPACE_DEFAULTS });
    dirs.push(t.dataDir);
    for (let i = 0; i < 5; i++) {
      await t.request('POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `p${i}` } } });
    }
    const first = (await t.request('GET', '/api/v1/namespaces/default/configmaps?limit=2')).json<{ metadata: { continue: string; resourceVersion: string } }>();
    await t.stop(true);
    const t2 = await startTestServer({ dataDir: t.dataDir, authn: NO_NAMESPACE_DEFAULTS });
    const next = await t2.request('GET', `/api/v1/namespaces/default/configmaps?limit=2&continue=${encodeURIComponent(first.metadata.continue)}`);
    expect(next.status).toBe(200);
    const body = next.json<{ items: { metadata: { name: string } }[]; metadata: { resourceVersion: string } }>();
    expect(body.items.map((i) => i.metadata.name)).toEqual(['p2', 'p3']);
    expect(body.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    // nothing of the secret is visible through the API
    expect((await t2.request('GET', '/api/v1/namespaces')).text).not.toContain('continue-token');
    await t2.stop(true);
  });
});
