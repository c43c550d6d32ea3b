// The DaemonSet and StatefulSet controllers against a started server (with
// the scheduler): the test plays the node agent (helpers/workload-api.ts), so
// every step can be looked at; kubectl 1.32 reads the rollouts. No timing is
// asserted: `eventually` only bounds a failure.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { runKubectl } from '../helpers/kubectl.js';
import { NO_NODE_LIFECYCLE, type TestServer, startTestServer } from '../helpers/server.js';
import { type WObj, isReady, workloadApi } from '../helpers/workload-api.js';

let ts: TestServer;
const PODS = '/api/v1/namespaces/default/pods';
const DSS = '/apis/apps/v1/namespaces/default/daemonsets';
const STSS = '/apis/apps/v1/namespaces/default/statefulsets';
const CRS = '/apis/apps/v1/namespaces/default/controllerrevisions';
const PVCS = '/api/v1/namespaces/default/persistentvolumeclaims';
const { list, get, send, readyNode, kubeletStep, kubeletLoop } = workloadApi(() => ts);
const ordinal = (p: WObj): number => Number(p.metadata.name.slice(p.metadata.name.lastIndexOf('-') + 1));

function daemonSet(name: string, image: string, extra: Record<string, unknown> = {}, podSpec: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name },
    spec: { selector: { matchLabels: { ds: name } }, ...extra, template: { metadata: { labels: { ds: name } }, spec: { containers: [{ name: 'c', image }], ...podSpec } } },
  };
}

function statefulSet(name: string, replicas: number, image: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name },
    spec: { replicas, serviceName: name, selector: { matchLabels: { sts: name } }, ...extra, template: { metadata: { labels: { sts: name } }, spec: { containers: [{ name: 'c', image }] } } },
  };
}

/** the DaemonSet's rollout is complete as `kubectl rollout status` judges it */
async function dsRolledOut(name: string): Promise<boolean> {
  await kubeletStep();
  const ds = await get(`${DSS}/${name}`);
  const s = (ds?.status ?? {}) as Record<string, number>;
  return (s.observedGeneration ?? 0) >= (ds?.metadata.generation ?? 1) && (s.updatedNumberScheduled ?? 0) === s.desiredNumberScheduled && (s.numberAvailable ?? 0) === s.desiredNumberScheduled;
}

beforeAll(async () => {
  // the test plays the node agent; without leases the lifecycle controller would taint the nodes
  ts = await startTestServer(NO_NODE_LIFECYCLE);
  await readyNode('node-a');
  await readyNode('node-b', { disk: 'ssd' });
  await readyNode('node-t', {}, '4', { taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] });
});

afterAll(async () => {
  await ts?.stop();
});

describe('DaemonSet controller', () => {
  it('puts one pod, pinned by matchFields and bound by the scheduler, on each node it should run on, and reports it', async () => {
    await send('POST', DSS, daemonSet('agent', 'busybox:1'));
    const pods = await eventually(async () => {
      const ps = await list(PODS, 'ds=agent');
      return ps.length === 2 && ps.every((p) => p.spec.nodeName) ? ps : undefined;
    }, '2 bound daemon pods');
    // the tainted node's NoSchedule taint is not tolerated
    expect(pods.map((p) => p.spec.nodeName).sort()).toEqual(['node-a', 'node-b']);
    const crs = await list(CRS, 'ds=agent');
    expect(crs).toHaveLength(1);
    const hash = crs[0]!.metadata.labels?.['controller-revision-hash'];
    expect(crs[0]!.metadata.name).toBe(`agent-${hash}`);
    expect((crs[0] as unknown as { revision: number }).revision).toBe(1);
    for (const p of pods) {
      expect(p.metadata.labels).toEqual({ ds: 'agent', 'controller-revision-hash': hash, 'pod-template-generation': '1' });
      expect(p.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'DaemonSet', name: 'agent', controller: true });
      const affinity = p.spec.affinity as { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: unknown } };
      expect(affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution).toEqual({ nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [p.spec.nodeName] }] }] });
      const tolerations = (p.spec.tolerations as { key: string; effect: string }[]).map((t) => `${t.key}:${t.effect}`);
      // the keys the lifecycle controller taints with: node.orch.io/… with the default API domain (spec 002)
      expect(tolerations).toEqual(expect.arrayContaining(['node.orch.io/not-ready:NoExecute', 'node.orch.io/unreachable:NoExecute', 'node.orch.io/unschedulable:NoSchedule', 'node.orch.io/disk-pressure:NoSchedule']));
    }
    await eventually(() => dsRolledOut('agent'), 'daemon pods available');
    expect((await get(`${DSS}/agent`))!.status).toMatchObject({
      desiredNumberScheduled: 2, currentNumberScheduled: 2, numberReady: 2, numberAvailable: 2, updatedNumberScheduled: 2, numberMisscheduled: 0, observedGeneration: 1,
    });
    // omitempty in kube's DaemonSetStatus (numberMisscheduled is not)
    expect((await get(`${DSS}/agent`))!.status).not.toHaveProperty('numberUnavailable');
  });

  it('a new node, even cordoned, gets its pod bound there; a deleted node loses it; a toleration reaches a tainted node', async () => {
    await readyNode('node-c', {}, '4', { unschedulable: true });
    // the daemon tolerations include node.orch.io/unschedulable, which the scheduler honours
    await eventually(async () => (await list(PODS, 'ds=agent')).some((p) => p.spec.nodeName === 'node-c'), 'pod bound on cordoned node-c');
    await send('DELETE', '/api/v1/nodes/node-c', {});
    await eventually(async () => !(await list(PODS, 'ds=agent')).some((p) => p.spec.nodeName === 'node-c'), 'pod of node-c gone');
    await send('PATCH', `${DSS}/agent`, { spec: { template: { spec: { tolerations: [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }] } } } });
    await eventually(async () => {
      const ps = await list(PODS, 'ds=agent');
      await kubeletStep();
      return ps.filter((p) => !p.metadata.deletionTimestamp).map((p) => p.spec.nodeName).sort().join() === 'node-a,node-b,node-t' && (await dsRolledOut('agent'));
    }, 'pods on node-a, node-b and node-t');
    expect((await get(`${DSS}/agent`))!.status).toMatchObject({ desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 3 });
  });

  it('a node selector picks the nodes; a relabelled node gets or loses the pod', async () => {
    await send('POST', DSS, daemonSet('ssd', 'busybox:1', {}, { nodeSelector: { disk: 'ssd' } }));
    await eventually(async () => (await list(PODS, 'ds=ssd')).map((p) => p.spec.nodeName).join() === 'node-b', 'pod on node-b only');
    await send('PATCH', '/api/v1/nodes/node-a', { metadata: { labels: { disk: 'ssd' } } });
    await eventually(async () => (await list(PODS, 'ds=ssd')).map((p) => p.spec.nodeName).sort().join() === 'node-a,node-b', 'pod on node-a too');
    await send('PATCH', '/api/v1/nodes/node-a', { metadata: { labels: { disk: null } } });
    await eventually(async () => {
      await kubeletStep();
      return (await list(PODS, 'ds=ssd')).map((p) => p.spec.nodeName).join() === 'node-b';
    }, 'pod gone from node-a');
  });

  it('a RollingUpdate never has more than maxUnavailable nodes without an available pod', async () => {
    await send('POST', DSS, daemonSet('roll', 'busybox:1', { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } } }));
    await eventually(() => dsRolledOut('roll'), 'first rollout');
    await send('PATCH', `${DSS}/roll`, { spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox:2' }] } } } }, 'application/strategic-merge-patch+json');
    // step the node agent one pod at a time, checking the bound between steps
    for (let i = 0; i < 200; i++) {
      const ps = await list(PODS, 'ds=roll');
      const availableNodes = new Set(ps.filter(isReady).map((p) => p.spec.nodeName));
      expect(2 - availableNodes.size).toBeLessThanOrEqual(1);
      if (ps.length === 2 && ps.every((p) => isReady(p) && (p.spec.containers as { image: string }[])[0]!.image === 'busybox:2')) break;
      const first = ps.find((p) => p.spec.nodeName && (p.metadata.deletionTimestamp || !isReady(p)));
      if (first) await kubeletStep('default', (p) => p.metadata.uid === first.metadata.uid);
      else await new Promise((r) => setTimeout(r, 20));
    }
    await eventually(() => dsRolledOut('roll'), 'second rollout');
    expect((await list(CRS, 'ds=roll')).map((c) => (c as unknown as { revision: number }).revision).sort()).toEqual([1, 2]);
    // the template generation moved with the template only, and the new pods carry it
    const ds = (await get(`${DSS}/roll`))!;
    expect(ds.metadata.annotations?.['deprecated.daemonset.template.generation']).toBe('2');
    await send('PATCH', `${DSS}/roll`, { spec: { minReadySeconds: 1 } });
    expect((await get(`${DSS}/roll`))!.metadata.annotations?.['deprecated.daemonset.template.generation']).toBe('2');
    for (const p of await list(PODS, 'ds=roll')) if (!p.metadata.deletionTimestamp) expect(p.metadata.labels?.['pod-template-generation']).toBe('2');
  });

  it('kubectl rollout status, history and undo work on a DaemonSet; OnDelete leaves old pods until deleted', async () => {
    const kc = join(ts.dataDir, 'admin.kubeconfig');
    // the node agent's part runs beside kubectl
    const stopAgent = kubeletLoop();
    try {
      await send('POST', DSS, daemonSet('kc', 'nginx:1'));
      const s1 = await runKubectl(kc, ['rollout', 'status', 'ds/kc', '--timeout=60s']);
      expect(s1.code, s1.stderr).toBe(0);
      expect(s1.stdout).toContain('daemon set "kc" successfully rolled out');
      const img = await runKubectl(kc, ['set', 'image', 'ds/kc', 'c=nginx:2']);
      expect(img.code, img.stderr).toBe(0);
      const s2 = await runKubectl(kc, ['rollout', 'status', 'ds/kc', '--timeout=60s']);
      expect(s2.code, s2.stderr).toBe(0);
      const h = await runKubectl(kc, ['rollout', 'history', 'ds/kc']);
      expect(h.code, h.stderr).toBe(0);
      expect(h.stdout).toMatch(/REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>/);
      const r1 = await runKubectl(kc, ['rollout', 'history', 'ds/kc', '--revision=1']);
      expect(r1.code, r1.stderr).toBe(0);
      expect(r1.stdout).toContain('nginx:1');
      const undo = await runKubectl(kc, ['rollout', 'undo', 'ds/kc']);
      expect(undo.code, undo.stderr).toBe(0);
      expect(undo.stdout).toContain('daemonset.apps/kc rolled back');
      const s3 = await runKubectl(kc, ['rollout', 'status', 'ds/kc', '--timeout=60s']);
      expect(s3.code, s3.stderr).toBe(0);
      for (const p of (await list(PODS, 'ds=kc')).filter((x) => !x.metadata.deletionTimestamp)) expect((p.spec.containers as { image: string }[])[0]!.image).toBe('nginx:1');
      // the first revision moved up to 3 rather than a third one being made
      const h2 = await runKubectl(kc, ['rollout', 'history', 'ds/kc']);
      expect(h2.stdout).toMatch(/REVISION\s+CHANGE-CAUSE\n2\s+<none>\n3\s+<none>/);

      await send('PATCH', `${DSS}/kc`, { spec: { updateStrategy: { type: 'OnDelete', rollingUpdate: null }, template: { spec: { containers: [{ name: 'c', image: 'nginx:3' }] } } } }, 'application/merge-patch+json');
      await eventually(async () => ((await get(`${DSS}/kc`))?.status?.observedGeneration as number) >= 4, 'OnDelete observed');
      const old = (await list(PODS, 'ds=kc')).filter((x) => !x.metadata.deletionTimestamp);
      expect(old.every((p) => (p.spec.containers as { image: string }[])[0]!.image === 'nginx:1')).toBe(true);
      // none updated: the omitempty counter is absent
      expect((await get(`${DSS}/kc`))!.status).not.toHaveProperty('updatedNumberScheduled');
      await send('DELETE', `${PODS}/${old[0]!.metadata.name}`, {});
      await eventually(async () => (await list(PODS, 'ds=kc')).some((p) => (p.spec.containers as { image: string }[])[0]!.image === 'nginx:3' && p.spec.nodeName === old[0]!.spec.nodeName), 'replacement at the new template');
      const stillOld = (await list(PODS, 'ds=kc')).filter((p) => p.spec.nodeName !== old[0]!.spec.nodeName);
      expect(stillOld.every((p) => (p.spec.containers as { image: string }[])[0]!.image === 'nginx:1')).toBe(true);
    } finally {
      await stopAgent();
    }
  });
});

describe('StatefulSet controller', () => {
  it('OrderedReady: web-0, then web-1 once web-0 is Ready; claims made before the pod; identity labels and hostname', async () => {
    await send('POST', STSS, statefulSet('web', 3, 'nginx:1', {
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
    }));
    // one pod at a time: ordinal n + 1 only once n is Ready
    for (let i = 0; i < 200; i++) {
      const ps = await list(PODS, 'sts=web');
      for (const p of ps) {
        if (ordinal(p) === 0) continue;
        const prev = ps.find((q) => ordinal(q) === ordinal(p) - 1);
        expect(prev && isReady(prev), `${p.metadata.name} before its predecessor was Ready`).toBeTruthy();
      }
      if (ps.length === 3 && ps.every(isReady)) break;
      const pending = ps.find((p) => p.spec.nodeName && !isReady(p));
      if (pending) await kubeletStep('default', (p) => p.metadata.uid === pending.metadata.uid);
      else await new Promise((r) => setTimeout(r, 20));
    }
    const pods = await list(PODS, 'sts=web');
    expect(pods.map((p) => p.metadata.name).sort()).toEqual(['web-0', 'web-1', 'web-2']);
    const claims = await list(PVCS, 'sts=web');
    expect(claims.map((c) => c.metadata.name).sort()).toEqual(['data-web-0', 'data-web-1', 'data-web-2']);
    const set = (await get(`${STSS}/web`))!;
    const rev = set.status?.updateRevision as string;
    expect(rev).toMatch(/^web-[bcdfghjklmnpqrstvwxz2456789]+$/);
    for (const p of pods) {
      const claim = claims.find((c) => c.metadata.name === `data-${p.metadata.name}`)!;
      expect(Date.parse(claim.metadata.creationTimestamp!)).toBeLessThanOrEqual(Date.parse(p.metadata.creationTimestamp!));
      expect(p.metadata.labels).toEqual({ sts: 'web', 'statefulset.kubernetes.io/pod-name': p.metadata.name, 'apps.kubernetes.io/pod-index': String(ordinal(p)), 'controller-revision-hash': rev });
      expect(p.spec.hostname).toBe(p.metadata.name);
      expect(p.spec.subdomain).toBe('web');
      expect(p.spec.volumes).toEqual(expect.arrayContaining([{ name: 'data', persistentVolumeClaim: { claimName: `data-${p.metadata.name}` } }]));
    }
    await eventually(async () => (await get(`${STSS}/web`))?.status?.readyReplicas === 3, 'status ready 3');
    expect((await get(`${STSS}/web`))!.status).toMatchObject({ replicas: 3, readyReplicas: 3, availableReplicas: 3, currentReplicas: 3, updatedReplicas: 3, currentRevision: rev, updateRevision: rev, collisionCount: 0, observedGeneration: 1 });
  });

  it('scales down from the highest ordinal, one at a time', async () => {
    await send('PATCH', `${STSS}/web`, { spec: { replicas: 1 } });
    const seen: string[] = [];
    for (let i = 0; i < 200; i++) {
      const ps = await list(PODS, 'sts=web');
      const going = ps.filter((p) => p.metadata.deletionTimestamp).map((p) => p.metadata.name);
      expect(going.length).toBeLessThanOrEqual(1);
      for (const g of going) if (!seen.includes(g)) seen.push(g);
      if (ps.length === 1) break;
      if (going.length > 0) await kubeletStep();
      else await new Promise((r) => setTimeout(r, 20));
    }
    expect(seen).toEqual(['web-2', 'web-1']);
    expect((await list(PODS, 'sts=web')).map((p) => p.metadata.name)).toEqual(['web-0']);
    // claims are retained by default
    expect((await list(PVCS, 'sts=web'))).toHaveLength(3);
  });

  it('a failed pod is recreated with the same name', async () => {
    const p = (await get(`${PODS}/web-0`))!;
    await send('PUT', `${PODS}/web-0/status`, { ...p, status: { ...p.status, phase: 'Failed', conditions: [] } });
    await eventually(async () => {
      await kubeletStep();
      const q = await get(`${PODS}/web-0`);
      return q && q.metadata.uid !== p.metadata.uid && isReady(q);
    }, 'web-0 recreated and Ready');
  });

  it('RollingUpdate with a partition updates the ordinals at or above it, highest first; kubectl reads it', async () => {
    const kc = join(ts.dataDir, 'admin.kubeconfig');
    await send('POST', STSS, statefulSet('part', 3, 'nginx:1', { podManagementPolicy: 'Parallel', updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } }));
    await eventually(async () => {
      await kubeletStep();
      return (await get(`${STSS}/part`))?.status?.readyReplicas === 3;
    }, 'part ready');
    const before = (await get(`${STSS}/part`))!.status!.currentRevision as string;
    await send('PATCH', `${STSS}/part`, { spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } } } }, 'application/strategic-merge-patch+json');
    // the order in which pods show up at the update revision (a deletion may be finished before it is seen)
    const order: string[] = [];
    for (let i = 0; i < 300; i++) {
      const s = (await get(`${STSS}/part`))!;
      const ps = await list(PODS, 'sts=part');
      for (const p of ps) if (p.metadata.labels?.['controller-revision-hash'] === s.status?.updateRevision && p.metadata.labels?.['controller-revision-hash'] !== before && !order.includes(p.metadata.name)) order.push(p.metadata.name);
      if (s.status?.updatedReplicas === 2 && s.status?.readyReplicas === 3) break;
      await kubeletStep();
    }
    expect(order).toEqual(['part-2', 'part-1']);
    const pods = await list(PODS, 'sts=part');
    const img = (n: string): string => (pods.find((p) => p.metadata.name === n)!.spec.containers as { image: string }[])[0]!.image;
    expect([img('part-0'), img('part-1'), img('part-2')]).toEqual(['nginx:1', 'nginx:2', 'nginx:2']);
    const s = (await get(`${STSS}/part`))!;
    expect(s.status).toMatchObject({ currentRevision: before, currentReplicas: 1, updatedReplicas: 2 });
    expect(s.status?.updateRevision).not.toBe(before);
    const st = await runKubectl(kc, ['rollout', 'status', 'sts/part', '--timeout=30s']);
    expect(st.code, st.stderr).toBe(0);
    expect(st.stdout).toContain('partitioned roll out complete: 2 new pods have been updated...');
    const h = await runKubectl(kc, ['rollout', 'history', 'sts/part']);
    expect(h.code, h.stderr).toBe(0);
    expect(h.stdout).toMatch(/REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>/);
  });

  it('Parallel creates every pod at once; spec.ordinals.start numbers them; kubectl rollout status and undo', async () => {
    const kc = join(ts.dataDir, 'admin.kubeconfig');
    await send('POST', STSS, statefulSet('par', 3, 'nginx:1', { podManagementPolicy: 'Parallel', ordinals: { start: 5 } }));
    const ps = await eventually(async () => {
      const x = await list(PODS, 'sts=par');
      return x.length === 3 ? x : undefined;
    }, '3 pods before any is Ready');
    expect(ps.some(isReady)).toBe(false);
    expect(ps.map((p) => p.metadata.name).sort()).toEqual(['par-5', 'par-6', 'par-7']);
    // the node agent's part runs beside kubectl
    const stopAgent = kubeletLoop();
    try {
      const s1 = await runKubectl(kc, ['rollout', 'status', 'sts/par', '--timeout=60s']);
      expect(s1.code, s1.stderr).toBe(0);
      // kube defaults rollingUpdate.partition to 0, so kubectl reports a partitioned roll out
      expect(s1.stdout).toContain('partitioned roll out complete: 3 new pods have been updated...');
      expect((await runKubectl(kc, ['set', 'image', 'sts/par', 'c=nginx:2'])).code).toBe(0);
      const s2 = await runKubectl(kc, ['rollout', 'status', 'sts/par', '--timeout=60s']);
      expect(s2.code, s2.stderr).toBe(0);
      const undo = await runKubectl(kc, ['rollout', 'undo', 'sts/par']);
      expect(undo.code, undo.stderr).toBe(0);
      expect(undo.stdout).toContain('statefulset.apps/par rolled back');
      const s3 = await runKubectl(kc, ['rollout', 'status', 'sts/par', '--timeout=60s']);
      expect(s3.code, s3.stderr).toBe(0);
      const after = await list(PODS, 'sts=par');
      expect(after.map((p) => (p.spec.containers as { image: string }[])[0]!.image)).toEqual(['nginx:1', 'nginx:1', 'nginx:1']);
    } finally {
      await stopAgent();
    }
  });

  it('OnDelete keeps old pods until deleted; a deleted one comes back at the update revision', async () => {
    await send('POST', STSS, statefulSet('od', 2, 'nginx:1', { updateStrategy: { type: 'OnDelete' } }));
    await eventually(async () => {
      await kubeletStep();
      return (await get(`${STSS}/od`))?.status?.readyReplicas === 2;
    }, 'od ready');
    await send('PATCH', `${STSS}/od`, { spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } } } }, 'application/strategic-merge-patch+json');
    const s1 = await eventually(async () => {
      const x = await get(`${STSS}/od`);
      return x?.status?.observedGeneration === 2 ? x : undefined;
    }, 'template change observed');
    expect(s1.status?.updateRevision).not.toBe(s1.status?.currentRevision);
    expect(s1.status).toMatchObject({ currentReplicas: 2 });
    // none updated yet: the omitempty counter is absent, as kube's StatefulSetStatus
    expect(s1.status).not.toHaveProperty('updatedReplicas');
    const image = async (n: string): Promise<string | undefined> => ((await get(`${PODS}/${n}`))?.spec.containers as { image: string }[] | undefined)?.[0]?.image;
    expect([await image('od-0'), await image('od-1')]).toEqual(['nginx:1', 'nginx:1']);
    await send('DELETE', `${PODS}/od-0`, {});
    // the status may still be the one written before the delete (readyReplicas 2): wait for one that counts the new pod
    const settled = await eventually(async () => {
      await kubeletStep();
      const st = (await get(`${STSS}/od`))?.status;
      return (await image('od-0')) === 'nginx:2' && st?.readyReplicas === 2 && st?.updatedReplicas !== undefined ? st : undefined;
    }, 'od-0 back at the new template, and counted');
    expect(await image('od-1')).toBe('nginx:1');
    expect(settled).toMatchObject({ currentReplicas: 1, updatedReplicas: 1 });
  });

  it('maxUnavailable lets a rolling update replace that many pods at once, never more', async () => {
    await send('POST', STSS, statefulSet('mu', 4, 'nginx:1', { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } } }));
    await eventually(async () => {
      await kubeletStep();
      return (await get(`${STSS}/mu`))?.status?.readyReplicas === 4;
    }, 'mu ready');
    const oldRevision = (await get(`${STSS}/mu`))!.status?.updateRevision;
    await send('PATCH', `${STSS}/mu`, { spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } } } }, 'application/strategic-merge-patch+json');
    let most = 0;
    for (let i = 0; i < 300; i++) {
      const ps = await list(PODS, 'sts=mu');
      const unready = 4 - ps.filter(isReady).length;
      most = Math.max(most, unready);
      expect(unready).toBeLessThanOrEqual(2);
      const s = await get(`${STSS}/mu`);
      if (s?.status?.updateRevision !== oldRevision && s?.status?.updatedReplicas === 4 && s.status.readyReplicas === 4) break;
      await kubeletStep();
    }
    // the rollout is complete once the last replaced pod is gone too (a Terminating pod still counts in replicas)
    const done = await eventually(async () => {
      await kubeletStep();
      const s = await get(`${STSS}/mu`);
      return s?.status?.currentRevision === s?.status?.updateRevision ? s : undefined;
    }, 'current revision moved to the update revision');
    expect(done.status).toMatchObject({ replicas: 4, updatedReplicas: 4, readyReplicas: 4, currentReplicas: 4 });
    // two went at once at some point (the bound is used, not only respected)
    expect(most).toBe(2);
  });

  it('whenScaled: Delete removes the claims of the pods scaled away; whenDeleted: Delete the rest with the set', async () => {
    await send('POST', STSS, statefulSet('db', 2, 'pg:1', {
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Delete' },
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
    }));
    await eventually(async () => {
      await kubeletStep();
      return (await get(`${STSS}/db`))?.status?.readyReplicas === 2;
    }, 'db ready');
    await send('PATCH', `${STSS}/db`, { spec: { replicas: 1 } });
    await eventually(async () => {
      await kubeletStep();
      return (await list(PVCS, 'sts=db')).map((c) => c.metadata.name).join() === 'data-db-0';
    }, 'data-db-1 collected with its pod');
    const set = (await get(`${STSS}/db`))!;
    const claim = (await list(PVCS, 'sts=db'))[0]!;
    expect(claim.metadata.ownerReferences).toEqual([{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: set.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    await send('DELETE', `${STSS}/db`, {});
    await eventually(async () => {
      await kubeletStep();
      return (await list(PVCS, 'sts=db')).length === 0;
    }, 'data-db-0 collected with the set');
  });
});

describe('ControllerRevision annotations', () => {
  it("a new revision carries its owner's annotations, so the change cause shows in kubectl rollout history", async () => {
    const kc = join(ts.dataDir, 'admin.kubeconfig');
    const cause = { 'kubernetes.io/change-cause': 'made first' };
    const set = statefulSet('why', 0, 'app:1');
    await send('POST', STSS, { ...set, metadata: { name: 'why', annotations: cause } });
    const ds = daemonSet('dwhy', 'app:1', {}, { nodeSelector: { none: 'none' } });
    await send('POST', DSS, { ...ds, metadata: { name: 'dwhy', annotations: cause } });
    for (const [kind, path] of [['sts', STSS], ['ds', DSS]] as const) {
      const name = kind === 'sts' ? 'why' : 'dwhy';
      const owned = async (): Promise<WObj[]> => (await list(CRS)).filter((r) => r.metadata.ownerReferences?.[0]?.name === name);
      await eventually(async () => (await owned()).length === 1, `${kind} revision 1`);
      expect((await owned())[0]!.metadata.annotations).toMatchObject(cause);
      await send('PATCH', `${path}/${name}`, {
        metadata: { annotations: { 'kubernetes.io/change-cause': 'made second' } },
        spec: { template: { spec: { containers: [{ name: 'c', image: 'app:2' }] } } },
      });
      await eventually(async () => (await owned()).length === 2, `${kind} revision 2`);
      const h = await runKubectl(kc, ['rollout', 'history', `${kind}/${name}`]);
      expect(h.code, h.stderr).toBe(0);
      expect(h.stdout).toMatch(/REVISION\s+CHANGE-CAUSE\n1\s+made first\n2\s+made second/);
    }
  });
});
