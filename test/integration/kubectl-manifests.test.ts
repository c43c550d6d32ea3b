// Typical application manifests through unmodified kubectl 1.32 (issue #11
// item 4): apply a directory (Deployment, Service, ConfigMap, Secret, Ingress,
// HorizontalPodAutoscaler, PodDisruptionBudget, CronJob, StatefulSet with
// volumeClaimTemplates, NetworkPolicy), then get all, diff, server-side
// apply, scale, rollout history and explain.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKubectl } from '../helpers/kubectl.js';
import { NO_WORKLOAD_CONTROLLERS, type TestServer, startTestServer } from '../helpers/server.js';
import { fileURLToPath } from 'node:url';

const MANIFESTS = fileURLToPath(new URL('../fixtures/manifests-k8s', import.meta.url));

describe('kubectl with typical manifests (--api-domain k8s.io)', () => {
  let t: TestServer;
  const kubectl = (...args: string[]) => runKubectl(t.server.kubeconfigPath, args);

  beforeAll(async () => {
    t = await startTestServer({ apiDomain: 'k8s.io', authn: NO_WORKLOAD_CONTROLLERS });
  });
  afterAll(async () => t.stop());

  it('applies a directory of manifests and lists them with get all', async () => {
    const r = await kubectl('apply', '-f', MANIFESTS);
    expect(r.code, r.stderr).toBe(0);
    for (const line of ['deployment.apps/web created', 'service/web created', 'configmap/web-config created', 'ingress.networking.k8s.io/web created', 'horizontalpodautoscaler.autoscaling/web created', 'poddisruptionbudget.policy/web created', 'cronjob.batch/cleanup created', 'statefulset.apps/db created', 'networkpolicy.networking.k8s.io/web-allow created']) {
      expect(r.stdout).toContain(line);
    }
    const all = await kubectl('get', 'all');
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout).toMatch(/deployment\.apps\/web\s+0\/2\s+0\s+0/);
    expect(all.stdout).toMatch(/service\/web\s+ClusterIP\s+10\.\d+\.\d+\.\d+/);
    expect(all.stdout).toContain('statefulset.apps/db');
    expect(all.stdout).toContain('cronjob.batch/cleanup');
    expect(all.stdout).toContain('horizontalpodautoscaler.autoscaling/web');
  });

  it('diff finds nothing to change after apply', async () => {
    const same = await kubectl('diff', '-f', MANIFESTS);
    expect(same.code, same.stdout + same.stderr).toBe(0);
  });

  it('applies server-side, scales a deployment through /scale and reads rollout history', async () => {
    const ssa = await kubectl('apply', '--server-side', '--force-conflicts', '-f', MANIFESTS);
    expect(ssa.code, ssa.stderr).toBe(0);
    expect(ssa.stdout).toContain('deployment.apps/web serverside-applied');
    const scale = await kubectl('scale', 'deployment', 'web', '--replicas=4');
    expect(scale.code, scale.stderr).toBe(0);
    const d = JSON.parse((await kubectl('get', 'deployment', 'web', '-o', 'json')).stdout) as { spec: { replicas: number }; metadata: { generation: number } };
    expect(d.spec.replicas).toBe(4);
    expect(d.metadata.generation).toBeGreaterThan(1);
    const history = await kubectl('rollout', 'history', 'deployment/web');
    expect(history.code, history.stderr).toBe(0);
    expect(history.stdout).toContain('deployment.apps/web');
  });

  it('explains fields of the new kinds', async () => {
    const r = await kubectl('explain', 'deployment.spec.strategy');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('rollingUpdate');
    expect((await kubectl('explain', 'cronjob.spec.schedule')).code).toBe(0);
  });

  it('refuses a Deployment whose selector does not match its template (422, nothing stored)', async () => {
    const r = await t.request('POST', '/apis/apps/v1/namespaces/default/deployments', {
      body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'bad' }, spec: { selector: { matchLabels: { app: 'a' } }, template: { metadata: { labels: { app: 'b' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } } },
    });
    expect(r.status).toBe(422);
    expect(r.json<{ message: string }>().message).toContain('`selector` does not match template `labels`');
    expect((await t.request('GET', '/apis/apps/v1/namespaces/default/deployments/bad')).status).toBe(404);
  });
});
