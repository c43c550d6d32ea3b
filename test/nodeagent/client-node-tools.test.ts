// @kubernetes/client-node 1.3.0's helpers that need a node agent, used as its README and examples
// use them (client-node-streams.test.ts has Exec, Attach, PortForward and following Log): Log's
// tail and since options and its error, the typed log read, Exec's Status when the call fails,
// Cp both ways (exec + tar), Metrics (metrics.k8s.io, docs/metrics.md) and the Top helpers.
// A server with kube's group names (`--api-domain k8s.io`, as Metrics asks metrics.k8s.io) and a
// 1 s metric resolution, so no test waits for a 15 s scrape.

import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sink } from '../helpers/client-node.js';
import { eventually as waitFor } from '../helpers/eventually.js';
import { type AgentProcess, startAgentProcess, stopAgentAndServer, waitNodeReady } from '../helpers/nodeagent.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let ts: TestServer;
let agent: AgentProcess;
let kc: k8s.KubeConfig;
let core: k8s.CoreV1Api;
let dir: string;
const NS = 'default';
const NODE = 'node-cnt';

const eventually = <T>(f: () => Promise<T> | T, what: string, ms = 45_000) => waitFor(f, what, { timeoutMs: ms, intervalMs: 200, context: () => agent?.output().slice(-2000) ?? '' });

/** the ApiException a call rejects with */
async function apiError(p: Promise<unknown>): Promise<k8s.ApiException<unknown>> {
  try {
    await p;
  } catch (e) {
    if (e instanceof k8s.ApiException) return e as k8s.ApiException<unknown>;
    throw e;
  }
  throw new Error('the call succeeded');
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-client-node-tools-'));
  ts = await startTestServer({ apiDomain: 'k8s.io', metricResolutionMs: 1000 });
  agent = await startAgentProcess(ts, { nodeName: NODE, config: { apiVersion: 'nodeagent.config.k8s.io/v1beta1' } });
  kc = new k8s.KubeConfig();
  kc.loadFromFile(join(ts.dataDir, 'admin.kubeconfig'));
  core = kc.makeApiClient(k8s.CoreV1Api);
  await waitNodeReady(ts, agent, NODE);
  const resources = { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } };
  // `lines` writes five numbered lines and waits; `app` only pretends (the simulator's readings are its own)
  await core.createNamespacedPod({
    namespace: NS,
    body: { metadata: { name: 'lines' }, spec: { nodeName: NODE, containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', 'for i in 1 2 3 4 5; do echo line $i; done; sleep 3600'] }] } },
  });
  await core.createNamespacedPod({ namespace: NS, body: { metadata: { name: 'app', labels: { app: 'web' } }, spec: { nodeName: NODE, containers: [{ name: 'web', image: 'nginx', resources }] } } });
  for (const name of ['lines', 'app']) {
    await eventually(async () => (await core.readNamespacedPod({ namespace: NS, name })).status?.phase === 'Running', `pod ${name} running`);
  }
}, 90_000);

afterAll(async () => {
  await stopAgentAndServer(agent, ts);
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('Log', () => {
  it.concurrent('tailLines, sinceSeconds and the typed readNamespacedPodLog', async ({ expect }) => {
    const read = async (options: k8s.LogOptions): Promise<string> => {
      const out = new PassThrough();
      let text = '';
      out.on('data', (d: Buffer) => (text += d.toString()));
      const ended = new Promise((r) => out.on('end', r));
      await new k8s.Log(kc).log(NS, 'lines', 'main', out, options);
      await ended;
      return text;
    };
    const all = 'line 1\nline 2\nline 3\nline 4\nline 5\n';
    await eventually(async () => (await read({})) === all, 'the five lines');
    expect(await read({ tailLines: 2 })).toBe('line 4\nline 5\n');
    expect(await read({ sinceSeconds: 3600 })).toBe(all);
    const stamped = await read({ tailLines: 1, timestamps: true });
    expect(stamped).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z line 5\n$/);
    // sinceTime after the lines were written: nothing
    const later = new Date(Date.parse(stamped.split(' ')[0]!) + 1000).toISOString();
    expect(await read({ sinceTime: later })).toBe('');
    expect(await read({ limitBytes: 8 })).toBe('line 1\nl');
    const typed = await core.readNamespacedPodLog({ namespace: NS, name: 'lines', container: 'main', tailLines: 3 });
    expect(typed).toBe('line 3\nline 4\nline 5\n');
  });

  it.concurrent('a log request that fails is an ApiException with the status code', async ({ expect }) => {
    const missing = await apiError(new k8s.Log(kc).log(NS, 'no-such-pod', 'main', new PassThrough(), {}));
    expect(missing.code).toBe(404);
    const badContainer = await apiError(core.readNamespacedPodLog({ namespace: NS, name: 'lines', container: 'nope' }));
    expect(badContainer.code).toBe(400);
    expect(JSON.parse(String(badContainer.body))).toMatchObject({
      kind: 'Status',
      reason: 'BadRequest',
      message: 'container nope is not valid for pod lines',
    });
    const previous = await apiError(core.readNamespacedPodLog({ namespace: NS, name: 'lines', container: 'main', previous: true }));
    expect(previous.code).toBe(400);
    expect(JSON.parse(String(previous.body)).message).toBe('previous terminated container "main" in pod "lines" not found');
  });
});

describe('Exec failures', () => {
  it.concurrent('a command that cannot start ends with a Failure Status; a missing pod refuses the upgrade', async ({ expect }) => {
    let status: k8s.V1Status | undefined;
    const out = sink();
    const err = sink();
    const ws = await new k8s.Exec(kc).exec(NS, 'lines', 'main', ['/no/such/binary'], out, err, null, false, (s) => (status = s));
    await new Promise((r) => ws.once('close', r));
    expect(status).toMatchObject({ status: 'Failure' });
    expect(status?.message).toContain('/no/such/binary');
    const refused = await new k8s.Exec(kc).exec(NS, 'no-such-pod', 'main', ['true'], out, err, null, false).then(
      () => '',
      (e: Error) => e.message,
    );
    expect(refused).toMatch(/404/);
  });
});

describe('proxy and connect through the typed API', () => {
  it.concurrent('connectGetNodeProxyWithPath reaches the agent; the typed exec call without an upgrade is a 400', async ({ expect }) => {
    expect(await core.connectGetNodeProxyWithPath({ name: NODE, path: 'healthz' })).toBe('ok');
    // the generated connect methods send a plain GET: the server asks for the upgrade, as kube-apiserver does
    const plain = await apiError(core.connectGetNamespacedPodExec({ namespace: NS, name: 'lines', command: 'true', stdout: true }));
    expect(plain.code).toBe(400);
    expect(JSON.parse(String(plain.body))).toMatchObject({ kind: 'Status', reason: 'BadRequest', message: 'Upgrade request required' });
  });
});

describe('Cp', () => {
  it.concurrent('cpToPod and cpFromPod move files through exec and tar', async ({ expect }) => {
    // the simulated containers share the host's file system: a path "in the pod" is a host path
    const local = join(dir, 'local');
    const inPod = join(dir, 'in-pod');
    const back = join(dir, 'back');
    await Promise.all([mkdir(local), mkdir(inPod), mkdir(back)]);
    await writeFile(join(local, 'hello.txt'), 'hello from client-node\n');
    // cpToPod packs the local directory's entries and unpacks them into the pod's directory
    await new k8s.Cp(kc).cpToPod(NS, 'lines', 'main', local, inPod);
    expect(await eventually(() => readFile(join(inPod, 'hello.txt'), 'utf8'), 'the copied file in the pod')).toBe('hello from client-node\n');
    // cpFromPod of 1.3.0 fails against any cluster: it asks tar for a gzipped stream its extractor cannot
    // read (kubernetes-client/javascript#2663, fixed after 1.3.0), and takes tar's note on stderr about an
    // absolute path for an error (#1180). The test's Exec sends `tar cf - -C / <path>` instead.
    class PlainTarExec extends k8s.Exec {
      override exec(...args: Parameters<k8s.Exec['exec']>): ReturnType<k8s.Exec['exec']> {
        const [tar, , dash, src] = args[3];
        if (tar === 'tar' && src?.startsWith('/')) args[3] = [tar, 'cf', dash!, '-C', '/', src.slice(1)];
        return super.exec(...args);
      }
    }
    await new k8s.Cp(kc, new PlainTarExec(kc)).cpFromPod(NS, 'lines', 'main', join(inPod, 'hello.txt'), back);
    // tar keeps the path below the root it strips
    expect(await eventually(() => readFile(join(back, inPod.slice(1), 'hello.txt'), 'utf8'), 'the file copied back')).toBe('hello from client-node\n');
  });
});

describe('Metrics and Top', () => {
  it.concurrent('getNodeMetrics and getPodMetrics read metrics.k8s.io', async ({ expect }) => {
    const metrics = new k8s.Metrics(kc);
    const nodes = await eventually(async () => {
      const list = await metrics.getNodeMetrics();
      return list.items.length > 0 && list;
    }, 'node metrics');
    expect(nodes).toMatchObject({ kind: 'NodeMetricsList', apiVersion: 'metrics.k8s.io/v1beta1' });
    expect(nodes.items[0]).toMatchObject({ metadata: { name: NODE }, window: expect.stringMatching(/^(\d+(\.\d+)?(ns|µs|ms|s|m|h))+$/) }); // a Go duration
    expect(nodes.items[0]!.usage.cpu).toMatch(/^\d+[nm]?$/);
    expect(nodes.items[0]!.usage.memory).toMatch(/^\d+Ki$/);
    const pods = await eventually(async () => {
      const list = await metrics.getPodMetrics(NS);
      return list.items.some((p) => p.metadata.name === 'app') && list;
    }, 'pod metrics');
    expect(pods).toMatchObject({ kind: 'PodMetricsList', apiVersion: 'metrics.k8s.io/v1beta1' });
    const app = pods.items.find((p) => p.metadata.name === 'app')!;
    expect(app.metadata.namespace).toBe(NS);
    expect(app.containers.map((c) => c.name)).toEqual(['web']);
    // a Quantity in canonical form: nanocores, or millicores when exact (the simulator's pretended readings)
    expect(app.containers[0]!.usage.cpu).toMatch(/^\d+[nm]?$/);
    const all = await metrics.getPodMetrics();
    expect(all.items.map((p) => `${p.metadata.namespace}/${p.metadata.name}`)).toContain(`${NS}/app`);
  });

  it.concurrent('topNodes sums the requests and limits of the node\'s running pods; topPods adds the usage', async ({ expect }) => {
    const nodes = await k8s.topNodes(core);
    expect(nodes.map((n) => n.Node.metadata?.name)).toEqual([NODE]);
    const node = nodes[0]!;
    expect(Number(node.CPU.Capacity)).toBeGreaterThan(0);
    expect(node.CPU.RequestTotal).toBe(0.1);
    expect(node.CPU.LimitTotal).toBe(0.2);
    expect(node.Memory.RequestTotal).toBe(BigInt(64 * 1024 * 1024));
    expect(node.Memory.LimitTotal).toBe(BigInt(128 * 1024 * 1024));
    const pods = await eventually(async () => {
      const top = await k8s.topPods(core, new k8s.Metrics(kc), NS);
      const app = top.find((p) => p.Pod.metadata?.name === 'app');
      return app && app.Containers.length > 0 && app;
    }, 'topPods with the app pod\'s usage');
    expect(pods.Containers.map((c) => c.Container)).toEqual(['web']);
    expect(pods.CPU.RequestTotal).toBe(0.1);
    expect(pods.CPU.LimitTotal).toBe(0.2);
    expect(Number(pods.CPU.CurrentUsage)).toBeGreaterThan(0);
    expect(Number(pods.Memory.CurrentUsage)).toBeGreaterThan(0);
  });
});
