// Jobs end to end: a real control plane (scheduler and batch controllers in
// process), a real `orch nodeagent` process with the simulated container
// runtime behind the CRI gRPC interface, and kubectl 1.32. A Job made by
// `kubectl create job x -- echo …` runs its command as a real process (the
// simulator's rule for `sh -c` scripts and `echo`), exits 0 and the Job reaches
// Complete, its output in `kubectl logs`; a Job whose command is `false`
// (the simulator exits it 1) is retried once after the back-off and
// reaches Failed with BackoffLimitExceeded.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { runKubectl } from '../helpers/kubectl.js';
import { type AgentProcess, startAgentProcess, stopAgentAndServer, waitNodeReady } from '../helpers/nodeagent.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let ts: TestServer;
let agent: AgentProcess | undefined;

type Obj = { metadata: { name: string }; spec: { nodeName?: string }; status?: { phase?: string; failed?: number; succeeded?: number; conditions?: { type: string; status: string; reason?: string }[]; containerStatuses?: { state?: { terminated?: { exitCode: number } } }[] } };

async function pods(job: string): Promise<Obj[]> {
  const r = await ts.request('GET', `/api/v1/namespaces/default/pods?labelSelector=${encodeURIComponent(`batch.kubernetes.io/job-name=${job}`)}`);
  expect(r.status, r.text).toBe(200);
  return r.json<{ items: Obj[] }>().items;
}

beforeAll(async () => {
  ts = await startTestServer();
  agent = await startAgentProcess(ts, { nodeName: 'node-1' });
});

afterAll(async () => {
  await stopAgentAndServer(agent, ts);
});

describe('Jobs on a real node agent', () => {
  it('kubectl create job runs to Complete; a failing Job reaches Failed with BackoffLimitExceeded', async () => {
    const context = (): string => agent!.output().slice(-2000);
    await waitNodeReady(ts, agent!, 'node-1');
    const kc = join(ts.dataDir, 'admin.kubeconfig');

    const create = await runKubectl(kc, ['create', 'job', 'hello', '--image=busybox', '--', 'echo', "hi from the job's pod"]);
    expect(create.code, create.stderr).toBe(0);
    const wait = await runKubectl(kc, ['wait', '--for=condition=complete', 'job/hello', '--timeout=25s']);
    expect(wait.code, `${wait.stdout}\n${wait.stderr}\n${context()}`).toBe(0);
    const [pod] = await pods('hello');
    expect(pod!.spec.nodeName).toBe('node-1');
    expect(pod!.status?.phase).toBe('Succeeded');
    const logs = await runKubectl(kc, ['logs', 'job/hello']);
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout).toContain("hi from the job's pod");

    const r = await ts.request('POST', '/apis/batch/v1/namespaces/default/jobs', {
      body: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'boom' }, spec: { backoffLimit: 1, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox', command: ['false'] }] } } } },
    });
    expect(r.status, r.text).toBe(201);
    // one retry after the 10 s back-off, then past the limit
    const failed = await runKubectl(kc, ['wait', '--for=condition=failed', 'job/boom', '--timeout=28s']);
    expect(failed.code, `${failed.stdout}\n${failed.stderr}\n${context()}`).toBe(0);
    const job = (await ts.request('GET', '/apis/batch/v1/namespaces/default/jobs/boom')).json<Obj>();
    expect(job.status?.conditions?.find((c) => c.type === 'Failed')).toMatchObject({ status: 'True', reason: 'BackoffLimitExceeded' });
    expect(job.status?.failed).toBe(2);
    const tried = await pods('boom');
    expect(tried).toHaveLength(2);
    for (const p of tried) {
      expect(p.status?.phase).toBe('Failed');
      expect(p.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(1);
    }
  });
});
