// Memory per stored object (docs/store.md): one `orch server --tls-workers 0`,
// N ConfigMaps of ≈1.1 KiB created as the admin (32 in flight), then the
// server's RSS and its last mark-compact line (--trace-gc), 5 s after the last
// create. `snap` also writes a heap snapshot into the server's directory
// (SIGUSR2) for a retainers analysis. ORCH_DIR=<checkout> runs another build.
//
//   npx tsx bench/memory-per-object.ts [N=30000] [snap]
import { spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueClientCertificate, loadPki } from '../src/server/pki.js';
import { freePort } from '../test/helpers/ports.js';
const N = Number(process.argv[2] ?? 30000);
const snap = process.argv[3] === 'snap';
const cwd = process.env['ORCH_DIR'] ?? process.cwd();
const dir = await mkdtemp(join(tmpdir(), 'orch-mem-'));
const port = await freePort();
const server = spawn(process.execPath, ['--heapsnapshot-signal=SIGUSR2', '--trace-gc', '--import', 'tsx', 'src/cli/main.ts', 'server', '--data-dir', dir, '--secure-port', String(port), '--authorization-mode', 'AlwaysAllow', '--tls-workers', '0'], { cwd, stdio: ['ignore', 'pipe', 'inherit'] });
let lastMC = '';
server.stdout!.on('data', (d: Buffer) => { for (const l of d.toString().split('\n')) if (l.includes('Mark-Compact')) lastMC = l.replace(/^.*Mark-Compact/, '').replace(/ MB,.*$/, '').trim(); });
await new Promise<void>((res) => server.stdout!.on('data', (d: Buffer) => d.toString().includes('serving on') && res()));
const rss = async () => Math.round(Number((await readFile(`/proc/${server.pid}/status`, 'utf8')).match(/VmRSS:\s+(\d+)/)![1]) / 1024);
const pki = await loadPki(join(dir, 'pki'));
const user = await issueClientCertificate(pki, { commonName: 'admin', organizations: ['system:masters'] });
const agent = new Agent({ keepAlive: true, maxSockets: 32, ca: pki.ca.certPem, cert: user.certPem, key: user.keyPem });
await new Promise((r) => setTimeout(r, 3000));
const r0 = await rss();
let seq = 0; let ok = 0; let bad = 0;
const post = (): Promise<number> => new Promise((resolve) => {
  const name = `c${seq++}`;
  const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: 'x'.repeat(1024), n: String(seq) } });
  const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/api/v1/namespaces/default/configmaps', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode ?? 0)); });
  req.on('error', () => resolve(0)); req.end(body);
});
const t0 = Date.now();
await Promise.all(Array.from({ length: 32 }, async () => { while (seq < N) { const c = await post(); if (c === 201) ok++; else bad++; } }));
const secs = (Date.now() - t0) / 1000;
const r1 = await rss();
await new Promise((r) => setTimeout(r, 5000));
const r2 = await rss();
if (snap) { server.kill('SIGUSR2'); await new Promise((r) => setTimeout(r, 40000)); }
console.log(JSON.stringify({ N, ok, bad, secs, rate: Math.round(ok / secs), rssStart: r0, rssEnd: r1, rssAfter5s: r2, lastMarkCompactMB: lastMC, perObjKiB: +(((r2 - r0) * 1024) / ok).toFixed(2), dir }));
agent.destroy(); server.kill('SIGTERM'); await new Promise((r) => server.once('exit', r));
