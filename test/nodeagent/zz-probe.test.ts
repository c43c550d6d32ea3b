import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { runKubectl } from '../helpers/kubectl.js';
import { beforeAll, afterAll } from 'vitest';
import { startAgentProcess, waitNodeReady, stopAgentAndServer, type AgentProcess } from '../helpers/nodeagent.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
let ts: TestServer; let ag: AgentProcess;
beforeAll(async () => { ts = await startTestServer({ apiDomain: 'k8s.io', metricResolutionMs: 1000 }); ag = await startAgentProcess(ts, { nodeName: 'node-p', config: { apiVersion: 'nodeagent.config.k8s.io/v1beta1' } }); await waitNodeReady(ts, ag, 'node-p'); }, 90000);
afterAll(async () => { await stopAgentAndServer(ag, ts); });
const env = { ts: () => ts };

const NODE = 'node-p';
const k = (...a: string[]) => runKubectl(join(env.ts().dataDir, 'admin.kubeconfig'), a);
const report: string[] = [];
async function tryK(...a: string[]) {
  const r = await k(...a);
  report.push(`\n### kubectl ${a.join(' ')} => ${r.code}\n${r.stdout.slice(0, 1500)}\n${r.stderr.slice(0, 1500)}`);
  return r;
}
describe('probe', () => {
  it('probe', async () => {
    await k('create', 'deployment', 'web', '--image=nginx', '--replicas=2', '--port=80');
    await k('expose', 'deployment', 'web', '--port=80');
    await k('create', '-f', '-');
    await eventually(async () => (await k('get', 'deploy', 'web', '-o', 'jsonpath={.status.readyReplicas}')).stdout === '2', 'ready', { timeoutMs: 40000 });
    await eventually(async () => (await k('get', 'deploy', 'web', '-o', 'jsonpath={.status.readyReplicas}')).stdout === '2', 'ready', { timeoutMs: 40000 });
    await tryK('get', '--raw', '/api/v1/namespaces/default/services/web:80/proxy/');
    await tryK('get', '--raw', '/api/v1/namespaces/default/services/http:web:80/proxy/index.html');
    const pod = (await k('get', 'pods', '-l', 'app=web', '-o', 'jsonpath={.items[0].metadata.name}')).stdout;
    await tryK('get', '--raw', `/api/v1/namespaces/default/pods/${pod}/proxy/`);
    await tryK('get', '--raw', `/api/v1/namespaces/default/pods/${pod}:80/proxy/`);
    await tryK('get', '--raw', `/api/v1/nodes/${NODE}/proxy/healthz`);
    await tryK('get', '--raw', `/api/v1/nodes/${NODE}/proxy/configz`);
    await tryK('get', '--raw', `/api/v1/nodes/${NODE}/proxy/stats/summary`);
    await tryK('get', '--raw', `/api/v1/nodes/${NODE}/proxy/pods`);
    await tryK('get', '--raw', '/metrics');
    await tryK('wait', '--for=condition=Ready', 'pod', '-l', 'app=web', '--timeout=10s');
    await tryK('wait', '--for=condition=Ready', 'pod', '--all', '--timeout=10s');
    await tryK('get', 'pods', '--show-kind', '-L', 'app', '-o', 'wide');
    await tryK('events', '--for', `node/${NODE}`);
    await tryK('get', 'pods', '-A', '--field-selector', `spec.nodeName=${NODE}`, '-o', 'name');
    await tryK('get', 'lease', '-n', 'kube-node-lease');
    await tryK('get', 'csr');
    await tryK('drain', NODE, '--disable-eviction', '--ignore-daemonsets', '--delete-emptydir-data', '--force', '--grace-period=1', '--timeout=30s', '--dry-run=server');
    await tryK('drain', NODE, '--disable-eviction', '--ignore-daemonsets', '--delete-emptydir-data', '--grace-period=1', '--timeout=30s');
    await tryK('get', 'pods', '-o', 'wide');
    await tryK('uncordon', NODE);
    await tryK('get', 'node', NODE, '-o', 'jsonpath={.spec}');
    await tryK('auth', 'can-i', 'get', 'nodes/proxy');
    await tryK('auth', 'can-i', 'create', 'pods', '--subresource=exec');
    console.log(report.join('\n'));
    expect(1).toBe(1);
  }, 200000);
});
