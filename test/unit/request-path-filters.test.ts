// The filters the third request-path pass changed (docs/architecture.md
// "Third pass: the request path"): the deadline filter settles one promise by
// the work or the deadline, the impersonation filter passes requests without
// Impersonate-* headers straight on, and the audit filter builds the response
// object only for a request the policy records.
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { timeoutFilter } from '../../src/endpoints/filters/timeout.js';
import { impersonationFilter } from '../../src/endpoints/filters/impersonation.js';
import { auditFilter } from '../../src/endpoints/filters/audit.js';
import { asSubresource } from '../../src/endpoints/handlers/builtin-kinds.js';
import type { RequestState } from '../../src/endpoints/filters/state.js';
import type { HttpRequest, HttpResponse, PlainResponse } from '../../src/endpoints/http.js';
import type { RequestInfo } from '../../src/endpoints/request.js';
import type { Authorizer } from '../../src/auth/authz/types.js';
import { Auditor } from '../../src/audit/auditor.js';
import type { AuditEvent, AuditSink } from '../../src/audit/types.js';
import { parsePolicy } from '../../src/audit/policy.js';

const info: RequestInfo = { isResourceRequest: true, path: '/api/v1/namespaces/d/configmaps', verb: 'create', group: '', version: 'v1', namespace: 'd', resource: 'configmaps', subresource: '', name: '' };

function request(headers: [string, string][] = [], query = ''): HttpRequest {
  return { method: 'POST', path: info.path, query: new URLSearchParams(query), headers: new Map(headers), proxiedAddress: '', body: new TextEncoder().encode('{"metadata":{"name":"x"}}'), signal: new AbortController().signal };
}
const state = (http: HttpRequest): RequestState => ({ http, info, accept: { format: 'json', pretty: false }, user: { username: 'alice', groups: ['system:authenticated'] } });
const ok: PlainResponse = { status: 201, headers: [['Content-Type', 'application/json']], body: '{}' };

/** a promise and its settle functions */
function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe('deadline filter', () => {
  it('answers the work when it comes first and leaves no timer behind', async () => {
    const clock = new ManualClock();
    const work = deferred<HttpResponse>();
    const out = timeoutFilter(clock, 1000)(state(request()), () => work.promise);
    expect(clock.pending).toBe(1);
    work.resolve(ok);
    expect(await out).toBe(ok);
    expect(clock.pending).toBe(0);
  });

  it('passes the work\'s failure on and cancels the timer', async () => {
    const clock = new ManualClock();
    const out = timeoutFilter(clock, 1000)(state(request()), async () => {
      throw new Error('boom');
    });
    await expect(out).rejects.toThrow('boom');
    expect(clock.pending).toBe(0);
  });

  it('answers 504 at the deadline (?timeout= when shorter), aborts the signal and drops the later answer', async () => {
    const clock = new ManualClock();
    const work = deferred<HttpResponse>();
    let signal: AbortSignal | undefined;
    const out = timeoutFilter(clock, 60_000)(state(request([], 'timeout=2s')), (s) => {
      signal = s.http.signal;
      return work.promise;
    });
    clock.advance(1999);
    expect(signal!.aborted).toBe(false);
    clock.advance(1);
    const res = (await out) as PlainResponse;
    expect(res.status).toBe(504);
    expect(JSON.parse(res.body as string)).toMatchObject({ kind: 'Status', code: 504, reason: 'Timeout' });
    expect(signal!.aborted).toBe(true);
    work.resolve(ok);
    work.reject(new Error('late'));
    expect(await out).toBe(res);
  });

  it('gives a signal read after the deadline already aborted, and none to watches', async () => {
    const clock = new ManualClock();
    const work = deferred<HttpResponse>();
    let s0: RequestState | undefined;
    const out = timeoutFilter(clock, 10)(state(request()), (s) => {
      s0 = s;
      return work.promise;
    });
    clock.advance(10);
    expect(((await out) as PlainResponse).status).toBe(504);
    expect(s0!.http.signal.aborted).toBe(true);
    const watch = { ...state(request()), info: { ...info, verb: 'watch' } };
    const w = timeoutFilter(clock, 10)(watch, async () => ok);
    expect(clock.pending).toBe(0);
    expect(await w).toBe(ok);
  });
});

describe('impersonation filter', () => {
  const denyAll: Authorizer = { authorize: async () => ({ decision: 'deny', reason: 'no' }) };
  const allowAll: Authorizer = { authorize: async () => ({ decision: 'allow', reason: '' }) };

  it('passes a request without Impersonate-* headers on as the authenticated user, without asking the authorizer', async () => {
    let asked = 0;
    const authz: Authorizer = { authorize: async () => (asked++, { decision: 'deny', reason: 'no' }) };
    const s = state(request([['user-agent', 'kubectl']]));
    const user = s.user;
    let seen: RequestState | undefined;
    expect(await impersonationFilter(authz, 'k8s.io')(s, async (x) => ((seen = x), ok))).toBe(ok);
    expect(seen!.user).toBe(user);
    expect(asked).toBe(0);
  });

  it('refuses an unauthenticated state and checks impersonation headers', async () => {
    const s = { ...state(request()), user: undefined };
    await expect(impersonationFilter(allowAll, 'k8s.io')(s, async () => ok)).rejects.toThrow(/not authenticated/);
    await expect(impersonationFilter(denyAll, 'k8s.io')(state(request([['impersonate-user', 'bob']])), async () => ok)).rejects.toMatchObject({ code: 403 });
    const s2 = state(request([['impersonate-user', 'bob']]));
    await impersonationFilter(allowAll, 'k8s.io')(s2, async () => ok);
    expect(s2.user?.username).toBe('bob');
  });
});

describe('audit filter', () => {
  const sink = (events: AuditEvent[]): AuditSink => ({ name: 'mem', push: (ev) => void events.push(ev), flush: async () => {}, close: async () => {} });
  const policy = (level: 'None' | 'RequestResponse') => parsePolicy(`apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: ${level}\n`, 'k8s.io');

  async function run(level: 'None' | 'RequestResponse', failure: PlainResponse) {
    const events: AuditEvent[] = [];
    const auditor = new Auditor({ policy: policy(level), sinks: [sink(events)], apiDomain: 'k8s.io' });
    const s = { ...state(request()), user: undefined };
    let recording: boolean | undefined;
    const res = await auditFilter({ auditor })(s, async (x) => {
      x.audit!.authenticated({ username: 'alice', groups: [] });
      x.audit!.authorized(true, 'ok');
      recording = x.audit!.recording;
      return failure;
    });
    return { events, res: res as PlainResponse, recording };
  }

  it('records the failure Status at RequestResponse and nothing at None, with Audit-Id either way', async () => {
    const failure: PlainResponse = { status: 409, headers: [['Content-Type', 'application/json']], body: JSON.stringify({ kind: 'Status', apiVersion: 'v1', code: 409, reason: 'AlreadyExists' }) };
    const rr = await run('RequestResponse', failure);
    expect(rr.recording).toBe(true);
    const done = rr.events.find((e) => e.stage === 'ResponseComplete')!;
    expect(done.responseObject).toMatchObject({ kind: 'Status', code: 409 });
    expect(done.annotations).toMatchObject({ 'authorization.k8s.io/decision': 'allow' });
    const none = await run('None', failure);
    expect(none.recording).toBe(false);
    expect(none.events).toEqual([]);
    for (const r of [rr, none]) expect(r.res.headers.find(([k]) => k === 'Audit-Id')?.[1]).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('a handler request for another sub-resource', () => {
  it('keeps the signal of a request that has it as a prototype getter (the dispatcher\'s class)', () => {
    const ctrl = new AbortController();
    class WithGetter {
      info = { ...info, subresource: 'approval' };
      get signal() {
        return ctrl.signal;
      }
    }
    const req = new WithGetter() as unknown as Parameters<typeof asSubresource>[0];
    const moved = asSubresource(req, 'status');
    expect(moved.signal).toBe(ctrl.signal);
    expect(moved.info.subresource).toBe('status');
    expect(req.info.subresource).toBe('approval');
  });
});
