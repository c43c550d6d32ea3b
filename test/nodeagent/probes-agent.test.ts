// Probes in a real node agent (docs/nodeagent.md "Probes"): a real control plane, a real
// `orch nodeagent` process with the simulated runtime, and probes against an HTTP server
// of the test (listening on 0.0.0.0, so it answers at the pod's loopback address). A pod
// whose readiness probe fails runs 0/1, Ready=False, and is a not-ready address of its
// Service; when the probe passes it is 1/1 and served. A failing liveness probe restarts
// the container, with kubelet's Unhealthy and Killing events.

import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { writePythonEchoServer } from '../helpers/python-echo.js';
import { runKubectl, startKubectl } from '../helpers/kubectl.js';
import { serverWithAgent } from '../helpers/nodeagent.js';
import { freePort } from '../helpers/ports.js';

const env = serverWithAgent('node-1');
const context = (): string => env.agent().output().slice(-2000);
const admin = () => join(env.ts().dataDir, 'admin.kubeconfig');

/** path → status the test's server answers */
const answers = new Map<string, number>();
let http: Server;
let port: number;
beforeAll(async () => {
  port = await freePort();
  http = createServer((req, res) => res.writeHead(answers.get(req.url ?? '') ?? 404).end());
  await new Promise<void>((r) => http.listen(port, '0.0.0.0', r));
});
afterAll(() => {
  http.closeAllConnections();
  http.close();
});

interface Pod {
  status?: {
    podIP?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    containerStatuses?: { ready: boolean; started?: boolean; restartCount: number; lastState?: { terminated?: { exitCode: number } } }[];
  };
}
const pod = async (name: string): Promise<Pod> => (await env.ts().request('GET', `/api/v1/namespaces/default/pods/${name}`)).json<Pod>();
const cond = (p: Pod, type: string) => p.status?.conditions?.find((c) => c.type === type);
interface Ev {
  reason: string;
  message: string;
  type: string;
  count?: number;
}
async function events(name: string): Promise<Ev[]> {
  const r = await env.ts().request('GET', `/api/v1/namespaces/default/events?fieldSelector=${encodeURIComponent(`involvedObject.name=${name}`)}`);
  return r.json<{ items: Ev[] }>().items;
}

describe('probes in a real node agent', () => {
  it('a failing readiness probe keeps the pod 0/1 and out of its Service; passing, it is 1/1 and served', async () => {
    answers.set('/ready', 500);
    let r = await env.ts().request('POST', '/api/v1/namespaces/default/services', { body: { metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] } } });
    expect(r.status, r.text).toBe(201);
    r = await env.ts().request('POST', '/api/v1/namespaces/default/pods', {
      body: {
        metadata: { name: 'web', labels: { app: 'web' } },
        spec: {
          nodeName: 'node-1',
          containers: [{ name: 'app', image: 'busybox', command: ['sleep', '3600'], ports: [{ containerPort: 8080 }], readinessProbe: { httpGet: { path: '/ready', port }, periodSeconds: 1, failureThreshold: 1 } }],
        },
      },
    });
    expect(r.status, r.text).toBe(201);
    const unready = await eventually(async () => {
      const p = await pod('web');
      return (await events('web')).some((e) => e.reason === 'Unhealthy') && p.status?.podIP && p;
    }, 'an Unhealthy event', { timeoutMs: 30_000, context });
    expect(unready.status!.containerStatuses![0]).toMatchObject({ ready: false, started: true });
    expect(cond(unready, 'Ready')).toMatchObject({ status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [app]' });
    expect(cond(unready, 'ContainersReady')).toMatchObject({ status: 'False' });
    const ev = (await events('web')).find((e) => e.reason === 'Unhealthy')!;
    expect(ev).toMatchObject({ type: 'Warning', message: 'Readiness probe failed: HTTP probe failed with statuscode: 500' });
    const got = await runKubectl(admin(), ['get', 'pod', 'web', '--no-headers']);
    expect(got.stdout).toMatch(/^web\s+0\/1\s+Running\s/);
    // the Service: a not-ready address only
    const ip = unready.status!.podIP!;
    const eps = await eventually(async () => {
      const e = (await env.ts().request('GET', '/api/v1/namespaces/default/endpoints/web')).json<{ subsets?: { addresses?: { ip: string }[]; notReadyAddresses?: { ip: string }[] }[] }>();
      return e.subsets?.[0]?.notReadyAddresses?.some((a) => a.ip === ip) && e;
    }, 'the pod as a not-ready address', { timeoutMs: 20_000, context });
    expect(eps.subsets![0]!.addresses ?? []).toEqual([]);

    answers.set('/ready', 200);
    await eventually(async () => cond(await pod('web'), 'Ready')?.status === 'True', 'Ready=True', { timeoutMs: 20_000, context });
    expect((await pod('web')).status!.containerStatuses![0]).toMatchObject({ ready: true, started: true, restartCount: 0 });
    await eventually(async () => {
      const e = (await env.ts().request('GET', '/api/v1/namespaces/default/endpoints/web')).json<{ subsets?: { addresses?: { ip: string }[] }[] }>();
      return e.subsets?.[0]?.addresses?.some((a) => a.ip === ip);
    }, 'the pod as a ready address', { timeoutMs: 20_000, context });
    // the EndpointSlice (its group follows the API domain: read it as kubectl does)
    await eventually(async () => {
      const out = await runKubectl(admin(), ['get', 'endpointslices', '-n', 'default', '-o', 'json']);
      const slices = JSON.parse(out.stdout) as { items: { endpoints?: { addresses: string[]; conditions: { ready: boolean } }[] }[] };
      return slices.items.flatMap((s) => s.endpoints ?? []).find((e) => e.addresses.includes(ip))?.conditions.ready === true;
    }, 'a ready endpoint in the slice', { timeoutMs: 20_000, context });
    expect((await runKubectl(admin(), ['get', 'pod', 'web', '--no-headers'])).stdout).toMatch(/^web\s+1\/1\s+Running\s/);
  });

  it('a failing liveness probe restarts the container: Unhealthy, then Killing "failed liveness probe, will be restarted"', async () => {
    answers.set('/live', 200);
    const r = await env.ts().request('POST', '/api/v1/namespaces/default/pods', {
      body: {
        metadata: { name: 'live' },
        spec: { nodeName: 'node-1', containers: [{ name: 'app', image: 'busybox', command: ['sleep', '3600'], livenessProbe: { httpGet: { path: '/live', port }, periodSeconds: 1, failureThreshold: 2 } }] },
      },
    });
    expect(r.status, r.text).toBe(201);
    await eventually(async () => cond(await pod('live'), 'Ready')?.status === 'True', 'live Ready', { timeoutMs: 30_000, context });
    answers.set('/live', 503);
    const restarted = await eventually(async () => {
      const p = await pod('live');
      return p.status?.containerStatuses?.[0]?.restartCount === 1 && p;
    }, 'restartCount 1', { timeoutMs: 30_000, context });
    answers.set('/live', 200);
    expect(restarted.status!.containerStatuses![0]!.lastState?.terminated).toBeDefined();
    const list = await eventually(async () => {
      const l = await events('live');
      return l.some((e) => e.reason === 'Killing') && l;
    }, 'a Killing event', { timeoutMs: 10_000, context });
    expect(list.find((e) => e.reason === 'Unhealthy')).toMatchObject({ type: 'Warning', message: 'Liveness probe failed: HTTP probe failed with statuscode: 503' });
    expect(list.find((e) => e.reason === 'Killing')).toMatchObject({ type: 'Normal', message: 'Container app failed liveness probe, will be restarted' });
    // the replacement was created and started again
    await eventually(async () => (await events('live')).filter((e) => e.reason === 'Started').reduce((n, e) => n + (e.count ?? 1), 0) >= 2, 'Started twice', { timeoutMs: 10_000, context });
  });

  it('the python client’s port-forward flow: a host python echo server gated by a tcpSocket startupProbe, then kubectl port-forward to it', async () => {
    const [p1, p2, local] = [await freePort(), await freePort(), await freePort()];
    // an echo server per port, bound to 0.0.0.0, started a second late
    const script = join(env.agent().dir, 'port-server.py');
    await writePythonEchoServer(script, 1);
    const r = await env.ts().request('POST', '/api/v1/namespaces/default/pods', {
      body: {
        metadata: { name: 'port-server' },
        spec: { nodeName: 'node-1', restartPolicy: 'Never', containers: [{ name: 'port-server', image: 'python', command: ['python3', '-u', script, String(p1), String(p2)], startupProbe: { tcpSocket: { port: p2 }, periodSeconds: 1, failureThreshold: 30 } }] },
      },
    });
    expect(r.status, r.text).toBe(201);
    await eventually(async () => (await pod('port-server')).status?.containerStatuses?.[0]?.ready === true, 'containerStatuses[0].ready', { timeoutMs: 30_000, context });
    expect((await pod('port-server')).status!.containerStatuses![0]).toMatchObject({ started: true, restartCount: 0 });
    const pf = startKubectl(admin(), ['port-forward', 'pod/port-server', `${local}:${p1}`]);
    try {
      const echoed = await eventually(
        () =>
          new Promise<string>((resolve, reject) => {
            const sock = connect({ host: '127.0.0.1', port: local });
            let got = '';
            sock.on('connect', () => sock.write('ping'));
            sock.on('data', (d: Buffer) => {
              got += d.toString();
              if (got.length >= 4) sock.end();
            });
            sock.on('close', () => resolve(got));
            sock.on('error', reject);
          }),
        'an echo through kubectl port-forward',
        { timeoutMs: 20_000, context: () => `${pf.out()} ${pf.err()}` },
      );
      expect(echoed).toBe('ping');
    } finally {
      await pf.stop();
    }
  });
});
