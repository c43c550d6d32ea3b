// Issue 13 acceptance, on a real control plane with two real node agents:
// the agent of node-a is killed; node-a becomes Unknown after the (short)
// grace period, gets the unreachable taints (kubectl describe shows them), its
// pods that do not tolerate them are evicted, those that do stay (or go when
// their tolerationSeconds run out); the agent restarted, the taints go.
// node-b stays healthy throughout (with every node down the controller would
// add no NoExecute taint: docs/nodeagent.md "Node lifecycle").

import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKubectl } from '../helpers/kubectl.js';
import { type AgentProcess, startAgentProcess } from '../helpers/nodeagent.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const GRACE_MS = 8_000;
let ts: TestServer;
let a: AgentProcess | undefined;
let b: AgentProcess | undefined;
const dirs: string[] = [];

type Obj = { metadata: { name: string; deletionTimestamp?: string }; spec: { taints?: { key: string; effect: string; timeAdded?: string }[] }; status: { conditions?: { type: string; status: string; reason: string; message: string }[] } };

async function eventually<T>(f: () => Promise<T | undefined | false>, what: string, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const v = await f().catch(() => undefined);
    if (v) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`not reached: ${what}\n${a?.output().slice(-2000) ?? ''}`);
}
const get = async (path: string) => {
  const r = await ts.request('GET', path);
  return r.status === 200 ? r.json<Obj>() : undefined;
};
const node = (n: string) => get(`/api/v1/nodes/${n}`);
const ready = (o: Obj | undefined) => o?.status.conditions?.find((c) => c.type === 'Ready');
const taints = (o: Obj | undefined) => (o?.spec.taints ?? []).map((t) => `${t.key}:${t.effect}`).sort();
const pod = (name: string) => get(`/api/v1/namespaces/default/pods/${name}`);
const terminating = async (name: string) => (await pod(name))?.metadata.deletionTimestamp !== undefined;

async function createPod(name: string, nodeName: string, tolerations?: unknown[]): Promise<void> {
  const r = await ts.request('POST', '/api/v1/namespaces/default/pods', {
    body: { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { nodeName, containers: [{ name: 'c', image: 'busybox', command: ['sleep', '3600'] }], ...(tolerations ? { tolerations } : {}) } },
  });
  expect(r.status, r.text).toBe(201);
}

beforeAll(async () => {
  ts = await startTestServer({
    nodeLifecycle: { monitorGracePeriodMs: GRACE_MS, monitorPeriodMs: 500 },
    // a pod without tolerations stays without them here (the plugin's 300 s are tested in test/unit/node-taints.test.ts)
    admissionPlugins: { disable: ['DefaultTolerationSeconds'] },
  });
  a = await startAgentProcess(ts, { nodeName: 'node-a' });
  b = await startAgentProcess(ts, { nodeName: 'node-b' });
  dirs.push(a.dir, b.dir);
});

afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await ts?.stop();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('node lifecycle with real agents', () => {
  it('a stopped agent: Unknown, unreachable taints, evictions by toleration; a restarted one: taints removed', async () => {
    for (const n of ['node-a', 'node-b']) await eventually(async () => ready(await node(n))?.status === 'True', `${n} Ready`);
    await createPod('plain', 'node-a');
    await createPod('forever', 'node-a', [{ key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoExecute' }]);
    await createPod('brief', 'node-a', [{ key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 4 }]);
    await createPod('on-b', 'node-b');
    await eventually(async () => ((await pod('plain')) as unknown as { status: { phase?: string } }).status.phase === 'Running', 'plain Running');

    // the agent dies without a word (no graceful shutdown)
    a!.child.kill('SIGKILL');
    await a!.exited;
    const down = await eventually(async () => {
      const n = await node('node-a');
      return ready(n)?.status === 'Unknown' && taints(n).length === 2 && n;
    }, 'node-a Unknown and tainted');
    expect(ready(down)).toMatchObject({ reason: 'NodeStatusUnknown', message: 'Node agent stopped posting node status.' });
    expect(taints(down)).toEqual(['node.orch.io/unreachable:NoExecute', 'node.orch.io/unreachable:NoSchedule']);
    expect(down.spec.taints!.find((t) => t.effect === 'NoExecute')!.timeAdded).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    const kubeconfig = join(ts.dataDir, 'admin.kubeconfig');
    const list = await runKubectl(kubeconfig, ['get', 'nodes']);
    expect(list.stdout).toMatch(/node-a\s+NotReady/);
    expect(list.stdout).toMatch(/node-b\s+Ready/);
    const described = await runKubectl(kubeconfig, ['describe', 'node', 'node-a']);
    expect(described.stdout).toMatch(/Taints:\s+node\.orch\.io\/unreachable:NoExecute\n\s+node\.orch\.io\/unreachable:NoSchedule/);
    expect(described.stdout).toMatch(/Ready\s+Unknown\s+.*NodeStatusUnknown\s+Node agent stopped posting node status\./);

    await eventually(() => terminating('plain'), 'plain evicted');
    await eventually(() => terminating('brief'), 'brief evicted after its 4 s');
    expect(await terminating('forever')).toBe(false);
    expect(await terminating('on-b')).toBe(false);
    expect(taints(await node('node-b'))).toEqual([]);

    const events = (await ts.request('GET', '/api/v1/namespaces/default/events')).json<{ items: { reason: string; message: string; involvedObject: { kind: string; name: string } }[] }>().items;
    expect(events).toEqual(expect.arrayContaining([
      expect.objectContaining({ reason: 'NodeNotReady', message: 'Node node-a status is now: NodeNotReady', involvedObject: expect.objectContaining({ kind: 'Node', name: 'node-a' }) }),
      expect.objectContaining({ reason: 'TaintManagerEviction', message: 'Marking for deletion Pod default/plain' }),
    ]));
    expect(events.some((e) => e.reason === 'TaintManagerEviction' && e.message.includes('forever'))).toBe(false);

    // the agent comes back: it posts Ready=True, the taints go, the evicted pods finish terminating
    a = await startAgentProcess(ts, { nodeName: 'node-a', dir: a!.dir });
    const up = await eventually(async () => {
      const n = await node('node-a');
      return ready(n)?.status === 'True' && taints(n).length === 0 && n;
    }, 'node-a Ready without taints');
    expect(up.spec.taints ?? []).toEqual([]);
    await eventually(async () => (await pod('plain')) === undefined, 'plain gone');
    expect(await terminating('forever')).toBe(false);
    expect(ready(await node('node-b'))?.status).toBe('True');
  });
});
