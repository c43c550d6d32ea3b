// `kubectl drain` (1.32) against a real control plane and a real node agent:
// the node is cordoned, its pods are evicted through pods/eviction (one of
// them under a PodDisruptionBudget the disruption controller keeps current),
// the agent stops them and they are gone; the pod the DaemonSet controller
// made for the node stays (--ignore-daemonsets), the unmanaged ones go (--force).

import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { runKubectl } from '../helpers/kubectl.js';
import { type AgentProcess, startAgentProcess } from '../helpers/nodeagent.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let ts: TestServer;
let agent: AgentProcess | undefined;
const NS = '/api/v1/namespaces/default';

type Obj = { metadata: { name: string; uid: string }; spec: Record<string, unknown>; status: { phase?: string; disruptionsAllowed?: number; observedGeneration?: number } };
const get = async (path: string): Promise<Obj | undefined> => {
  const r = await ts.request('GET', path);
  return r.status === 200 ? r.json<Obj>() : undefined;
};

function podBody(name: string, labels: Record<string, string>): Record<string, unknown> {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, labels },
    spec: { nodeName: 'node-1', terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: 'busybox', command: ['sleep', '3600'] }] },
  };
}

beforeAll(async () => {
  ts = await startTestServer();
  agent = await startAgentProcess(ts, { nodeName: 'node-1' });
});

afterAll(async () => {
  await agent?.stop();
  await ts?.stop();
  if (agent) await rm(agent.dir, { recursive: true, force: true });
});

describe('kubectl drain', () => {
  it('cordons the node and evicts its pods (through a budget), leaving the DaemonSet pod', async () => {
    await eventually(async () => (await get('/api/v1/nodes/node-1'))?.metadata.name, 'node-1 registered', 60_000);
    const ds = await ts.request('POST', '/apis/apps/v1/namespaces/default/daemonsets', {
      body: { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'agent' }, spec: { selector: { matchLabels: { app: 'agent' } }, template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } } },
    });
    expect(ds.status, ds.text).toBe(201);
    // the DaemonSet controller makes the node's daemon pod
    const agentPod = await eventually(async () => {
      const r = await ts.request('GET', `${NS}/pods?labelSelector=app%3Dagent`);
      const items = r.json<{ items: Obj[] }>().items;
      return items.length === 1 && items[0]!.status.phase === 'Running' ? items[0]!.metadata.name : undefined;
    }, 'daemon pod Running', { timeoutMs: 60_000, context: () => agent!.output().slice(-2000) });
    for (const b of [
      podBody('web-1', { app: 'web' }),
      podBody('web-2', { app: 'web' }),
    ]) {
      const r = await ts.request('POST', `${NS}/pods`, { body: b });
      expect(r.status, r.text).toBe(201);
    }
    const pdb = await ts.request('POST', '/apis/policy/v1/namespaces/default/poddisruptionbudgets', {
      body: { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'web' }, spec: { minAvailable: 0, selector: { matchLabels: { app: 'web' } } } },
    });
    expect(pdb.status, pdb.text).toBe(201);
    for (const n of ['web-1', 'web-2']) await eventually(async () => (await get(`${NS}/pods/${n}`))?.status.phase === 'Running', `${n} Running`, { timeoutMs: 60_000, context: () => agent!.output().slice(-2000) });
    // the budget allows both disruptions once the controller has seen the running, ready pods
    await eventually(async () => (await get('/apis/policy/v1/namespaces/default/poddisruptionbudgets/web'))?.status.disruptionsAllowed === 2, 'budget computed', 30_000);

    const kc = join(ts.dataDir, 'admin.kubeconfig');
    const drain = await runKubectl(kc, ['drain', 'node-1', '--ignore-daemonsets', '--force', '--timeout=60s']);
    expect(drain.code, `${drain.stdout}\n${drain.stderr}`).toBe(0);
    expect(drain.stdout).toContain('node/node-1 cordoned');
    expect(drain.stdout).toMatch(/pod\/web-1 evicted/);
    expect(drain.stdout).toMatch(/pod\/web-2 evicted/);
    expect(drain.stdout).toContain('node/node-1 drained');
    expect(drain.stderr).toContain(`ignoring DaemonSet-managed Pods: default/${agentPod}`);

    expect((await get('/api/v1/nodes/node-1'))?.spec.unschedulable).toBe(true);
    expect(await get(`${NS}/pods/web-1`)).toBeUndefined();
    expect(await get(`${NS}/pods/web-2`)).toBeUndefined();
    expect((await get(`${NS}/pods/${agentPod}`))?.status.phase).toBe('Running');
    const nodeView = await runKubectl(kc, ['get', 'node', 'node-1']);
    expect(nodeView.stdout).toMatch(/SchedulingDisabled/);
  });
});
