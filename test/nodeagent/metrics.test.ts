// The resource metrics pipeline end to end (docs/metrics.md): a real server
// (`--api-domain k8s.io`, a 1 s metric resolution so no test waits 15 s) and a
// real node agent process; kubectl 1.32's `top node` and `top pod` print rows
// once two scrapes have been stored, the APIService is listed Available, and
// RBAC guards metrics.k8s.io as kube with metrics-server does. The agent's
// own endpoints check nodes/metrics and nodes/stats with a SubjectAccessReview.

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueClientCertificate, loadPki } from '../../src/server/pki.js';
import { renderKubeconfig } from '../../src/server/kubeconfig.js';
import { eventually as waitFor } from '../helpers/eventually.js';
import { runKubectl } from '../helpers/kubectl.js';
import { type AgentProcess, startAgentProcess, stopAgentAndServer, waitNodeReady } from '../helpers/nodeagent.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let ts: TestServer;
let agent: AgentProcess;
let dir: string;
let admin: string;
const users: Record<string, { kubeconfig: string; certPem: string; keyPem: string }> = {};

const eventually = <T>(f: () => Promise<T>, what: string) => waitFor(f, what, { timeoutMs: 45_000, intervalMs: 250, context: () => agent?.output().slice(-2000) ?? '' });

/** a GET on the agent's own HTTPS port with a user's client certificate */
function agentGet(user: string, path: string): Promise<{ status: number; body: string; type: string }> {
  const u = users[user]!;
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port: agent.port, path, cert: u.certPem, key: u.keyPem, rejectUnauthorized: false }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, type: String(res.headers['content-type'] ?? '') }));
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-metrics-'));
  ts = await startTestServer({ apiDomain: 'k8s.io', metricResolutionMs: 1000 });
  admin = join(ts.dataDir, 'admin.kubeconfig');
  agent = await startAgentProcess(ts, { nodeName: 'node-m', config: { apiVersion: 'nodeagent.config.k8s.io/v1beta1', authorization: { mode: 'Webhook' } } });
  const pki = await loadPki(join(ts.dataDir, 'pki'));
  for (const name of ['alice', 'bob']) {
    const cert = await issueClientCertificate(pki, { commonName: name });
    const kubeconfig = join(dir, `${name}.kubeconfig`);
    await writeFile(kubeconfig, renderKubeconfig({ server: ts.server.url, caPem: pki.ca.certPem, clientCertPem: cert.certPem, clientKeyPem: cert.keyPem, user: name }));
    users[name] = { kubeconfig, certPem: cert.certPem, keyPem: cert.keyPem };
  }
  await waitNodeReady(ts, agent, 'node-m');
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } },
    spec: { nodeName: 'node-m', containers: [{ name: 'nginx', image: 'nginx' }, { name: 'side', image: 'busybox', command: ['sleep', '3600'] }] },
  };
  expect((await ts.request('POST', '/api/v1/namespaces/default/pods', { body: pod })).status).toBe(201);
}, 90_000);

afterAll(async () => {
  await stopAgentAndServer(agent, ts);
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('kubectl top', () => {
  it('prints the node and the pod once two scrapes were stored', async () => {
    const node = await eventually(async () => {
      const r = await runKubectl(admin, ['top', 'node']);
      return /^node-m\s+\d+m\s+\d+%\s+\d+Mi\s+\d+%\s*$/m.exec(r.stdout)?.[0];
    }, 'kubectl top node prints node-m');
    expect(node).toMatch(/^node-m/);
    const pod = await eventually(async () => /^web\s+\d+m\s+\d+Mi\s*$/m.exec((await runKubectl(admin, ['top', 'pod'])).stdout)?.[0], 'kubectl top pod prints web');
    expect(pod).toMatch(/^web/);
    const containers = await runKubectl(admin, ['top', 'pod', 'web', '--containers']);
    expect(containers.code).toBe(0);
    expect(containers.stdout).toMatch(/^web\s+nginx\s+\d+m\s+\d+Mi\s*$/m);
    expect(containers.stdout).toMatch(/^web\s+side\s+\d+m\s+\d+Mi\s*$/m);
    const selected = await runKubectl(admin, ['top', 'pod', '-l', 'app=web', '-A']);
    expect(selected.stdout).toMatch(/^default\s+web\s+/m);
    const none = await runKubectl(admin, ['top', 'pod', '-l', 'app=nothing']);
    expect(none.stdout).not.toMatch(/web/);
    // kubectl get: metrics-server's table columns
    const nodes = await runKubectl(admin, ['get', 'nodes.metrics.k8s.io']);
    expect(nodes.stdout).toMatch(/^NAME\s+CPU\s+MEMORY\s+WINDOW\s*\n/);
    expect(nodes.stdout).toMatch(/^node-m\s+\d+[num]?\s+\d+(Ki|Mi|Gi)?\s+\d+(\.\d+)?m?s\s*$/m);
    expect((await runKubectl(admin, ['get', 'podmetrics', 'web'])).stdout).toMatch(/^web\s+\d+[num]?\s+\d+(Ki|Mi)?\s+\S+s\s*$/m);
  });

  it('answers metrics-server JSON, with field selectors and 404s', async () => {
    const n = await eventually(async () => {
      const r = await ts.request('GET', '/apis/metrics.k8s.io/v1beta1/nodes/node-m');
      return r.status === 200 && r.json<Record<string, any>>();
    }, 'NodeMetrics of node-m');
    expect(n).toMatchObject({ kind: 'NodeMetrics', apiVersion: 'metrics.k8s.io/v1beta1', metadata: { name: 'node-m' } });
    expect(n.usage.cpu).toMatch(/^\d+[num]?$/);
    expect(n.usage.memory).toMatch(/^\d+(Ki|Mi|Gi)?$/);
    expect(n.window).toMatch(/^\d+(\.\d+)?m?s$/);
    expect(n.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const list = (await ts.request('GET', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?fieldSelector=metadata.name%3Dweb')).json<Record<string, any>>();
    expect(list.kind).toBe('PodMetricsList');
    expect(list.items.map((p: { metadata: { name: string } }) => p.metadata.name)).toEqual(['web']);
    expect(list.items[0].metadata.labels).toEqual({ app: 'web' });
    expect(list.items[0].containers.map((c: { name: string }) => c.name)).toEqual(['nginx', 'side']);
    const other = (await ts.request('GET', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?fieldSelector=metadata.name%3Dother')).json<{ items: unknown[] }>();
    expect(other.items).toEqual([]);
    expect((await ts.request('GET', '/apis/metrics.k8s.io/v1beta1/nodes?fieldSelector=spec.unschedulable%3Dtrue')).status).toBe(400);
    expect((await ts.request('GET', '/apis/metrics.k8s.io/v1beta1/nodes/no-such-node')).status).toBe(404);
    expect((await ts.request('DELETE', '/apis/metrics.k8s.io/v1beta1/nodes/node-m')).status).toBe(405);
  });

  it('lists the local APIService as Available', async () => {
    const r = await eventually(async () => {
      const x = await runKubectl(admin, ['get', 'apiservices', 'v1beta1.metrics.k8s.io']);
      return x.code === 0 && x.stdout;
    }, 'the metrics APIService');
    expect(r).toMatch(/^v1beta1\.metrics\.k8s\.io\s+Local\s+True\s/m);
  });

  it.skipIf(!existsSync('/usr/bin/python3'))('the python client reads NodeMetrics and PodMetrics', async () => {
    const script = [
      'import sys',
      'try:',
      '    from kubernetes import client, config, utils',
      'except ImportError:',
      '    print("no-client"); sys.exit(0)',
      `config.load_kube_config("${admin}")`,
      'api = client.CustomObjectsApi()',
      'nodes = api.list_cluster_custom_object("metrics.k8s.io", "v1beta1", "nodes")',
      'pods = api.list_namespaced_custom_object("metrics.k8s.io", "v1beta1", "default", "pods")',
      'n = nodes["items"][0]',
      'print(n["metadata"]["name"], utils.parse_quantity(n["usage"]["cpu"]) >= 0, utils.parse_quantity(n["usage"]["memory"]) > 0)',
      'for p in pods["items"]:',
      '    for c in p["containers"]:',
      '        print(p["metadata"]["name"], c["name"], utils.parse_quantity(c["usage"]["memory"]) > 0)',
    ].join('\n');
    const r = await promisify(execFile)('/usr/bin/python3', ['-c', script], { timeout: 30_000 });
    if (r.stdout.trim() === 'no-client') return;
    expect(r.stdout).toContain('node-m True True');
    expect(r.stdout).toContain('web nginx True');
    expect(r.stdout).toContain('web side True');
  });
});

describe('authorization', () => {
  it('refuses metrics.k8s.io without the aggregated reader role, and allows it through view', async () => {
    const bob = users.bob!.kubeconfig;
    const denied = await runKubectl(bob, ['top', 'pod']);
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toMatch(/forbidden/i);
    expect(denied.stderr).toContain('pods.metrics.k8s.io is forbidden: User "bob" cannot list resource "pods" in API group "metrics.k8s.io"');
    expect((await runKubectl(admin, ['create', 'rolebinding', 'bob-view', '--clusterrole=view', '--user=bob', '-n', 'default'])).code).toBe(0);
    // system:aggregated-metrics-reader is aggregated into view by the aggregation controller
    const allowed = await eventually(async () => {
      const r = await runKubectl(bob, ['top', 'pod', '-n', 'default']);
      return r.code === 0 && r.stdout;
    }, 'bob reads pod metrics through view');
    expect(allowed).toMatch(/^web\s+/m);
    // view is namespaced here: nodes stay out of reach
    expect((await runKubectl(bob, ['top', 'node'])).code).not.toBe(0);
  });

  it('the agent checks nodes/metrics and nodes/stats (Webhook mode)', async () => {
    const refused = await agentGet('alice', '/metrics/resource');
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('subresource=metrics');
    expect((await agentGet('alice', '/stats/summary')).status).toBe(403);
    await runKubectl(admin, ['create', 'clusterrole', 'node-usage', '--verb=get', '--resource=nodes/metrics,nodes/stats']);
    await runKubectl(admin, ['create', 'clusterrolebinding', 'alice-node-usage', '--clusterrole=node-usage', '--user=alice']);
    const text = await eventually(async () => {
      const r = await agentGet('alice', '/metrics/resource');
      return r.status === 200 && r;
    }, 'alice reads /metrics/resource');
    expect(text.type).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(text.body).toMatch(/^container_cpu_usage_seconds_total\{container="nginx",namespace="default",pod="web"\} \S+ \d+$/m);
    expect(text.body).toMatch(/^node_memory_working_set_bytes \S+ \d+$/m);
    expect(text.body).toMatch(/^resource_scrape_error 0$/m);
    const summary = JSON.parse((await agentGet('alice', '/stats/summary')).body) as Record<string, any>;
    expect(summary.node.nodeName).toBe('node-m');
    expect(summary.node.memory.workingSetBytes).toBeGreaterThan(0);
    const web = summary.pods.find((p: { podRef: { name: string } }) => p.podRef.name === 'web');
    expect(web.containers.map((c: { name: string }) => c.name)).toEqual(['nginx', 'side']);
    expect(web.cpu.usageCoreNanoSeconds).toBeGreaterThan(0);
  });
});
