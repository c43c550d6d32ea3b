// What Kubernetes' sig-apps e2e tests of Deployment and DaemonSet rollouts
// (test/e2e/apps/deployment.go, daemon_set.go) check, on orch with its
// controllers and a real node agent (simulated runtime): RollingUpdate and
// Recreate replace old pods, an adopted ReplicaSet's revision is continued,
// old ReplicaSets beyond revisionHistoryLimit go, a rollout can be rolled
// over before it finishes, a scale during a rollout is spread
// proportionally; a daemon pod runs on every (selected) node and comes back
// when deleted or failed, a RollingUpdate replaces it with a new revision,
// and a rollback leaves pods of the old template alone.
//
// Images kube's tests use because no registry has them are written with an
// upper-case tag here: the simulated runtime pulls every well-formed image
// and refuses those, so their pods never become ready, as on a cluster.

import { describe, expect, it } from 'vitest';
import { AGNHOST, type Obj, STRATEGIC, WEBSERVER, e2eEnv, namespace, podTemplate, updateWithRetries } from '../helpers/e2e-apps.js';
import { rm } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import { startAgentProcess, waitNodeReady } from '../helpers/nodeagent.js';
import { openWatch } from '../helpers/watch-stream.js';

const NODE = 'rollout-node';
const env = e2eEnv(NODE);
const DEPLOYS = (ns: string) => `/apis/apps/v1/namespaces/${ns}/deployments`;
const RSS = (ns: string) => `/apis/apps/v1/namespaces/${ns}/replicasets`;
const REVISION = 'deployment.kubernetes.io/revision';
const HASH_LABEL = 'pod-template-hash';
// kube's e2e image names (WebserverImageName, AgnhostImageName) are the container names
const HTTPD = 'httpd';
const AGN = 'agnhost';

/** e2edeployment.NewDeployment: labels on the object, selector and template alike; only the strategy type set */
function newDeployment(name: string, replicas: number, labels: Record<string, string>, container: string, image: string, strategy: 'RollingUpdate' | 'Recreate'): Obj {
  return {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, labels: { ...labels } },
    spec: { replicas, selector: { matchLabels: { ...labels } }, strategy: { type: strategy }, template: podTemplate(labels, container, image, { terminationGracePeriodSeconds: 0 }) },
  };
}

/** the e2e's newRS: a ReplicaSet of `replicas` pods of one container, grace period 0 */
function newRS(name: string, replicas: number, labels: Record<string, string>, container: string, image: string): Obj {
  return {
    apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name, labels: { ...labels } },
    spec: { replicas, selector: { matchLabels: { ...labels } }, template: podTemplate(labels, container, image, { terminationGracePeriodSeconds: 0 }) },
  };
}

const image = (o: Obj): string => o.spec.template.spec.containers[0].image;
const controlledBy = (o: Obj, uid: string): boolean => ((o.metadata.ownerReferences ?? []) as Obj[]).some((r) => r.controller === true && r.uid === uid);

/** testutil.GetAllReplicaSets: the Deployment's sets, split into the new one (its template) and the old ones */
async function replicaSetsOf(d: Obj): Promise<{ newRs?: Obj; olds: Obj[] }> {
  const all = ((await env.list(RSS(d.metadata.namespace))).items as Obj[]).filter((rs) => controlledBy(rs, d.metadata.uid));
  const tmpl = d.spec.template.spec.containers[0];
  const isNew = (rs: Obj): boolean => rs.spec.template.spec.containers[0].image === tmpl.image && rs.spec.template.spec.containers[0].name === tmpl.name;
  return { newRs: all.find(isNew), olds: all.filter((rs) => !isNew(rs)) };
}

/** deploymentutil.DeploymentComplete */
const complete = (d: Obj): boolean => {
  const s = d.status ?? {};
  return s.observedGeneration >= d.metadata.generation && s.updatedReplicas === d.spec.replicas && s.replicas === d.spec.replicas && s.availableReplicas === d.spec.replicas;
};

/** e2edeployment.WaitForDeploymentRevisionAndImage: the Deployment and its new set at `revision` with `img` */
function waitRevisionAndImage(ns: string, name: string, revision: string, img: string): Promise<Obj> {
  return env.eventually(async () => {
    const d = await env.get(`${DEPLOYS(ns)}/${name}`);
    const { newRs } = await replicaSetsOf(d);
    // checkRevisionAndImage: the new set selects by pod-template-hash
    const hashed = newRs?.spec.selector.matchLabels?.[HASH_LABEL] !== undefined;
    return newRs && hashed && d.metadata.annotations?.[REVISION] === revision && newRs.metadata.annotations?.[REVISION] === revision && image(d) === img && image(newRs) === img ? d : undefined;
  }, `deployment ${name} at revision ${revision} with ${img}`);
}

/**
 * e2edeployment.WaitForDeploymentComplete, and with `rolling` testutil's
 * checkRollingUpdateStatus at every look: the sets never ask for more than
 * replicas + maxSurge pods and the Deployment never reports fewer than
 * replicas − maxUnavailable available (kube fails the test at once; the
 * violations are collected and asserted empty).
 */
async function waitComplete(ns: string, name: string, rolling?: { surge: number; unavailable: number }): Promise<Obj> {
  const violations: string[] = [];
  const d = await env.eventually(async () => {
    const cur = await env.get(`${DEPLOYS(ns)}/${name}`);
    if (rolling && !complete(cur)) {
      const { newRs, olds } = await replicaSetsOf(cur);
      const created = [...olds, ...(newRs ? [newRs] : [])].reduce((a, rs) => a + rs.spec.replicas, 0);
      if (created > cur.spec.replicas + rolling.surge) violations.push(`${created} pods asked for, more than ${cur.spec.replicas} + ${rolling.surge}`);
      if ((cur.status?.availableReplicas ?? 0) < cur.spec.replicas - rolling.unavailable) violations.push(`${cur.status?.availableReplicas ?? 0} available, fewer than ${cur.spec.replicas} - ${rolling.unavailable}`);
    }
    return complete(cur) ? cur : undefined;
  }, `deployment ${name} complete`, 90_000);
  expect(violations).toEqual([]);
  return d;
}

/** e2edeployment.UpdateDeploymentWithRetries */
const updateDeployment = (ns: string, name: string, change: (d: Obj) => void): Promise<Obj> => updateWithRetries(env, `${DEPLOYS(ns)}/${name}`, change);

/** waitForReplicaSetTargetSpecReplicas: observed and at `replicas` */
function waitSetSpecReplicas(ns: string, rsName: string, generation: number, replicas: number): Promise<Obj> {
  return env.eventually(async () => {
    const rs = await env.get(`${RSS(ns)}/${rsName}`);
    return rs.status?.observedGeneration >= generation && rs.spec.replicas === replicas ? rs : undefined;
  }, `replica set ${rsName} with spec.replicas ${replicas}`, 60_000);
}

/** waitForReplicaSetDesiredReplicas: status.replicas caught up with spec.replicas */
function waitSetDesiredReplicas(ns: string, rs: Obj): Promise<Obj> {
  return env.eventually(async () => {
    const cur = await env.get(`${RSS(ns)}/${rs.metadata.name}`);
    return cur.status?.observedGeneration >= rs.metadata.generation && cur.status?.replicas === rs.spec.replicas && cur.status?.replicas === cur.spec.replicas ? cur : undefined;
  }, `replica set ${rs.metadata.name} with its desired replicas`, 60_000);
}

describe('[sig-apps] Deployment', () => {
  it('RollingUpdateDeployment should delete old pods and create new ones [Conformance]', async () => {
    const ns = await namespace(env, 'deploy-rolling');
    const rsLabels = { name: 'sample-pod', pod: HTTPD };
    // an adopted set's revision far beyond 2^53: the next one must still be exactly one more (int64 in kube)
    await env.call('POST', RSS(ns), { ...newRS('test-rolling-update-controller', 1, rsLabels, HTTPD, WEBSERVER), metadata: { name: 'test-rolling-update-controller', labels: rsLabels, annotations: { [REVISION]: '3546343826724305832' } } });
    await env.runningPods(ns, 'name=sample-pod', 1);

    await env.call('POST', DEPLOYS(ns), newDeployment('test-rolling-update-deployment', 1, { name: 'sample-pod' }, AGN, AGNHOST, 'RollingUpdate'));
    await waitRevisionAndImage(ns, 'test-rolling-update-deployment', '3546343826724305833', AGNHOST);
    const d = await waitComplete(ns, 'test-rolling-update-deployment');
    // one old set: the adopted one
    const { olds } = await replicaSetsOf(d);
    expect(olds.map((rs) => rs.metadata.name)).toEqual(['test-rolling-update-controller']);
  });

  it('RecreateDeployment should delete old pods and create new ones [Conformance]', async () => {
    const ns = await namespace(env, 'deploy-recreate');
    await env.call('POST', DEPLOYS(ns), newDeployment('test-recreate-deployment', 1, { name: 'sample-pod-3' }, AGN, AGNHOST, 'Recreate'));
    await waitRevisionAndImage(ns, 'test-recreate-deployment', '1', AGNHOST);
    await waitComplete(ns, 'test-recreate-deployment');

    const d = await updateDeployment(ns, 'test-recreate-deployment', (u) => {
      u.spec.template.spec.containers[0].name = HTTPD;
      u.spec.template.spec.containers[0].image = WEBSERVER;
    });
    // watchRecreateDeployment: from the update on, no status shows new pods alongside old ones
    const seen = await env.until(DEPLOYS(ns), d.metadata.resourceVersion, 'name=sample-pod-3', (e) => {
      const s = e.object.status ?? {};
      if ((s.updatedReplicas ?? 0) > 0 && (s.replicas ?? 0) !== s.updatedReplicas) return true;
      return e.object.spec.replicas === s.replicas && e.object.spec.replicas === s.updatedReplicas && e.object.metadata.generation <= s.observedGeneration;
    }, 120_000);
    expect(seen.object.status).toMatchObject({ replicas: 1, updatedReplicas: 1 });
  });

  it('deployment should delete old replica sets [Conformance]', async () => {
    const ns = await namespace(env, 'deploy-cleanup');
    await env.call('POST', RSS(ns), newRS('test-cleanup-controller', 1, { name: 'cleanup-pod', pod: HTTPD }, HTTPD, WEBSERVER));
    await env.runningPods(ns, 'name=cleanup-pod', 1);

    // only one pod is created from here on, the agnhost one: the old set makes none
    const rv = (await env.list(`/api/v1/namespaces/${ns}/pods`)).metadata.resourceVersion as string;
    const w = openWatch(env.ts().server, `/api/v1/namespaces/${ns}/pods?watch=1&resourceVersion=${rv}`);
    try {
      const d = newDeployment('test-cleanup-deployment', 1, { name: 'cleanup-pod' }, AGN, AGNHOST, 'RollingUpdate');
      d.spec.revisionHistoryLimit = 0;
      await env.call('POST', DEPLOYS(ns), d);
      // waitForDeploymentOldRSsNum(0)
      await env.eventually(async () => {
        const cur = await env.get(`${DEPLOYS(ns)}/test-cleanup-deployment`);
        const { newRs, olds } = await replicaSetsOf(cur);
        return newRs && olds.length === 0;
      }, 'the old replica set cleaned up', 60_000);
      expect((await env.list(RSS(ns))).items.map((rs: Obj) => rs.metadata.name)).not.toContain('test-cleanup-controller');
      await env.runningPods(ns, 'name=cleanup-pod', 1);
      await w.waitUntil((e) => e.type === 'ADDED', 10_000);
      const added = w.events.filter((e) => e.type === 'ADDED') as unknown as { object: Obj }[];
      expect(added.map((e) => e.object.spec.containers[0].name)).toEqual([AGN]);
    } finally {
      w.close();
    }
  });

  it('deployment should support rollover [Conformance]', async () => {
    const ns = await namespace(env, 'deploy-rollover');
    await env.call('POST', RSS(ns), newRS('test-rollover-controller', 1, { name: 'rollover-pod', pod: HTTPD }, HTTPD, WEBSERVER));
    await env.runningPods(ns, 'name=rollover-pod', 1);
    // WaitForReadyReplicaSet
    await env.eventually(async () => (await env.get(`${RSS(ns)}/test-rollover-controller`)).status?.readyReplicas === 1, 'the replica set ready');

    // an image no registry has, so that the rollout cannot finish
    const stuck = 'gcr.io/google_samples/gb-redisslave:NONEXISTENT';
    const base = newDeployment('test-rollover-deployment', 1, { name: 'rollover-pod' }, 'redis-slave', stuck, 'RollingUpdate');
    const created = await env.call('POST', DEPLOYS(ns), { ...base, spec: { ...base.spec, minReadySeconds: 10, strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } } } });
    // waitForDeploymentUpdatedReplicasGTE(1), then checkDeploymentRevisionAndImage("1")
    await env.eventually(async () => {
      const d = await env.get(`${DEPLOYS(ns)}/test-rollover-deployment`);
      return d.status?.observedGeneration >= created.metadata.generation && d.status?.updatedReplicas >= 1;
    }, 'one updated replica');
    let d = await waitRevisionAndImage(ns, 'test-rollover-deployment', '1', stuck);
    // both sets hold one replica (ensureReplicas: spec and status)
    const firstNew = (await replicaSetsOf(d)).newRs!;
    await env.eventually(async () => {
      const sets = await Promise.all(['test-rollover-controller', firstNew.metadata.name].map((n) => env.get(`${RSS(ns)}/${n}`)));
      return sets.every((rs) => rs.spec.replicas === 1 && rs.status?.replicas === 1);
    }, 'both replica sets with one replica');

    d = await updateDeployment(ns, 'test-rollover-deployment', (u) => {
      u.spec.template.spec.containers[0].name = AGN;
      u.spec.template.spec.containers[0].image = AGNHOST;
    });
    await env.eventually(async () => (await env.get(`${DEPLOYS(ns)}/test-rollover-deployment`)).status?.observedGeneration >= d.metadata.generation, 'the update observed');
    await waitRevisionAndImage(ns, 'test-rollover-deployment', '2', AGNHOST);
    await waitComplete(ns, 'test-rollover-deployment', { surge: 1, unavailable: 0 });
    for (const name of ['test-rollover-controller', firstNew.metadata.name]) {
      const rs = await env.get(`${RSS(ns)}/${name}`);
      expect([rs.spec.replicas, rs.status?.replicas]).toEqual([0, 0]);
    }
  });

  it('deployment should support proportional scaling [Conformance]', async () => {
    const ns = await namespace(env, 'deploy-proportional');
    const base = newDeployment('webserver-deployment', 10, { name: HTTPD }, HTTPD, WEBSERVER, 'RollingUpdate');
    const created = await env.call('POST', DEPLOYS(ns), { ...base, spec: { ...base.spec, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 3, maxUnavailable: 2 } } } });
    await env.eventually(async () => (await env.get(`${DEPLOYS(ns)}/webserver-deployment`)).status?.observedGeneration >= created.metadata.generation, 'generation observed');
    await env.runningPods(ns, `name=${HTTPD}`, 10);
    let d = await waitComplete(ns, 'webserver-deployment');
    const first = (await replicaSetsOf(d)).newRs!;

    // a partial rollout: the new set's pods never become ready
    d = await updateDeployment(ns, 'webserver-deployment', (u) => {
      u.spec.template.spec.containers[0].image = 'webserver:NOT-FOUND';
    });
    await env.eventually(async () => (await env.get(`${DEPLOYS(ns)}/webserver-deployment`)).status?.observedGeneration >= d.metadata.generation, 'the update observed');
    // the first set keeps replicas − maxUnavailable = 8 available, and is sized 8
    await env.eventually(async () => (await env.get(`${RSS(ns)}/${first.metadata.name}`)).status?.availableReplicas === 8, 'the first set with 8 available', 60_000);
    await waitSetSpecReplicas(ns, first.metadata.name, first.metadata.generation, 8);
    await waitSetDesiredReplicas(ns, await env.get(`${RSS(ns)}/${first.metadata.name}`));
    // the second: replicas + maxSurge − 8 = 5, none available
    const second = (await replicaSetsOf(d)).newRs!;
    expect(second.status?.availableReplicas ?? 0).toBe(0);
    await waitSetSpecReplicas(ns, second.metadata.name, second.metadata.generation, 5);
    await waitSetDesiredReplicas(ns, await env.get(`${RSS(ns)}/${second.metadata.name}`));
    expect(d.status.availableReplicas).toBeGreaterThanOrEqual(8);

    // 30 replicas: 20 more spread as 8:5 of the 13 the sets may hold (8 + round(20·8/13), 5 + round(20·5/13))
    await updateDeployment(ns, 'webserver-deployment', (u) => {
      u.spec.replicas = 30;
    });
    await waitSetSpecReplicas(ns, first.metadata.name, first.metadata.generation, 20);
    await waitSetSpecReplicas(ns, second.metadata.name, second.metadata.generation, 13);
  });
});

const DSS = (ns: string) => `/apis/apps/v1/namespaces/${ns}/daemonsets`;
const DS_NAME = 'daemon-set';
const NAME_LABEL = { 'daemonset-name': DS_NAME };
const HASH = 'controller-revision-hash';
const COLOR = 'daemonset-color';

/** daemon_set.go's newDaemonSet: no labels on the object, one container `app` with port 9376 */
function newDaemonSet(img: string, strategy?: string): Obj {
  return {
    apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: DS_NAME },
    spec: {
      selector: { matchLabels: { ...NAME_LABEL } }, ...(strategy ? { updateStrategy: { type: strategy } } : {}),
      template: { metadata: { labels: { ...NAME_LABEL } }, spec: { containers: [{ name: 'app', image: img, ports: [{ containerPort: 9376 }] }] } },
    },
  };
}

const podReady = (p: Obj): boolean => ((p.status?.conditions ?? []) as Obj[]).some((c) => c.type === 'Ready' && c.status === 'True');
const daemonPods = async (ns: string): Promise<Obj[]> => (await env.list(`/api/v1/namespaces/${ns}/pods`, 'daemonset-name=daemon-set')).items as Obj[];

/** the nodes the set's pods fit (canScheduleOnNode: its node selector; the test node has no taints) */
async function schedulableNodes(ds: Obj): Promise<string[]> {
  const sel = (ds.spec.template.spec.nodeSelector ?? {}) as Record<string, string>;
  const nodes = (await env.list('/api/v1/nodes')).items as Obj[];
  return nodes.filter((n) => Object.entries(sel).every(([k, v]) => n.metadata.labels?.[k] === v)).map((n) => n.metadata.name as string);
}

/** checkDaemonPodOnNodes: exactly one available pod of the set on each of `nodes`, none elsewhere */
async function onNodes(ds: Obj, nodes: string[]): Promise<boolean> {
  const count = new Map<string, number>();
  for (const p of await daemonPods(ds.metadata.namespace)) {
    if (!controlledBy(p, ds.metadata.uid) || p.metadata.deletionTimestamp || !podReady(p)) continue;
    count.set(p.spec.nodeName, (count.get(p.spec.nodeName) ?? 0) + 1);
  }
  return nodes.every((n) => count.get(n) === 1) && count.size === nodes.length;
}

const waitOnNodes = (ds: Obj, nodes: string[], what: string): Promise<boolean> => env.eventually(() => onNodes(ds, nodes), what, 60_000);
const waitOnAllNodes = async (ds: Obj): Promise<boolean> => waitOnNodes(ds, await schedulableNodes(ds), 'daemon pods on every node');

/** checkDaemonStatus: as many scheduled and ready as desired */
const waitDaemonStatus = (ns: string): Promise<Obj> => env.eventually(async () => {
  const s = (await env.get(`${DSS(ns)}/${DS_NAME}`)).status ?? {};
  return s.desiredNumberScheduled > 0 && s.desiredNumberScheduled === s.currentNumberScheduled && s.desiredNumberScheduled === s.numberReady ? s : undefined;
}, 'the daemon status');

/** setDaemonSetNodeLabels: the node's `daemonset-` labels replaced by `labels` */
function setNodeLabels(labels: Record<string, string>): Promise<Obj> {
  return updateWithRetries(env, `/api/v1/nodes/${NODE}`, (n) => {
    const others = Object.fromEntries(Object.entries((n.metadata.labels ?? {}) as Record<string, string>).filter(([k]) => !k.startsWith('daemonset-')));
    n.metadata.labels = { ...others, ...labels };
  });
}

/**
 * checkDaemonPodsImageAndAvailability: every node runs a pod with `img`;
 * kube fails at once when more than `maxUnavailable` of the set's pods are
 * not available — collected here and asserted empty.
 */
async function waitImageAndAvailability(ds: Obj, img: string, maxUnavailable: number): Promise<void> {
  const violations: string[] = [];
  const nodes = await schedulableNodes(ds);
  await env.eventually(async () => {
    const pods = (await daemonPods(ds.metadata.namespace)).filter((p) => controlledBy(p, ds.metadata.uid));
    const unavailable = pods.filter((p) => !podReady(p)).map((p) => p.metadata.name as string);
    if (unavailable.length > maxUnavailable) violations.push(`unavailable: ${unavailable.join(', ')}`);
    return nodes.every((n) => pods.some((p) => p.spec.nodeName === n && p.spec.containers[0].image === img));
  }, `daemon pods with ${img}`, 90_000);
  expect(violations).toEqual([]);
}

/** waitForHistoryCreated, then curHistory: the one revision whose template is the set's */
async function currentHistory(ds: Obj, count: number): Promise<Obj> {
  const histories = await env.eventually(async () => {
    const l = (await env.list(`/apis/apps/v1/namespaces/${ds.metadata.namespace}/controllerrevisions`, 'daemonset-name=daemon-set')).items as Obj[];
    return l.length === count ? l : undefined;
  }, `${count} controller revisions`);
  const template = (cr: Obj): Obj => {
    const { $patch, ...t } = cr.data.spec.template as Obj;
    expect($patch).toBe('replace');
    return t;
  };
  const cur = histories.filter((cr) => isDeepStrictEqual(template(cr), ds.spec.template));
  expect(cur).toHaveLength(1);
  return cur[0]!;
}

/** checkDaemonSetPodsLabels: every pod carries the revision hash `hash` */
async function expectPodsHash(ns: string, hash: string): Promise<void> {
  const pods = await daemonPods(ns);
  expect(pods.length).toBeGreaterThan(0);
  for (const p of pods) expect(p.metadata.labels[HASH]).toBe(hash);
}

/** the e2e's AfterEach: the set deleted, its pods gone, the node's test labels cleared */
async function cleanUp(ns: string): Promise<void> {
  await env.ts().request('DELETE', `${DSS(ns)}/${DS_NAME}`, { body: { propagationPolicy: 'Background' } });
  await env.eventually(async () => (await daemonPods(ns)).length === 0, 'the daemon pods reaped');
  await setNodeLabels({});
}

/** a simple DaemonSet running on every node with its status caught up, and one of its pods */
async function simpleDaemon(ns: string): Promise<{ ds: Obj; pod: Obj }> {
  const ds = await env.call('POST', DSS(ns), newDaemonSet(WEBSERVER));
  await waitOnAllNodes(ds);
  await waitDaemonStatus(ns);
  return { ds, pod: (await daemonPods(ns))[0]! };
}

/** checkRunningOnAllNodes again, with `pod` replaced by another */
const waitRevived = (ds: Obj, pod: Obj): Promise<boolean> => env.eventually(async () =>
  (await onNodes(ds, await schedulableNodes(ds))) && !(await daemonPods(ds.metadata.namespace)).some((p) => p.metadata.uid === pod.metadata.uid), 'the daemon pod revived', 60_000);

describe('[sig-apps] Daemon set [Serial]', () => {
  it('should run and stop simple daemon [Conformance]', async () => {
    const ns = await namespace(env, 'ds-simple');
    try {
      const { ds, pod } = await simpleDaemon(ns);
      // a deleted daemon pod is revived
      await env.call('DELETE', `/api/v1/namespaces/${ns}/pods/${pod.metadata.name}`);
      await waitRevived(ds, pod);
    } finally {
      await cleanUp(ns);
    }
  });

  it('should run and stop complex daemon [Conformance]', async () => {
    const ns = await namespace(env, 'ds-complex');
    try {
      const created = newDaemonSet(WEBSERVER);
      created.spec.template.spec.nodeSelector = { [COLOR]: 'blue' };
      const ds = await env.call('POST', DSS(ns), created);
      await waitOnNodes(ds, [], 'no daemon pods');
      expect(await daemonPods(ns).catch(() => [])).toEqual([]);

      // the node labelled blue gets the pod
      const blue = await setNodeLabels({ [COLOR]: 'blue' });
      expect(Object.keys(blue.metadata.labels).filter((k) => k.startsWith('daemonset-'))).toEqual([COLOR]);
      await waitOnNodes(ds, [NODE], 'a daemon pod on the blue node');
      await waitDaemonStatus(ns);

      // green: the node no longer fits, its pod goes
      await setNodeLabels({ [COLOR]: 'green' });
      await waitOnNodes(ds, [], 'the daemon pod unscheduled');

      const patched = await env.call('PATCH', `${DSS(ns)}/${DS_NAME}`, { spec: { template: { spec: { nodeSelector: { [COLOR]: 'green' } } }, updateStrategy: { type: 'RollingUpdate' } } }, STRATEGIC);
      expect(patched.spec.updateStrategy.type).toBe('RollingUpdate');
      await waitOnNodes(patched, [NODE], 'a daemon pod on the green node');
      await waitDaemonStatus(ns);
    } finally {
      await cleanUp(ns);
    }
  });

  it('should retry creating failed daemon pods [Conformance]', async () => {
    const ns = await namespace(env, 'ds-failed');
    try {
      const { ds, pod } = await simpleDaemon(ns);
      // the phase set to Failed by an unconditional status update
      await env.call('PUT', `/api/v1/namespaces/${ns}/pods/${pod.metadata.name}/status`, { ...pod, metadata: { ...pod.metadata, resourceVersion: '' }, status: { ...pod.status, phase: 'Failed' } });
      await waitRevived(ds, pod);
      // waitFailedDaemonPodDeleted
      await env.eventually(async () => (await env.ts().request('GET', `/api/v1/namespaces/${ns}/pods/${pod.metadata.name}`)).status === 404, 'the failed pod deleted');
    } finally {
      await cleanUp(ns);
    }
  });

  it('should update pod when spec was updated and update strategy is RollingUpdate [Conformance]', async () => {
    const ns = await namespace(env, 'ds-rolling');
    try {
      let ds = await env.call('POST', DSS(ns), newDaemonSet(WEBSERVER, 'RollingUpdate'));
      await waitOnAllNodes(ds);
      ds = await env.get(`${DSS(ns)}/${DS_NAME}`);
      let cur = await currentHistory(ds, 1);
      expect(cur.revision).toBe(1);
      await expectPodsHash(ns, cur.metadata.labels[HASH]);

      ds = await env.call('PATCH', `${DSS(ns)}/${DS_NAME}`, { spec: { template: { spec: { containers: [{ name: 'app', image: AGNHOST }] } } } }, STRATEGIC);
      await waitImageAndAvailability(ds, AGNHOST, 1);
      await waitOnAllNodes(ds);
      ds = await env.get(`${DSS(ns)}/${DS_NAME}`);
      cur = await currentHistory(ds, 2);
      expect(cur.revision).toBe(2);
      await expectPodsHash(ns, cur.metadata.labels[HASH]);
    } finally {
      await cleanUp(ns);
    }
  });

  it('should rollback without unnecessary restarts [Conformance]', async () => {
    // kube's test needs two nodes: a second agent joins for it
    const second = await startAgentProcess(env.ts(), { nodeName: `${NODE}-2`, config: { apiVersion: 'nodeagent.config.k8s.io/v1beta1' } });
    const ns = await namespace(env, 'ds-rollback');
    try {
      await waitNodeReady(env.ts(), second, `${NODE}-2`);
      const ds = await env.call('POST', DSS(ns), newDaemonSet(WEBSERVER, 'RollingUpdate'));
      expect(await schedulableNodes(ds)).toHaveLength(2);
      await waitOnAllNodes(ds);

      // an image no registry has, so that the rollout cannot finish
      const stuck = 'foo:NON-EXISTENT';
      await updateWithRetries(env, `${DSS(ns)}/${DS_NAME}`, (u) => {
        u.spec.template.spec.containers[0].image = stuck;
      });
      await env.eventually(async () => (await daemonPods(ns)).some((p) => p.spec.containers[0].image === stuck), 'a pod of the new template');
      const pods = await daemonPods(ns);
      const existing = pods.filter((p) => p.spec.containers[0].image === WEBSERVER);
      const fresh = pods.filter((p) => p.spec.containers[0].image === stuck);
      expect(existing.length + fresh.length).toBe(pods.length);
      // in the middle of the rollout: maxUnavailable 1 keeps the other node's old pod
      expect(existing.length).toBeGreaterThan(0);
      expect(fresh.length).toBeGreaterThan(0);

      const rollback = await updateWithRetries(env, `${DSS(ns)}/${DS_NAME}`, (u) => {
        u.spec.template.spec.containers[0].image = WEBSERVER;
      });
      await waitImageAndAvailability(rollback, WEBSERVER, 1);
      // the pods of the old template were not restarted
      const names = new Set((await daemonPods(ns)).map((p) => p.metadata.name));
      for (const p of existing) expect(names.has(p.metadata.name), `${p.metadata.name} restarted`).toBe(true);
    } finally {
      await cleanUp(ns);
      await second.stop();
      await env.call('DELETE', `/api/v1/nodes/${NODE}-2`);
      await rm(second.dir, { recursive: true, force: true });
    }
  });
});
