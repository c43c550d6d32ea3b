// CPU the server's main process spends on a request it refuses with 429
// (issue #15: shed before work). Run from a checkout's root, so that the
// server started is that checkout's (`cd <checkout> && npx tsx <this file>`):
// A/B of two builds on the same machine, alternating.
//
//   npx tsx bench/shed-cost.ts [seconds=15]
//
// Anonymous clients (priority level catch-all: no queue, a few seats) send
// 1 KiB creates: first 4 in flight (all fit: the CPU of a served create),
// then 300 in flight (nearly all refused at once: the CPU of a 429). The
// main process's CPU comes from /proc; per 429 =
// (CPU − served × CPU per served) / refused. Prints JSON.

import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPki } from '../src/server/pki.js';
import { freePort } from '../test/helpers/ports.js';

const seconds = Number(process.argv[2] ?? 15);

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-shed-cost-'));
  const port = await freePort();
  const server = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'server', '--data-dir', dir, '--secure-port', String(port), '--authorization-mode', 'AlwaysAllow', '--tls-workers', '2'], { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    server.stdout!.on('data', (d: Buffer) => d.toString().includes('serving on') && resolve());
    server.once('exit', (c) => reject(new Error(`server exited ${c}`)));
  });
  const pki = await loadPki(join(dir, 'pki'));
  const cpuSec = async (): Promise<number> => {
    const stat = await readFile(`/proc/${server.pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  };
  const agent = new Agent({ keepAlive: true, maxSockets: 300, ca: pki.ca.certPem });
  let seq = 0;
  const post = (): Promise<number> =>
    new Promise((resolve) => {
      const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `s${seq++}` }, data: { v: 'x'.repeat(1024) } });
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/api/v1/namespaces/default/configmaps', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.setTimeout(30_000, () => req.destroy());
      req.on('error', () => resolve(0));
      req.end(body);
    });
  const phase = async (inFlight: number, secs: number) => {
    const c0 = await cpuSec();
    const end = Date.now() + secs * 1000;
    let served = 0;
    let refused = 0;
    let other = 0;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (Date.now() < end) {
          const code = await post();
          if (code === 201) served++;
          else if (code === 429) refused++;
          else other++;
        }
      }),
    );
    return { inFlight, served, refused, other, mainCpuSec: +((await cpuSec()) - c0).toFixed(2) };
  };
  const fits = await phase(4, seconds);
  const shed = await phase(300, seconds);
  const perServedMs = (fits.mainCpuSec * 1000) / Math.max(1, fits.served);
  const per429Ms = (shed.mainCpuSec * 1000 - shed.served * perServedMs) / Math.max(1, shed.refused);
  server.kill('SIGKILL');
  agent.destroy();
  await rm(dir, { recursive: true, force: true });
  process.stdout.write(
    JSON.stringify({ bench: 'shed-cost', fits, shed, mainCpuMsPerServed: +perServedMs.toFixed(3), mainCpuMsPer429: +per429Ms.toFixed(3), loadAverage: (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ') }, null, 2) + '\n',
  );
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
