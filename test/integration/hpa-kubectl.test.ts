// `kubectl autoscale` against a real server with the HorizontalPodAutoscaler
// controller (src/controllers/autoscaling/hpa.ts): the Deployment is clamped
// to minReplicas, `kubectl get hpa` prints kube's columns, and `kubectl
// describe hpa` shows kube's conditions and events without a metrics API.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { runKubectl } from '../helpers/kubectl.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
const kubectl = (...args: string[]) => runKubectl(t.server.kubeconfigPath, args);

beforeAll(async () => {
  t = await startTestServer({ apiDomain: 'k8s.io' });
});
afterAll(async () => {
  await t?.stop();
});

type Hpa = { status?: { currentReplicas?: number; desiredReplicas?: number; conditions?: { type: string; status: string; reason: string }[] } };

describe('kubectl autoscale', () => {
  it('scales a one-replica deployment to --min and prints kube\'s columns', async () => {
    const created = await kubectl('create', 'deployment', 'web', '--image=nginx', '--replicas=1');
    expect(created.code, created.stderr).toBe(0);
    const auto = await kubectl('autoscale', 'deployment', 'web', '--min', '2', '--max', '5');
    expect(auto.code, auto.stderr).toBe(0);
    expect(auto.stdout.trim()).toBe('horizontalpodautoscaler.autoscaling/web autoscaled');
    await eventually(async () => {
      const d = (await t.request('GET', '/apis/apps/v1/namespaces/default/deployments/web')).json<{ spec: { replicas: number } }>();
      return d.spec.replicas === 2;
    }, 'the deployment scaled to minReplicas');
    const hpa = await eventually(async () => {
      const h = (await t.request('GET', '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/web')).json<Hpa>();
      return h.status?.desiredReplicas === 2 ? h : undefined;
    }, 'the autoscaler status');
    expect(hpa.status?.conditions?.find((c) => c.type === 'AbleToScale')).toMatchObject({ status: 'True' });
    const get = await kubectl('get', 'hpa');
    expect(get.code, get.stderr).toBe(0);
    const [header, row] = get.stdout.trim().split('\n').map((l) => l.trim().split(/\s+/));
    expect(header).toEqual(['NAME', 'REFERENCE', 'TARGETS', 'MINPODS', 'MAXPODS', 'REPLICAS', 'AGE']);
    expect(row?.slice(0, 4)).toEqual(['web', 'Deployment/web', 'cpu:', '<unknown>/80%']);
    expect(row?.slice(4, 7)).toEqual(['2', '5', String(hpa.status?.currentReplicas)]);
    // kube prints every version from its internal type: autoscaling/v1 reads the same
    const v1 = await kubectl('get', 'hpa.v1.autoscaling', 'web', '--no-headers');
    expect(v1.stdout.trim().split(/\s+/).slice(0, 6)).toEqual(['web', 'Deployment/web', 'cpu:', '<unknown>/80%', '2', '5']);
  });

  it('describe shows the rescale event from horizontal-pod-autoscaler', async () => {
    const d = await eventually(async () => {
      const r = await kubectl('describe', 'hpa', 'web');
      return r.stdout.includes('SuccessfulRescale') ? r.stdout : undefined;
    }, 'the SuccessfulRescale event');
    expect(d).toMatch(/Normal\s+SuccessfulRescale\s+.*horizontal-pod-autoscaler\s+New size: 2; reason: Current number of replicas below Spec\.MinReplicas/);
  });
});
