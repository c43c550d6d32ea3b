// CPU of the TLS worker processes (src/gateway/tls-workers.ts) per request and
// per handshake, read from /proc: a real `orch server` (single member, the
// default 2 TLS workers), driven over HTTPS with the admin client certificate.
//
//   npx tsx bench/tls-front.ts [--repo /path/to/checkout] [--writes 4000] [--in-flight 64]
//                              [--handshakes 400] [--handshake-concurrency 8] [--h2]
//
// --repo runs the server of another checkout (A/B against a base commit with
// the same client). NODE_OPTIONS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles
// the server and its workers (each process writes its own profile on exit).
//
// Phases:
//   creates:   ConfigMap POSTs, `--in-flight` at once over HTTP/1.1 keep-alive
//              (one connection per caller, no handshakes inside the phase);
//   full:      TLS handshakes with the client certificate, no session offered;
//   resumed:   the same, each offering the session ticket the previous
//              connection got (TLS 1.3 tickets; how many resumed is reported).
// Prints one JSON document: per phase, µs of CPU per operation in the
// workers and in the main process, and the load average before and after.

import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/helpers/ports.js';
import { processCpuMs } from './cpu.js';
import { drive, sleep } from './drive.js';

const flag = (name: string, dflt: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : dflt;
};
const REPO = resolve(flag('repo', fileURLToPath(new URL('..', import.meta.url))));
const writes = Number(flag('writes', '4000'));
const inFlight = Number(flag('in-flight', '64'));
const handshakes = Number(flag('handshakes', '400'));
const hsConcurrency = Number(flag('handshake-concurrency', '8'));

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    const p = Number(e);
    if (!Number.isInteger(p)) continue;
    try {
      const s = readFileSync(`/proc/${p}/stat`, 'utf8');
      const ppid = Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid && readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('tls-worker-main')) out.push(p);
    } catch {
      // gone
    }
  }
  return out;
}

const load = (): string => loadavg().map((l) => l.toFixed(2)).join(' ');

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'bench-tls-front-'));
  const port = await freePort();
  const pki = join(root, 'data', 'pki');
  await new Promise<void>((res, rej) =>
    spawn(process.execPath, ['--import', 'tsx', 'deploy/init-pki.ts', pki], { cwd: REPO, stdio: 'ignore' }).on('exit', (c) => (c === 0 ? res() : rej(new Error('init-pki failed')))),
  );
  const server = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'server', '--data-dir', join(root, 'data'), '--secure-port', String(port)], {
    cwd: REPO,
    stdio: process.env.BENCH_MEMBER_LOGS ? 'inherit' : 'ignore',
  });
  const [ca, cert, key] = await Promise.all(['ca.crt', 'admin.crt', 'admin.key'].map((f) => readFile(join(pki, f), 'utf8')));
  const agent = new Agent({ keepAlive: true, maxSockets: inFlight, ca, cert, key });
  const call = (method: string, path: string, body: string, want: number): Promise<void> =>
    new Promise((res, rej) => {
      const req = request({ host: '127.0.0.1', port, method, path, agent, headers: body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {} }, (r) => {
        r.resume();
        r.on('end', () => (r.statusCode === want ? res() : rej(new Error(`${method} ${path}: ${r.statusCode}`))));
      });
      req.on('error', rej);
      req.end(body);
    });
  try {
    for (let i = 0; ; i++) {
      try {
        await call('GET', '/readyz', '', 200);
        break;
      } catch (err) {
        if (i > 300) throw err;
        await sleep(200);
      }
    }
    const workers = childrenOf(server.pid!);
    const cpu = (): { w: number; m: number } => ({ w: processCpuMs(workers), m: processCpuMs([server.pid!]) });
    const result: Record<string, unknown> = { repo: REPO, workers: workers.length, loadBefore: load() };

    const value = 'x'.repeat(1024);
    const create = (prefix: string) => (i: number) => call('POST', '/api/v1/namespaces/default/configmaps', JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${prefix}-${i}` }, data: { v: value } }), 201);
    await drive(Math.min(1000, writes), inFlight, create('warm'));
    let c0 = cpu();
    const st = await drive(writes, inFlight, create('b'));
    let c1 = cpu();
    result.creates = { ...st, workerCpuUsPerOp: Math.round(((c1.w - c0.w) * 1000) / writes), mainCpuUsPerOp: Math.round(((c1.m - c0.m) * 1000) / writes) };

    // handshakes: connect, finish the handshake, read the ticket(s), close
    const handshake = (session: Buffer | undefined): Promise<{ reused: boolean; session: Buffer | undefined }> =>
      new Promise((res, rej) => {
        let got: Buffer | undefined;
        const s = tlsConnect({ host: '127.0.0.1', port, ca, cert, key, servername: 'localhost', ALPNProtocols: ['http/1.1'], ...(session ? { session } : {}) });
        s.on('session', (b: Buffer) => (got = b));
        s.once('secureConnect', () => {
          const reused = s.isSessionReused();
          // TLS 1.3 tickets arrive after the handshake: one read turn later
          s.write('GET /version HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
          s.on('data', () => undefined);
          s.once('end', () => {
            s.destroy();
            res({ reused, session: got });
          });
        });
        s.on('error', rej);
      });
    const hsPhase = async (resume: boolean): Promise<Record<string, unknown>> => {
      let reused = 0;
      const sessions: (Buffer | undefined)[] = [];
      if (resume) for (let i = 0; i < hsConcurrency; i++) sessions.push((await handshake(undefined)).session);
      c0 = cpu();
      const r = await drive(handshakes, hsConcurrency, async (i) => {
        const slot = i % hsConcurrency;
        const out = await handshake(resume ? sessions[slot] : undefined);
        if (out.reused) reused++;
        if (resume && out.session) sessions[slot] = out.session;
      });
      c1 = cpu();
      return { ...r, reused, workerCpuUsPerOp: Math.round(((c1.w - c0.w) * 1000) / handshakes), mainCpuUsPerOp: Math.round(((c1.m - c0.m) * 1000) / handshakes) };
    };
    if (handshakes > 0) {
      result.fullHandshake = await hsPhase(false);
      result.resumedHandshake = await hsPhase(true);
    }
    result.loadAfter = load();
    process.stdout.write(JSON.stringify(result, null, 1) + '\n');
  } finally {
    agent.destroy();
    server.kill('SIGTERM');
    await new Promise((r) => (server.exitCode !== null ? r(undefined) : server.once('exit', r)));
    await rm(root, { recursive: true, force: true });
  }
}

await main();
