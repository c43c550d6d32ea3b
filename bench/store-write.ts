// Write throughput and latency, single node: through the HTTP API (real TLS,
// real kubeconfig credentials) and directly on the store, in the same run.
//
//   npx tsx bench/store-write.ts [writes=2000] [valueSize=1024]
//
// Prints one JSON document. No reference system runs here; the direct store
// figures are the baseline the API path is compared to (ratio = api/direct).

import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../src/server/server.js';
import { type LatencyStats, benchStoreDirect } from './store-direct.js';

const writes = Number(process.argv[2] ?? 2000);
const valueSize = Number(process.argv[3] ?? 1024);

function stats(lat: number[], elapsedMs: number): LatencyStats {
  const s = [...lat].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? 0;
  return { opsPerSec: Math.round((lat.length / elapsedMs) * 1000), p50Ms: +q(0.5).toFixed(3), p99Ms: +q(0.99).toFixed(3) };
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-bench-'));
  const server = await startServer({ dataDir: join(dir, 'api'), bindAddress: '127.0.0.1', securePort: 0, apiDomain: 'orch.io', log: () => {} });
  const agent = new Agent({ keepAlive: true, maxSockets: 64, ca: server.caPem, cert: server.adminCertPem, key: server.adminKeyPem });
  const value = 'x'.repeat(valueSize);
  const post = (name: string): Promise<number> =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: value } });
      const t0 = performance.now();
      const req = request(
        { host: '127.0.0.1', port: server.port, method: 'POST', path: '/api/v1/namespaces/default/configmaps', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } },
        (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 201 ? resolve(performance.now() - t0) : reject(new Error(`status ${res.statusCode}`))));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  try {
    const seq: number[] = [];
    let t0 = performance.now();
    for (let i = 0; i < writes; i++) seq.push(await post(`seq-${i}`));
    const apiSequential = stats(seq, performance.now() - t0);
    const conc: number[] = [];
    let next = 0;
    t0 = performance.now();
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < writes) conc.push(await post(`conc-${next++}`));
      }),
    );
    const apiConcurrent64 = stats(conc, performance.now() - t0);
    const direct = await benchStoreDirect({ dir: join(dir, 'direct'), writes, valueSize });
    process.stdout.write(
      JSON.stringify(
        {
          benchmark: 'store-write',
          writes,
          valueSize,
          api: { sequential: apiSequential, concurrent64: apiConcurrent64 },
          store: direct,
          ratio: {
            sequentialApiOverStore: +(apiSequential.opsPerSec / direct.sequential.opsPerSec).toFixed(3),
            concurrent64ApiOverStore: +(apiConcurrent64.opsPerSec / direct.concurrent64.opsPerSec).toFixed(3),
          },
        },
        null,
        2,
      ) + '\n',
    );
  } finally {
    agent.destroy();
    await server.shutdown();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
