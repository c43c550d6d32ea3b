// Overload protection (src/gateway/flowcontrol, issue #15): per-level
// concurrency, fair queuing across users, 429 before any work, the admin
// identity exempt; on a simulated clock.
import { describe, expect, it } from 'vitest';
import { StatusError } from '../../src/core/errors.js';
import { ManualClock } from '../../src/core/clock.js';
import { classifier, type FlowRequest } from '../../src/gateway/flowcontrol/classify.js';
import { type Admitted, FlowControl, type FlowControlOptions } from '../../src/gateway/flowcontrol/flow-control.js';

const user = (username: string, ...groups: string[]) => ({ username, groups: [...groups, 'system:authenticated'] });
const req = (u: FlowRequest['user'], verb = 'get', resource = 'configmaps', namespace = 'default', apiGroup = ''): FlowRequest => ({
  user: u,
  isResourceRequest: true,
  verb,
  apiGroup,
  resource,
  namespace,
});

function make(o: Partial<FlowControlOptions> = {}): { fc: FlowControl; clock: ManualClock } {
  const clock = new ManualClock(1000);
  const fc = new FlowControl({
    maxRequestsInflight: 4,
    maxMutatingRequestsInflight: 4,
    enablePriorityAndFairness: true,
    requestTimeoutMs: 60_000,
    systemNamespace: 'orch-system',
    nodeLeaseNamespace: 'orch-node-lease',
    clock,
    ...o,
  });
  return { fc, clock };
}

const limitOf = (fc: FlowControl, level: string): number => fc.stats().find((s) => s.name === level)!.limit;

async function refusal(admit: () => Admitted | Promise<Admitted>): Promise<StatusError> {
  try {
    await admit();
  } catch (e) {
    return e as StatusError;
  }
  throw new Error('admitted, expected a refusal');
}

describe('classification', () => {
  const classify = classifier({ systemNamespace: 'orch-system', nodeLeaseNamespace: 'orch-node-lease' });
  it('puts each kind of caller at its level', () => {
    expect(classify(req(user('admin', 'system:masters'))).level).toBe('exempt');
    expect(classify(req(user('system:node:n1', 'system:nodes'), 'update', 'leases', 'orch-node-lease', 'coordination.orch.io')).level).toBe('node-high');
    expect(classify(req(user('system:node:n1', 'system:nodes'), 'patch', 'nodes', '', '')).level).toBe('node-high');
    expect(classify(req(user('system:node:n1', 'system:nodes'), 'get', 'secrets')).level).toBe('system');
    expect(classify(req(user('system:serviceaccount:orch-system:ctl', 'system:serviceaccounts', 'system:serviceaccounts:orch-system'), 'update', 'leases', 'orch-system', 'coordination.orch.io')).level).toBe('leader-election');
    expect(classify(req(user('system:serviceaccount:orch-system:ctl', 'system:serviceaccounts', 'system:serviceaccounts:orch-system'))).level).toBe('workload-high');
    expect(classify(req(user('system:serviceaccount:app:x', 'system:serviceaccounts', 'system:serviceaccounts:app'))).level).toBe('workload-low');
    expect(classify(req(user('alice'))).level).toBe('global-default');
    expect(classify(req({ username: 'system:anonymous', groups: ['system:unauthenticated'] })).level).toBe('catch-all');
    expect(classify(req(user('alice'))).flow).toBe('alice');
  });
});

describe('FlowControl', () => {
  it('runs up to the level limit at once, queues the rest and starts them as others finish', async () => {
    const { fc } = make();
    const limit = limitOf(fc, 'global-default');
    const running = Array.from({ length: limit }, () => fc.admit(req(user('alice'))) as Admitted);
    for (const r of running) expect(r.classification.level).toBe('global-default');
    const queued = fc.admit(req(user('alice')));
    expect(queued).toBeInstanceOf(Promise);
    expect(fc.stats().find((s) => s.name === 'global-default')).toMatchObject({ inFlight: limit, waiting: 1 });
    running[0]!.release();
    running[0]!.release(); // a second release is ignored
    const started = await queued;
    expect(fc.stats().find((s) => s.name === 'global-default')).toMatchObject({ inFlight: limit, waiting: 0 });
    started.release();
    for (const r of running.slice(1)) r.release();
    expect(fc.stats().find((s) => s.name === 'global-default')!.inFlight).toBe(0);
  });

  it('serves a light user before a heavy user of the same level has drained its backlog', async () => {
    const { fc } = make();
    const limit = limitOf(fc, 'global-default');
    const running = Array.from({ length: limit }, () => fc.admit(req(user('heavy'))) as Admitted);
    const order: string[] = [];
    const pool: Admitted[] = [...running];
    const enqueue = (who: string): void => {
      void Promise.resolve(fc.admit(req(user(who)))).then((a) => {
        order.push(who);
        pool.push(a);
      });
    };
    for (let i = 0; i < 40; i++) enqueue('heavy');
    enqueue('light');
    enqueue('light');
    // finish requests one at a time, as a busy server would
    while (order.length < 42) {
      pool.shift()!.release();
      await new Promise((r) => setImmediate(r));
    }
    const lastLight = order.lastIndexOf('light');
    expect(lastLight).toBeGreaterThanOrEqual(0);
    // FIFO would serve the light user 41st and 42nd
    expect(lastLight).toBeLessThan(20);
  });

  it('refuses with 429 TooManyRequests and Retry-After when the queue is full', async () => {
    const { fc } = make();
    const limit = limitOf(fc, 'global-default');
    for (let i = 0; i < limit; i++) fc.admit(req(user('alice')));
    // one flow uses at most handSize queues of 50
    const waiting: Promise<Admitted>[] = [];
    let refused: StatusError | undefined;
    for (let i = 0; i < 6 * 50 + 1 && !refused; i++) {
      try {
        const p = fc.admit(req(user('alice')));
        if (p instanceof Promise) waiting.push(p);
      } catch (e) {
        refused = e as StatusError;
      }
    }
    expect(refused).toBeInstanceOf(StatusError);
    expect(refused!.code).toBe(429);
    expect(refused!.toStatus()).toMatchObject({ reason: 'TooManyRequests', details: { retryAfterSeconds: 1 } });
    expect(refused!.headers['Retry-After']).toBe('1');
    expect(fc.stats().find((s) => s.name === 'global-default')!.rejected['queue-full']).toBe(1);
  });

  it('refuses a request that waited longer than a quarter of the request timeout', async () => {
    const { fc, clock } = make({ requestTimeoutMs: 40_000 });
    const limit = limitOf(fc, 'global-default');
    for (let i = 0; i < limit; i++) fc.admit(req(user('alice')));
    const waiting = fc.admit(req(user('bob')));
    clock.advance(9_999);
    expect(fc.stats().find((s) => s.name === 'global-default')!.waiting).toBe(1);
    clock.advance(1);
    const e = await refusal(() => waiting);
    expect(e.code).toBe(429);
    expect(e.headers['X-Orch-Pf-Rejection']).toBe('time-out');
    expect(fc.stats().find((s) => s.name === 'global-default')!.waiting).toBe(0);
  });

  it('refuses anonymous traffic beyond its small level at once, and never the admin identity', async () => {
    const { fc } = make();
    const anon = { username: 'system:anonymous', groups: ['system:unauthenticated'] };
    const limit = limitOf(fc, 'catch-all');
    for (let i = 0; i < limit; i++) fc.admit(req(anon));
    const e = await refusal(() => fc.admit(req(anon)));
    expect(e.headers['X-Orch-Pf-Rejection']).toBe('concurrency-limit');
    for (let i = 0; i < 1000; i++) expect((fc.admit(req(user('admin', 'system:masters'))) as Admitted).classification.level).toBe('exempt');
  });

  it('without priority and fairness keeps the read-only and mutating limits apart', async () => {
    const { fc } = make({ enablePriorityAndFairness: false, maxRequestsInflight: 2, maxMutatingRequestsInflight: 1 });
    fc.admit(req(user('alice'), 'create'));
    expect((await refusal(() => fc.admit(req(user('bob'), 'patch')))).code).toBe(429);
    fc.admit(req(user('alice'), 'get'));
    fc.admit(req(user('alice'), 'list'));
    expect((await refusal(() => fc.admit(req(user('bob'), 'get')))).code).toBe(429);
  });
});
