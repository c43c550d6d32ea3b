// Kubernetes' sig-node e2e conformance tests of init containers
// (test/e2e/common/node/init_container.go): on RestartNever and RestartAlways
// pods the init containers run, succeed and are Ready before the app
// containers start; a failing init container keeps the app containers waiting
// (PodInitializing) and is restarted on a RestartAlways pod, and fails the pod
// on a RestartNever one. On orch with kube's API domain and a real node agent
// (simulated runtime: `/bin/true` and `/bin/false` run as host processes, the
// pause image runs until stopped). Each test follows the pod with a watch from
// its creation, as kube's watchtools.Until does, and checks every event it sees
// against kube's invariants (containerInitInvariant).

import { describe, expect, it } from 'vitest';
import { type Obj, PAUSE, condition, e2eEnv, namespace } from '../helpers/e2e-apps.js';
import { BUSYBOX, PODS, uniqueName } from '../helpers/e2e-node-output.js';
import { openWatch } from '../helpers/watch-stream.js';

const env = e2eEnv('init-node');
const ns = () => namespace(env, `init-container-${Math.random().toString(36).slice(2, 8)}`);

const busybox = (name: string, command: string): Obj => ({ name, image: BUSYBOX, command: [command] });
const pause: Obj = { name: 'run1', image: PAUSE, resources: { limits: { cpu: '100m' } } };

function initPod(init: Obj[], app: Obj[], restartPolicy?: string): Obj {
  const name = uniqueName('pod-init-');
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { name: 'foo', time: String(process.hrtime()[1]) } }, spec: { ...(restartPolicy ? { restartPolicy } : {}), initContainers: init, containers: app } };
}

/** kube's initialized(): whether every init container succeeded, and whether one failed */
function initialized(p: Obj): { all: boolean; failed: boolean } {
  let all = true;
  let failed = false;
  for (const s of (p.status?.initContainerStatuses ?? []) as Obj[]) {
    const t = s.state?.terminated;
    if (!t) all = false;
    else if (t.exitCode !== 0) {
      all = false;
      failed = true;
    } else expect(s.ready, `init container ${s.name} terminated with 0 but not ready`).toBe(true);
  }
  return { all, failed };
}

/**
 * kube's containerInitInvariant on each event (kube's test records the events
 * into a copy and ignores the result; here every event is checked): app
 * containers wait with PodInitializing and no restart until initialization is
 * complete, the Initialized condition is there with a transition time and is
 * never Unknown, True exactly when every init container succeeded, and a pod
 * never goes back from initialized to not initialized
 */
function checkInvariants(events: Obj[]): void {
  let wasInit = false;
  for (const p of events) {
    const { all, failed } = initialized(p);
    const c = condition(p, 'Initialized');
    if (!p.status?.initContainerStatuses) continue; // the pod as created, before the agent's first status
    expect(c, 'Initialized condition').toBeDefined();
    expect(c!.lastTransitionTime).toBeTruthy();
    expect(c!.status).toBe(all && !failed ? 'True' : 'False');
    if (!all || failed) {
      for (const s of (p.status.containerStatuses ?? []) as Obj[]) {
        expect(s.state?.waiting?.reason, `${s.name} before initialization: ${JSON.stringify(s)}`).toBe('PodInitializing');
        expect(s.restartCount).toBe(0);
      }
    }
    const isInit = c!.status === 'True';
    expect(wasInit && !isInit, 'initialized, then not').toBe(false);
    wasInit = isInit;
  }
}

/** creates the pod and follows it (a watch by name from its resourceVersion) until `done` holds; every event checked */
async function follow(n: string, pod: Obj, done: (p: Obj) => boolean, timeoutMs = 60_000): Promise<Obj> {
  const created = await env.call('POST', PODS(n), pod);
  const name = created.metadata.name as string;
  const w = openWatch(env.ts().server, `${PODS(n)}?watch=1&resourceVersion=${created.metadata.resourceVersion}&fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`);
  // a condition that throws (kube's watchtools.Until returning an error) ends the wait and fails the test
  let failure: Error | undefined;
  const check = (p: Obj): boolean => {
    try {
      return done(p);
    } catch (e) {
      failure = e as Error;
      return true;
    }
  };
  try {
    const last = await w.waitUntil((e) => check((e as { object: Obj }).object), timeoutMs);
    if (failure) throw failure;
    const objects = w.events.filter((e) => e.type !== 'BOOKMARK').map((e) => (e as { object: Obj }).object);
    checkInvariants([created, ...objects]);
    return (last as { object: Obj }).object;
  } finally {
    w.close();
  }
}

/** kube's conditions.PodCompleted and PodRunning */
const completed = (p: Obj) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';
const running = (p: Obj) => {
  if (completed(p)) throw new Error(`pod ran to completion: ${JSON.stringify(p.status)}`);
  return p.status?.phase === 'Running';
};

function expectInitsSucceeded(p: Obj): void {
  expect(condition(p, 'Initialized')?.status).toBe('True');
  expect(p.status.initContainerStatuses).toHaveLength(2);
  for (const s of p.status.initContainerStatuses as Obj[]) {
    expect(s.ready, `${s.name} ready`).toBe(true);
    expect(s.state.terminated?.exitCode).toBe(0);
  }
}

describe('[sig-node] InitContainer [NodeConformance]', () => {
  it('should invoke init containers on a RestartNever pod [Conformance]', async () => {
    const n = await ns();
    const end = await follow(n, initPod([busybox('init1', '/bin/true'), busybox('init2', '/bin/true')], [busybox('run1', '/bin/true')], 'Never'), completed);
    expect(end.status.phase).toBe('Succeeded');
    expectInitsSucceeded(end);
    // beyond kube's check: kubelet's reason for a completed pod (GeneratePodInitializedCondition)
    expect(condition(end, 'Initialized')?.reason).toBe('PodCompleted');
  });

  it('should invoke init containers on a RestartAlways pod [Conformance]', async () => {
    const n = await ns();
    const end = await follow(n, initPod([busybox('init1', '/bin/true'), busybox('init2', '/bin/true')], [pause]), running);
    expect(end.status.phase).toBe('Running');
    expectInitsSucceeded(end);
  });

  it('should not start app containers if init containers fail on a RestartAlways pod [Conformance]', async () => {
    const n = await ns();
    // kube waits for the first init container's restartCount to reach 3: back-offs of 10 s, 20 s and 40 s
    let sawRestart = false;
    const end = await follow(n, initPod([busybox('init1', '/bin/false'), busybox('init2', '/bin/true')], [pause]), (p) => {
      for (const s of (p.status?.containerStatuses ?? []) as Obj[]) {
        if (s.state?.waiting?.reason !== 'PodInitializing') throw new Error(`container ${s.name} should wait with PodInitializing: ${JSON.stringify(s)}`);
      }
      const inits = (p.status?.initContainerStatuses ?? []) as Obj[];
      if (inits.length !== 2) return false;
      if (inits[1]!.state?.waiting?.reason !== 'PodInitializing') throw new Error(`second init container should wait with PodInitializing: ${JSON.stringify(inits[1])}`);
      if (inits[0]!.state?.terminated?.exitCode === 0) throw new Error(`first init container should fail: ${JSON.stringify(inits[0])}`);
      sawRestart ||= inits[0]!.lastState?.terminated !== undefined;
      return sawRestart && inits[0]!.restartCount >= 3;
    }, 150_000);
    expect(end.status.phase).toBe('Pending');
    const init = condition(end, 'Initialized');
    expect(init).toMatchObject({ status: 'False', reason: 'ContainersNotInitialized', message: 'containers with incomplete status: [init1 init2]' });
    expect(end.status.initContainerStatuses).toHaveLength(2);
  }, 180_000);

  it('should not start app containers and fail the pod if init containers fail on a RestartNever pod [Conformance]', async () => {
    const n = await ns();
    let secondFailed = false;
    const end = await follow(n, initPod([busybox('init1', '/bin/true'), busybox('init2', '/bin/false')], [{ ...busybox('run1', '/bin/true'), resources: { limits: { cpu: '100m' } } }], 'Never'), (p) => {
      for (const s of (p.status?.containerStatuses ?? []) as Obj[]) {
        if (s.state?.waiting?.reason !== 'PodInitializing') throw new Error(`container ${s.name} should wait with PodInitializing: ${JSON.stringify(s)}`);
      }
      const inits = (p.status?.initContainerStatuses ?? []) as Obj[];
      if (inits.length === 2 && inits[0]!.state?.terminated) {
        if (inits[0]!.state.terminated.exitCode !== 0) throw new Error(`first init container should succeed: ${JSON.stringify(inits[0])}`);
        const t = inits[1]!.state?.terminated;
        if (t && t.exitCode === 0) throw new Error(`second init container should fail: ${JSON.stringify(inits[1])}`);
        secondFailed ||= t !== undefined;
      }
      return secondFailed && completed(p);
    });
    expect(end.status.phase).toBe('Failed');
    expect(condition(end, 'Initialized')).toMatchObject({ status: 'False', reason: 'ContainersNotInitialized', message: 'containers with incomplete status: [init2]' });
    expect(end.status.initContainerStatuses).toHaveLength(2);
    expect(end.status.containerStatuses[0].state.waiting).toBeDefined();
  });
});
