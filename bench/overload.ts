// Overload: drive far more writes than the server sustains and check that it
// stays up, answers health checks throughout, sheds the excess with 429 and
// Retry-After, keeps its memory bounded, and recovers its full rate after
// (issue #15 item 5). The server is a real process (`orch server`), the load
// comes from many concurrent HTTPS clients as a non-admin user (the admin
// identity is exempt from overload protection by design).
//
//   npx tsx bench/overload.ts [seconds=60] [inflightFactor=10]
//
// Phases: measure the sustainable rate (64 in flight, 10 s), then overload with
// factor × 64 in flight for `seconds`, then measure again (10 s). Prints JSON.

import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueClientCertificate, loadPki } from '../src/server/pki.js';
import { freePort } from '../test/helpers/ports.js';

const seconds = Number(process.argv[2] ?? 60);
const factor = Number(process.argv[3] ?? 10);

interface Phase {
  inFlight: number;
  seconds: number;
  created: number;
  createdPerSec: number;
  tooMany: number;
  otherErrors: number;
  p99Ms: number;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-overload-'));
  const port = await freePort();
  const server = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'server', '--data-dir', dir, '--secure-port', String(port), '--authorization-mode', 'AlwaysAllow', '--tls-workers', '2'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    server.stdout!.on('data', (d: Buffer) => d.toString().includes('serving on') && resolve());
    server.once('exit', (c) => reject(new Error(`server exited ${c}`)));
  });
  const pki = await loadPki(join(dir, 'pki'));
  const user = await issueClientCertificate(pki, { commonName: 'loadgen', organizations: ['load'] });
  const agent = new Agent({ keepAlive: true, maxSockets: 64 * factor, ca: pki.ca.certPem, cert: user.certPem, key: user.keyPem });
  const adminAgent = new Agent({ keepAlive: true, ca: pki.ca.certPem, cert: pki.admin.certPem, key: pki.admin.keyPem });
  let seq = 0;
  const post = (): Promise<number> =>
    new Promise((resolve) => {
      const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${seq++}` }, data: { v: 'x'.repeat(1024) } });
      const req = request(
        { host: '127.0.0.1', port, method: 'POST', path: '/api/v1/namespaces/default/configmaps', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.setTimeout(30_000, () => req.destroy());
      req.on('error', () => resolve(0));
      req.end(body);
    });

  const run = async (inFlight: number, secs: number): Promise<Phase> => {
    const end = Date.now() + secs * 1000;
    const lat: number[] = [];
    let created = 0;
    let tooMany = 0;
    let other = 0;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (Date.now() < end) {
          const t0 = performance.now();
          const code = await post();
          lat.push(performance.now() - t0);
          if (code === 201) created++;
          else if (code === 429) tooMany++;
          else other++;
        }
      }),
    );
    lat.sort((a, b) => a - b);
    return { inFlight, seconds: secs, created, createdPerSec: Math.round(created / secs), tooMany, otherErrors: other, p99Ms: +(lat[Math.floor(lat.length * 0.99)] ?? 0).toFixed(1) };
  };

  // health checks every 200 ms throughout, as the admin, each on a fresh
  // connection (TLS handshake included) as a kubelet or load-balancer probe makes it
  // connection (TLS handshake included) as a kubelet probe makes it, and
  // also over one kept-alive connection, which separates the server's answer
  // from the handshake queue
  let probing = true;
  const prober = (fresh: boolean) => {
    const times: number[] = [];
    let failures = 0;
    const done = (async () => {
      while (probing) {
        const t0 = performance.now();
        const ok = await new Promise<boolean>((resolve) => {
          const target = fresh ? { agent: false as const, ca: pki.ca.certPem, cert: pki.admin.certPem, key: pki.admin.keyPem } : { agent: adminAgent };
          const req = request({ host: '127.0.0.1', port, path: '/readyz', ...target }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode === 200));
          });
          req.setTimeout(60_000, () => req.destroy());
          req.on('error', () => resolve(false));
          req.end();
        });
        times.push(performance.now() - t0);
        if (!ok) failures++;
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    return { times, failures: () => failures, done };
  };
  const freshProbe = prober(true);
  const keptProbe = prober(false);
  const rssKbOf = async (pid: number): Promise<number> => Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, 'utf8').catch(() => ''))?.[1] ?? 0);
  /** the server and its TLS worker processes together */
  const rssKb = async (): Promise<number> => {
    const children = (await readFile(`/proc/${server.pid}/task/${server.pid}/children`, 'utf8').catch(() => '')).trim().split(/\s+/).filter(Boolean).map(Number);
    let sum = await rssKbOf(server.pid!);
    for (const c of children) sum += await rssKbOf(c);
    return sum;
  };
  let peakRss = 0;
  const rssMiB: Record<string, number> = {};
  const mark = async (name: string) => (rssMiB[name] = Math.round((await rssKb()) / 1024));
  const sampler = setInterval(() => void rssKb().then((r) => (peakRss = Math.max(peakRss, r))), 500);

  await mark('start');
  const before = await run(64, 10);
  await mark('afterBefore');
  const midTimer = setTimeout(() => void mark('overloadMidway'), (seconds * 1000) / 2);
  const overload = await run(64 * factor, seconds);
  clearTimeout(midTimer);
  await mark('overloadEnd');
  const after = await run(64, 10);
  await mark('afterRecovery');
  probing = false;
  await Promise.all([freshProbe.done, keptProbe.done]);
  clearInterval(sampler);
  const summary = (p: ReturnType<typeof prober>) => {
    const h = [...p.times].sort((a, b) => a - b);
    return {
      probes: h.length,
      failures: p.failures(),
      over1s: h.filter((ms) => ms > 1000).length,
      p50Ms: +(h[Math.floor(h.length / 2)] ?? 0).toFixed(1),
      p99Ms: +(h[Math.floor(h.length * 0.99)] ?? 0).toFixed(1),
      maxMs: +(h[h.length - 1] ?? 0).toFixed(1),
    };
  };
  const alive = server.exitCode === null;
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  await rm(dir, { recursive: true, force: true });
  process.stdout.write(
    JSON.stringify(
      {
        bench: 'overload',
        before,
        overload,
        after,
        serverStayedUp: alive,
        health: { freshConnection: summary(freshProbe), keptAlive: summary(keptProbe) },
        loadAverage: (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' '),
        peakRssMiB: Math.round(peakRss / 1024),
        rssMiB,
        recoveredRatio: +(after.createdPerSec / Math.max(1, before.createdPerSec)).toFixed(2),
      },
      null,
      2,
    ) + '\n',
  );
  agent.destroy();
  adminAgent.destroy();
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
