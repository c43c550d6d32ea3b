// The scheduler and the Deployment / ReplicaSet controllers against a started
// server: the test plays the node agent (it marks bound pods Running and
// Ready, and finishes graceful deletions), so every step of a rollout can be
// looked at. No timing is asserted: `eventually` only bounds a failure.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { runKubectl } from '../helpers/kubectl.js';
import { NO_NODE_LIFECYCLE, type TestServer, startTestServer } from '../helpers/server.js';
import { type WObj, isReady, workloadApi } from '../helpers/workload-api.js';

let ts: TestServer;
const NS = 'default';
const PODS = `/api/v1/namespaces/${NS}/pods`;
const DEPLOYS = `/apis/apps/v1/namespaces/${NS}/deployments`;
const RSS = `/apis/apps/v1/namespaces/${NS}/replicasets`;

type Obj = WObj;
const { list, get, send, readyNode, kubeletLoop } = workloadApi(() => ts);
const kubeletStep = (): Promise<void> => workloadApi(() => ts).kubeletStep(NS);
const ready = isReady;

function deployment(name: string, replicas: number, image: string, strategy?: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
    spec: {
      replicas, selector: { matchLabels: { app: name } }, ...(strategy ? { strategy } : {}),
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image, resources: { requests: { cpu: '100m', memory: '64Mi' } } }] } },
    },
  };
}

/** the deployment's rollout is complete as `kubectl rollout status` judges it */
async function rolledOut(name: string): Promise<boolean> {
  await kubeletStep();
  const d = await get(`${DEPLOYS}/${name}`);
  if (!d?.status) return false;
  const s = d.status as { observedGeneration?: number; replicas?: number; updatedReplicas?: number; availableReplicas?: number };
  return (s.observedGeneration ?? 0) >= (d.metadata.generation ?? 0) && s.updatedReplicas === d.spec.replicas && s.replicas === s.updatedReplicas && s.availableReplicas === s.updatedReplicas;
}

beforeAll(async () => {
  // the test plays the node agent; without leases the lifecycle controller would taint the nodes
  ts = await startTestServer(NO_NODE_LIFECYCLE);
  await readyNode('node-a');
  await readyNode('node-b', { disk: 'ssd' });
});

afterAll(async () => {
  await ts?.stop();
});

describe('workload controllers and the scheduler', () => {
  it('a Deployment of 3 gets one ReplicaSet and 3 pods bound to nodes, then reports them available', async () => {
    await send('POST', DEPLOYS, deployment('web', 3, 'nginx:1'));
    const pods = await eventually(async () => {
      const ps = await list(PODS, 'app=web');
      return ps.length === 3 && ps.every((p) => p.spec.nodeName) ? ps : undefined;
    }, '3 bound pods');
    const rss = await list(RSS, 'app=web');
    expect(rss).toHaveLength(1);
    const rs = rss[0]!;
    const hash = rs.metadata.labels?.['pod-template-hash'];
    expect(hash).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(rs.metadata.name).toBe(`web-${hash}`);
    expect(rs.metadata.annotations).toMatchObject({ 'deployment.kubernetes.io/revision': '1', 'deployment.kubernetes.io/desired-replicas': '3', 'deployment.kubernetes.io/max-replicas': '4' });
    expect((rs.spec.selector as { matchLabels: Record<string, string> }).matchLabels).toEqual({ app: 'web', 'pod-template-hash': hash });
    for (const p of pods) {
      expect(p.metadata.name.startsWith(`${rs.metadata.name}-`)).toBe(true);
      expect(p.metadata.ownerReferences).toEqual([{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rs.metadata.name, uid: rs.metadata.uid, controller: true, blockOwnerDeletion: true }]);
      expect(['node-a', 'node-b']).toContain(p.spec.nodeName);
      expect(p.status?.conditions?.find((c) => c.type === 'PodScheduled')?.status).toBe('True');
    }
    await eventually(() => rolledOut('web'), 'rollout complete');
    const d = (await get(`${DEPLOYS}/web`))!;
    expect(d.status).toMatchObject({ replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3 });
    // a 0 counter is left out, as Go's omitempty DeploymentStatus writes it
    expect(d.status).not.toHaveProperty('unavailableReplicas');
    expect(d.metadata.annotations?.['deployment.kubernetes.io/revision']).toBe('1');
    const conds = d.status!.conditions!;
    expect(conds.find((c) => c.type === 'Available')).toMatchObject({ status: 'True', reason: 'MinimumReplicasAvailable' });
    expect(conds.find((c) => c.type === 'Progressing')).toMatchObject({ status: 'True', reason: 'NewReplicaSetAvailable', message: `ReplicaSet "${rs.metadata.name}" has successfully progressed.` });
    const rsNow = (await get(`${RSS}/${rs.metadata.name}`))!;
    expect(rsNow.status).toMatchObject({ replicas: 3, fullyLabeledReplicas: 3, readyReplicas: 3, availableReplicas: 3, observedGeneration: 1 });
    // each controller's Events under kube's component name (what `kubectl describe` shows as "From")
    type Ev = { reason: string; involvedObject: { kind: string; name: string }; source: { component: string } };
    const fromOf = async (kind: string, name: string, reason: string): Promise<string | undefined> =>
      eventually(async () => ((await list(`/api/v1/namespaces/${NS}/events`)) as unknown as Ev[]).find((e) => e.reason === reason && e.involvedObject.kind === kind && e.involvedObject.name === name)?.source.component, `${reason} on ${kind} ${name}`);
    expect(await fromOf('Deployment', 'web', 'ScalingReplicaSet')).toBe('deployment-controller');
    expect(await fromOf('ReplicaSet', rs.metadata.name, 'SuccessfulCreate')).toBe('replicaset-controller');
  });

  it('a new image rolls out a new ReplicaSet within maxSurge and maxUnavailable', async () => {
    await send('POST', DEPLOYS, deployment('roll', 4, 'nginx:1', { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: '25%' } }));
    await eventually(() => rolledOut('roll'), 'first rollout');
    await send('PATCH', `${DEPLOYS}/roll`, { spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } } } }, 'application/strategic-merge-patch+json');
    let steps = 0;
    await eventually(async () => {
      // what the controllers did so far, before this round's kubelet step
      const rss = await list(RSS, 'app=roll');
      const pods = await list(PODS, 'app=roll');
      const total = rss.reduce((a, r) => a + (r.spec.replicas ?? 0), 0);
      expect(total, 'replicas + maxSurge').toBeLessThanOrEqual(5);
      // maxUnavailable 25% of 4 rounds down to 1
      expect(pods.filter(ready).length, 'replicas - maxUnavailable ready').toBeGreaterThanOrEqual(3);
      steps++;
      return rolledOut('roll');
    }, 'second rollout', { timeoutMs: 30_000 });
    expect(steps).toBeGreaterThan(1);
    const rss = await list(RSS, 'app=roll');
    expect(rss).toHaveLength(2);
    const byRev = Object.fromEntries(rss.map((r) => [r.metadata.annotations?.['deployment.kubernetes.io/revision'], r]));
    expect(byRev['1']?.spec.replicas).toBe(0);
    expect(byRev['2']?.spec.replicas).toBe(4);
    expect(byRev['2']?.spec.template?.spec.containers[0]?.image).toBe('nginx:2');
    const pods = await eventually(async () => {
      await kubeletStep();
      const ps = await list(PODS, 'app=roll');
      return ps.length === 4 ? ps : undefined;
    }, 'old pods gone');
    for (const p of pods) expect(p.metadata.labels?.['pod-template-hash']).toBe(byRev['2']?.metadata.labels?.['pod-template-hash']);
  });

  it('scales up and down, deleting unready and unscheduled pods first', async () => {
    await send('PATCH', `${DEPLOYS}/web`, { spec: { replicas: 5 } });
    await eventually(() => rolledOut('web'), 'scaled to 5');
    expect(await list(PODS, 'app=web')).toHaveLength(5);
    await send('PATCH', `${DEPLOYS}/web`, { spec: { replicas: 2 } });
    await eventually(async () => (await rolledOut('web')) && (await list(PODS, 'app=web')).length === 2, 'scaled to 2');
    const rs = (await list(RSS, 'app=web'))[0]!;
    expect(rs.metadata.annotations?.['deployment.kubernetes.io/desired-replicas']).toBe('2');
  });

  it('replaces a deleted pod', async () => {
    const before = await list(PODS, 'app=web');
    const victim = before[0]!;
    await ts.request('DELETE', `${PODS}/${victim.metadata.name}`, { body: { gracePeriodSeconds: 0 } });
    const after = await eventually(async () => {
      const ps = await list(PODS, 'app=web');
      return ps.length === 2 && !ps.some((p) => p.metadata.uid === victim.metadata.uid) ? ps : undefined;
    }, 'replacement');
    expect(after.filter((p) => !before.some((b) => b.metadata.uid === p.metadata.uid))).toHaveLength(1);
  });

  it('a ReplicaSet adopts a matching orphan and releases a pod that stops matching', async () => {
    const orphan = await send('POST', PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'orphan', labels: { app: 'solo' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });
    const rs = await send('POST', RSS, {
      apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'solo' },
      spec: { replicas: 2, selector: { matchLabels: { app: 'solo' } }, template: { metadata: { labels: { app: 'solo' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } },
    });
    await eventually(async () => (await list(PODS, 'app=solo')).length === 2, 'two pods');
    const adopted = (await get(`${PODS}/orphan`))!;
    expect(adopted.metadata.uid).toBe(orphan.metadata.uid);
    expect(adopted.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'ReplicaSet', name: 'solo', uid: rs.metadata.uid, controller: true });
    await send('PATCH', `${PODS}/orphan`, { metadata: { labels: { app: 'released' } } });
    await eventually(async () => !(await get(`${PODS}/orphan`))?.metadata.ownerReferences, 'released');
    await eventually(async () => (await list(PODS, 'app=solo')).length === 2, 'a new pod in its place');
  });

  it('a ReplicationController keeps its replicas (map selector) and reports its status', async () => {
    const rc = await send('POST', `/api/v1/namespaces/${NS}/replicationcontrollers`, {
      apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'legacy' },
      spec: { replicas: 2, selector: { app: 'legacy' }, template: { metadata: { labels: { app: 'legacy', tier: 'x' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } },
    });
    const pods = await eventually(async () => {
      await kubeletStep();
      const ps = await list(PODS, 'app=legacy');
      return ps.length === 2 && ps.every(ready) ? ps : undefined;
    }, 'two ready pods');
    for (const p of pods) {
      expect(p.metadata.name.startsWith('legacy-')).toBe(true);
      expect(p.metadata.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'ReplicationController', name: 'legacy', uid: rc.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    }
    const status = await eventually(async () => {
      const x = await get(`/api/v1/namespaces/${NS}/replicationcontrollers/legacy`);
      return x?.status?.availableReplicas === 2 ? x.status : undefined;
    }, 'status');
    expect(status).toMatchObject({ replicas: 2, fullyLabeledReplicas: 2, readyReplicas: 2, availableReplicas: 2, observedGeneration: 1 });
    await send('PATCH', `/api/v1/namespaces/${NS}/replicationcontrollers/legacy`, { spec: { replicas: 1 } });
    await eventually(async () => {
      await kubeletStep();
      return (await list(PODS, 'app=legacy')).length === 1;
    }, 'scaled down to 1');
  });

  it('an unschedulable pod gets PodScheduled=False and an Event, and is bound when a node fits', async () => {
    await send('POST', PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'picky' }, spec: { nodeSelector: { zone: 'z1' }, containers: [{ name: 'c', image: 'busybox' }] } });
    const cond = await eventually(async () => (await get(`${PODS}/picky`))?.status?.conditions?.find((c) => c.type === 'PodScheduled'), 'PodScheduled condition');
    expect(cond).toMatchObject({ status: 'False', reason: 'Unschedulable', message: "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling." });
    const events = await eventually(async () => (await list(`/api/v1/namespaces/${NS}/events`)).filter((e) => (e as unknown as { reason: string }).reason === 'FailedScheduling' && (e as unknown as { involvedObject: { name: string } }).involvedObject.name === 'picky'), 'FailedScheduling event');
    expect(events.length).toBeGreaterThan(0);
    // recorded under kube's scheduler name, as `kubectl describe` shows it ("From")
    expect(events[0]).toMatchObject({ source: { component: 'default-scheduler' }, reportingComponent: 'default-scheduler' });
    await send('PATCH', '/api/v1/nodes/node-b', { metadata: { labels: { zone: 'z1' } } });
    const bound = await eventually(async () => (await get(`${PODS}/picky`))?.spec.nodeName, 'bound after the label');
    expect(bound).toBe('node-b');
  });

  it('a paused Deployment does not roll out a changed template until resumed', async () => {
    await send('POST', DEPLOYS, deployment('pz', 2, 'nginx:1'));
    await eventually(() => rolledOut('pz'), 'first rollout');
    await send('PATCH', `${DEPLOYS}/pz`, { spec: { paused: true } });
    await eventually(async () => (await get(`${DEPLOYS}/pz`))?.status?.conditions?.find((c) => c.type === 'Progressing')?.reason === 'DeploymentPaused', 'paused condition');
    await send('PATCH', `${DEPLOYS}/pz`, { spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } } } }, 'application/strategic-merge-patch+json');
    const d = await eventually(async () => {
      const x = await get(`${DEPLOYS}/pz`);
      return x && (x.status?.observedGeneration as number) >= (x.metadata.generation ?? 0) ? x : undefined;
    }, 'paused change observed');
    expect(d.status?.conditions?.find((c) => c.type === 'Progressing')).toMatchObject({ status: 'Unknown', reason: 'DeploymentPaused', message: 'Deployment is paused' });
    expect(await list(RSS, 'app=pz')).toHaveLength(1);
    await send('PATCH', `${DEPLOYS}/pz`, { spec: { paused: false } });
    await eventually(async () => (await list(RSS, 'app=pz')).length === 2 && (await rolledOut('pz')), 'rolled out after resume', { timeoutMs: 30_000 });
    const images = (await list(PODS, 'app=pz')).filter((p) => !p.metadata.deletionTimestamp).map((p) => (p.spec.containers as { image: string }[])[0]!.image);
    expect(images).toEqual(['nginx:2', 'nginx:2']);
  });

  it('minReadySeconds: pods count as available once ready long enough, with no further pod change', async () => {
    const body = deployment('slow', 2, 'nginx:1') as { spec: Record<string, unknown> };
    body.spec.minReadySeconds = 2;
    await send('POST', DEPLOYS, body);
    // the node agent makes the pods Ready once; only the controller's own recheck can make them available
    await eventually(async () => {
      await kubeletStep();
      return (await list(PODS, 'app=slow')).filter(ready).length === 2;
    }, 'pods ready');
    await eventually(async () => {
      const d = await get(`${DEPLOYS}/slow`);
      return d?.status?.availableReplicas === 2;
    }, 'available after minReadySeconds', { timeoutMs: 30_000 });
    const rs = (await list(RSS, 'app=slow'))[0]!;
    expect(rs.spec.minReadySeconds).toBe(2);
    expect(rs.status).toMatchObject({ readyReplicas: 2, availableReplicas: 2 });
  });

  it('deleting a Deployment takes its ReplicaSets and pods with it (garbage collector)', async () => {
    await send('POST', DEPLOYS, deployment('gone', 2, 'nginx:1'));
    await eventually(async () => (await list(PODS, 'app=gone')).length === 2, 'pods');
    const r = await ts.request('DELETE', `${DEPLOYS}/gone`);
    expect(r.status, r.text).toBe(200);
    await eventually(async () => {
      await kubeletStep();
      return (await list(RSS, 'app=gone')).length === 0 && (await list(PODS, 'app=gone')).length === 0;
    }, 'sets and pods gone', { timeoutMs: 30_000 });
  });

  it('deleting the namespace of a running Deployment finishes; its ReplicaSet does not retry creates there', async () => {
    const ns = 'doomed';
    await send('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await send('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, deployment('web', 3, 'nginx:1'));
    await eventually(async () => {
      await workloadApi(() => ts).kubeletStep(ns);
      return (await list(`/api/v1/namespaces/${ns}/pods`, 'app=web')).filter(ready).length === 3;
    }, 'pods running');
    const revision = async (): Promise<number> => Number((await ts.request('GET', '/api/v1/namespaces/default/configmaps?limit=1')).json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion);
    const before = await revision();
    expect((await ts.request('DELETE', `/api/v1/namespaces/${ns}`)).status).toBe(200);
    // the node agent's part: finish the pods' graceful deletion until the namespace is gone
    await eventually(async () => {
      await workloadApi(() => ts).kubeletStep(ns).catch(() => undefined);
      return (await ts.request('GET', `/api/v1/namespaces/${ns}`)).status === 404;
    }, 'namespace gone', { timeoutMs: 60_000 });
    // a create refused because the namespace is being deleted is not retried: the ReplicaSet controller
    // used to write a new failure status after each refusal, hundreds of writes per second
    expect((await revision()) - before).toBeLessThan(400);
  });

  it('keeps revisionHistoryLimit old ReplicaSets, deleting the lowest revisions', async () => {
    const body = deployment('hist', 1, 'nginx:1') as { spec: Record<string, unknown> };
    body.spec.revisionHistoryLimit = 1;
    await send('POST', DEPLOYS, body);
    await eventually(() => rolledOut('hist'), 'revision 1');
    for (const image of ['nginx:2', 'nginx:3']) {
      await send('PATCH', `${DEPLOYS}/hist`, { spec: { template: { spec: { containers: [{ name: 'c', image }] } } } }, 'application/strategic-merge-patch+json');
      await eventually(() => rolledOut('hist'), `rollout of ${image}`, { timeoutMs: 30_000 });
    }
    const revisions = await eventually(async () => {
      const rss = await list(RSS, 'app=hist');
      return rss.length === 2 ? rss.map((r) => r.metadata.annotations?.['deployment.kubernetes.io/revision']).sort() : undefined;
    }, 'history trimmed to one old set');
    expect(revisions).toEqual(['2', '3']);
  });

  it('a rollout that makes no progress for progressDeadlineSeconds is reported, and kubectl rollout status fails', async () => {
    const body = deployment('stuck', 1, 'nginx:1') as { spec: Record<string, unknown> };
    body.spec.progressDeadlineSeconds = 1;
    await send('POST', DEPLOYS, body);
    // no node agent step: the pod never becomes Ready
    const cond = await eventually(async () => (await get(`${DEPLOYS}/stuck`))?.status?.conditions?.find((c) => c.type === 'Progressing' && c.status === 'False'), 'deadline exceeded', { timeoutMs: 30_000 });
    const rs = (await list(RSS, 'app=stuck'))[0]!;
    expect(cond).toMatchObject({ reason: 'ProgressDeadlineExceeded', message: `ReplicaSet "${rs.metadata.name}" has timed out progressing.` });
    const out = await runKubectl(join(ts.dataDir, 'admin.kubeconfig'), ['rollout', 'status', 'deployment/stuck', '--timeout=30s']);
    expect(out.code).not.toBe(0);
    expect(out.stderr).toContain('deployment "stuck" exceeded its progress deadline');
    // progress after the deadline counts again: the pod turns Ready and the rollout completes
    await eventually(() => rolledOut('stuck'), 'completed after all', { timeoutMs: 30_000 });
    const after = await eventually(async () => (await get(`${DEPLOYS}/stuck`))?.status?.conditions?.find((c) => c.type === 'Progressing' && c.status === 'True'), 'progressing again');
    expect(after.reason).toBe('NewReplicaSetAvailable');
  });

  it('Recreate scales the old ReplicaSet to 0 before the new one grows', async () => {
    let dump = '';
    await send('POST', DEPLOYS, deployment('rec', 2, 'nginx:1', { type: 'Recreate' }));
    await eventually(() => rolledOut('rec'), 'first rollout');
    await send('PATCH', `${DEPLOYS}/rec`, { spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } } } }, 'application/strategic-merge-patch+json');
    await eventually(async () => {
      const rss = await list(RSS, 'app=rec');
      const pods = await list(PODS, 'app=rec');
      dump = JSON.stringify({ d: (await get(`${DEPLOYS}/rec`))?.status, rss: rss.map((r) => [r.metadata.name, r.spec.replicas, r.status]), pods: pods.map((p) => [p.metadata.name, p.spec.nodeName, p.metadata.deletionTimestamp]) });
      const hashes = new Set(pods.map((p) => p.metadata.labels?.['pod-template-hash']));
      expect(hashes.size, 'old and new pods never together').toBeLessThanOrEqual(1);
      const done = await rolledOut('rec');
      return rss.length === 2 && done;
    }, 'recreated', { timeoutMs: 30_000, context: () => dump });
  });
});

describe('kubectl create deployment, rollout status, history and undo', () => {
  it('works against the controllers', async () => {
    const kc = join(ts.dataDir, 'admin.kubeconfig');
    // the node agent's part runs beside kubectl
    const stopAgent = kubeletLoop();
    try {
      const create = await runKubectl(kc, ['create', 'deployment', 'kc', '--image=nginx:1', '--replicas=2']);
      expect(create.code, create.stderr).toBe(0);
      const status1 = await runKubectl(kc, ['rollout', 'status', 'deployment/kc', '--timeout=60s']);
      expect(status1.code, status1.stderr).toBe(0);
      expect(status1.stdout).toContain('deployment "kc" successfully rolled out');
      expect((await list(PODS, 'app=kc')).filter(ready)).toHaveLength(2);

      const set = await runKubectl(kc, ['set', 'image', 'deployment/kc', 'nginx=nginx:2']);
      expect(set.code, set.stderr).toBe(0);
      const status2 = await runKubectl(kc, ['rollout', 'status', 'deployment/kc', '--timeout=60s']);
      expect(status2.code, status2.stderr).toBe(0);
      expect(status2.stdout).toContain('successfully rolled out');

      const history = await runKubectl(kc, ['rollout', 'history', 'deployment/kc']);
      expect(history.code, history.stderr).toBe(0);
      expect(history.stdout).toMatch(/REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>/);
      const rev1 = await runKubectl(kc, ['rollout', 'history', 'deployment/kc', '--revision=1']);
      expect(rev1.stdout).toContain('nginx:1');

      const undo = await runKubectl(kc, ['rollout', 'undo', 'deployment/kc']);
      expect(undo.code, undo.stderr).toBe(0);
      expect(undo.stdout).toContain('deployment.apps/kc rolled back');
      const status3 = await runKubectl(kc, ['rollout', 'status', 'deployment/kc', '--timeout=60s']);
      expect(status3.code, status3.stderr).toBe(0);
      const d = (await get(`${DEPLOYS}/kc`))!;
      expect(d.spec.template?.spec.containers[0]?.image).toBe('nginx:1');
      expect(d.metadata.annotations?.['deployment.kubernetes.io/revision']).toBe('3');
      // the first ReplicaSet is reused with revision 3; no third one
      const rss = await list(RSS, 'app=kc');
      expect(rss.map((r) => r.metadata.annotations?.['deployment.kubernetes.io/revision']).sort()).toEqual(['2', '3']);
      const history2 = await runKubectl(kc, ['rollout', 'history', 'deployment/kc']);
      expect(history2.stdout).toMatch(/REVISION\s+CHANGE-CAUSE\n2\s+<none>\n3\s+<none>/);

      const scale = await runKubectl(kc, ['scale', 'deployment/kc', '--replicas=3']);
      expect(scale.code, scale.stderr).toBe(0);
      const status4 = await runKubectl(kc, ['rollout', 'status', 'deployment/kc', '--timeout=60s']);
      expect(status4.code, status4.stderr).toBe(0);
      expect((await list(PODS, 'app=kc')).filter(ready)).toHaveLength(3);
      const restart = await runKubectl(kc, ['rollout', 'restart', 'deployment/kc']);
      expect(restart.code, restart.stderr).toBe(0);
      const status5 = await runKubectl(kc, ['rollout', 'status', 'deployment/kc', '--timeout=60s']);
      expect(status5.code, status5.stderr).toBe(0);
      const newest = (await list(RSS, 'app=kc')).find((r) => r.metadata.annotations?.['deployment.kubernetes.io/revision'] === '4');
      expect(newest?.spec.replicas).toBe(3);
      expect((newest?.spec.template as { metadata: { annotations?: Record<string, string> } } | undefined)?.metadata.annotations?.['kubectl.kubernetes.io/restartedAt']).toBeTruthy();

      // --to-revision picks an older set's template (kubectl reads the sets' revision annotations)
      const missing = await runKubectl(kc, ['rollout', 'undo', 'deployment/kc', '--to-revision=99']);
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toContain('unable to find specified revision 99 in history');
      const to2 = await runKubectl(kc, ['rollout', 'undo', 'deployment/kc', '--to-revision=2']);
      expect(to2.code, to2.stderr).toBe(0);
      expect(to2.stdout).toContain('deployment.apps/kc rolled back');
      const status6 = await runKubectl(kc, ['rollout', 'status', 'deployment/kc', '--timeout=60s']);
      expect(status6.code, status6.stderr).toBe(0);
      const back = (await get(`${DEPLOYS}/kc`))!;
      expect(back.spec.template?.spec.containers[0]?.image).toBe('nginx:2');
      expect(back.metadata.annotations?.['deployment.kubernetes.io/revision']).toBe('5');
      const history3 = await runKubectl(kc, ['rollout', 'history', 'deployment/kc']);
      expect(history3.stdout).toMatch(/REVISION\s+CHANGE-CAUSE\n3\s+<none>\n4\s+<none>\n5\s+<none>/);
    } finally {
      await stopAgent();
    }
  });
});

describe('pod-only defaults', () => {
  it('a template is stored without enableServiceLinks (SetDefaults_Pod, not PodSpec); the pods made from it get true', async () => {
    const created = await send('POST', DEPLOYS, deployment('links', 1, 'nginx:1'));
    expect((created.spec.template as { spec: Record<string, unknown> }).spec).not.toHaveProperty('enableServiceLinks');
    const rs = await eventually(async () => (await list(RSS, 'app=links'))[0], 'the ReplicaSet');
    expect((rs.spec.template as { spec: Record<string, unknown> }).spec).not.toHaveProperty('enableServiceLinks');
    const pod = await eventually(async () => (await list(PODS, 'app=links'))[0], 'a pod');
    expect(pod.spec.enableServiceLinks).toBe(true);
  });

  it('on the host network a pod port gets hostPort = containerPort; a template port does not', async () => {
    const spec = { hostNetwork: true, containers: [{ name: 'c', image: 'nginx:1', ports: [{ containerPort: 8080 }, { containerPort: 9090, hostPort: 9090 }] }] };
    const pod = await send('POST', PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'hostnet' }, spec });
    expect((pod.spec.containers as unknown as { ports: unknown[] }[])[0]!.ports).toEqual([{ containerPort: 8080, hostPort: 8080, protocol: 'TCP' }, { containerPort: 9090, hostPort: 9090, protocol: 'TCP' }]);
    const body = deployment('hostnet', 0, 'nginx:1') as { spec: { template: { spec: Record<string, unknown> } } };
    body.spec.template.spec = { ...body.spec.template.spec, hostNetwork: true, containers: [{ name: 'c', image: 'nginx:1', ports: [{ containerPort: 8080 }] }] };
    const d = await send('POST', DEPLOYS, body);
    expect((d.spec.template as unknown as { spec: { containers: { ports: unknown[] }[] } }).spec.containers[0]!.ports).toEqual([{ containerPort: 8080, protocol: 'TCP' }]);
  });
});
