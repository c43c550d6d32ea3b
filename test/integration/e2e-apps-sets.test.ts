// What Kubernetes' sig-apps e2e tests of DaemonSets, StatefulSets,
// ControllerRevisions and ReplicationControllers (daemon_set.go,
// statefulset.go, controller_revision.go, rc.go) check through the API, on
// orch with its controllers and a real node agent (simulated runtime): status
// sub-resources (a merge patch of a whole marshalled DaemonSet, zero values and
// nulls included), a strategic patch naming an unknown field, list and
// deleteCollection by label, the ControllerRevision lifecycle, and the
// ReplicationController lifecycle with its watch events.

import { describe, expect, it } from 'vitest';
import { AGNHOST, type Obj, PAUSE, STRATEGIC, WEBSERVER, condition, e2eEnv, named, namespace, podTemplate } from '../helpers/e2e-apps.js';

const env = e2eEnv('sets-node');
const APPS = (ns: string, r: string) => `/apis/apps/v1/namespaces/${ns}/${r}`;

function newDaemonSet(name: string, labels: Record<string, string>): Obj {
  return {
    apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name, labels: { ...labels } },
    spec: { selector: { matchLabels: { ...labels } }, template: { metadata: { labels: { ...labels } }, spec: { containers: [{ name: 'app', image: AGNHOST, ports: [{ containerPort: 9376 }] }] } } },
  };
}
function newStatefulSet(name: string, replicas: number, labels: Record<string, string>): Obj {
  return {
    apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name, labels: { ...labels } },
    spec: { replicas, serviceName: 'test', selector: { matchLabels: { ...labels } }, template: podTemplate(labels, 'webserver', WEBSERVER, { terminationGracePeriodSeconds: 1 }) },
  };
}

describe('[sig-apps] Daemon set', () => {
  it('should verify changes to a daemon set status [Conformance]', async () => {
    const ns = await namespace(env, 'ds-status');
    const sel = 'daemonset-name=daemon-set';
    const rv = (await env.list('/apis/apps/v1/daemonsets', sel)).metadata.resourceVersion as string;
    const ds = await env.call('POST', APPS(ns, 'daemonsets'), newDaemonSet('daemon-set', { 'daemonset-name': 'daemon-set' }));
    await env.runningPods(ns, sel, 1);
    await env.eventually(async () => (await env.get(`${APPS(ns, 'daemonsets')}/daemon-set`)).status?.numberReady === 1, 'CheckDaemonStatus');
    expect((await env.get(`${APPS(ns, 'daemonsets')}/daemon-set/status`)).metadata.uid).toBe(ds.metadata.uid);

    await env.eventually(async () => {
      const cur = await env.get(`${APPS(ns, 'daemonsets')}/daemon-set`);
      cur.status.conditions = [...(cur.status.conditions ?? []), { type: 'StatusUpdate', status: 'True', reason: 'E2E', message: 'Set from e2e test' }];
      return (await env.ts().request('PUT', `${APPS(ns, 'daemonsets')}/daemon-set/status`, { body: cur })).status === 200;
    }, 'the status update');
    await env.until(APPS(ns, 'daemonsets'), rv, sel, (e) => named('daemon-set', e) && condition(e.object, 'StatusUpdate')?.reason === 'E2E');

    // json.Marshal(appsv1.DaemonSet{Status: {Conditions: ...}}) as a merge patch: nulls and zero values for the rest
    const payload = {
      metadata: { creationTimestamp: null },
      spec: { selector: null, template: { metadata: { creationTimestamp: null }, spec: { containers: null } }, updateStrategy: {} },
      status: { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0, conditions: [{ type: 'StatusPatched', status: 'True', lastTransitionTime: null, reason: '', message: '' }] },
    };
    const patched = await env.call('PATCH', `${APPS(ns, 'daemonsets')}/daemon-set/status`, payload);
    expect(patched.spec.selector).toEqual({ matchLabels: { 'daemonset-name': 'daemon-set' } });
    expect(patched.metadata.creationTimestamp).toBe(ds.metadata.creationTimestamp);
    await env.until(APPS(ns, 'daemonsets'), rv, sel, (e) => named('daemon-set', e) && condition(e.object, 'StatusPatched') !== undefined);
  });

  it('should list and delete a collection of DaemonSets [Conformance]', async () => {
    const ns = await namespace(env, 'ds-collection');
    const sel = 'daemonset-name=ds-coll';
    await env.call('POST', APPS(ns, 'daemonsets'), newDaemonSet('ds-coll', { 'daemonset-name': 'ds-coll' }));
    await env.runningPods(ns, sel, 1);
    expect((await env.list('/apis/apps/v1/daemonsets', sel)).items).toHaveLength(1);
    const r = await env.ts().request('DELETE', `${APPS(ns, 'daemonsets')}?labelSelector=${encodeURIComponent(sel)}`, { body: { gracePeriodSeconds: 1 } });
    expect(r.status, r.text).toBe(200);
    expect((await env.list('/apis/apps/v1/daemonsets', sel)).items).toHaveLength(0);
  });
});

describe('[sig-apps] ControllerRevision', () => {
  it('should manage the lifecycle of a ControllerRevision [Conformance]', async () => {
    const ns = await namespace(env, 'cr-lifecycle');
    const sel = 'daemonset-name=e2e-cr-daemon-set';
    const CRS = APPS(ns, 'controllerrevisions');
    const ds = await env.call('POST', APPS(ns, 'daemonsets'), newDaemonSet('e2e-cr-daemon-set', { 'daemonset-name': 'e2e-cr-daemon-set' }));
    await env.runningPods(ns, sel, 1);
    expect((await env.list('/apis/apps/v1/daemonsets', sel)).items).toHaveLength(1);
    const revs = (await env.list('/apis/apps/v1/controllerrevisions', sel)).items as Obj[];
    expect(revs).toHaveLength(1);
    expect(revs[0]!.metadata.ownerReferences[0]).toMatchObject({ kind: 'DaemonSet', uid: ds.metadata.uid, controller: true });
    const initial = await env.get(`${CRS}/${revs[0]!.metadata.name}`);

    const patched = await env.call('PATCH', `${CRS}/${initial.metadata.name}`, { metadata: { labels: { [initial.metadata.name]: 'patched' } } }, STRATEGIC);
    expect(patched.metadata.labels).toMatchObject({ [initial.metadata.name]: 'patched' });

    // a revision of the set made by hand (the e2e names it by kube's template hash; any name does here)
    const created = await env.call('POST', CRS, {
      apiVersion: 'apps/v1', kind: 'ControllerRevision',
      metadata: { name: 'e2e-cr-daemon-set-manual', labels: { 'daemonset-name': 'e2e-cr-daemon-set', 'controller-revision-hash': 'manual' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: ds.metadata.name, uid: ds.metadata.uid, controller: true, blockOwnerDeletion: true }] },
      data: initial.data, revision: initial.revision + 1,
    });
    await env.eventually(async () => (await env.list(CRS, sel)).items.length === 2, 'two ControllerRevisions');
    await env.call('DELETE', `${CRS}/${initial.metadata.name}`);
    await env.eventually(async () => (await env.list(CRS, sel)).items.length === 1, 'one ControllerRevision');

    const current = ((await env.list(CRS)).items as Obj[])[0]!;
    expect(current.metadata.name).toBe(created.metadata.name);
    current.metadata.labels[current.metadata.name] = 'updated';
    expect((await env.call('PUT', `${CRS}/${current.metadata.name}`, current)).metadata.labels).toMatchObject({ [current.metadata.name]: 'updated' });

    // a new template: the controller makes the next revision
    await env.call('PATCH', `${APPS(ns, 'daemonsets')}/e2e-cr-daemon-set`, { spec: { template: { spec: { terminationGracePeriodSeconds: 1 } } }, updateStrategy: { type: 'RollingUpdate' } }, STRATEGIC);
    await env.eventually(async () => (await env.list(CRS, sel)).items.length === 2, 'two ControllerRevisions again');
    const r = await env.ts().request('DELETE', `${CRS}?labelSelector=${encodeURIComponent(`${current.metadata.name}=updated`)}`, { body: {} });
    expect(r.status, r.text).toBe(200);
    await env.eventually(async () => (await env.list(CRS, sel)).items.length === 1, 'one ControllerRevision left');
    expect(((await env.list(CRS)).items as Obj[])[0]!.revision).toBe(3);
  });
});

describe('[sig-apps] StatefulSet', () => {
  it('should list, patch and delete a collection of StatefulSets [Conformance]', async () => {
    const ns = await namespace(env, 'ss-collection');
    const labels = { name: 'sample-pod', pod: 'httpd' };
    await env.call('POST', APPS(ns, 'statefulsets'), newStatefulSet('test-ss', 1, labels));
    await env.runningPods(ns, 'name=sample-pod', 1);
    // a field of the wrong case is unknown: dropped (with a warning), as kube decodes the patched object
    const patch = { metadata: { labels: { 'test-ss': 'patched' } }, spec: { replicas: 2, template: { spec: { TerminationGracePeriodSeconds: 1, containers: [{ name: 'test-ss', image: PAUSE }] } } } };
    await env.call('PATCH', `${APPS(ns, 'statefulsets')}/test-ss`, patch, STRATEGIC);
    const ss = await env.get(`${APPS(ns, 'statefulsets')}/test-ss`);
    expect(ss.spec.replicas).toBe(2);
    expect(ss.spec.template.spec.containers[0].image).toBe(PAUSE);
    await env.runningPods(ns, 'name=sample-pod', 2);
    expect((await env.list('/apis/apps/v1/statefulsets', 'test-ss=patched')).items).toHaveLength(1);
    const r = await env.ts().request('DELETE', `${APPS(ns, 'statefulsets')}?labelSelector=test-ss%3Dpatched`, { body: { gracePeriodSeconds: 1 } });
    expect(r.status, r.text).toBe(200);
    expect((await env.list('/apis/apps/v1/statefulsets', 'test-ss=patched')).items).toHaveLength(0);
  });

  it('should validate Statefulset Status endpoints [Conformance]', async () => {
    const ns = await namespace(env, 'ss-status');
    const rv = (await env.list('/apis/apps/v1/statefulsets', 'e2e=testing')).metadata.resourceVersion as string;
    await env.call('POST', APPS(ns, 'statefulsets'), newStatefulSet('ss', 1, { foo: 'bar', baz: 'blah' }));
    await env.runningPods(ns, 'foo=bar', 1);
    await env.call('PATCH', `${APPS(ns, 'statefulsets')}/ss`, { metadata: { labels: { e2e: 'testing' } } }, STRATEGIC);
    expect((await env.get(`${APPS(ns, 'statefulsets')}/ss/status`)).metadata.labels).toMatchObject({ e2e: 'testing' });
    await env.eventually(async () => {
      const cur = await env.get(`${APPS(ns, 'statefulsets')}/ss`);
      cur.status.conditions = [...(cur.status.conditions ?? []), { type: 'StatusUpdate', status: 'True', reason: 'E2E', message: 'Set from e2e test' }];
      return (await env.ts().request('PUT', `${APPS(ns, 'statefulsets')}/ss/status`, { body: cur })).status === 200;
    }, 'the status update');
    await env.until(APPS(ns, 'statefulsets'), rv, 'e2e=testing', (e) => named('ss', e) && condition(e.object, 'StatusUpdate')?.message === 'Set from e2e test');
    await env.call('PATCH', `${APPS(ns, 'statefulsets')}/ss/status`, { status: { conditions: [{ type: 'StatusPatched', status: 'True' }] } });
    await env.until(APPS(ns, 'statefulsets'), rv, 'e2e=testing', (e) => named('ss', e) && condition(e.object, 'StatusPatched') !== undefined);
  });
});

describe('[sig-apps] ReplicationController', () => {
  it('should test the lifecycle of a ReplicationController [Conformance]', async () => {
    const ns = await namespace(env, 'rc-lifecycle');
    const RCS = `/api/v1/namespaces/${ns}/replicationcontrollers`;
    const sel = 'test-rc-static=true';
    const rv = (await env.list(RCS, sel)).metadata.resourceVersion as string;
    const events = (pred: (e: { type: string; object: Obj }) => boolean) => env.until(RCS, rv, sel, pred);
    await env.call('POST', RCS, {
      apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'rc-test', labels: { 'test-rc-static': 'true' } },
      spec: { replicas: 1, selector: { 'test-rc-static': 'true' }, template: { metadata: { name: 'rc-test', labels: { 'test-rc-static': 'true' } }, spec: { containers: [{ name: 'rc-test', image: 'registry.k8s.io/e2e-test-images/nginx:1.14-4' }] } } },
    });
    await events((e) => e.type === 'ADDED');
    await events((e) => e.object.status?.replicas === 1 && e.object.status?.readyReplicas === 1);

    // json.Marshal(v1.ReplicationController{ObjectMeta: {Labels}}): a null creationTimestamp, empty spec and status
    const labelled = await env.call('PATCH', `${RCS}/rc-test`, { metadata: { labels: { 'test-rc': 'patched' }, creationTimestamp: null }, spec: {}, status: {} }, STRATEGIC);
    expect(labelled.metadata.labels['test-rc']).toBe('patched');
    const status = await env.call('PATCH', `${RCS}/rc-test/status`, { status: { readyReplicas: 0, availableReplicas: 0 } }, STRATEGIC);
    expect(status.status.readyReplicas ?? 0).toBe(0);
    await events((e) => e.type === 'MODIFIED' && e.object.status?.readyReplicas === undefined);
    expect((await env.get(`${RCS}/rc-test/status`)).status.replicas).toBe(1);

    await env.call('PATCH', `${RCS}/rc-test/scale`, { metadata: { creationTimestamp: null }, spec: { replicas: 2 }, status: { replicas: 0 } }, STRATEGIC);
    await events((e) => named('rc-test', e) && e.object.status?.replicas === 2 && e.object.status?.readyReplicas === 2);
    const rc = await env.get(`${RCS}/rc-test`);
    expect(rc.metadata.labels['test-rc']).toBe('patched');
    rc.status.availableReplicas = 1;
    rc.status.readyReplicas = 1;
    await env.call('PUT', `${RCS}/rc-test/status`, rc);

    const all = (await env.list('/api/v1/replicationcontrollers', sel)).items as Obj[];
    expect(all.some((i) => i.metadata.name === 'rc-test' && i.metadata.namespace === ns && i.metadata.labels['test-rc'] === 'patched')).toBe(true);
    const r = await env.ts().request('DELETE', `${RCS}?labelSelector=${encodeURIComponent(sel)}`, { body: {} });
    expect(r.status, r.text).toBe(200);
    await events((e) => e.type === 'DELETED' && named('rc-test', e));
  });
});
