// What Kubernetes' sig-apps e2e tests of StatefulSets (test/e2e/apps/
// statefulset.go, "Basic StatefulSet functionality") check, on orch with its
// controllers and a real node agent (simulated runtime): the scale
// sub-resource; ordered scaling that halts on an unhealthy pod; burst
// (Parallel) scaling that does not; rolling updates and roll backs; canary
// and phased rolling updates with a partition; a pod the node rejects (a
// host port taken by a pod bound straight to the node) recreated until it runs.
//
// kube's pods run httpd with an HTTP readiness probe on /index.html and the
// tests break it by moving the file away with `kubectl exec`. Here the probe
// is an exec probe that fails while a file named after the pod exists in a
// directory of the test host (the simulated runtime runs probe commands as
// host processes); the test creates and removes that file.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Obj, STRATEGIC, WEBSERVER, e2eEnv } from '../helpers/e2e-apps.js';
import { namespacesTornDown, updatePod } from '../helpers/e2e-batch.js';
import { openWatch } from '../helpers/watch-stream.js';

const NODE = 'stateful-node';
const env = e2eEnv(NODE);
// kube's statefulset.go runs in privileged namespaces (f.NamespacePodSecurityLevel): the evicted-set test binds a host port
const namespace = namespacesTornDown(env, 'privileged');
const SETS = (ns: string) => `/apis/apps/v1/namespaces/${ns}/statefulsets`;
const PODS = (ns: string) => `/api/v1/namespaces/${ns}/pods`;
const NEW_WEBSERVER = 'registry.k8s.io/e2e-test-images/httpd:2.4.39-4';
const LABELS = { foo: 'bar', baz: 'blah' };
const SELECTOR = 'baz=blah,foo=bar';
const REVISION = 'controller-revision-hash';

const broken = mkdtempSync(join(tmpdir(), 'orch-sts-probe-'));
afterAll(() => rmSync(broken, { recursive: true, force: true }));

/** e2estatefulset.NewStatefulSet with setHTTPProbe: one webserver container, readiness probed every second */
function newStatefulSet(name: string, replicas: number, extra: Obj = {}): Obj {
  return {
    apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name, labels: { ...LABELS } },
    spec: {
      replicas, serviceName: 'test', selector: { matchLabels: { ...LABELS } }, ...extra,
      template: {
        metadata: { labels: { ...LABELS } },
        spec: {
          containers: [{
            name: 'webserver', image: WEBSERVER,
            env: [
              { name: 'BROKEN_DIR', value: broken },
              { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
              { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } } },
            ],
            // not ready while $BROKEN_DIR/<namespace>.<pod> exists (kube: httpGet /index.html, moved away to break it);
            // the namespace keeps the tests, which run concurrently, apart
            readinessProbe: { exec: { command: ['sh', '-c', 'test ! -e "$BROKEN_DIR/$POD_NAMESPACE.$POD_NAME"'] }, periodSeconds: 1, successThreshold: 1, failureThreshold: 1 },
          }],
        },
      },
    },
  };
}

/** the headless service the StatefulSet tests' BeforeEach creates */
async function setup(base: string): Promise<string> {
  const ns = await namespace(base);
  await env.call('POST', `/api/v1/namespaces/${ns}/services`, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'test' }, spec: { clusterIP: 'None', selector: { ...LABELS }, ports: [{ port: 80, name: 'http' }] } });
  return ns;
}

const ordinal = (p: Obj): number => Number(/-(\d+)$/.exec(p.metadata.name)![1]);
/** GetPodList, sorted by ordinal (SortStatefulPods) */
async function podList(ns: string): Promise<Obj[]> {
  return ((await env.list(PODS(ns), SELECTOR)).items as Obj[]).sort((a, b) => ordinal(a) - ordinal(b));
}
const ready = (p: Obj): boolean => ((p.status?.conditions ?? []) as Obj[]).some((c) => c.type === 'Ready' && c.status === 'True');
const breakProbe = (ns: string, pod: string): void => writeFileSync(join(broken, `${ns}.${pod}`), '');
const restoreProbe = (ns: string, pod: string): void => rmSync(join(broken, `${ns}.${pod}`), { force: true });
const breakAll = async (ns: string): Promise<void> => (await podList(ns)).forEach((p) => breakProbe(ns, p.metadata.name));
const restoreAll = async (ns: string): Promise<void> => (await podList(ns)).forEach((p) => restoreProbe(ns, p.metadata.name));

/** waitForStatus: the controller has seen the set's generation */
async function waitForStatus(ns: string, name: string): Promise<Obj> {
  return env.eventually(async () => {
    const s = await env.get(`${SETS(ns)}/${name}`);
    return (s.status?.observedGeneration ?? 0) >= s.metadata.generation ? s : undefined;
  }, `${name} observed`);
}

/** waitForRunningAndNotReady */
function runningAndNotReady(ns: string, count: number): Promise<Obj[]> {
  return env.eventually(async () => {
    const pods = await podList(ns);
    return pods.length === count && pods.every((p) => p.status?.phase === 'Running' && !ready(p)) ? pods : undefined;
  }, `${count} running pods not ready`);
}

/** WaitForStatusReadyReplicas */
const statusReady = (ns: string, name: string, n: number): Promise<Obj> =>
  env.eventually(async () => {
    const s = await env.get(`${SETS(ns)}/${name}`);
    return (s.status?.readyReplicas ?? 0) === n ? s : undefined;
  }, `${name} readyReplicas ${n}`);

/** confirmStatefulPodCount: the count holds for a while (hard) or is reached within it */
async function confirmPodCount(ns: string, count: number, hard: boolean): Promise<void> {
  const until = Date.now() + 4000;
  let last = -1;
  while (Date.now() < until) {
    last = (await podList(ns)).length;
    if (hard) expect(last, 'the set scaled past a pod that is not healthy').toBe(count);
    await new Promise((r) => setTimeout(r, 250));
  }
  expect(last).toBe(count);
}

/** updateStatefulSetWithRetries */
async function updateSet(ns: string, name: string, change: (s: Obj) => void): Promise<Obj> {
  return env.eventually(async () => {
    const s = await env.get(`${SETS(ns)}/${name}`);
    change(s);
    const r = await env.ts().request('PUT', `${SETS(ns)}/${name}`, { body: s });
    if (r.status === 409) return undefined;
    expect(r.status, r.text).toBe(200);
    return r.json<Obj>();
  }, `update of ${name}`);
}

const setReplicas = (ns: string, name: string, n: number): Promise<Obj> => updateSet(ns, name, (s) => (s.spec.replicas = n));

/** waitForRollingUpdate / waitForPartitionedRollingUpdate: pods at or above the partition run the update revision */
async function waitForRollout(ns: string, name: string): Promise<{ set: Obj; pods: Obj[] }> {
  return env.eventually(async () => {
    const set = await env.get(`${SETS(ns)}/${name}`);
    const pods = await podList(ns);
    if ((set.status?.observedGeneration ?? 0) < set.metadata.generation || pods.length < set.spec.replicas) return undefined;
    const partition = set.spec.updateStrategy?.rollingUpdate?.partition ?? 0;
    if (partition <= 0 && set.status.updateRevision !== set.status.currentRevision) return undefined;
    for (let i = set.spec.replicas - 1; i >= partition; i--) if (pods[i]!.metadata.labels[REVISION] !== set.status.updateRevision) return undefined;
    return { set, pods };
  }, `the rollout of ${name}`, 90_000);
}

/** pods below the partition at the old image and revision, the others at the new ones */
function expectPartitioned(pods: Obj[], partition: number, old: [string, string], updated: [string, string]): void {
  pods.forEach((p, i) => {
    const [image, revision] = i < partition ? old : updated;
    expect(p.spec.containers[0].image, p.metadata.name).toBe(image);
    expect(p.metadata.labels[REVISION], p.metadata.name).toBe(revision);
  });
}

/** watchtools.Until from `rv` for pod events of `type` arriving in `order` */
function watchOrder(ns: string, rv: string, type: string, order: string[]): Promise<unknown> {
  const left = [...order];
  return env.until(PODS(ns), rv, SELECTOR, (e) => {
    if (e.type === type && e.object.metadata.name === left[0]) left.shift();
    return left.length === 0;
  }, 120_000);
}

const TEST_FINALIZER = 'example.com/test-finalizer';

const deletePod = (ns: string, name: string) => env.call('DELETE', `${PODS(ns)}/${name}`, { gracePeriodSeconds: 0 });

describe.concurrent('[sig-apps] StatefulSet Basic StatefulSet functionality', () => {
  it('should have a working scale subresource [Conformance]', async () => {
    const ns = await setup('ss-scale');
    await env.call('POST', SETS(ns), newStatefulSet('ss', 1));
    await env.runningPods(ns, SELECTOR, 1);
    await waitForStatus(ns, 'ss');

    const scale = await env.get(`${SETS(ns)}/ss/scale`);
    expect(scale.spec.replicas).toBe(1);
    expect(scale.status.replicas).toBe(1);

    scale.metadata.resourceVersion = ''; // unconditional
    scale.spec.replicas = 2;
    expect((await env.call('PUT', `${SETS(ns)}/ss/scale`, scale)).spec.replicas).toBe(2);
    expect((await env.get(`${SETS(ns)}/ss`)).spec.replicas).toBe(2);

    // json.Marshal(autoscalingv1.Scale{Spec: {Replicas: 4}}) as a strategic merge patch of /scale
    await env.call('PATCH', `${SETS(ns)}/ss/scale`, { metadata: { creationTimestamp: null }, spec: { replicas: 4 }, status: { replicas: 0 } }, STRATEGIC);
    expect((await env.get(`${SETS(ns)}/ss`)).spec.replicas).toBe(4);
  });

  it('Scaling should happen in predictable order and halt if any stateful pod is unhealthy [Slow] [Conformance]', async () => {
    const ns = await setup('ss-order');
    const rv = (await env.list(PODS(ns), SELECTOR)).metadata.resourceVersion as string;
    const upOrder = watchOrder(ns, rv, 'ADDED', ['ss-0', 'ss-1', 'ss-2']);
    await env.call('POST', SETS(ns), newStatefulSet('ss', 1));
    await env.runningPods(ns, SELECTOR, 1);

    // scale up halts on an unhealthy pod
    await breakAll(ns);
    await runningAndNotReady(ns, 1);
    await statusReady(ns, 'ss', 0);
    await setReplicas(ns, 'ss', 3);
    await confirmPodCount(ns, 1, true);

    await restoreAll(ns);
    await env.runningPods(ns, SELECTOR, 3);
    await upOrder;

    // scale down halts on an unhealthy pod, and goes in reverse order
    const rv2 = (await env.list(PODS(ns), SELECTOR)).metadata.resourceVersion as string;
    const downOrder = watchOrder(ns, rv2, 'DELETED', ['ss-2', 'ss-1', 'ss-0']);
    await breakAll(ns);
    await statusReady(ns, 'ss', 0);
    await runningAndNotReady(ns, 3);
    await setReplicas(ns, 'ss', 0);
    await confirmPodCount(ns, 3, true);

    await restoreAll(ns);
    await env.eventually(async () => (await podList(ns)).length === 0, 'no pods');
    await downOrder;
  }, 240_000);

  it('Burst scaling should run to completion even with unhealthy pods [Slow] [Conformance]', async () => {
    const ns = await setup('ss-burst');
    await env.call('POST', SETS(ns), newStatefulSet('ss', 1, { podManagementPolicy: 'Parallel' }));
    await env.runningPods(ns, SELECTOR, 1);

    await breakAll(ns);
    await runningAndNotReady(ns, 1);
    await statusReady(ns, 'ss', 0);
    await setReplicas(ns, 'ss', 3);
    await env.eventually(async () => (await podList(ns)).length === 3, 'three pods despite an unhealthy one');

    await restoreAll(ns);
    await env.runningPods(ns, SELECTOR, 3);

    await breakAll(ns);
    await statusReady(ns, 'ss', 0);
    await runningAndNotReady(ns, 3);
    await setReplicas(ns, 'ss', 0);
    await env.eventually(async () => (await podList(ns)).length === 0, 'no pods despite unhealthy ones');
    await restoreAll(ns);
    await env.eventually(async () => (await env.get(`${SETS(ns)}/ss`)).status?.replicas === 0, 'status.replicas 0');
  }, 240_000);

  it('should perform rolling updates and roll backs of template modifications [Conformance]', async () => {
    const ns = await setup('ss-rollback');
    await env.call('POST', SETS(ns), newStatefulSet('ss2', 3));
    await env.runningPods(ns, SELECTOR, 3);
    let set = await waitForStatus(ns, 'ss2');
    const first = set.status.currentRevision as string;
    expect(set.status.updateRevision).toBe(first);
    for (const p of await podList(ns)) expect(p.metadata.labels[REVISION]).toBe(first);

    breakProbe(ns, 'ss2-1');
    await env.eventually(async () => !ready(await env.get(`${PODS(ns)}/ss2-1`)), 'ss2-1 not ready');
    set = await updateSet(ns, 'ss2', (s) => (s.spec.template.spec.containers[0].image = NEW_WEBSERVER));
    set = await waitForStatus(ns, 'ss2');
    const second = set.status.updateRevision as string;
    expect(set.status.currentRevision).not.toBe(second);

    // updated in reverse ordinal order once ss2-1 is ready again
    restoreProbe(ns, 'ss2-1');
    const rolled = await waitForRollout(ns, 'ss2');
    expect(rolled.set.status.currentRevision).toBe(second);
    expectPartitioned(rolled.pods, 0, ['', ''], [NEW_WEBSERVER, second]);

    // back to the first template: the prior revision is the update revision again, no new one
    breakProbe(ns, 'ss2-1');
    await env.eventually(async () => !ready(await env.get(`${PODS(ns)}/ss2-1`)), 'ss2-1 not ready');
    await updateSet(ns, 'ss2', (s) => (s.spec.template.spec.containers[0].image = WEBSERVER));
    set = await waitForStatus(ns, 'ss2');
    expect(set.status.updateRevision).toBe(first);
    expect(set.status.currentRevision).not.toBe(first);
    restoreProbe(ns, 'ss2-1');
    const back = await waitForRollout(ns, 'ss2');
    expect(back.set.status.currentRevision).toBe(first);
    expectPartitioned(back.pods, 0, ['', ''], [WEBSERVER, first]);
  }, 240_000);

  it('should perform canary updates and phased rolling updates of template modifications [Conformance]', async () => {
    const ns = await setup('ss-canary');
    await env.call('POST', SETS(ns), newStatefulSet('ss2', 3, { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 3 } } }));
    await env.runningPods(ns, SELECTOR, 3);
    let set = await waitForStatus(ns, 'ss2');
    const current = set.status.currentRevision as string;
    expect(set.status.updateRevision).toBe(current);
    for (const p of await podList(ns)) expect(p.metadata.labels[REVISION]).toBe(current);

    await updateSet(ns, 'ss2', (s) => (s.spec.template.spec.containers[0].image = NEW_WEBSERVER));
    set = await waitForStatus(ns, 'ss2');
    const update = set.status.updateRevision as string;
    expect(set.status.currentRevision).toBe(current);
    expect(update).not.toBe(current);
    // a partition above the replicas: nothing is updated
    expectPartitioned(await podList(ns), 3, [WEBSERVER, current], ['', '']);

    // canary: the partition at 2 updates ss2-2 only
    await updateSet(ns, 'ss2', (s) => (s.spec.updateStrategy = { type: 'RollingUpdate', rollingUpdate: { partition: 2 } }));
    let r = await waitForRollout(ns, 'ss2');
    expectPartitioned(r.pods, 2, [WEBSERVER, current], [NEW_WEBSERVER, update]);

    // deleted pods come back at the revision their side of the partition has
    await deletePod(ns, 'ss2-0');
    await deletePod(ns, 'ss2-2');
    await env.eventually(async () => {
      const pods = await podList(ns);
      return pods.length === 3 && pods.every((p) => p.status?.phase === 'Running' && ready(p) && !p.metadata.deletionTimestamp);
    }, 'ss2-0 and ss2-2 back');
    expectPartitioned(await podList(ns), 2, [WEBSERVER, current], [NEW_WEBSERVER, update]);

    // phased: the partition down to 0, one step at a time
    for (let partition = 1; partition >= 0; partition--) {
      await updateSet(ns, 'ss2', (s) => (s.spec.updateStrategy = { type: 'RollingUpdate', rollingUpdate: { partition } }));
      r = await waitForRollout(ns, 'ss2');
      expectPartitioned(r.pods, partition, [WEBSERVER, current], [NEW_WEBSERVER, update]);
    }
    expect(r.set.status.currentRevision).toBe(update);
  }, 240_000);

  it('should implement legacy replacement when the update strategy is OnDelete', async () => {
    const ns = await setup('ss-ondelete');
    await env.call('POST', SETS(ns), newStatefulSet('ss2', 3, { updateStrategy: { type: 'OnDelete' } }));
    await env.runningPods(ns, SELECTOR, 3);
    let set = await waitForStatus(ns, 'ss2');
    const current = set.status.currentRevision as string;
    expect(set.status.updateRevision).toBe(current);
    const recreateAll = async (): Promise<Obj[]> => {
      for (const i of [0, 1, 2]) await deletePod(ns, `ss2-${i}`);
      return env.eventually(async () => {
        const pods = await podList(ns);
        return pods.length === 3 && pods.every((p) => p.status?.phase === 'Running' && ready(p) && !p.metadata.deletionTimestamp) ? pods : undefined;
      }, 'three pods back');
    };
    expectPartitioned(await recreateAll(), 3, [WEBSERVER, current], ['', '']);

    await updateSet(ns, 'ss2', (s) => (s.spec.template.spec.containers[0].image = NEW_WEBSERVER));
    set = await waitForStatus(ns, 'ss2');
    const update = set.status.updateRevision as string;
    expect(update).not.toBe(current);
    // OnDelete: nothing is replaced until deleted
    expectPartitioned(await podList(ns), 3, [WEBSERVER, current], ['', '']);
    expectPartitioned(await recreateAll(), 0, ['', ''], [NEW_WEBSERVER, update]);
  });

  // deletingPodForRollingUpdatePartitionTest: partition 1, pod-0 held by a finalizer while it is deleted
  async function deletingPod0(ns: string, name: string, extraContainer?: Obj): Promise<void> {
    const spec = newStatefulSet(name, 3, { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } });
    if (extraContainer) spec.spec.template.spec.containers.push(extraContainer);
    await env.call('POST', SETS(ns), spec);
    await env.runningPods(ns, SELECTOR, 3);
    let set = await waitForStatus(ns, name);
    const current = set.status.currentRevision as string;
    expect(set.status.updateRevision).toBe(current);
    for (const p of await podList(ns)) expect(p.metadata.labels[REVISION]).toBe(current);

    await updatePod(env, ns, `${name}-0`, (p) => (p.metadata.finalizers = [...(p.metadata.finalizers ?? []), TEST_FINALIZER]));
    try {
      await updateSet(ns, name, (s) => (s.spec.template.spec.containers[0].image = NEW_WEBSERVER));
      set = await waitForStatus(ns, name);
      const update = set.status.updateRevision as string;
      expect(update).not.toBe(current);
      // all running, all updated but pod-0
      set = await env.eventually(async () => {
        const s = await env.get(`${SETS(ns)}/${name}`);
        return s.status.updatedReplicas === 2 && s.status.replicas === 3 && s.status.readyReplicas === 3 ? s : undefined;
      }, 'two of three updated');
      expectPartitioned(await podList(ns), 1, [WEBSERVER, current], [NEW_WEBSERVER, update]);

      await deletePod(ns, `${name}-0`);
      await env.eventually(async () => (await env.get(`${SETS(ns)}/${name}`)).status.readyReplicas === 2, 'pod-0 not ready while held');
    } finally {
      await updatePod(env, ns, `${name}-0`, (p) => (p.metadata.finalizers = (p.metadata.finalizers ?? []).filter((f: string) => f !== TEST_FINALIZER)));
    }
    await env.eventually(async () => {
      const pods = await podList(ns);
      return (await env.get(`${SETS(ns)}/${name}`)).status.readyReplicas === 3 && pods.length === 3 && pods.every((p) => !p.metadata.deletionTimestamp);
    }, 'pod-0 recreated');
    set = await env.get(`${SETS(ns)}/${name}`);
    // pod-0 comes back below the partition: at the current revision
    expectPartitioned(await podList(ns), 1, [WEBSERVER, current], [NEW_WEBSERVER, set.status.updateRevision]);
  }

  it('should perform canary updates and phased rolling updates of template modifications for partiton1 and delete pod-0 without failing container', async () => {
    await deletingPod0(await setup('ss-pod0'), 'ss2');
  }, 240_000);

  it('should perform canary updates and phased rolling updates of template modifications for partiton1 and delete pod-0 with failing container', async () => {
    // a second container that exits 1 on SIGTERM in ss3-0 only
    const script = [
      'echo "Running in pod $POD_NAME"',
      '_term() { echo "Received SIGTERM signal"; if [ "${POD_NAME}" = "ss3-0" ]; then exit 1; else exit 0; fi; }',
      'trap _term TERM',
      'while true; do echo "Running in infinite loop in $POD_NAME"; sleep 1; done',
    ].join('\n');
    await deletingPod0(await setup('ss-pod0-failing'), 'ss3', {
      name: 'sleep-exit-with-1', image: 'registry.k8s.io/e2e-test-images/busybox:1.36.1-1', command: ['sh', '-c', script],
      env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } }],
    });
  }, 240_000);

  it('Should recreate evicted statefulset [Conformance]', async () => {
    const ns = await setup('ss-evicted');
    const conflictingPort = { hostPort: 21017, containerPort: 21017, name: 'conflict' };
    // a pod bound straight to the node, holding the host port
    const pod = await env.call('POST', PODS(ns), {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'test-pod' },
      spec: { containers: [{ name: 'webserver', image: WEBSERVER, ports: [conflictingPort] }], nodeName: NODE },
    });
    await env.eventually(async () => (await env.get(`${PODS(ns)}/test-pod`)).status?.phase === 'Running', 'test-pod running');

    // e2estatefulset.NewStatefulSet (no probe) with the same host port, bound to the same node
    await env.call('POST', SETS(ns), {
      apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'ss', labels: { ...LABELS } },
      spec: {
        replicas: 1, serviceName: 'test', selector: { matchLabels: { ...LABELS } },
        template: { metadata: { labels: { ...LABELS } }, spec: { nodeName: NODE, containers: [{ name: 'webserver', image: WEBSERVER, ports: [conflictingPort] }] } },
      },
    });

    // the set's pod, in whatever state, until the controller has deleted it at least once
    const selector = encodeURIComponent('metadata.name=ss-0');
    const pl = await env.get(`${PODS(ns)}?fieldSelector=${selector}`);
    let initialUid: string = pl.items[0]?.metadata.uid ?? '';
    const phases: string[] = [];
    const w = openWatch(env.ts().server, `${PODS(ns)}?watch=1&fieldSelector=${selector}&resourceVersion=${pl.metadata.resourceVersion}`);
    try {
      await w.waitUntil((e) => {
        const o = e.object as Obj;
        if (e.type === 'DELETED') return initialUid !== '';
        initialUid = o.metadata.uid;
        phases.push(`${o.status?.phase}/${o.status?.reason ?? ''}`);
        return false;
      }, 40_000);
    } finally {
      w.close();
    }
    // what orch adds to the port: the pod went because the node rejected it (kube's e2e does not look)
    expect(phases).toContain('Failed/NodePorts');
    const rejected = await env.eventually(async () => {
      const r = await env.get(`/api/v1/namespaces/${ns}/events?fieldSelector=${encodeURIComponent('involvedObject.kind=StatefulSet,reason=RecreatingFailedPod')}`);
      return (r.items as Obj[])[0];
    }, 'RecreatingFailedPod');
    expect(rejected.message).toBe(`StatefulSet ${ns}/ss is recreating failed Pod ss-0`);

    await env.call('DELETE', `${PODS(ns)}/${pod.metadata.name}`, { gracePeriodSeconds: 0 });
    // the pod may be caught between deletion and recreation: wait for a Running one of another uid
    const running = await env.eventually(async () => {
      const p = await env.ts().request('GET', `${PODS(ns)}/ss-0`);
      if (p.status !== 200) return undefined;
      const o = p.json<Obj>();
      return o.status?.phase === 'Running' && o.metadata.uid !== initialUid ? o : undefined;
    }, 'ss-0 recreated and running');
    expect(running.status.reason).toBeUndefined();
  });
});
