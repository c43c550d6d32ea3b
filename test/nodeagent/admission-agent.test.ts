// Pod admission with a real control plane, a real `orch nodeagent` process and
// the simulated runtime over its socket (docs/nodeagent.md "Admission"): a pod
// bound straight to a node without the CPU it asks for, and the second of two
// pods after the same host port, are rejected as kubelet rejects them — phase
// Failed with kubelet's reason and message, a Warning Event — and never reach
// the runtime; the first pod of the two runs.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABEL_POD_UID } from '../../src/nodeagent/pod-spec.js';
import { RuntimeClient } from '../../src/nodeagent/runtime/client.js';
import { eventually as waitFor } from '../helpers/eventually.js';
import { runKubectl } from '../helpers/kubectl.js';
import { type AgentProcess, startAgentProcess, stopAgentAndServer, waitNodeReady } from '../helpers/nodeagent.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

type Obj = Record<string, any>;
const NODE = 'node-adm';
let ts: TestServer;
let agent: AgentProcess;
let runtime: RuntimeClient;

const eventually = <T>(f: () => Promise<T>, what: string) => waitFor(f, what, { timeoutMs: 30_000, intervalMs: 100, context: () => agent?.output().slice(-3000) ?? '' });
const PODS = '/api/v1/namespaces/default/pods';
const getPod = async (name: string): Promise<Obj | undefined> => {
  const r = await ts.request('GET', `${PODS}/${name}`);
  return r.status === 200 ? r.json<Obj>() : undefined;
};
async function create(name: string, spec: Obj): Promise<Obj> {
  const r = await ts.request('POST', PODS, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { nodeName: NODE, terminationGracePeriodSeconds: 0, ...spec } } });
  expect(r.status, r.text).toBe(201);
  return r.json<Obj>();
}
const phase = (name: string, want: string) => eventually(async () => ((await getPod(name))?.status?.phase === want ? getPod(name) : undefined), `${name} ${want}`);

beforeAll(async () => {
  ts = await startTestServer();
  // a node of 2 CPUs (the readings file replaces the measured ones)
  const dir = await mkdtemp(join(tmpdir(), 'orch-agent-'));
  await writeFile(join(dir, 'readings.json'), JSON.stringify({ cpuCores: 2 }));
  agent = await startAgentProcess(ts, { nodeName: NODE, dir });
  await waitNodeReady(ts, agent, NODE);
  runtime = new RuntimeClient(`unix://${join(agent.rootDir, 'runtime-sim.sock')}`);
}, 90_000);
afterAll(async () => {
  runtime?.close();
  await stopAgentAndServer(agent, ts);
});

describe('the node agent admits pods as kubelet does', () => {
  it('a pod asking for more CPU than the node has is Failed with OutOfcpu, an Event, and never reaches the runtime', async () => {
    const created = await create('too-big', { containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'sleep 3600'], resources: { requests: { cpu: '3' } } }] });
    const p = (await phase('too-big', 'Failed'))!;
    expect(p.status.reason).toBe('OutOfcpu');
    expect(p.status.message).toBe("Pod was rejected: Node didn't have enough resource: cpu, requested: 3000, used: 0, capacity: 2000");
    // kubelet's status: no containers, no conditions of its own, the start time set
    expect(p.status.containerStatuses).toBeUndefined();
    expect(p.status.conditions ?? []).toEqual([]);
    expect(p.status.startTime).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(p.status.qosClass).toBe('Burstable');

    const ev = await eventually(async () => {
      const r = await ts.request('GET', `/api/v1/namespaces/default/events?fieldSelector=${encodeURIComponent('involvedObject.name=too-big,reason=OutOfcpu')}`);
      return (r.json<Obj>().items as Obj[])[0];
    }, 'the OutOfcpu event');
    expect(ev).toMatchObject({ type: 'Warning', message: "Node didn't have enough resource: cpu, requested: 3000, used: 0, capacity: 2000", source: { component: 'kubelet', host: NODE } });
    expect(ev.involvedObject).toMatchObject({ kind: 'Pod', uid: created.metadata.uid });

    expect(await runtime.listPodSandbox({ [LABEL_POD_UID]: created.metadata.uid })).toEqual([]);
    // kubectl's STATUS column shows the reason, as for kubelet's rejections
    expect((await runKubectl(join(ts.dataDir, 'admin.kubeconfig'), ['get', 'pod', 'too-big'])).stdout).toMatch(/too-big\s+0\/1\s+OutOfcpu\s+0\s/);
    // a rejected pod holds nothing: deleting it removes it at once
    expect((await ts.request('DELETE', `${PODS}/too-big`)).status).toBe(200);
    expect(await getPod('too-big')).toBeUndefined();
  });

  it('of two pods after the same host port, the first runs and the second is rejected (NodePorts)', async () => {
    const port = (name: string) => ({ containers: [{ name: 'web', image: 'busybox', command: ['sh', '-c', 'sleep 3600'], ports: [{ name: 'conflict', containerPort: 21017, hostPort: 21017 }] }] });
    await create('first', port('first'));
    const second = await create('second', port('second'));
    const failed = (await phase('second', 'Failed'))!;
    expect(failed.status.reason).toBe('NodePorts');
    expect(failed.status.message).toBe("Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports");
    await phase('first', 'Running');
    expect(await runtime.listPodSandbox({ [LABEL_POD_UID]: second.metadata.uid })).toEqual([]);

    // the port is free again once the first pod is gone: a new pod asking for it runs
    expect((await ts.request('DELETE', `${PODS}/first`, { body: { gracePeriodSeconds: 0 } })).status).toBe(200);
    await eventually(async () => (await getPod('first')) === undefined, 'first gone');
    await create('third', port('third'));
    await phase('third', 'Running');
  });
});
