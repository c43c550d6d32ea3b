// Creates per second of a custom resource beside the built-in ConfigMap, in
// the same run against the same single-node server (a real process on
// loopback, HTTPS with the admin client certificate), at 1 and 64 creates in
// flight. The custom resource is the operator fixture's WebApp: a structural
// schema with defaults, list-map and set markers and two CEL rules, so a create
// pays for pruning, defaulting, validation and rule evaluation.
//
//   npx tsx bench/crd.ts [creates=2000]
//
// Prints one JSON document; ratio = custom resource / ConfigMap (throughput:
// <1 is slower). Phases alternate (ConfigMap, WebApp) per concurrency level so
// that drift of a shared host hits both alike.

import { freePort } from '../test/helpers/ports.js';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { type DriveStats as Stats, drive, sleep } from './drive.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const creates = Number(process.argv[2] ?? 2000);
const inFlights = (process.env.BENCH_INFLIGHT ?? '1,64').split(',').map(Number);

function call(agent: Agent, port: number, method: string, path: string, body: string, expect: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        if (res.statusCode === expect) resolve(text);
        else reject(new Error(`${method} ${path}: status ${res.statusCode}: ${text.slice(0, 300)}`));
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'orch-bench-crd-'));
  const port = await freePort();
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'server', '--data-dir', root, '--secure-port', String(port), '--tls-workers', '0'], {
    cwd: REPO,
    stdio: process.env.BENCH_MEMBER_LOGS ? 'inherit' : 'ignore',
  });
  try {
    let agent: Agent | undefined;
    for (let attempt = 0; attempt < 300 && !agent; attempt++) {
      try {
        const [ca, cert, key] = await Promise.all(['ca.crt', 'admin.crt', 'admin.key'].map((f) => readFile(join(root, 'pki', f), 'utf8')));
        const a = new Agent({ keepAlive: true, maxSockets: 64, ca, cert, key });
        await call(a, port, 'GET', '/readyz', '', 200);
        agent = a;
      } catch {
        await sleep(200);
      }
    }
    if (!agent) throw new Error('server did not become ready');
    const crd = parseAllDocuments(await readFile(join(REPO, 'test/fixtures/crds/operator.yaml'), 'utf8'))[0]!.toJSON() as { metadata: { name: string } };
    await call(agent, port, 'POST', '/apis/apiextensions.orch.io/v1/customresourcedefinitions', JSON.stringify(crd), 201);
    for (let i = 0; i < 200; i++) {
      const got = JSON.parse(await call(agent, port, 'GET', `/apis/apiextensions.orch.io/v1/customresourcedefinitions/${crd.metadata.name}`, '', 200));
      if (got.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True')) break;
      await sleep(50);
    }
    const data = 'x'.repeat(200);
    // warm-up of both paths (JIT, caches) so that the first measured phase is not penalised
    const warm = Math.min(200, creates);
    await drive(warm, 8, (i) => call(agent!, port, 'POST', '/api/v1/namespaces/default/configmaps', JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `warm-${i}` }, data: { v: data } }), 201).then(() => undefined));
    await drive(warm, 8, (i) => call(agent!, port, 'POST', '/apis/apps.example.com/v1/namespaces/default/webapps', JSON.stringify({ apiVersion: 'apps.example.com/v1', kind: 'WebApp', metadata: { name: `warm-${i}` }, spec: { image: 'nginx:1.27' } }), 201).then(() => undefined));
    const results: Record<string, { configMap: Stats; customResource: Stats; ratio: number }> = {};
    for (const inFlight of inFlights) {
      const configMap = await drive(creates, inFlight, async (i) => {
        const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm${inFlight}-${i}` }, data: { image: 'nginx:1.27', note: data } });
        await call(agent!, port, 'POST', '/api/v1/namespaces/default/configmaps', body, 201);
      });
      const customResource = await drive(creates, inFlight, async (i) => {
        const body = JSON.stringify({
          apiVersion: 'apps.example.com/v1',
          kind: 'WebApp',
          metadata: { name: `wa${inFlight}-${i}` },
          spec: { image: 'nginx:1.27', replicas: 2, contact: 'ops@example.com', ports: [{ name: 'http', port: 8080 }], tags: ['web', data.slice(0, 100)] },
        });
        await call(agent!, port, 'POST', '/apis/apps.example.com/v1/namespaces/default/webapps', body, 201);
      });
      results[`inFlight${inFlight}`] = { configMap, customResource, ratio: +(customResource.opsPerSec / configMap.opsPerSec).toFixed(3) };
    }
    agent.destroy();
    console.log(JSON.stringify({ bench: 'crd-create', creates, node: process.version, results }, null, 2));
  } finally {
    proc.kill('SIGTERM');
    await new Promise((r) => (proc.exitCode !== null ? r(undefined) : proc.once('exit', r)));
    await rm(root, { recursive: true, force: true });
  }
}

await main();
