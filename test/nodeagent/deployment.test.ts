// A Deployment end to end: a real control plane (scheduler and workload
// controllers in process), a real `orch nodeagent` process with the
// simulated container runtime behind the CRI gRPC interface, and kubectl
// 1.32: `kubectl create deployment` makes pods that are bound, started and
// Ready, and `kubectl rollout status` returns; `kubectl drain` evicts them,
// their replacements wait as unschedulable on the cordoned node, and run
// again after `kubectl uncordon`.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { runKubectl } from '../helpers/kubectl.js';
import { type AgentProcess, startAgentProcess, stopAgentAndServer, waitNodeReady } from '../helpers/nodeagent.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let ts: TestServer;
let agent: AgentProcess | undefined;

type Pod = { metadata: { name: string; uid: string }; spec: { nodeName?: string }; status: { phase?: string; conditions?: { type: string; status: string; reason?: string; message?: string }[] } };

async function pods(): Promise<Pod[]> {
  const r = await ts.request('GET', '/api/v1/namespaces/default/pods?labelSelector=app%3Dweb');
  expect(r.status, r.text).toBe(200);
  return r.json<{ items: Pod[] }>().items;
}

beforeAll(async () => {
  ts = await startTestServer();
  agent = await startAgentProcess(ts, { nodeName: 'node-1' });
});

afterAll(async () => {
  await stopAgentAndServer(agent, ts);
});

describe('a Deployment on a real node agent', () => {
  it('kubectl create deployment, rollout status returns; drained pods are replaced once the node is uncordoned', async () => {
    const context = (): string => agent!.output().slice(-2000);
    await waitNodeReady(ts, agent!, 'node-1');
    const kc = join(ts.dataDir, 'admin.kubeconfig');
    const create = await runKubectl(kc, ['create', 'deployment', 'web', '--image=nginx', '--replicas=2']);
    expect(create.code, create.stderr).toBe(0);
    const status = await runKubectl(kc, ['rollout', 'status', 'deployment/web', '--timeout=120s']);
    expect(status.code, `${status.stdout}\n${status.stderr}\n${context()}`).toBe(0);
    expect(status.stdout).toContain('deployment "web" successfully rolled out');
    const running = await pods();
    expect(running).toHaveLength(2);
    for (const p of running) {
      expect(p.spec.nodeName).toBe('node-1');
      expect(p.status.phase).toBe('Running');
    }

    const drain = await runKubectl(kc, ['drain', 'node-1', '--ignore-daemonsets', '--timeout=90s']);
    expect(drain.code, `${drain.stdout}\n${drain.stderr}`).toBe(0);
    // the replacements cannot go anywhere: the only node is cordoned
    const waiting = await eventually(async () => {
      const ps = (await pods()).filter((p) => !running.some((r) => r.metadata.uid === p.metadata.uid));
      return ps.length === 2 && ps.every((p) => p.status.conditions?.some((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable')) ? ps : undefined;
    }, 'replacements unschedulable', { timeoutMs: 60_000, context });
    for (const p of waiting) {
      expect(p.spec.nodeName).toBeUndefined();
      expect(p.status.conditions?.find((c) => c.type === 'PodScheduled')?.message).toBe('0/1 nodes are available: 1 node(s) were unschedulable. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.');
    }
    const uncordon = await runKubectl(kc, ['uncordon', 'node-1']);
    expect(uncordon.code, uncordon.stderr).toBe(0);
    const again = await runKubectl(kc, ['rollout', 'status', 'deployment/web', '--timeout=120s']);
    expect(again.code, `${again.stdout}\n${again.stderr}\n${context()}`).toBe(0);
    const after = await pods();
    expect(after.map((p) => p.metadata.uid).sort()).toEqual(waiting.map((p) => p.metadata.uid).sort());
    for (const p of after) expect(p.spec.nodeName).toBe('node-1');
  });
});
