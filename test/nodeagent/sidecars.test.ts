// Sidecar containers (restartable init containers, KEP-753) in the node agent's pod sync, on a simulated
// clock: the pod syncer and its prober against the simulated runtime over gRPC, one sync at a time (what
// the agent does at every relist). kube 1.32's kuberuntime: a sidecar lets the next init container start once
// it has started (startup probe), restarts whatever the pod's restartPolicy with the crash-loop back-off,
// counts for readiness, stops after the main containers in reverse order, and does not keep a finished
// pod alive. Also the PostStartHookError waiting state of a container whose postStart hook failed.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, type TimerHandle } from '../../src/core/clock.js';
import type { KubeObject } from '../../src/nodeagent/api-client.js';
import type { Clock } from '../../src/nodeagent/clock.js';
import type { ObjectRef } from '../../src/nodeagent/events/correlator.js';
import { PodSyncer } from '../../src/nodeagent/pod-sync.js';
import { ProbeManager } from '../../src/nodeagent/probes/manager.js';
import type { Outcome, ProbeKind } from '../../src/nodeagent/probes/types.js';
import { RuntimeClient } from '../../src/nodeagent/runtime/client.js';
import { type RunningSim, startRuntimeSim } from '../../src/nodeagent/runtime/sim-server.js';

type Obj = Record<string, any>;

const manual = new ManualClock(Date.now());
const clock: Clock = { now: () => manual.now(), setTimeout: (fn, ms) => manual.setTimeout(fn as () => void, ms), clearTimeout: (h) => (h as TimerHandle | undefined)?.cancel() };
let dir = '';
let sim: RunningSim;
let rt: RuntimeClient;
const stops: { name: string; timeout: number }[] = [];
const events: { ref: ObjectRef; reason: string; message: string }[] = [];
/** each probe's next outcome, by `<container>/<kind>`; a probe not set here succeeds */
const outcomes = new Map<string, Outcome['result']>();
let syncer: PodSyncer;
let probes: ProbeManager;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-sidecars-'));
  sim = await startRuntimeSim(join(dir, 'runtime.sock'), [], clock);
  rt = new RuntimeClient(`unix://${sim.socket}`);
  // record the order and the grace periods of StopContainer calls (the runtime is still called)
  const stop = rt.stopContainer.bind(rt);
  rt.stopContainer = async (id: string, timeout: number) => {
    stops.push({ name: sim.state.container(id).config.metadata.name, timeout });
    return stop(id, timeout);
  };
  const sink = { event: (ref: ObjectRef, _t: string, reason: string, message: string) => void events.push({ ref, reason, message }) };
  probes = new ProbeManager({
    clock, runtime: rt, events: sink, onChange: () => undefined,
    run: async (p, c) => {
      const kind: ProbeKind = p === (c as Obj).startupProbe ? 'startup' : p === (c as Obj).livenessProbe ? 'liveness' : 'readiness';
      const result = outcomes.get(`${c.name}/${kind}`) ?? 'success';
      return { result, output: result === 'failure' ? 'probe says no' : '' };
    },
  });
  syncer = new PodSyncer({ runtime: rt, runtimeName: () => 'orch-runtime-sim', rootDir: dir, hostIP: '127.0.0.1', clock, log: () => undefined, events: sink, probes });
});
afterAll(async () => {
  probes.stop();
  rt.close();
  await sim.stop();
  await rm(dir, { recursive: true, force: true });
});

const probe = { exec: { command: ['check'] }, periodSeconds: 1 };
/** a simulated container: runs until stopped or ended by exit() */
const c = (name: string, more: Obj = {}): Obj => ({ name, image: 'example.test/app:1', imagePullPolicy: 'IfNotPresent', ...more });
const side = (name: string, more: Obj = {}): Obj => c(name, { restartPolicy: 'Always', ...more });
let seq = 0;
function pod(spec: Obj): KubeObject {
  seq += 1;
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: `p${seq}`, namespace: 'default', uid: `uid-${seq}` }, spec: { terminationGracePeriodSeconds: 30, ...spec } } as unknown as KubeObject;
}
/** one agent sync of the pod, then its status as the agent would write it */
async function step(p: KubeObject): Promise<Obj> {
  await syncer.sync(p);
  p.status = await syncer.status(p);
  return p.status as Obj;
}
/** advance the simulated clock, letting the probe runs it triggers (real promises) settle */
async function advance(ms: number): Promise<void> {
  manual.advance(ms);
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}
/** the runtime's containers of the pod, newest attempt per name */
async function containers(p: KubeObject): Promise<Map<string, { id: string; state: string; attempt: number }>> {
  const out = new Map<string, { id: string; state: string; attempt: number }>();
  for (const x of sim.state.containers.values()) {
    const sb = sim.state.sandbox(x.sandboxId);
    if (sb.config.metadata.uid !== p.metadata.uid) continue;
    const have = out.get(x.config.metadata.name);
    if (!have || have.attempt < x.config.metadata.attempt) out.set(x.config.metadata.name, { id: x.id, state: x.state, attempt: x.config.metadata.attempt });
  }
  return out;
}
async function exit(p: KubeObject, name: string, code: number): Promise<void> {
  const x = (await containers(p)).get(name)!;
  sim.state.exit(sim.state.container(x.id), code, code === 0 ? 'Completed' : 'Error');
}
const status = (s: Obj, name: string): Obj => [...(s.initContainerStatuses ?? []), ...(s.containerStatuses ?? [])].find((x: Obj) => x.name === name);
const cond = (s: Obj, type: string): Obj => s.conditions.find((x: Obj) => x.type === type);

describe('sidecar containers in the pod sync', () => {
  it('a sidecar starts in its init order, and the next init container waits until its startup probe succeeded', async () => {
    outcomes.set('side/startup', 'failure');
    const p = pod({ restartPolicy: 'Always', initContainers: [c('init-1'), side('side', { startupProbe: { ...probe, failureThreshold: 100 } }), c('init-2')], containers: [c('main')] });
    let s = await step(p);
    expect([...(await containers(p)).keys()]).toEqual(['init-1']);
    await exit(p, 'init-1', 0);
    s = await step(p);
    expect((await containers(p)).get('side')?.state).toBe('CONTAINER_RUNNING');
    expect(cond(s, 'Initialized')).toMatchObject({ status: 'False', message: 'containers with incomplete status: [side init-2]' });
    await advance(1_000);
    s = await step(p);
    // running but not started: init-2 must wait
    expect((await containers(p)).has('init-2')).toBe(false);
    expect(status(s, 'side')).toMatchObject({ started: false, ready: false, state: { running: {} } });
    expect(s.phase).toBe('Pending');
    outcomes.delete('side/startup');
    await advance(1_000);
    s = await step(p);
    expect(status(s, 'side')).toMatchObject({ started: true, ready: true });
    expect((await containers(p)).get('init-2')?.state).toBe('CONTAINER_RUNNING');
    expect(cond(s, 'Initialized')).toMatchObject({ status: 'False', message: 'containers with incomplete status: [init-2]' });
    await exit(p, 'init-2', 0);
    s = await step(p);
    const now = await containers(p);
    expect(now.get('main')?.state).toBe('CONTAINER_RUNNING');
    expect(now.get('side')?.state).toBe('CONTAINER_RUNNING');
    s = await step(p);
    expect(s.phase).toBe('Running');
    expect(cond(s, 'Initialized').status).toBe('True');
    expect(cond(s, 'Ready').status).toBe('True');
  });

  it('an exited sidecar restarts under restartPolicy Never, with the crash-loop back-off; a failed liveness probe kills it', async () => {
    const p = pod({ restartPolicy: 'Never', initContainers: [side('side', { livenessProbe: probe })], containers: [c('main')] });
    await step(p);
    await step(p);
    expect((await containers(p)).get('main')?.state).toBe('CONTAINER_RUNNING');
    await exit(p, 'side', 1);
    let s = await step(p);
    expect((await containers(p)).get('side')).toMatchObject({ state: 'CONTAINER_RUNNING', attempt: 1 });
    await exit(p, 'side', 0);
    s = await step(p);
    // the second restart waits out the back-off: CrashLoopBackOff, the exit kept as lastState
    expect(status(s, 'side')).toMatchObject({ restartCount: 1, started: false, ready: false, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 0 } } });
    expect(s.phase).toBe('Running');
    await advance(10_000);
    s = await step(p);
    expect(status(s, 'side')).toMatchObject({ restartCount: 2, state: { running: {} } });
    // a failing liveness probe kills and restarts it (after the back-off), with kubelet's init-container message
    outcomes.set('side/liveness', 'failure');
    await advance(1_000);
    await advance(1_000);
    await advance(1_000);
    await step(p);
    outcomes.delete('side/liveness');
    expect(events.some((e) => e.reason === 'Killing' && e.message === 'Init container side failed liveness probe' && e.ref.fieldPath === 'spec.initContainers{side}')).toBe(true);
    await advance(20_000);
    s = await step(p);
    expect(status(s, 'side')).toMatchObject({ restartCount: 3, state: { running: {} } });
    expect((await containers(p)).get('main')).toMatchObject({ state: 'CONTAINER_RUNNING', attempt: 0 });
  });

  it('a sidecar\'s readiness counts for the pod\'s Ready and ContainersReady (named first)', async () => {
    outcomes.set('side/readiness', 'failure');
    outcomes.set('main/readiness', 'failure');
    const p = pod({ initContainers: [side('side', { readinessProbe: probe })], containers: [c('main', { readinessProbe: probe })] });
    await step(p);
    await step(p);
    await advance(1_000);
    let s = await step(p);
    expect(s.phase).toBe('Running');
    expect(cond(s, 'ContainersReady')).toMatchObject({ status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [side main]' });
    outcomes.delete('main/readiness');
    await advance(1_000);
    s = await step(p);
    expect(cond(s, 'Ready')).toMatchObject({ status: 'False', message: 'containers with unready status: [side]' });
    expect(status(s, 'side')).toMatchObject({ started: true, ready: false });
    outcomes.delete('side/readiness');
    await advance(1_000);
    s = await step(p);
    expect(cond(s, 'Ready').status).toBe('True');
    expect(status(s, 'side').ready).toBe(true);
  });

  it('a Never pod whose main container finished is Succeeded (Failed) by it alone; its sidecars are stopped, not restarted', async () => {
    for (const [code, phase] of [[0, 'Succeeded'], [3, 'Failed']] as const) {
      const p = pod({ restartPolicy: 'Never', initContainers: [side('side')], containers: [c('main')] });
      await step(p);
      await step(p);
      await exit(p, 'main', code);
      let s = await step(p);
      expect(s.phase).toBe(phase);
      expect(status(s, 'side')).toMatchObject({ restartCount: 0, state: { terminated: {} } });
      expect(status(s, 'main').state.terminated.exitCode).toBe(code);
      s = await step(p);
      expect((await containers(p)).get('side')).toMatchObject({ state: 'CONTAINER_EXITED', attempt: 0 });
      // a sync that still sees it Running (a watch event older than the status written) does not start it over in a new sandbox
      p.status = { ...(p.status as Obj), phase: 'Running' };
      s = await step(p);
      expect(s.phase).toBe(phase);
      expect([...sim.state.sandboxes.values()].filter((sb) => sb.config.metadata.uid === p.metadata.uid)).toHaveLength(1);
      expect((await containers(p)).get('side')).toMatchObject({ state: 'CONTAINER_EXITED', attempt: 0 });
    }
    // an init container after the sidecar fails under Never: the pod fails and the sidecar is stopped
    const p = pod({ restartPolicy: 'Never', initContainers: [side('side'), c('init')], containers: [c('main')] });
    await step(p);
    await step(p);
    await exit(p, 'init', 1);
    const s = await step(p);
    expect(s.phase).toBe('Failed');
    expect((await containers(p)).get('side')?.state).toBe('CONTAINER_EXITED');
    expect((await containers(p)).has('main')).toBe(false);
    // the status may say Failed before a sync saw the failure (the init container exited in between): the
    // next sync of the terminal pod still stops what runs
    const q = pod({ restartPolicy: 'Never', initContainers: [side('side'), c('init')], containers: [c('main')] });
    await step(q);
    await step(q);
    q.status = { ...(q.status as Obj), phase: 'Failed' };
    await syncer.sync(q);
    expect((await containers(q)).get('side')?.state).toBe('CONTAINER_EXITED');
  });

  it('a stopping pod stops its main containers first, then its sidecars in reverse init order, with what is left of the grace period', async () => {
    const p = pod({ initContainers: [side('side-1'), c('init'), side('side-2')], containers: [c('main', { lifecycle: { preStop: { sleep: { seconds: 5 } } } }), c('other')] });
    for (let i = 0; i < 3; i++) await step(p);
    await exit(p, 'init', 0);
    await step(p);
    await step(p);
    expect([...(await containers(p)).values()].filter((x) => x.state === 'CONTAINER_RUNNING')).toHaveLength(4);
    stops.length = 0;
    let done = false;
    const killing = syncer.kill(p.metadata.uid!, 30, p).then(() => (done = true));
    for (let i = 0; i < 20 && !done; i++) {
      await new Promise((r) => setTimeout(r, 20));
      await advance(1_000);
    }
    await killing;
    expect(stops.map((x) => x.name)).toEqual(['other', 'main', 'side-2', 'side-1']);
    // main: 30 s less its 5 s preStop hook; each sidecar waited those 5 s for its turn
    expect(stops.find((x) => x.name === 'main')!.timeout).toBe(25);
    expect(stops.find((x) => x.name === 'side-2')!.timeout).toBe(25);
  });

  it('a failed postStart hook kills the container, which waits with PostStartHookError and the hook\'s message until restarted', async () => {
    const p = pod({ restartPolicy: 'Always', containers: [c('main', { lifecycle: { postStart: { exec: { command: ['sh', '-c', 'echo no; exit 3'] } } } })] });
    const s = await step(p);
    const main = status(s, 'main');
    expect(main.state.waiting.reason).toBe('PostStartHookError');
    expect(main.state.waiting.message).toMatch(/^Exec lifecycle hook \(\[sh -c echo no; exit 3\]\) for Container "main" in Pod "p\d+_default\(uid-\d+\)" failed - error: command 'sh -c echo no; exit 3' exited with 3: , message: "no\\n"$/);
    expect(main.lastState.terminated).toBeDefined();
    expect(events.filter((e) => e.ref.fieldPath === 'spec.containers{main}' && e.ref.name === p.metadata.name).map((e) => `${e.reason} ${e.message}`)).toEqual(
      expect.arrayContaining(['FailedPostStartHook PostStartHook failed', 'Killing FailedPostStartHook']),
    );
    // under restartPolicy Never it is not restarted: it stays terminated
    const q = pod({ restartPolicy: 'Never', containers: [c('main', { lifecycle: { postStart: { exec: { command: ['sh', '-c', 'exit 3'] } } } })] });
    const t = await step(q);
    expect(status(t, 'main').state.terminated).toBeDefined();
    expect(t.phase).toBe('Failed');
  });
});
