// The prober's decisions on a simulated clock (kubelet's worker.go rules,
// docs/nodeagent.md "Probes"): thresholds, initial delay, startup gating,
// liveness failure → kill, readiness flapping, errored runs thrown away, and
// kubelet's event texts. Probe runs are scripted; no real time passes.
import { SimulatedClock } from 'xstate';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/nodeagent/api-client.js';
import type { Clock } from '../../src/nodeagent/clock.js';
import { ProbeManager } from '../../src/nodeagent/probes/manager.js';
import { type Outcome, type ProbeKind, type ProbeSpec, timing } from '../../src/nodeagent/probes/types.js';
import { type ContainerView, ProbeWorker, type ProbeResult } from '../../src/nodeagent/probes/worker.js';
import type { ContainerStatus } from '../../src/nodeagent/runtime/types.js';

const T0 = Date.UTC(2026, 0, 1);
function simClock(): { sim: SimulatedClock; clock: Clock } {
  const sim = new SimulatedClock();
  sim.set(T0);
  return { sim, clock: { now: () => sim.now(), setTimeout: (f, ms) => sim.setTimeout(f, ms), clearTimeout: (id) => sim.clearTimeout(id as number) } };
}
/** lets the awaited probe runs settle */
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};
const ok: Outcome = { result: 'success', output: '' };
const bad: Outcome = { result: 'failure', output: 'HTTP probe failed with statuscode: 500' };

function harness(kind: ProbeKind, probe: ProbeSpec, view: Partial<ContainerView> = {}) {
  const { sim, clock } = simClock();
  const v: ContainerView = { id: 'c1', running: true, exited: false, startedAtMs: T0, started: true, restartable: true, deleting: false, terminal: false, ...view };
  const script: Outcome[] = [];
  let runs = 0;
  const results: ProbeResult[] = [];
  const w = new ProbeWorker({
    kind,
    timing: timing(probe, kind),
    clock,
    view: () => v,
    run: () => {
      runs += 1;
      return Promise.resolve(script.shift() ?? ok);
    },
    onResult: (_id, r) => results.push(r),
  });
  /** advance by whole periods, letting each run settle */
  const periods = async (k: number) => {
    for (let i = 0; i < k; i++) {
      sim.increment((probe.periodSeconds ?? 10) * 1000);
      await settle();
    }
  };
  return { sim, v, w, script, results, runs: () => runs, periods };
}

describe('probe worker (simulated clock)', () => {
  it('readiness starts not ready; success takes successThreshold runs in a row, failure failureThreshold', async () => {
    const h = harness('readiness', { periodSeconds: 5, successThreshold: 2, failureThreshold: 3 });
    h.w.start();
    await settle();
    expect(h.runs()).toBe(1);
    expect(h.w.resultFor('c1')).toBe('failure'); // one success is not enough
    await h.periods(1);
    expect(h.w.resultFor('c1')).toBe('success');
    h.script.push(bad, bad);
    await h.periods(2);
    expect(h.w.resultFor('c1')).toBe('success'); // two failures of three
    h.script.push(bad);
    await h.periods(1);
    expect(h.w.resultFor('c1')).toBe('failure');
    // flapping: a success between failures resets the run, the result holds
    h.script.push(ok, bad, ok, bad);
    await h.periods(4);
    expect(h.w.resultFor('c1')).toBe('failure');
    h.script.push(ok, ok);
    await h.periods(2);
    expect(h.w.resultFor('c1')).toBe('success');
    expect(h.runs()).toBe(11);
    h.w.stop();
  });

  it('waits initialDelaySeconds after the container started before the first run', async () => {
    const h = harness('liveness', { periodSeconds: 1, initialDelaySeconds: 5 });
    h.w.start();
    await h.periods(4);
    expect(h.runs()).toBe(0);
    await h.periods(1);
    expect(h.runs()).toBe(1);
    h.w.stop();
  });

  it('liveness: failureThreshold failures flip it, then it holds until a new container; the new one starts live', async () => {
    const h = harness('liveness', { periodSeconds: 1, failureThreshold: 2 });
    h.w.start();
    await settle();
    expect(h.w.resultFor('c1')).toBe('success');
    h.script.push(bad, bad);
    await h.periods(2);
    expect(h.w.resultFor('c1')).toBe('failure');
    const before = h.runs();
    await h.periods(5);
    expect(h.runs()).toBe(before); // on hold: the container is being replaced
    Object.assign(h.v, { id: 'c2' });
    await h.periods(1);
    expect(h.w.resultFor('c2')).toBe('success');
    expect(h.w.resultFor('c1')).toBeUndefined();
    expect(h.runs()).toBe(before + 1);
    h.w.stop();
  });

  it('startup gates the others, and rests once the container started', async () => {
    const live = harness('liveness', { periodSeconds: 1 }, { started: false });
    live.w.start();
    await live.periods(3);
    expect(live.runs()).toBe(0);
    live.v.started = true;
    await live.periods(1);
    expect(live.runs()).toBe(1);
    live.w.stop();

    const st = harness('startup', { periodSeconds: 1, failureThreshold: 30 }, { started: false });
    st.w.start();
    await settle();
    expect(st.w.resultFor('c1')).toBe('success');
    st.v.started = true;
    await st.periods(3);
    expect(st.runs()).toBe(1);
    st.w.stop();
  });

  it('throws errored runs away; a stopped container reads as failure; a terminated one under Never stops the worker', async () => {
    const h = harness('readiness', { periodSeconds: 1, failureThreshold: 1 }, { restartable: false });
    h.w.start();
    await settle();
    expect(h.w.resultFor('c1')).toBe('success');
    h.script.push({ result: 'error', output: 'port http not found' }, { result: 'error', output: 'x' });
    await h.periods(2);
    expect(h.w.resultFor('c1')).toBe('success');
    Object.assign(h.v, { running: false, exited: true });
    await h.periods(1);
    expect(h.w.resultFor('c1')).toBe('failure');
    expect(h.w.done).toBe(true);
  });

  it('a pod being deleted: liveness goes quiet (success) and stops', async () => {
    const h = harness('liveness', { periodSeconds: 1, failureThreshold: 1 });
    h.w.start();
    await settle();
    h.v.deleting = true;
    h.script.push(bad);
    await h.periods(1);
    expect(h.w.resultFor('c1')).toBe('success');
    expect(h.w.done).toBe(true);
  });
});

describe('probe manager', () => {
  const status = (id: string, state: ContainerStatus['state'] = 'CONTAINER_RUNNING'): ContainerStatus =>
    ({ id, metadata: { name: 'app', attempt: 0 }, state, createdAt: 0, startedAt: T0 * 1_000_000, finishedAt: 0, exitCode: 0, image: null, imageRef: '', reason: '', message: '', labels: {}, annotations: {} });
  const pod = (containers: Record<string, unknown>[]): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default', uid: 'u1' }, spec: { containers } }) as unknown as KubeObject;

  function setup(container: Record<string, unknown>, outcomes: Partial<Record<ProbeKind, Outcome[]>>) {
    const { sim, clock } = simClock();
    const events: string[] = [];
    const changes: string[] = [];
    const kindOf = (p: ProbeSpec) => (p === container.startupProbe ? 'startup' : p === container.livenessProbe ? 'liveness' : 'readiness');
    const m = new ProbeManager({
      clock,
      runtime: { execSync: () => Promise.reject(new Error('unused')) },
      events: { event: (_ref, type, reason, message) => events.push(`${type} ${reason} ${message}`) },
      onChange: (uid) => changes.push(uid),
      run: (p, _c, _id, address) => {
        expect(address).toBe('127.9.9.9');
        return Promise.resolve(outcomes[kindOf(p)]?.shift() ?? ok);
      },
    });
    const p = pod([{ name: 'app', ...container }]);
    m.update(p, new Map([['app', status('c1')]]), '127.9.9.9');
    const step = async (ms: number) => {
      sim.increment(ms);
      await settle();
    };
    return { m, p, events, changes, step };
  }

  it('started/ready follow startup then readiness; a readiness failure is an Unhealthy event with kubelet’s text', async () => {
    const s = setup(
      { startupProbe: { tcpSocket: { port: 1235 }, periodSeconds: 1 }, readinessProbe: { httpGet: { port: 80 }, periodSeconds: 1, failureThreshold: 1 } },
      { startup: [bad], readiness: [ok, bad] },
    );
    await s.step(0);
    expect(s.m.containerState('u1', 'app', 'c1')).toEqual({ started: false, ready: false });
    await s.step(1000); // the startup probe succeeds
    expect(s.m.containerState('u1', 'app', 'c1')).toEqual({ started: true, ready: false });
    await s.step(0); // that asked for a readiness probe at once
    expect(s.m.containerState('u1', 'app', 'c1')).toEqual({ started: true, ready: true });
    await s.step(1000);
    expect(s.m.containerState('u1', 'app', 'c1')).toEqual({ started: true, ready: false });
    expect(s.events).toEqual(['Warning Unhealthy Startup probe failed: HTTP probe failed with statuscode: 500', 'Warning Unhealthy Readiness probe failed: HTTP probe failed with statuscode: 500']);
    expect(s.changes.length).toBeGreaterThan(0);
    expect(s.m.killReason('u1', 'app', 'c1')).toBeUndefined();
    s.m.stop();
  });

  it('a container without probes is started and ready; liveness failure names the container to kill', async () => {
    const s = setup({ livenessProbe: { exec: { command: ['cat', '/tmp/healthy'] }, periodSeconds: 2, failureThreshold: 2 } }, { liveness: [{ result: 'failure', output: 'cat: /tmp/healthy: No such file or directory\n' }, { result: 'failure', output: 'x' }] });
    await s.step(0);
    expect(s.m.containerState('u1', 'app', 'c1')).toEqual({ started: true, ready: true });
    expect(s.m.killReason('u1', 'app', 'c1')).toBeUndefined();
    await s.step(2000);
    expect(s.m.killReason('u1', 'app', 'c1')).toBe('liveness');
    expect(s.events[0]).toBe('Warning Unhealthy Liveness probe failed: cat: /tmp/healthy: No such file or directory\n');
    // the replacement container is live again
    s.m.update(s.p, new Map([['app', status('c2')]]), '127.9.9.9');
    await s.step(2000);
    expect(s.m.killReason('u1', 'app', 'c2')).toBeUndefined();
    s.m.remove('u1');
    expect(s.m.containerState('u1', 'app', 'c2')).toEqual({ started: true, ready: true });
  });

  it('a startup probe that runs out of failures kills; a redirect elsewhere is a ProbeWarning and counts as success', async () => {
    const s = setup(
      { startupProbe: { httpGet: { port: 80 }, periodSeconds: 1, failureThreshold: 2 }, readinessProbe: { httpGet: { port: 80 }, periodSeconds: 1 } },
      { startup: [bad, bad], readiness: [{ result: 'warning', output: 'Probe terminated redirects, Response body: ' }] },
    );
    await s.step(0);
    expect(s.m.killReason('u1', 'app', 'c1')).toBeUndefined();
    await s.step(1000);
    expect(s.m.killReason('u1', 'app', 'c1')).toBe('startup');
    expect(s.m.containerState('u1', 'app', 'c1').started).toBe(false);
    s.m.update(s.p, new Map([['app', status('c2')]]), '127.9.9.9');
    await s.step(1000); // the worker meets c2 and probes it: a success
    expect(s.m.containerState('u1', 'app', 'c2')).toEqual({ started: true, ready: false });
    await s.step(0);
    expect(s.m.containerState('u1', 'app', 'c2')).toEqual({ started: true, ready: true });
    expect(s.events.at(-1)).toBe('Warning ProbeWarning Readiness probe warning: Probe terminated redirects, Response body: ');
    s.m.stop();
  });
});
