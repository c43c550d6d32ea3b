// Audit cost (issue 16 item 3): ConfigMap creates per second with audit off
// and with audit at level Metadata to a log file, in the same run. Each server
// is a real process (`orch server`, `--tls-workers 0`); the load comes from
// this process, 64 creates in flight over keep-alive HTTPS as the admin. The
// modes alternate (off, Metadata, off, Metadata, …) so drift in the shared
// host's load affects both alike; the medians are compared.
//
//   npx tsx bench/audit.ts [seconds-per-phase=8] [rounds=2]
//
// Prints one JSON document.

import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Auditor } from '../src/audit/auditor.js';
import { BufferedSink } from '../src/audit/buffer.js';
import { LogFileWriter } from '../src/audit/log-file.js';
import { parsePolicy } from '../src/audit/policy.js';
import { systemClock } from '../src/core/clock.js';
import { loadPki } from '../src/server/pki.js';
import { freePort } from '../test/helpers/ports.js';

const seconds = Number(process.argv[2] ?? 8);
const rounds = Number(process.argv[3] ?? 2);
const IN_FLIGHT = 64;

interface Run {
  createsPerSec: number;
  /** server CPU (user + system, from /proc) per create: steadier than throughput on a shared host */
  cpuUsPerCreate: number;
  created: number;
  errors: number;
  auditLines?: number;
  auditDropped?: number;
}

async function phase(mode: 'off' | 'Metadata'): Promise<Run> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-bench-audit-'));
  const port = await freePort();
  const args = ['--import', 'tsx', 'src/cli/main.ts', 'server', '--data-dir', join(dir, 'data'), '--secure-port', String(port), '--tls-workers', '0'];
  const logPath = join(dir, 'audit.log');
  if (mode === 'Metadata') {
    await writeFile(join(dir, 'policy.yaml'), 'apiVersion: audit.orch.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n');
    args.push('--audit-policy-file', join(dir, 'policy.yaml'), '--audit-log-path', logPath);
  }
  const server = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    await new Promise<void>((resolve, reject) => {
      server.stdout!.on('data', (d: Buffer) => d.toString().includes('serving on') && resolve());
      server.once('exit', (c) => reject(new Error(`server exited ${c}`)));
    });
    const pki = await loadPki(join(dir, 'data', 'pki'));
    const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT, ca: pki.ca.certPem, cert: pki.admin.certPem, key: pki.admin.keyPem });
    let seq = 0;
    const data = 'x'.repeat(900);
    const call = (method: string, path: string, body?: string): Promise<{ status: number; text: string }> =>
      new Promise((resolve) => {
        const req = request({ host: '127.0.0.1', port, method, path, agent, headers: body ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } : {} }, (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        });
        req.on('error', () => resolve({ status: 0, text: '' }));
        req.end(body);
      });
    const post = () => call('POST', '/api/v1/namespaces/default/configmaps', JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `b-${seq++}` }, data: { d: data } }));
    // warm up (JIT, first writes), not counted
    const warmEnd = Date.now() + 1000;
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (Date.now() < warmEnd) await post();
    }));
    let created = 0;
    let errors = 0;
    const cpu0 = await cpuUs(server.pid!);
    const t0 = performance.now();
    const end = Date.now() + seconds * 1000;
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (Date.now() < end) {
        const r = await post();
        if (r.status === 201) created++;
        else errors++;
      }
    }));
    const secs = (performance.now() - t0) / 1000;
    const cpu = (await cpuUs(server.pid!)) - cpu0;
    const run: Run = { createsPerSec: Math.round(created / secs), cpuUsPerCreate: Math.round(cpu / Math.max(1, created)), created, errors };
    if (mode === 'Metadata') {
      const metrics = (await call('GET', '/metrics')).text;
      run.auditDropped = Number(/^apiserver_audit_error_total\{plugin="buffered"\} (\S+)$/m.exec(metrics)?.[1] ?? 0);
      await new Promise((r) => setTimeout(r, 500));
      run.auditLines = (await readFile(logPath, 'utf8')).split('\n').length - 1;
    }
    agent.destroy();
    return run;
  } finally {
    server.kill('SIGTERM');
    if (server.exitCode === null && server.signalCode === null) await new Promise((r) => server.once('exit', r));
    await rm(dir, { recursive: true, force: true });
  }
}

/** utime + stime of a process, µs (clock ticks of 10 ms) */
async function cpuUs(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * The audit path alone, in this process: one create's recorder calls (begin,
 * authenticated, authorized, complete with a 1 KiB body) and the buffered
 * write of its two events to a file. CPU µs per request, independent of the
 * host's load.
 */
async function auditPathCost(n: number): Promise<{ usPerRequest: number; requests: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-bench-auditpath-'));
  try {
    const writer = new LogFileWriter(join(dir, 'audit.log'));
    const sink = new BufferedSink(writer, { name: 'log', plugin: 'log', failureReason: 'write_error', bufferSize: 1_000_000, maxBatchSize: 1000, maxBatchWaitMs: 0, metrics: { event() {}, level() {}, dropped() {}, bufferDepth() {} }, clock: systemClock, log: () => {} });
    const auditor = new Auditor({ policy: parsePolicy('apiVersion: audit.orch.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n', 'orch.io'), sinks: [sink], apiDomain: 'orch.io' });
    const headers = new Map([['user-agent', 'kubectl/v1.32.0 (linux/amd64) kubernetes/abcdef'], ['content-type', 'application/json']]);
    const user = { username: 'orch-admin', groups: ['system:masters', 'system:authenticated'] };
    const info = { isResourceRequest: true, path: '/api/v1/namespaces/default/configmaps', verb: 'create', group: '', version: 'v1', namespace: 'default', resource: 'configmaps', subresource: '', name: '' };
    const query = new URLSearchParams('fieldManager=kubectl-create');
    const response = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default', uid: 'u' } };
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < n; i++) {
      const body = Buffer.from(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `b-${i}` }, data: { d: 'x'.repeat(900) } }));
      const a = auditor.begin({ auditID: crypto.randomUUID(), method: 'POST', path: info.path, query, headers, remoteAddress: '127.0.0.1', info, longRunning: false });
      a.authenticated(user);
      a.authorized(true, 'RBAC: allowed by ClusterRoleBinding "x"');
      a.complete({ code: 201, responseObject: response, responseBytes: 1200, body, contentType: 'application/json' });
      if (i % 1000 === 999) await new Promise((r) => setImmediate(r));
    }
    await auditor.close();
    const used = process.cpuUsage(cpu0);
    return { usPerRequest: Number(((used.user + used.system) / n).toFixed(2)), requests: n };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const path = await auditPathCost(50_000);
  const off: Run[] = [];
  const meta: Run[] = [];
  for (let i = 0; i < rounds; i++) {
    off.push(await phase('off'));
    meta.push(await phase('Metadata'));
  }
  const offMedian = median(off.map((r) => r.createsPerSec));
  const metaMedian = median(meta.map((r) => r.createsPerSec));
  process.stdout.write(
    JSON.stringify({
      bench: 'audit',
      inFlight: IN_FLIGHT,
      secondsPerPhase: seconds,
      rounds,
      auditOff: { createsPerSec: off.map((r) => r.createsPerSec), median: offMedian, cpuUsPerCreate: off.map((r) => r.cpuUsPerCreate), errors: off.reduce((a, r) => a + r.errors, 0) },
      auditMetadata: {
        createsPerSec: meta.map((r) => r.createsPerSec),
        median: metaMedian,
        cpuUsPerCreate: meta.map((r) => r.cpuUsPerCreate),
        errors: meta.reduce((a, r) => a + r.errors, 0),
        // 2 events per create (RequestReceived, ResponseComplete), plus the warm-up's and the scrape's
        auditLogLines: meta.map((r) => r.auditLines),
        dropped: meta.map((r) => r.auditDropped),
      },
      metadataVsOff: Number((metaMedian / offMedian).toFixed(3)),
      auditPathAlone: path,
      cpuPerCreateMetadataVsOff: Number((median(meta.map((r) => r.cpuUsPerCreate)) / median(off.map((r) => r.cpuUsPerCreate))).toFixed(3)),
      loadAverage1m: Number((await readFile('/proc/loadavg', 'utf8')).split(' ')[0]),
    }) + '\n',
  );
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
