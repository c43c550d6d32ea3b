// A DaemonSet and a StatefulSet end to end: a real control plane (scheduler,
// DaemonSet and StatefulSet controllers in process), two real `orch
// nodeagent` processes with the simulated container runtime, and kubectl
// 1.32. The DaemonSet runs one pod per node and `kubectl rollout status`
// returns; a StatefulSet of 2 comes up in order (web-1 is only made once
// web-0 is Ready) and `kubectl rollout status` returns.

import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { runKubectl } from '../helpers/kubectl.js';
import { type AgentProcess, startAgentProcess } from '../helpers/nodeagent.js';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { type WObj, workloadApi } from '../helpers/workload-api.js';

let ts: TestServer;
const agents: AgentProcess[] = [];
const { list, get, send } = workloadApi(() => ts);

beforeAll(async () => {
  ts = await startTestServer();
  agents.push(await startAgentProcess(ts, { nodeName: 'node-1' }));
  agents.push(await startAgentProcess(ts, { nodeName: 'node-2' }));
});

afterAll(async () => {
  for (const a of agents) await a.stop();
  await ts?.stop();
  for (const a of agents) await rm(a.dir, { recursive: true, force: true });
});

const context = (): string => agents.map((a) => a.output().slice(-1500)).join('\n---\n');
const readySince = (p: WObj): number | undefined => {
  const c = p.status?.conditions?.find((x) => x.type === 'Ready' && x.status === 'True') as { lastTransitionTime?: string } | undefined;
  return c?.lastTransitionTime ? Date.parse(c.lastTransitionTime) : undefined;
};

describe('DaemonSet and StatefulSet on real node agents', () => {
  it('a DaemonSet runs one pod per node and kubectl rollout status returns', async () => {
    for (const n of ['node-1', 'node-2']) {
      await eventually(async () => (await get(`/api/v1/nodes/${n}`))?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'), `${n} Ready`, { timeoutMs: 60_000, context });
    }
    const kc = join(ts.dataDir, 'admin.kubeconfig');
    await send('POST', '/apis/apps/v1/namespaces/default/daemonsets', {
      apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'agent' },
      spec: { selector: { matchLabels: { app: 'agent' } }, template: { metadata: { labels: { app: 'agent' } }, spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: 'busybox' }] } } },
    });
    const status = await runKubectl(kc, ['rollout', 'status', 'ds/agent', '--timeout=120s']);
    expect(status.code, `${status.stdout}\n${status.stderr}\n${context()}`).toBe(0);
    expect(status.stdout).toContain('daemon set "agent" successfully rolled out');
    const pods = await list('/api/v1/namespaces/default/pods', 'app=agent');
    expect(pods.map((p) => p.spec.nodeName).sort()).toEqual(['node-1', 'node-2']);
    for (const p of pods) expect(p.status?.phase).toBe('Running');
  });

  it('a StatefulSet of 2 reaches Ready in order and kubectl rollout status returns', async () => {
    const kc = join(ts.dataDir, 'admin.kubeconfig');
    await send('POST', '/apis/apps/v1/namespaces/default/statefulsets', {
      apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'web' },
      spec: { replicas: 2, serviceName: 'web', selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: 'nginx' }] } } },
    });
    const status = await runKubectl(kc, ['rollout', 'status', 'sts/web', '--timeout=120s']);
    expect(status.code, `${status.stdout}\n${status.stderr}\n${context()}`).toBe(0);
    expect(status.stdout).toContain('partitioned roll out complete: 2 new pods have been updated...');
    const pods = await list('/api/v1/namespaces/default/pods', 'app=web');
    expect(pods.map((p) => p.metadata.name).sort()).toEqual(['web-0', 'web-1']);
    const [web0, web1] = ['web-0', 'web-1'].map((n) => pods.find((p) => p.metadata.name === n)!);
    // web-1 was created no earlier than web-0 turned Ready (both times from the server, in seconds)
    expect(readySince(web0!)).toBeDefined();
    expect(Date.parse(web1!.metadata.creationTimestamp!)).toBeGreaterThanOrEqual(readySince(web0!)!);
    expect((await get('/apis/apps/v1/namespaces/default/statefulsets/web'))!.status).toMatchObject({ replicas: 2, readyReplicas: 2, availableReplicas: 2, updatedReplicas: 2 });
  });
});
