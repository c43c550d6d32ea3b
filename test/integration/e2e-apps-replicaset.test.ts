// What Kubernetes' sig-apps e2e tests of ReplicaSets (test/e2e/apps/replica_set.go)
// check, on orch with its controllers and a real node agent (simulated runtime):
// the status sub-resource (get, update, merge patch, each seen by a watch from
// an earlier list), the scale sub-resource (get, unconditional update, a
// strategic merge patch of a whole marshalled Scale), replace and patch with a
// watch, list and deleteCollection by label, adoption and release of a pod,
// and the ReplicaFailure condition under a pod quota.

import { describe, expect, it } from 'vitest';
import { type Obj, STRATEGIC, WEBSERVER, PAUSE, condition, e2eEnv, named, namespace, podTemplate } from '../helpers/e2e-apps.js';

const env = e2eEnv('rs-node');
const RS = (ns: string) => `/apis/apps/v1/namespaces/${ns}/replicasets`;
const ALL_RS = '/apis/apps/v1/replicasets';

/** kube's e2e newRS: labels on the set, selector and template alike; terminationGracePeriodSeconds 0 */
function newRS(name: string, replicas: number, labels: Record<string, string>, container: string, image: string): Obj {
  return {
    apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name, labels },
    spec: { replicas, selector: { matchLabels: labels }, template: podTemplate(labels, container, image, { terminationGracePeriodSeconds: 0 }) },
  };
}
const selectorOf = (labels: Record<string, string>): string => Object.entries(labels).map(([k, v]) => `${k}=${v}`).sort().join(',');
const samplePod = { name: 'sample-pod', pod: 'httpd' };

describe('[sig-apps] ReplicaSet', () => {
  it('should validate Replicaset Status endpoints [Conformance]', async () => {
    const ns = await namespace(env, 'rs-status');
    const sel = selectorOf(samplePod);
    const before = await env.list(ALL_RS, sel);
    const created = await env.call('POST', RS(ns), newRS('test-rs', 1, samplePod, 'httpd', WEBSERVER));
    await env.runningPods(ns, sel, 1);

    const status = await env.get(`${RS(ns)}/test-rs/status`);
    expect(status).toMatchObject({ kind: 'ReplicaSet', apiVersion: 'apps/v1', metadata: { name: 'test-rs', uid: created.metadata.uid } });

    // UpdateStatus with retry on conflict: the controller writes status too
    await env.eventually(async () => {
      const cur = await env.get(`${RS(ns)}/test-rs`);
      cur.status.conditions = [...(cur.status.conditions ?? []), { type: 'StatusUpdate', status: 'True', reason: 'E2E', message: 'Set from e2e test' }];
      const r = await env.ts().request('PUT', `${RS(ns)}/test-rs/status`, { body: cur });
      if (r.status === 409) return undefined;
      expect(r.status, r.text).toBe(200);
      return r.json<Obj>();
    }, 'the status update');
    await env.until(RS(ns), before.metadata.resourceVersion, sel, (e) =>
      named('test-rs', e) && (condition(e.object, 'StatusUpdate')?.message === 'Set from e2e test' && condition(e.object, 'StatusUpdate')?.reason === 'E2E'));

    const patched = await env.call('PATCH', `${RS(ns)}/test-rs/status`, { status: { conditions: [{ type: 'StatusPatched', status: 'True' }] } });
    expect(condition(patched, 'StatusPatched')).toMatchObject({ status: 'True' });
    await env.until(RS(ns), before.metadata.resourceVersion, sel, (e) => named('test-rs', e) && condition(e.object, 'StatusPatched') !== undefined);
  });

  it('Replicaset should have a working scale subresource [Conformance]', async () => {
    const ns = await namespace(env, 'rs-scale');
    await env.call('POST', RS(ns), newRS('test-rs', 1, samplePod, 'httpd', WEBSERVER));
    await env.runningPods(ns, selectorOf(samplePod), 1);
    const scale = await env.eventually(async () => {
      const s = await env.get(`${RS(ns)}/test-rs/scale`);
      return s.status?.replicas === 1 ? s : undefined;
    }, 'status.replicas 1 in the Scale');
    expect(scale).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 1 }, status: { replicas: 1 } });

    // an unconditional update: the Scale sent back with resourceVersion ""
    const result = await env.call('PUT', `${RS(ns)}/test-rs/scale`, { ...scale, metadata: { ...scale.metadata, resourceVersion: '' }, spec: { replicas: 2 } });
    expect(result.spec.replicas).toBe(2);
    expect((await env.get(`${RS(ns)}/test-rs`)).spec.replicas).toBe(2);

    // json.Marshal(autoscalingv1.Scale{Spec: {Replicas: 4}}): zero values and a null creationTimestamp included
    await env.call('PATCH', `${RS(ns)}/test-rs/scale`, { metadata: { creationTimestamp: null }, spec: { replicas: 4 }, status: { replicas: 0 } }, STRATEGIC);
    expect((await env.get(`${RS(ns)}/test-rs`)).spec.replicas).toBe(4);
  });

  it('Replace and Patch tests [Conformance]', async () => {
    const ns = await namespace(env, 'rs-replace');
    const before = await env.list(ALL_RS, 'test-rs=patched');
    await env.call('POST', RS(ns), newRS('test-rs', 1, samplePod, 'httpd', WEBSERVER));
    await env.runningPods(ns, selectorOf(samplePod), 1);

    // UpdateReplicaSetWithRetries: get, change, update
    await env.eventually(async () => {
      const cur = await env.get(`${RS(ns)}/test-rs`);
      cur.spec.replicas = 2;
      const r = await env.ts().request('PUT', `${RS(ns)}/test-rs`, { body: cur });
      return r.status === 200;
    }, 'the scale-up update');

    const patch = {
      metadata: { labels: { 'test-rs': 'patched' } },
      spec: { replicas: 3, template: { spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'test-rs', image: PAUSE }] } } },
    };
    const patched = await env.call('PATCH', `${RS(ns)}/test-rs`, patch, STRATEGIC);
    // a container of a new name: strategic merge puts the patch's item first, the stored one after
    expect((patched.spec.template.spec.containers as Obj[]).map((c) => [c.name, c.image])).toEqual([['test-rs', PAUSE], ['httpd', WEBSERVER]]);

    await env.until(RS(ns), before.metadata.resourceVersion, 'test-rs=patched', (e) => {
      const o = e.object as Obj;
      return named('test-rs', e) && o.metadata.labels['test-rs'] === 'patched' && o.status?.readyReplicas === 3 && o.status?.availableReplicas === 3 &&
        o.spec.template.spec.containers[0].image === PAUSE && o.spec.template.spec.terminationGracePeriodSeconds === 0;
    });
  });

  it('should list and delete a collection of ReplicaSets [Conformance]', async () => {
    const ns = await namespace(env, 'rs-collection');
    const labels = { ...samplePod, e2e: 'x7k2q' };
    await env.call('POST', RS(ns), newRS('test-rs', 3, labels, 'httpd', WEBSERVER));
    await env.runningPods(ns, selectorOf(labels), 3);
    expect((await env.list(ALL_RS, 'e2e=x7k2q')).items).toHaveLength(1);

    const r = await env.ts().request('DELETE', `${RS(ns)}?labelSelector=${encodeURIComponent('e2e=x7k2q')}`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 1 } });
    expect(r.status, r.text).toBe(200);
    expect(r.json<Obj>()).toMatchObject({ kind: 'ReplicaSetList', apiVersion: 'apps/v1' });
    expect((await env.list(ALL_RS, 'e2e=x7k2q')).items).toHaveLength(0);
  });

  it('should adopt matching pods on creation and release no longer matching pods [Conformance]', async () => {
    const ns = await namespace(env, 'rs-adoption');
    const name = 'pod-adoption-release';
    const PODS = `/api/v1/namespaces/${ns}/pods`;
    await env.call('POST', PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { name } }, spec: { containers: [{ name, image: WEBSERVER }] } });
    await env.runningPods(ns, `name=${name}`, 1);

    const rs = await env.call('POST', RS(ns), newRS(name, 1, { name }, name, WEBSERVER));
    await env.eventually(async () => {
      const r = await env.ts().request('GET', `${PODS}/${name}`);
      if (r.status === 404) return true;
      return ((r.json<Obj>().metadata.ownerReferences ?? []) as Obj[]).some((o) => o.controller === true && o.uid === rs.metadata.uid);
    }, 'the orphan adopted');
    const owned = await env.get(`${PODS}/${name}`);
    expect(owned.metadata.ownerReferences).toEqual([{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name, uid: rs.metadata.uid, controller: true, blockOwnerDeletion: true }]);

    // the pod's labels no longer match: the set releases it (and makes another)
    owned.metadata.labels = { name: 'not-matching-name' };
    await env.call('PUT', `${PODS}/${name}`, owned);
    await env.eventually(async () => ((await env.get(`${PODS}/${name}`)).metadata.ownerReferences ?? []).every((o: Obj) => !(o.controller && o.uid === rs.metadata.uid)), 'the pod released');
    expect((await env.get(`${PODS}/${name}`)).metadata.ownerReferences ?? []).toEqual([]);
    await env.runningPods(ns, `name=${name}`, 1);
  });

  it('should surface a failure condition on a common issue like exceeded quota', async () => {
    const ns = await namespace(env, 'rs-quota');
    await env.call('POST', `/api/v1/namespaces/${ns}/resourcequotas`, { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'condition-test' }, spec: { hard: { pods: '2' } } });
    await env.eventually(async () => (await env.get(`/api/v1/namespaces/${ns}/resourcequotas/condition-test`)).status?.hard?.pods === '2', 'the quota synced');

    const rs = await env.call('POST', RS(ns), newRS('condition-test', 3, { name: 'condition-test' }, 'httpd', WEBSERVER));
    const failed = await env.eventually(async () => {
      const cur = await env.get(`${RS(ns)}/condition-test`);
      return (cur.status?.observedGeneration ?? 0) >= rs.metadata.generation && condition(cur, 'ReplicaFailure') ? cur : undefined;
    }, 'the ReplicaFailure condition');
    expect(condition(failed, 'ReplicaFailure')).toMatchObject({ status: 'True', reason: 'FailedCreate' });
    expect(condition(failed, 'ReplicaFailure')!.message).toMatch(/^pods "condition-test-[a-z0-9]{5}" is forbidden: exceeded quota: condition-test, requested: pods=1, used: pods=2, limited: pods=2$/);

    const scaled = await env.eventually(async () => {
      const cur = await env.get(`${RS(ns)}/condition-test`);
      cur.spec.replicas = 2;
      const r = await env.ts().request('PUT', `${RS(ns)}/condition-test`, { body: cur });
      return r.status === 200 ? r.json<Obj>() : undefined;
    }, 'the scale-down');
    await env.eventually(async () => {
      const cur = await env.get(`${RS(ns)}/condition-test`);
      return (cur.status?.observedGeneration ?? 0) >= scaled.metadata.generation && !condition(cur, 'ReplicaFailure');
    }, 'the ReplicaFailure condition removed');
  });
});
