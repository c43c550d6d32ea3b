// List paging at scale (spec 000 §4.5): 100,000 ConfigMaps listed with
// limit=500 through the HTTPS API; total time, per-chunk latency and the
// server's peak memory. The server runs in a child process (this file with
// --serve), so its peak RSS (VmHWM) is its own; the objects are written
// straight into its store before it starts (populating is not what is measured).
//
//   npx tsx bench/list-paging.ts [--objects 100000] [--limit 500] [--value-size 256] [--no-unpaged] [--etcd]
//
// --etcd: the same objects (same value size) as keys of a single etcd member,
// read in pages of `limit` keys through the native gRPC client (etcd3), for a
// ratio: what kube-apiserver's paged list does against etcd.
//
// Prints one JSON document. The unpaged list of the same objects (served from
// the watch cache, spec 000 §4.6 "Most Recent") runs after the paged one for
// comparison; its peak is reported separately.

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { encodeObject, storageKey } from '../src/registry/generic-store.js';
import type { ApiObject, ResourceDefinition } from '../src/registry/types.js';
import { startServer } from '../src/server/server.js';
import { LocalStore } from '../src/store/local-store.js';
import { etcdAvailable, startEtcd } from './etcd.js';

function flag(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : def;
}

const configMaps = { group: '', resource: 'configmaps', scope: 'Namespaced' } as ResourceDefinition;

/** child role: serve the data dir, report where, run until killed */
async function serve(dataDir: string): Promise<void> {
  const server = await startServer({ dataDir, bindAddress: '127.0.0.1', securePort: 0, apiDomain: 'orch.io', log: () => {} });
  await writeFile(join(dataDir, 'bench-creds.json'), JSON.stringify({ ca: server.caPem, cert: server.adminCertPem, key: server.adminKeyPem }));
  process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);
  process.on('SIGTERM', () => void server.shutdown().then(() => process.exit(0)));
}

async function populate(dataDir: string, objects: number, valueSize: number): Promise<void> {
  const store = await LocalStore.open(join(dataDir, 'store'), { compactIntervalMs: 0 });
  const value = 'x'.repeat(valueSize);
  const BATCH = 100;
  const created = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  for (let i = 0; i < objects; i += BATCH) {
    const success = [];
    for (let j = i; j < Math.min(objects, i + BATCH); j++) {
      const name = `cm-${String(j).padStart(6, '0')}`;
      const obj: ApiObject = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: 'default', uid: `00000000-0000-4000-8000-${String(j).padStart(12, '0')}`, creationTimestamp: created },
        data: { v: value },
      };
      success.push({ type: 'put' as const, key: storageKey(configMaps, 'default', name), value: encodeObject(obj) });
    }
    await store.txn({ compare: [], success, failure: [] });
  }
  await store.close();
}

function status(pid: number): { rss: number; peak: number } {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string): number => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(s)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** resets the peak RSS counter (Linux: writing 5 to clear_refs), so each phase reports its own peak */
async function resetPeak(pid: number): Promise<boolean> {
  try {
    await writeFile(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** the same objects as etcd keys, then a paged range read over native gRPC */
async function etcdPaged(root: string, objects: number, limit: number, valueSize: number): Promise<{ items: number; totalMs: number; itemsPerSec: number }> {
  const etcd = await startEtcd({ root, members: 1 });
  const client = etcd.native();
  try {
    const prefix = '/registry/configmaps/default/';
    // about the size of orch's stored ConfigMap of that value size
    const value = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm-000000', namespace: 'default', uid: '00000000-0000-4000-8000-000000000000', creationTimestamp: '2026-01-01T00:00:00Z' }, data: { v: 'x'.repeat(valueSize) } });
    for (let i = 0; i < objects; i += 100) {
      const puts = [];
      for (let j = i; j < Math.min(objects, i + 100); j++) puts.push(client.put(`${prefix}cm-${String(j).padStart(6, '0')}`).value(value));
      await client.if(`${prefix}x`, 'Create', '==', 0).then(...puts).commit();
    }
    let items = 0;
    let from = prefix;
    const end = `${prefix.slice(0, -1)}0`;
    const t0 = performance.now();
    for (;;) {
      const res = await client.getAll().inRange({ start: from, end }).limit(limit).exec();
      items += res.kvs.length;
      if (!res.more || res.kvs.length === 0) break;
      from = `${res.kvs[res.kvs.length - 1]!.key.toString()}\0`;
    }
    const totalMs = performance.now() - t0;
    return { items, totalMs: Math.round(totalMs), itemsPerSec: Math.round(items / (totalMs / 1000)) };
  } finally {
    client.close();
    await etcd.stop();
  }
}

async function main(): Promise<void> {
  const serveIdx = process.argv.indexOf('--serve');
  if (serveIdx >= 0) return serve(process.argv[serveIdx + 1]!);

  const objects = Number(flag('objects', '100000'));
  const limit = Number(flag('limit', '500'));
  const valueSize = Number(flag('value-size', '256'));
  const dir = await mkdtemp(join(tmpdir(), 'orch-listbench-'));
  const dataDir = join(dir, 'data');
  let child: ChildProcess | undefined;
  try {
    const p0 = performance.now();
    await populate(dataDir, objects, valueSize);
    const populateMs = performance.now() - p0;

    child = spawn(process.execPath, ['--import', 'tsx', new URL(import.meta.url).pathname, '--serve', dataDir], { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines = createInterface(child.stdout!);
    const first = await new Promise<string>((resolve) => lines.once('line', resolve));
    const { port } = JSON.parse(first) as { port: number };
    const creds = JSON.parse(await readFile(join(dataDir, 'bench-creds.json'), 'utf8')) as { ca: string; cert: string; key: string };
    const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: creds.ca, cert: creds.cert, key: creds.key });
    const get = (path: string): Promise<{ status: number; text: string }> =>
      new Promise((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (d: Buffer) => chunks.push(d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        });
        req.on('error', reject);
        req.end();
      });

    await new Promise((r) => setTimeout(r, 500));
    const idle = status(child.pid!);
    const peakReset = await resetPeak(child.pid!);

    // paged: follow continue tokens to the end
    const chunkMs: number[] = [];
    let items = 0;
    let token: string | undefined;
    let revision: string | undefined;
    let consistent = true;
    const t0 = performance.now();
    do {
      const c0 = performance.now();
      const r = await get(`/api/v1/namespaces/default/configmaps?limit=${limit}${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
      if (r.status !== 200) throw new Error(`list: ${r.status} ${r.text.slice(0, 200)}`);
      const body = JSON.parse(r.text) as { metadata: { continue?: string; resourceVersion: string }; items: unknown[] };
      chunkMs.push(performance.now() - c0);
      items += body.items.length;
      revision ??= body.metadata.resourceVersion;
      if (body.metadata.resourceVersion !== revision) consistent = false;
      token = body.metadata.continue;
    } while (token);
    const pagedMs = performance.now() - t0;
    const paged = status(child.pid!);

    let unpaged: Record<string, unknown> | undefined;
    if (!process.argv.includes('--no-unpaged')) {
      await resetPeak(child.pid!);
      const u0 = performance.now();
      const r = await get('/api/v1/namespaces/default/configmaps');
      const uMs = performance.now() - u0;
      const n = (JSON.parse(r.text) as { items: unknown[] }).items.length;
      const s = status(child.pid!);
      unpaged = { items: n, totalMs: Math.round(uMs), responseBytes: Buffer.byteLength(r.text), serverPeakRssBytes: s.peak };
    }
    agent.destroy();

    const etcd = process.argv.includes('--etcd') && (await etcdAvailable()) ? await etcdPaged(join(dir, 'etcd'), objects, limit, valueSize) : undefined;

    const sorted = [...chunkMs].sort((a, b) => a - b);
    const q = (p: number): number => +(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0).toFixed(2);
    const out = {
      bench: 'list-paging',
      config: { objects, limit, valueSize },
      populateMs: Math.round(populateMs),
      paged: {
        items,
        chunks: chunkMs.length,
        consistentResourceVersion: consistent,
        totalMs: Math.round(pagedMs),
        itemsPerSec: Math.round(items / (pagedMs / 1000)),
        chunkLatencyMs: { p50: q(0.5), p99: q(0.99), max: q(1) },
        serverIdleRssBytes: idle.rss,
        serverPeakRssBytes: peakReset ? paged.peak : Math.max(idle.peak, paged.peak),
        serverPeakIncludesStartup: !peakReset,
      },
      unpaged,
      ...(etcd ? { etcdNative: etcd, ratio: { pagedTotalOverEtcd: +(pagedMs / etcd.totalMs).toFixed(3) } } : {}),
    };
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  } finally {
    if (child) {
      child.kill('SIGTERM');
      await new Promise((r) => child!.once('exit', r));
    }
    await rm(dir, { recursive: true, force: true });
  }
  process.exit(0);
}

void main();
