// The HorizontalPodAutoscaler on real metrics end to end (docs/controllers.md
// "HorizontalPodAutoscaler", docs/metrics.md "For the HPA controller"): a real
// server (`--api-domain k8s.io`, a 1 s metric resolution and a 1 s HPA sync period
// so no test waits 15 s) and a node agent on the simulated runtime, whose container
// runs a real shell loop that uses CPU. kubectl 1.32's `autoscale --cpu-percent=10`
// must scale the Deployment past one replica once the scraper has read the loop's
// CPU; no timing is asserted, only the outcome.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually as waitFor } from '../helpers/eventually.js';
import { runKubectl } from '../helpers/kubectl.js';
import { type AgentProcess, startAgentProcess, stopAgentAndServer, waitNodeReady } from '../helpers/nodeagent.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let ts: TestServer;
let agent: AgentProcess;
let admin: string;

const eventually = <T>(f: () => Promise<T>, what: string) => waitFor(f, what, { timeoutMs: 60_000, intervalMs: 250, context: () => agent?.output().slice(-2000) ?? '' });

// a busy loop with short pauses: far above a 10m request, without holding a whole core of the host
const LOOP = 'while :; do i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; sleep 0.1; done';

beforeAll(async () => {
  ts = await startTestServer({ apiDomain: 'k8s.io', metricResolutionMs: 1000, hpa: { syncPeriodMs: 1000 } });
  admin = join(ts.dataDir, 'admin.kubeconfig');
  agent = await startAgentProcess(ts, { nodeName: 'node-h', config: { apiVersion: 'nodeagent.config.k8s.io/v1beta1' } });
  await waitNodeReady(ts, agent, 'node-h');
}, 90_000);

afterAll(async () => {
  await stopAgentAndServer(agent, ts);
});

describe('kubectl autoscale on cpu', () => {
  it('scales a busy Deployment past one replica from the pods\' real CPU usage', async () => {
    const deployment = {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'busy', namespace: 'default' },
      spec: {
        replicas: 1, selector: { matchLabels: { app: 'busy' } },
        template: { metadata: { labels: { app: 'busy' } }, spec: { containers: [{ name: 'loop', image: 'busybox', command: ['sh', '-c', LOOP], resources: { requests: { cpu: '10m' } } }] } },
      },
    };
    expect((await ts.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deployment })).status).toBe(201);
    // the pod's metrics are there (two scrapes of a running container)
    await eventually(async () => /^busy-\S+\s+\d+m/m.exec((await runKubectl(admin, ['top', 'pod', '-l', 'app=busy'])).stdout)?.[0], 'kubectl top pod prints the busy pod');
    const created = await runKubectl(admin, ['autoscale', 'deployment', 'busy', '--cpu-percent=10', '--min=1', '--max=3']);
    expect(created.code).toBe(0);
    const replicas = await eventually(async () => {
      const r = await ts.request('GET', '/apis/apps/v1/namespaces/default/deployments/busy');
      const n = r.json<{ spec: { replicas: number } }>().spec.replicas;
      return n > 1 && n;
    }, 'the autoscaler scales busy past one replica');
    expect(replicas).toBeLessThanOrEqual(3);
    // the controller scales the Deployment first, then writes its own status: wait for the second write.
    // A sync may find no fresh usage for a while on a loaded host (ScalingActive False, TARGETS <unknown>,
    // as on kube); the next sync with metrics sets it True again, so wait for that rather than read once
    const hpa = await eventually(async () => {
      const status = (await ts.request('GET', '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/busy')).json<{ status: Record<string, any> }>().status;
      const active = status?.conditions?.find((c: { type: string }) => c.type === 'ScalingActive');
      return status?.lastScaleTime && active?.status === 'True' ? status : undefined;
    }, 'the autoscaler status with its lastScaleTime and an active scaling condition');
    expect(hpa.lastScaleTime).toMatch(/Z$/);
    expect(hpa.conditions.find((c: { type: string }) => c.type === 'ScalingActive')).toMatchObject({ status: 'True', reason: 'ValidMetricFound' });
    const describe = await eventually(async () => {
      const out = (await runKubectl(admin, ['describe', 'hpa', 'busy'])).stdout;
      return /resource cpu on pods\s+\(as a percentage of request\):\s+\d+% \(\d+m\) \/ 10%/.test(out) && out;
    }, 'kubectl describe hpa shows the current cpu usage');
    expect(describe).toMatch(/SuccessfulRescale\s.*New size: [23]; reason: cpu resource utilization \(percentage of request\) above target/);
    // a sync right after a rescale may find no usage for the new pods yet (TARGETS <unknown>, as on kube): the next one has it
    await eventually(async () => /^busy\s+Deployment\/busy\s+cpu: \d+%\/10%\s+1\s+3\s+\d\s/m.test((await runKubectl(admin, ['get', 'hpa', 'busy'])).stdout), 'kubectl get hpa shows the cpu target');
    // stop the loops now rather than with the agent
    await runKubectl(admin, ['delete', 'deployment', 'busy', '--wait=false']);
  }, 90_000);
});
