// What Kubernetes' sig-apps e2e tests of Deployments (test/e2e/apps/deployment.go)
// check through the API, on orch with its controllers and a real node agent
// (simulated runtime): the lifecycle (create, strategic patch, an update
// without resourceVersion, a status patch that may not change labels,
// deleteCollection, each step seen by a watch from the first list), the
// status sub-resource and the scale sub-resource.

import { describe, expect, it } from 'vitest';
import { AGNHOST, type Obj, PAUSE, STRATEGIC, WEBSERVER, condition, e2eEnv, named, namespace, podTemplate } from '../helpers/e2e-apps.js';

const env = e2eEnv('deploy-node');
const DEPLOYS = (ns: string) => `/apis/apps/v1/namespaces/${ns}/deployments`;
const ALL = '/apis/apps/v1/deployments';
const HTTPD_24 = 'registry.k8s.io/e2e-test-images/httpd:2.4.39-4';

/** kube's e2edeployment.NewDeployment: labels on the object, selector and template alike; RollingUpdate */
function newDeployment(name: string, replicas: number, labels: Record<string, string>, container: string, image: string, tgps?: number): Obj {
  return {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, labels: { ...labels } },
    spec: {
      replicas, selector: { matchLabels: { ...labels } }, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      template: podTemplate(labels, container, image, { terminationGracePeriodSeconds: tgps ?? 0 }),
    },
  };
}

const st = (e: { object: Obj }): Obj => e.object.status ?? {};

describe('[sig-apps] Deployment', () => {
  it('should run the lifecycle of a Deployment [Conformance]', async () => {
    const ns = await namespace(env, 'deploy-lifecycle');
    const sel = 'test-deployment-static=true';
    const rv = (await env.list(ALL, sel)).metadata.resourceVersion as string;
    const original = newDeployment('test-deployment', 2, { 'test-deployment-static': 'true' }, 'test-deployment', AGNHOST, 1);
    await env.call('POST', DEPLOYS(ns), original);
    await env.until(DEPLOYS(ns), rv, sel, (e) => e.type === 'ADDED' && named('test-deployment', e));
    await env.until(DEPLOYS(ns), rv, sel, (e) => named('test-deployment', e) && st(e).readyReplicas === 2);

    const patch = {
      metadata: { labels: { 'test-deployment': 'patched' } },
      spec: { replicas: 1, template: { spec: { terminationGracePeriodSeconds: 2, containers: [{ name: 'test-deployment', image: PAUSE }] } } },
    };
    await env.call('PATCH', `${DEPLOYS(ns)}/test-deployment`, patch, STRATEGIC);
    await env.until(DEPLOYS(ns), rv, sel, (e) => e.type === 'MODIFIED' && named('test-deployment', e));
    await env.until(DEPLOYS(ns), rv, sel, (e) => named('test-deployment', e) && st(e).readyReplicas === 1 && st(e).updatedReplicas === 1 && (st(e).unavailableReplicas ?? 0) === 0 &&
      e.object.spec.template.spec.containers[0].image === PAUSE && e.object.spec.template.spec.terminationGracePeriodSeconds === 2);

    const listed = (await env.list(ALL, sel)).items as Obj[];
    expect(listed.map((d) => [d.metadata.namespace, d.metadata.name])).toEqual([[ns, 'test-deployment']]);

    // the object as first sent, changed, without a resourceVersion: Deployments allow unconditional updates
    const update = structuredClone(original);
    update.metadata.labels['test-deployment'] = 'updated';
    update.spec.template.spec.containers[0].image = HTTPD_24;
    await env.call('PUT', `${DEPLOYS(ns)}/test-deployment`, update);
    await env.until(DEPLOYS(ns), rv, sel, (e) => e.type === 'MODIFIED' && named('test-deployment', e));
    let status = await env.get(`${DEPLOYS(ns)}/test-deployment/status`);
    expect(status.spec.template.spec.containers[0].image).toBe(HTTPD_24);
    expect(status.metadata.labels).toMatchObject({ 'test-deployment': 'updated' });
    await env.until(DEPLOYS(ns), rv, sel, (e) => named('test-deployment', e) && st(e).readyReplicas === 2 && st(e).updatedReplicas === 2 && (st(e).unavailableReplicas ?? 0) === 0, 60_000);

    // a strategic merge patch of /status that also names a label: the status strategy keeps the labels
    const patchedStatus = await env.call('PATCH', `${DEPLOYS(ns)}/test-deployment/status`, {
      metadata: { labels: { 'test-deployment': 'patched-status' } }, status: { readyReplicas: 0, availableReplicas: 0 },
    }, STRATEGIC);
    expect(patchedStatus.metadata.labels).toMatchObject({ 'test-deployment': 'updated' });
    await env.until(DEPLOYS(ns), rv, sel, (e) => e.type === 'MODIFIED' && named('test-deployment', e));
    status = await env.get(`${DEPLOYS(ns)}/test-deployment/status`);
    expect(status.spec.template.spec.containers[0].image).toBe(HTTPD_24);
    expect(status.metadata.labels).toMatchObject({ 'test-deployment': 'updated' });
    // the controller puts the counts back
    await env.until(DEPLOYS(ns), status.metadata.resourceVersion, sel, (e) => named('test-deployment', e) && st(e).readyReplicas === 2 && st(e).updatedReplicas === 2 &&
      (st(e).unavailableReplicas ?? 0) === 0 && e.object.spec.template.spec.containers[0].image === HTTPD_24);

    const r = await env.ts().request('DELETE', `${DEPLOYS(ns)}?labelSelector=${encodeURIComponent(sel)}`, { body: { gracePeriodSeconds: 1 } });
    expect(r.status, r.text).toBe(200);
    await env.until(DEPLOYS(ns), rv, sel, (e) => e.type === 'DELETED' && named('test-deployment', e));
  });

  it('should validate Deployment Status endpoints [Conformance]', async () => {
    const ns = await namespace(env, 'deploy-status');
    const sel = 'e2e=testing';
    const rv = (await env.list(ALL, sel)).metadata.resourceVersion as string;
    const labels = { name: 'httpd', e2e: 'testing' };
    await env.call('POST', DEPLOYS(ns), newDeployment('test-deployment-x1', 1, labels, 'httpd', WEBSERVER));
    // WaitForDeploymentRevisionAndImage "1", then WaitForDeploymentComplete
    await env.eventually(async () => {
      const d = await env.get(`${DEPLOYS(ns)}/test-deployment-x1`);
      const s = d.status ?? {};
      return d.metadata.annotations?.['deployment.kubernetes.io/revision'] === '1' && s.observedGeneration >= d.metadata.generation &&
        s.updatedReplicas === 1 && s.replicas === 1 && s.availableReplicas === 1 && condition(d, 'Available')?.status === 'True';
    }, 'the rollout complete');

    const status = await env.get(`${DEPLOYS(ns)}/test-deployment-x1/status`);
    expect(status).toMatchObject({ kind: 'Deployment', metadata: { name: 'test-deployment-x1' } });
    expect(condition(status, 'Progressing')).toMatchObject({ status: 'True', reason: 'NewReplicaSetAvailable' });

    await env.eventually(async () => {
      const cur = await env.get(`${DEPLOYS(ns)}/test-deployment-x1`);
      cur.status.conditions = [...(cur.status.conditions ?? []), { type: 'StatusUpdate', status: 'True', reason: 'E2E', message: 'Set from e2e test' }];
      const r = await env.ts().request('PUT', `${DEPLOYS(ns)}/test-deployment-x1/status`, { body: cur });
      if (r.status === 409) return undefined;
      expect(r.status, r.text).toBe(200);
      return true;
    }, 'the status update');
    await env.until(DEPLOYS(ns), rv, sel, (e) => named('test-deployment-x1', e) && condition(e.object, 'StatusUpdate')?.message === 'Set from e2e test');

    const patched = await env.call('PATCH', `${DEPLOYS(ns)}/test-deployment-x1/status`, { status: { conditions: [{ type: 'StatusPatched', status: 'True' }] } });
    expect(patched.status.conditions).toEqual([{ type: 'StatusPatched', status: 'True' }]);
    await env.until(DEPLOYS(ns), rv, sel, (e) => named('test-deployment-x1', e) && condition(e.object, 'StatusPatched') !== undefined);
  });

  it('Deployment should have a working scale subresource [Conformance]', async () => {
    const ns = await namespace(env, 'deploy-scale');
    const labels = { name: 'sample-pod' };
    await env.call('POST', DEPLOYS(ns), newDeployment('test-new-deployment', 1, labels, 'httpd', WEBSERVER));
    await env.runningPods(ns, 'name=sample-pod', 1);
    const scale = await env.eventually(async () => {
      const s = await env.get(`${DEPLOYS(ns)}/test-new-deployment/scale`);
      return s.status?.replicas === 1 ? s : undefined;
    }, 'status.replicas 1 in the Scale');
    expect(scale).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 1 }, status: { replicas: 1, selector: 'name=sample-pod' } });

    const result = await env.call('PUT', `${DEPLOYS(ns)}/test-new-deployment/scale`, { ...scale, metadata: { ...scale.metadata, resourceVersion: '' }, spec: { replicas: 2 } });
    expect(result.spec.replicas).toBe(2);
    expect((await env.get(`${DEPLOYS(ns)}/test-new-deployment`)).spec.replicas).toBe(2);

    await env.call('PATCH', `${DEPLOYS(ns)}/test-new-deployment/scale`, { metadata: { creationTimestamp: null }, spec: { replicas: 4 }, status: { replicas: 0 } }, STRATEGIC);
    expect((await env.get(`${DEPLOYS(ns)}/test-new-deployment`)).spec.replicas).toBe(4);
  });
});
