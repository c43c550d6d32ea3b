// The per-request audit recorder (issue 16 item 3): which stages are emitted
// when, omitStages, levels, Panic, failed authentication, and that an event
// already emitted is not changed by what the request learns later.

import { describe, expect, it } from 'vitest';
import { Auditor, type RequestStart } from '../../src/audit/auditor.js';
import { microTime } from '../../src/audit/event.js';
import { parsePolicy } from '../../src/audit/policy.js';
import type { AuditEvent, AuditSink } from '../../src/audit/types.js';

class Sink implements AuditSink {
  readonly name = 'test';
  events: AuditEvent[] = [];
  push(ev: AuditEvent) {
    this.events.push(ev);
  }
  async flush() {}
  async close() {}
}

const alice = { username: 'alice', uid: 'u-1', groups: ['devs'], extra: { scopes: ['a'] } };

function setup(rules: string, head = '') {
  const sink = new Sink();
  let now = Date.parse('2026-11-25T11:00:00Z') * 1000 + 123_456;
  const auditor = new Auditor({
    policy: parsePolicy(`apiVersion: audit.orch.io/v1\nkind: Policy\n${head}rules:\n${rules}`, 'orch.io'),
    sinks: [sink],
    apiDomain: 'orch.io',
    nowMicros: () => (now += 7),
  });
  const start = (o: Partial<RequestStart> = {}): RequestStart => ({
    auditID: 'id-1',
    method: 'GET',
    path: '/api/v1/namespaces/default/configmaps',
    query: new URLSearchParams('watch=1'),
    headers: new Map([['x-forwarded-for', '10.0.0.1, 10.0.0.2'], ['user-agent', 'x'.repeat(1100)]]),
    remoteAddress: '::ffff:127.0.0.1',
    info: { isResourceRequest: true, path: '/api/v1/namespaces/default/configmaps', verb: 'watch', group: '', version: 'v1', namespace: 'default', resource: 'configmaps', subresource: '', name: '' },
    longRunning: true,
    ...o,
  });
  return { sink, auditor, start };
}

describe('audit recorder', () => {
  it('a watch: RequestReceived, ResponseStarted, ResponseComplete; earlier events are snapshots', () => {
    const { sink, auditor, start } = setup('  - level: Metadata\n');
    const a = auditor.begin(start());
    a.authenticated(alice);
    a.authorized(true, 'allowed by test');
    a.responseStarted(200);
    a.responseStarted(200); // once only
    a.annotate('late', 'yes');
    a.complete({ code: 200 });
    a.complete({ code: 200 }); // once only
    expect(sink.events.map((e) => e.stage)).toEqual(['RequestReceived', 'ResponseStarted', 'ResponseComplete']);
    const [rr, rs, rc] = sink.events;
    expect(rr!.annotations).toBeUndefined();
    expect(rs!.annotations).toEqual({ 'authorization.orch.io/decision': 'allow', 'authorization.orch.io/reason': 'allowed by test' });
    expect(rc!.annotations).toEqual({ 'authorization.orch.io/decision': 'allow', 'authorization.orch.io/reason': 'allowed by test', late: 'yes' });
    expect(rr!.user).toEqual({ username: 'alice', uid: 'u-1', groups: ['devs'], extra: { scopes: ['a'] } });
    expect(rr!.sourceIPs).toEqual(['10.0.0.1', '10.0.0.2', '127.0.0.1']);
    expect(rr!.userAgent).toBe(`${'x'.repeat(1024)}...TRUNCATED`);
    expect(rr!.requestURI).toBe('/api/v1/namespaces/default/configmaps?watch=1');
    expect(rr!.requestReceivedTimestamp).toBe('2026-11-25T11:00:00.123463Z');
    expect(rr!.stageTimestamp).toBe(rr!.requestReceivedTimestamp);
    expect(rs!.stageTimestamp).toBe('2026-11-25T11:00:00.123470Z');
    expect(rc!.stageTimestamp).toBe('2026-11-25T11:00:00.123477Z');
  });

  it('an authorizer error (answered 500): only the reason annotation, "internal error", as kube\'s authorization filter', () => {
    const { sink, auditor, start } = setup('  - level: Metadata\n');
    const a = auditor.begin(start({ longRunning: false }));
    a.authenticated(alice);
    a.authorizationFailed();
    a.complete({ code: 500 });
    expect(sink.events.at(-1)!.annotations).toEqual({ 'authorization.orch.io/reason': 'internal error' });
  });

  it('a long-running request that ends before its headers still gets ResponseStarted; others never do', () => {
    const { sink, auditor, start } = setup('  - level: Metadata\n');
    const w = auditor.begin(start());
    w.authenticated(alice);
    w.complete({ code: 410 });
    expect(sink.events.map((e) => e.stage)).toEqual(['RequestReceived', 'ResponseStarted', 'ResponseComplete']);
    sink.events = [];
    const g = auditor.begin(start({ longRunning: false }));
    g.authenticated(alice);
    g.responseStarted(200);
    g.complete({ code: 200 });
    expect(sink.events.map((e) => e.stage)).toEqual(['RequestReceived', 'ResponseComplete']);
  });

  it('omitStages of the policy and the rule; level None emits nothing', () => {
    const { sink, auditor, start } = setup('  - level: None\n    users: [bob]\n  - level: Request\n    omitStages: [ResponseStarted]\n', 'omitStages: [RequestReceived]\n');
    const a = auditor.begin(start());
    a.authenticated(alice);
    a.responseStarted(200);
    a.complete({ code: 200 });
    expect(sink.events.map((e) => [e.stage, e.level])).toEqual([['ResponseComplete', 'Request']]);
    const b = auditor.begin(start());
    b.authenticated({ username: 'bob', groups: [] });
    b.annotate('k', 'v');
    b.complete({ code: 200 });
    expect(sink.events).toHaveLength(1);
  });

  it('an unexpected error: Panic instead of ResponseComplete', () => {
    const { sink, auditor, start } = setup('  - level: Metadata\n');
    const a = auditor.begin(start({ longRunning: false }));
    a.authenticated(alice);
    a.panicked('Internal error occurred: boom');
    a.complete({ code: 500 });
    expect(sink.events.map((e) => e.stage)).toEqual(['RequestReceived', 'Panic']);
    expect(sink.events[1]!.responseStatus).toEqual({ metadata: {}, status: 'Failure', message: 'Internal error occurred: boom', reason: 'InternalError', code: 500 });
  });

  it('a failed authentication: one ResponseStarted event, no user, only rules without user fields match', () => {
    const { sink, auditor, start } = setup('  - level: RequestResponse\n    userGroups: [devs]\n  - level: Metadata\n');
    const a = auditor.begin(start({ longRunning: false }));
    a.unauthenticated('Authentication failed, attempted: bearer');
    a.complete({ code: 401, responseObject: { kind: 'Status', status: 'Failure', reason: 'Unauthorized', code: 401 } });
    expect(sink.events).toHaveLength(1);
    expect(sink.events[0]).toMatchObject({ stage: 'ResponseStarted', level: 'Metadata', user: {}, responseStatus: { metadata: {}, message: 'Authentication failed, attempted: bearer', code: 401 } });
  });

  it('Request level: the body as requestObject, managedFields omitted when asked; RequestResponse adds the response', () => {
    const { sink, auditor, start } = setup('  - level: RequestResponse\n', 'omitManagedFields: true\n');
    const info = { isResourceRequest: true, path: '/api/v1/namespaces/default/configmaps', verb: 'create', group: '', version: 'v1', namespace: 'default', resource: 'configmaps', subresource: '', name: '' };
    const a = auditor.begin(start({ longRunning: false, info, method: 'POST' }));
    a.authenticated(alice);
    const body = Buffer.from(JSON.stringify({ metadata: { name: 'x', managedFields: [{ manager: 'm' }] }, data: { a: 'b' } }));
    const list = { kind: 'ConfigMapList', items: [{ metadata: { name: 'x', managedFields: [{}] } }] };
    a.complete({ code: 201, body, contentType: 'application/json', responseObject: list });
    const ev = sink.events[1]!;
    expect(ev.objectRef).toEqual({ resource: 'configmaps', namespace: 'default', name: 'x', apiVersion: 'v1' });
    expect(ev.requestObject).toEqual({ metadata: { name: 'x' }, data: { a: 'b' } });
    expect(ev.responseObject).toEqual({ kind: 'ConfigMapList', items: [{ metadata: { name: 'x' } }] });
    // the caller's objects are not changed
    expect(list.items[0]!.metadata.managedFields).toHaveLength(1);
  });

  it('microTime keeps six digits', () => {
    expect(microTime(Date.parse('2026-01-02T03:04:05Z') * 1000 + 7)).toBe('2026-01-02T03:04:05.000007Z');
  });
});
