// Health snapshots (src/gateway/health-snapshot.ts) and what a TLS worker
// answers from them (src/gateway/health-probe.ts), and early shedding
// (src/gateway/flowcontrol/early-shed.ts), on a simulated clock.
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { HealthChecks } from '../../src/gateway/health.js';
import { type HealthSnapshot, MAIN_LOOP_CHECK, SnapshotHolder, answerFromSnapshot, startHealthPublisher } from '../../src/gateway/health-snapshot.js';
import { parseProbeHead, probeAnswerer } from '../../src/gateway/health-probe.js';
import { earlyShedder } from '../../src/gateway/flowcontrol/early-shed.js';
import { FlowControl } from '../../src/gateway/flowcontrol/flow-control.js';
import type { PeerCertificate } from '../../src/auth/types.js';
import { parseRequestInfo } from '../../src/endpoints/request-info.js';
import type { RequestInfo } from '../../src/endpoints/request.js';
import { requestInfoFilter } from '../../src/endpoints/filters/request-info.js';
import type { RequestState } from '../../src/endpoints/filters/state.js';

const flush = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

function checks(): { health: HealthChecks; set(name: string, v: string | undefined): void; hang: Set<string> } {
  const state = new Map<string, string | undefined>();
  const hang = new Set<string>();
  const health = new HealthChecks();
  const add = (name: string, where: 'both' | 'ready' = 'both') =>
    health.add({ name, check: () => (hang.has(name) ? new Promise<string | undefined>(() => undefined) : state.get(name)) }, where);
  add('ping');
  add(MAIN_LOOP_CHECK);
  add('etcd');
  add('informer-sync', 'ready');
  return { health, set: (n, v) => state.set(n, v), hang };
}

describe('the main loop publishes snapshots', () => {
  it('every interval, with failing checks and the authorized paths', async () => {
    const clock = new ManualClock(0);
    const c = checks();
    const published: HealthSnapshot[] = [];
    const asked: string[] = [];
    const p = startHealthPublisher({
      checks: c.health,
      publish: (s) => published.push(s),
      mayGet: async (who, path) => {
        asked.push(`${who} ${path}`);
        return path === '/livez' || path === '/readyz' || (who === 'authenticated' && path === '/livez/etcd');
      },
      clock,
      intervalMs: 250,
    });
    await flush();
    expect(published).toHaveLength(1);
    expect(published[0]).toMatchObject({ seq: 1, livez: ['ping', MAIN_LOOP_CHECK, 'etcd'], readyz: ['ping', MAIN_LOOP_CHECK, 'etcd', 'informer-sync'], failed: {} });
    expect(published[0]!.allowed).toEqual({ anonymous: ['/livez', '/readyz'], authenticated: ['/livez', '/readyz', '/livez/etcd'] });
    c.set('etcd', 'no leader');
    clock.advance(250);
    await flush();
    expect(published).toHaveLength(2);
    expect(published[1]!.failed).toEqual({ etcd: 'no leader' });
    // authorization is asked again only every 2 s
    expect(asked.filter((a) => a === 'anonymous /livez')).toHaveLength(1);
    p.stop();
    clock.advance(1000);
    await flush();
    expect(published).toHaveLength(2);
  });

  it('publishes on time when a check hangs, counting it as failed', async () => {
    const clock = new ManualClock(0);
    const c = checks();
    c.hang.add('etcd');
    const published: HealthSnapshot[] = [];
    const p = startHealthPublisher({ checks: c.health, publish: (s) => published.push(s), clock, intervalMs: 250, checkTimeoutMs: 1000 });
    await flush();
    expect(published).toHaveLength(0);
    clock.advance(1000);
    await flush();
    expect(published).toHaveLength(1);
    expect(published[0]!.failed['etcd']).toMatch(/did not answer within 1000 ms/);
    // without mayGet, no path is answered by a worker
    expect(published[0]!.allowed).toEqual({ anonymous: [], authenticated: [] });
    p.stop();
  });
});

describe('a worker answers from the latest snapshot', () => {
  const snap: HealthSnapshot = {
    seq: 3,
    livez: ['ping', MAIN_LOOP_CHECK, 'etcd'],
    readyz: ['ping', MAIN_LOOP_CHECK, 'etcd', 'informer-sync'],
    failed: { 'informer-sync': 'not synced' },
    allowed: { anonymous: ['/livez', '/readyz'], authenticated: ['/livez', '/readyz', '/livez/etcd', '/readyz/informer-sync'] },
  };
  const ask = (path: string, query = '', who: 'anonymous' | 'authenticated' = 'authenticated', ageMs = 100, method = 'GET') =>
    answerFromSnapshot(snap, ageMs, { method, path, query: new URLSearchParams(query), who });

  it('in the format of the main process', async () => {
    expect(await ask('/livez')).toEqual({ status: 200, body: 'ok' });
    expect(await ask('/livez', 'verbose')).toEqual({ status: 200, body: `[+]ping ok\n[+]${MAIN_LOOP_CHECK} ok\n[+]etcd ok\nhealthz check passed\n` });
    expect(await ask('/readyz', 'verbose')).toEqual({ status: 500, body: `[+]ping ok\n[+]${MAIN_LOOP_CHECK} ok\n[+]etcd ok\n[-]informer-sync failed: reason withheld\nreadyz check failed\n` });
    expect(await ask('/readyz', 'exclude=informer-sync')).toEqual({ status: 200, body: 'ok' });
    expect(await ask('/livez/etcd')).toEqual({ status: 200, body: 'ok' });
    expect(await ask('/readyz/informer-sync')).toEqual({ status: 500, body: 'internal server error: not synced\n' });
  });

  it('fails main-loop once the snapshot is older than the bound', async () => {
    const stale = await ask('/livez', 'verbose', 'authenticated', 5_001);
    expect(stale).toEqual({ status: 500, body: `[+]ping ok\n[-]${MAIN_LOOP_CHECK} failed: reason withheld\n[+]etcd ok\nlivez check failed\n` });
    expect(await ask('/livez', '', 'authenticated', 5_000)).toEqual({ status: 200, body: 'ok' });
  });

  it('leaves to the main process what it may not answer', async () => {
    expect(await ask('/livez/etcd', '', 'anonymous')).toBeUndefined();
    expect(await ask('/healthz')).toBeUndefined();
    expect(await ask('/livez', '', 'authenticated', 0, 'POST')).toBeUndefined();
    expect(await ask('/version')).toBeUndefined();
    expect(await answerFromSnapshot(undefined, 0, { method: 'GET', path: '/livez', query: new URLSearchParams(), who: 'anonymous' })).toBeUndefined();
  });

  it('keeps the newest snapshot and measures its age on the worker clock', () => {
    const clock = new ManualClock(10_000);
    const h = new SnapshotHolder(clock);
    expect(h.current()).toEqual({ snapshot: undefined, ageMs: Infinity });
    h.update(snap);
    clock.advance(300);
    h.update({ ...snap, seq: 2 });
    expect(h.current()).toEqual({ snapshot: snap, ageMs: 300 });
  });
});

describe('request heads a worker may answer', () => {
  it('is a plain HTTP/1.1 GET of a health path', () => {
    expect(parseProbeHead('GET /livez?verbose&exclude=etcd HTTP/1.1\r\nHost: x\r\nUser-Agent: kube-probe/1.32\r\nAccept: */*')).toMatchObject({ path: '/livez', close: false });
    expect(parseProbeHead('GET /readyz HTTP/1.1\r\nConnection: close')).toMatchObject({ path: '/readyz', close: true });
  });

  it('is not anything that bears on identity, carries a body, or is another path', () => {
    expect(parseProbeHead('GET /livez HTTP/1.1\r\nAuthorization: Bearer x')).toBeUndefined();
    expect(parseProbeHead('GET /livez HTTP/1.1\r\nImpersonate-User: x')).toBeUndefined();
    expect(parseProbeHead('GET /livez HTTP/1.1\r\nX-Remote-User: x')).toBeUndefined();
    expect(parseProbeHead('GET /livez HTTP/1.1\r\nX-Orch-Hn-696d706572736f6e6174652d65787472612d612e62: x')).toBeUndefined();
    expect(parseProbeHead('GET /livez HTTP/1.1\r\nContent-Length: 4')).toBeUndefined();
    expect(parseProbeHead('GET /livez HTTP/1.1\r\nTransfer-Encoding: chunked')).toBeUndefined();
    expect(parseProbeHead('POST /livez HTTP/1.1')).toBeUndefined();
    expect(parseProbeHead('GET /livez HTTP/1.0')).toBeUndefined();
    expect(parseProbeHead('GET /api/v1/pods HTTP/1.1')).toBeUndefined();
    expect(parseProbeHead('GET /live%7a HTTP/1.1')).toBeUndefined();
  });
});

describe('a probe answered by the front (probeAnswerer)', () => {
  const snap: HealthSnapshot = {
    seq: 1,
    livez: ['ping', MAIN_LOOP_CHECK],
    readyz: ['ping', MAIN_LOOP_CHECK],
    failed: {},
    allowed: { anonymous: ['/livez'], authenticated: ['/livez', '/readyz'] },
  };
  const clock = new ManualClock(Date.UTC(2026, 10, 25, 19, 0, 0));
  const answer = probeAnswerer({ snapshot: () => ({ snapshot: snap, ageMs: 10 }), clock });
  const admin: PeerCertificate = { verified: true, commonName: 'admin', organizations: ['system:masters'], raw: new Uint8Array() };
  const unverified: PeerCertificate = { verified: false, verifyError: 'unknown authority', commonName: 'x', organizations: [], raw: new Uint8Array() };

  it('writes a whole HTTP/1.1 response in the main process format', async () => {
    const r = await answer('GET /livez HTTP/1.1\r\nHost: x', undefined);
    const text = r!.bytes.toString('latin1');
    expect(r!.close).toBe(false);
    expect(text.startsWith('HTTP/1.1 200 OK\r\n')).toBe(true);
    expect(text).toContain('\r\nContent-Type: text/plain; charset=utf-8\r\n');
    expect(text).toContain('\r\nX-Content-Type-Options: nosniff\r\n');
    expect(text).toContain('\r\nDate: Wed, 25 Nov 2026 19:00:00 GMT\r\n');
    expect(text).toMatch(/\r\nAudit-Id: [0-9a-f-]{36}\r\n/);
    expect(text.endsWith('\r\nContent-Length: 2\r\n\r\nok')).toBe(true);
    const closing = await answer('GET /readyz HTTP/1.1\r\nConnection: close', admin);
    expect(closing!.close).toBe(true);
    expect(closing!.bytes.toString('latin1')).toContain('\r\nConnection: close\r\n');
  });

  it('forwards what only the main process may answer', async () => {
    // anonymous may not GET /readyz in this snapshot; an unverified certificate is the main process's 401
    expect(await answer('GET /readyz HTTP/1.1\r\nHost: x', undefined)).toBeUndefined();
    expect(await answer('GET /livez HTTP/1.1\r\nHost: x', unverified)).toBeUndefined();
    expect(await answer('GET /livez HTTP/1.1\r\nAuthorization: Bearer t', admin)).toBeUndefined();
    expect(await answer('GET /livez HTTP/1.1\r\nUpgrade: websocket', admin)).toBeUndefined();
  });
});

describe('shedding before work', () => {
  const fc = new FlowControl({
    maxRequestsInflight: 1,
    maxMutatingRequestsInflight: 1,
    enablePriorityAndFairness: true,
    requestTimeoutMs: 60_000,
    systemNamespace: 'orch-system',
    nodeLeaseNamespace: 'orch-node-lease',
    clock: new ManualClock(0),
  });
  const peers: Record<string, PeerCertificate> = {
    admin: { verified: true, commonName: 'admin', organizations: ['system:masters'], raw: new Uint8Array() },
    bad: { verified: false, verifyError: 'unknown authority', commonName: 'x', organizations: [], raw: new Uint8Array() },
  };
  const shed = earlyShedder({ flow: fc, peerFor: (a) => peers[a] });
  const head = (path: string, o: { method?: string; query?: string; headers?: [string, string][]; peer?: string } = {}) => ({
    method: o.method ?? 'GET',
    path,
    query: new URLSearchParams(o.query ?? ''),
    headers: new Map(o.headers ?? []),
    proxiedAddress: o.peer ?? 'anonymous',
  });

  it('answers 429 for what admission would refuse now, and nothing else', async () => {
    expect(shed(head('/api/v1/namespaces/default/configmaps'))).toBeUndefined();
    // the anonymous level's one seat taken
    const held = await fc.admit({ user: { username: 'system:anonymous', groups: ['system:unauthenticated'] }, isResourceRequest: true, verb: 'list', apiGroup: '', resource: 'configmaps', namespace: 'default' });
    const r = shed(head('/api/v1/namespaces/default/configmaps', { method: 'POST' }));
    expect(r).toMatchObject({ status: 429 });
    expect(Object.fromEntries(r!.headers)).toMatchObject({ 'Retry-After': '1', 'X-Orch-Pf-Priority-Level': 'catch-all', 'X-Orch-Pf-Rejection': 'concurrency-limit' });
    expect(JSON.parse(String(r!.body))).toMatchObject({ kind: 'Status', reason: 'TooManyRequests', code: 429, details: { retryAfterSeconds: 1 } });
    expect(fc.stats().find((l) => l.name === 'catch-all')!.rejected['concurrency-limit']).toBe(1);
    // never: health, watches, the admin, credentials it cannot judge, a certificate that did not verify
    expect(shed(head('/livez'))).toBeUndefined();
    expect(shed(head('/api/v1/namespaces/default/configmaps', { query: 'watch=true' }))).toBeUndefined();
    expect(shed(head('/api/v1/namespaces/default/configmaps', { peer: 'admin' }))).toBeUndefined();
    expect(shed(head('/api/v1/namespaces/default/configmaps', { headers: [['authorization', 'Bearer t']] }))).toBeUndefined();
    expect(shed(head('/api/v1/namespaces/default/configmaps', { headers: [['impersonate-user', 'u']] }))).toBeUndefined();
    expect(shed(head('/api/v1/namespaces/default/configmaps', { peer: 'bad' }))).toBeUndefined();
    held.release();
    expect(shed(head('/api/v1/namespaces/default/configmaps'))).toBeUndefined();
  });

  it('leaves the RequestInfo it parsed in the head for the chain, equal to a fresh parse; none when it did not parse', () => {
    const h: ReturnType<typeof head> & { info?: RequestInfo } = head('/api/v1/namespaces/default/configmaps/c1', { method: 'PUT' });
    expect(shed(h)).toBeUndefined();
    expect(h.info).toEqual(parseRequestInfo('PUT', '/api/v1/namespaces/default/configmaps/c1', new URLSearchParams()));
    expect(h.info).toMatchObject({ verb: 'update', resource: 'configmaps', namespace: 'default', name: 'c1' });
    // a credential it cannot judge: not parsed here, the chain parses it
    const bearer: ReturnType<typeof head> & { info?: RequestInfo } = head('/api/v1/namespaces/default/configmaps', { headers: [['authorization', 'Bearer t']] });
    expect(shed(bearer)).toBeUndefined();
    expect(bearer.info).toBeUndefined();
  });
});

describe('the request-info filter', () => {
  it('uses the RequestInfo the transport parsed, and parses when there is none', async () => {
    const given = parseRequestInfo('GET', '/api/v1/namespaces/a/pods', new URLSearchParams());
    const seen: (RequestInfo | undefined)[] = [];
    const run = (info?: RequestInfo) =>
      requestInfoFilter({ http: { method: 'GET', path: '/api/v1/namespaces/b/pods', query: new URLSearchParams(), headers: new Map(), proxiedAddress: '', body: new Uint8Array(), signal: new AbortController().signal, ...(info ? { info } : {}) } } as unknown as RequestState, async (s) => {
        seen.push(s.info);
        return { status: 200, headers: [], body: '' };
      });
    await run(given);
    await run();
    expect(seen[0]).toBe(given);
    expect(seen[1]).toMatchObject({ namespace: 'b', resource: 'pods', verb: 'list' });
  });
});
