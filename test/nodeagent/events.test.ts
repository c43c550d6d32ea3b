// The agent's Event recorder and client-go's correlator on a simulated clock:
// counting repeats as patches of one Event, aggregation of similar events,
// the per-object spam filter (the count still rises while writes are
// filtered), 404 → create, retries without a connection, the queue bound, and
// kubelet's texts. The real server and agent are in events-agent.test.ts.
import { SimulatedClock } from 'xstate';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/nodeagent/api-client.js';
import type { Clock } from '../../src/nodeagent/clock.js';
import { type CoreEvent, EventCorrelator } from '../../src/nodeagent/events/correlator.js';
import { conditionEvent, containerRef, goDuration, msg, nodeRef } from '../../src/nodeagent/events/kubelet-events.js';
import { EventRecorder } from '../../src/nodeagent/events/recorder.js';
import { pullPolicy } from '../../src/nodeagent/images.js';
import { RuntimeCallError } from '../../src/nodeagent/runtime/client.js';

const T0 = Date.UTC(2026, 10, 28, 4, 0, 0);

function simClock() {
  const sim = new SimulatedClock();
  sim.set(T0);
  const clock: Clock = { now: () => sim.now(), setTimeout: (f, ms) => sim.setTimeout(f, ms), clearTimeout: (id) => sim.clearTimeout(id as number) };
  return { sim, clock };
}

interface Call {
  method: string;
  path: string;
  body: Record<string, unknown>;
  contentType?: string;
}

/** a recording double of the two API calls the recorder makes: stores Events like a server would */
function fakeApi() {
  const calls: Call[] = [];
  const store = new Map<string, CoreEvent>();
  let rv = 0;
  let down = 0;
  const api = {
    calls,
    store,
    /** the next n calls fail as a refused connection would */
    failNext(n: number) {
      down = n;
    },
    async call<T>(method: string, path: string, body?: unknown, contentType?: string): Promise<T> {
      calls.push({ method, path, body: body as Record<string, unknown>, contentType });
      if (down > 0 && down--) throw new Error('connect ECONNREFUSED');
      const name = decodeURIComponent(path.split('/').pop()!);
      const e = store.get(name);
      if (!e) throw new ApiError(404, 'NotFound', `events "${name}" not found`);
      Object.assign(e, body as object, { metadata: { ...e.metadata, resourceVersion: String(++rv) } });
      return structuredClone(e) as T;
    },
    async create<T>(path: string, obj: unknown): Promise<T> {
      calls.push({ method: 'POST', path, body: obj as Record<string, unknown> });
      if (down > 0 && down--) throw new Error('connect ECONNREFUSED');
      const e = structuredClone(obj) as CoreEvent;
      if (store.has(e.metadata.name)) throw new ApiError(409, 'AlreadyExists', 'exists');
      e.metadata.resourceVersion = String(++rv);
      store.set(e.metadata.name, e);
      return structuredClone(e) as T;
    },
  };
  return api;
}

const pod = { metadata: { name: 'web', namespace: 'team', uid: 'u-1', resourceVersion: '7' } };

describe('kubelet texts', () => {
  it('Go durations, refs and messages as kubelet 1.32 writes them', () => {
    expect([0, 313, 1000, 1594, 80_000, 300_000, 61_500, 3_600_000].map(goDuration)).toEqual(['0s', '313ms', '1s', '1.594s', '1m20s', '5m0s', '1m1.5s', '1h0m0s']);
    expect(containerRef(pod, 'initContainers', 'setup')).toEqual({ kind: 'Pod', apiVersion: 'v1', namespace: 'team', name: 'web', uid: 'u-1', resourceVersion: '7', fieldPath: 'spec.initContainers{setup}' });
    expect(nodeRef('node-1')).toEqual({ kind: 'Node', name: 'node-1', uid: 'node-1' });
    expect(msg.backOff('app', pod)).toBe('Back-off restarting failed container app in pod web_team(u-1)');
    expect(msg.backOffWaiting(80_000, 'app', pod)).toBe('back-off 1m20s restarting failed container=app pod=web_team(u-1)');
    expect(msg.pulled('nginx:1.27', 1594, 1594, 123)).toBe('Successfully pulled image "nginx:1.27" in 1.594s (1.594s including waiting). Image size: 123 bytes.');
    expect(msg.present('nginx:1.27')).toBe('Container image "nginx:1.27" already present on machine');
    expect(msg.nodeStatus('node-1', 'NodeReady')).toBe('Node node-1 status is now: NodeReady');
    expect([conditionEvent('Ready', 'True'), conditionEvent('Ready', 'False'), conditionEvent('DiskPressure', 'False'), conditionEvent('NetworkUnavailable', 'True'), conditionEvent('Ready', 'Unknown')])
      .toEqual(['NodeReady', 'NodeNotReady', 'NodeHasNoDiskPressure', undefined, undefined]);
  });

  it('runtime errors print as a Go gRPC client prints them (kubelet\'s pull failure messages)', () => {
    expect([[5, 'no such image'], [3, 'bad ref'], [4, 'slow'], [2, 'x']].map(([c, d]) => new RuntimeCallError('PullImage', c as number, d as string).goError)).toEqual([
      'rpc error: code = NotFound desc = no such image',
      'rpc error: code = InvalidArgument desc = bad ref',
      'rpc error: code = DeadlineExceeded desc = slow',
      'rpc error: code = Unknown desc = x',
    ]);
  });

  it('image pull policy defaults from the tag, as the API defaults it', () => {
    expect(['busybox', 'busybox:latest', 'busybox:1.36', 'reg:5000/busybox', 'reg:5000/busybox:1', 'busybox@sha256:ab'].map((i) => pullPolicy(i)))
      .toEqual(['Always', 'Always', 'IfNotPresent', 'Always', 'IfNotPresent', 'IfNotPresent']);
    expect(pullPolicy('busybox', 'Never')).toBe('Never');
  });
});

describe('the recorder', () => {
  it('writes an Event as kubelet does, then a repeat as a strategic merge patch of the same Event', async () => {
    const { sim, clock } = simClock();
    const api = fakeApi();
    const r = new EventRecorder({ api, clock, host: 'node-1' });
    const ref = containerRef(pod, 'containers', 'app');
    r.event(ref, 'Warning', 'BackOff', msg.backOff('app', pod));
    await r.flush();
    expect(api.calls).toHaveLength(1);
    expect(api.calls[0]!.path).toBe('/api/v1/namespaces/team/events');
    const first = api.calls[0]!.body as unknown as CoreEvent;
    expect(first).toMatchObject({
      involvedObject: ref,
      reason: 'BackOff',
      type: 'Warning',
      count: 1,
      source: { component: 'kubelet', host: 'node-1' },
      reportingComponent: 'kubelet',
      reportingInstance: 'node-1',
      firstTimestamp: '2026-11-28T04:00:00Z',
      lastTimestamp: '2026-11-28T04:00:00Z',
      eventTime: null,
    });
    expect(first.metadata.name).toBe(`web.${(BigInt(T0) * 1_000_000n).toString(16)}`);
    sim.increment(10_000);
    r.event(ref, 'Warning', 'BackOff', msg.backOff('app', pod));
    sim.increment(10_000);
    r.event(ref, 'Warning', 'BackOff', msg.backOff('app', pod));
    await r.flush();
    expect(api.calls.slice(1).map((c) => [c.method, c.path, c.contentType, c.body])).toEqual([
      ['PATCH', `/api/v1/namespaces/team/events/${first.metadata.name}`, 'application/strategic-merge-patch+json', { count: 2, lastTimestamp: '2026-11-28T04:00:10Z', message: msg.backOff('app', pod) }],
      ['PATCH', `/api/v1/namespaces/team/events/${first.metadata.name}`, 'application/strategic-merge-patch+json', { count: 3, lastTimestamp: '2026-11-28T04:00:20Z', message: msg.backOff('app', pod) }],
    ]);
    expect(api.store.size).toBe(1);
    expect([...api.store.values()][0]).toMatchObject({ count: 3, firstTimestamp: '2026-11-28T04:00:00Z', lastTimestamp: '2026-11-28T04:00:20Z' });
  });

  it('a node Event goes to the default namespace; events of the same millisecond get distinct names', async () => {
    const { clock } = simClock();
    const api = fakeApi();
    const r = new EventRecorder({ api, clock, host: 'node-1' });
    r.event(nodeRef('node-1'), 'Normal', 'Starting', msg.starting());
    r.event(nodeRef('node-1'), 'Normal', 'NodeHasSufficientMemory', msg.nodeStatus('node-1', 'NodeHasSufficientMemory'));
    await r.flush();
    expect(api.calls.map((c) => c.path)).toEqual(['/api/v1/namespaces/default/events', '/api/v1/namespaces/default/events']);
    expect(api.store.size).toBe(2);
  });

  it('a patch of a deleted Event creates it again, keeping the count', async () => {
    const { clock } = simClock();
    const api = fakeApi();
    const r = new EventRecorder({ api, clock, host: 'node-1' });
    const ref = containerRef(pod, 'containers', 'app');
    r.event(ref, 'Normal', 'Pulled', msg.present('x:1'));
    await r.flush();
    api.store.clear();
    r.event(ref, 'Normal', 'Pulled', msg.present('x:1'));
    await r.flush();
    expect(api.calls.map((c) => c.method)).toEqual(['POST', 'PATCH', 'POST']);
    expect([...api.store.values()][0]).toMatchObject({ count: 2 });
  });

  it('retries a write that found no connection, 10 s apart, never blocking event()', async () => {
    const { sim, clock } = simClock();
    const api = fakeApi();
    const r = new EventRecorder({ api, clock, host: 'node-1' });
    api.failNext(2);
    r.event(nodeRef('node-1'), 'Normal', 'Starting', msg.starting());
    const tick = () => new Promise((res) => setImmediate(res));
    await tick();
    expect([api.calls.length, api.store.size]).toEqual([1, 0]);
    // nothing is tried again before the 10 s are up
    sim.increment(9_999);
    await tick();
    expect(api.calls.length).toBe(1);
    sim.increment(1);
    await tick();
    expect(api.calls.length).toBe(2);
    sim.increment(10_000);
    await r.flush();
    expect(api.calls).toHaveLength(3);
    expect(api.store.size).toBe(1);
  });

  it('gives up after 12 tries, and drops what exceeds the queue', async () => {
    const { sim, clock } = simClock();
    const api = fakeApi();
    const r = new EventRecorder({ api, clock, host: 'node-1', queueLimit: 3 });
    api.failNext(1_000);
    for (let i = 0; i < 5; i++) r.event(nodeRef('node-1'), 'Normal', `R${i}`, 'm');
    // the first is taken off the queue by the writer; three wait; one is dropped
    expect(r.stats.dropped).toBe(1);
    const done = r.flush();
    for (let i = 0; i < 60 && api.calls.length < 48; i++) {
      sim.increment(10_000);
      await new Promise((res) => setImmediate(res));
    }
    await done;
    expect(api.calls).toHaveLength(48);
    expect(r.stats.failed).toBe(4);
  });

  it('eventRecordQPS/eventBurst delay writes past the burst (none dropped)', async () => {
    const { sim, clock } = simClock();
    const api = fakeApi();
    const r = new EventRecorder({ api, clock, host: 'node-1', qps: 2, burst: 2 });
    for (let i = 0; i < 5; i++) r.event(nodeRef('node-1'), 'Normal', `R${i}`, 'm');
    const tick = () => new Promise((res) => setImmediate(res));
    await tick();
    expect(api.calls).toHaveLength(2);
    sim.increment(499);
    await tick();
    expect(api.calls).toHaveLength(2);
    sim.increment(1);
    await tick();
    expect(api.calls).toHaveLength(3);
    sim.increment(1_000);
    await tick();
    await tick();
    await r.flush();
    expect(api.calls).toHaveLength(5);
    expect(r.stats).toMatchObject({ dropped: 0, filtered: 0, created: 5 });
  });

  it('event() returns at once while the API hangs: the caller never waits for a write', async () => {
    const { clock } = simClock();
    const api = fakeApi();
    let pending = 0;
    api.create = () => {
      pending++;
      return new Promise<never>(() => {});
    };
    const r = new EventRecorder({ api, clock, host: 'node-1', queueLimit: 10 });
    for (let i = 0; i < 20; i++) expect(r.event(containerRef(pod, 'containers', 'app'), 'Normal', `R${i}`, 'm')).toBeUndefined();
    await new Promise((res) => setImmediate(res));
    // one write in flight, ten queued, the rest dropped; nothing threw
    expect([pending, r.stats.dropped]).toEqual([1, 9]);
    r.stop();
  });

  it('a refused write (a Status error) is not retried', async () => {
    const { clock } = simClock();
    const api = fakeApi();
    const r = new EventRecorder({ api, clock, host: 'node-1' });
    api.create = async () => {
      throw new ApiError(403, 'Forbidden', 'namespace is terminating');
    };
    r.event(containerRef(pod, 'containers', 'app'), 'Normal', 'Created', msg.created('app'));
    await r.flush();
    expect(r.stats.failed).toBe(1);
  });
});

describe('the correlator (client-go rules)', () => {
  const ev = (reason: string, message: string, name = 'web'): CoreEvent => ({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `${name}.${reason}.${message}`, namespace: 'team' },
    involvedObject: { kind: 'Pod', apiVersion: 'v1', namespace: 'team', name, uid: `uid-${name}` },
    reason,
    message,
    source: { component: 'kubelet', host: 'node-1' },
    firstTimestamp: 'T',
    lastTimestamp: 'T',
    count: 1,
    type: 'Normal',
    eventTime: null,
    reportingComponent: 'kubelet',
    reportingInstance: 'node-1',
  });

  it('filters past 25 events per object, refills one per 5 minutes, and the count keeps rising meanwhile', () => {
    const c = new EventCorrelator();
    let t = T0;
    const results = [];
    for (let i = 0; i < 30; i++) {
      results.push(c.correlate(ev('BackOff', 'same'), (t += 1000), 'T'));
    }
    expect(results.filter((r) => r.skip)).toHaveLength(5);
    expect(results.slice(0, 25).every((r) => !r.skip)).toBe(true);
    // another object has its own bucket
    expect(c.correlate(ev('BackOff', 'same', 'other'), t, 'T').skip).toBe(false);
    // another reason about the same object shares the bucket (the spam key has no reason)
    expect(c.correlate(ev('Started', 'x'), t, 'T').skip).toBe(true);
    t += 300_000;
    const next = c.correlate(ev('BackOff', 'same'), t, 'T');
    expect(next.skip).toBe(false);
    // the 31st occurrence: the 5 filtered ones were counted
    expect(next.skip === false && next.patch?.count).toBe(31);
    expect(c.correlate(ev('BackOff', 'same'), t, 'T').skip).toBe(true);
  });

  it('combines the 10th similar event (same reason, new message) into one Event counted up', () => {
    const c = new EventCorrelator({ burst: 1000 });
    const out = [];
    for (let i = 0; i < 12; i++) out.push(c.correlate(ev('Failed', `message ${i}`), T0 + i, 'T'));
    expect(out.slice(0, 9).every((r) => !r.skip && !r.patch && !r.event.message.startsWith('(combined'))).toBe(true);
    const tenth = out[9]!;
    expect(tenth.skip === false && tenth.event.message).toBe('(combined from similar events): message 9');
    expect(tenth.skip === false && tenth.patch).toBeUndefined();
    const eleventh = out[10]!;
    expect(eleventh.skip === false && [eleventh.event.metadata.name, eleventh.patch]).toEqual([
      tenth.skip === false && tenth.event.metadata.name,
      { count: 2, lastTimestamp: 'T', message: '(combined from similar events): message 10' },
    ]);
    // after 10 quiet minutes the group starts over
    const later = c.correlate(ev('Failed', 'message x'), T0 + 11 + 600_001, 'T');
    expect(later.skip === false && later.event.message).toBe('message x');
  });
});
