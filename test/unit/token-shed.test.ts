// Early shedding of bearer-token requests (issue #15): the authentication
// chain records the user each accepted token made (src/auth/authn/token-user-cache.ts),
// the shedder (src/gateway/flowcontrol/early-shed.ts) classifies a token
// request by it and refuses it 429 before authentication; looking a token up
// never authenticates anything. On a simulated clock, with the real chain and
// flow control.
import { describe, expect, it } from 'vitest';
import { AuthenticationChain, type Authenticator, type AuthnRequest } from '../../src/auth/authn/chain.js';
import { TokenUserCache } from '../../src/auth/authn/token-user-cache.js';
import type { PeerCertificate } from '../../src/auth/types.js';
import { ManualClock } from '../../src/core/clock.js';
import { earlyShedder } from '../../src/gateway/flowcontrol/early-shed.js';
import { FlowControl } from '../../src/gateway/flowcontrol/flow-control.js';

/** a token authenticator that counts its calls; `valid` decides which tokens it accepts */
function countingTokens(valid: Map<string, string>): Authenticator & { calls: number } {
  const a = {
    name: 'tokens',
    calls: 0,
    authenticate(req: AuthnRequest) {
      a.calls++;
      const token = /^Bearer (.+)$/.exec(req.headers.get('authorization') ?? '')?.[1];
      if (token === undefined) return { result: 'none' as const };
      const user = valid.get(token);
      return user ? { result: 'ok' as const, user: { username: user, groups: ['devs'] } } : { result: 'error' as const, message: 'invalid token' };
    },
  };
  return a;
}

const PATH = '/api/v1/namespaces/default/configmaps';
const bearer = (token: string): Map<string, string> => new Map([['authorization', `Bearer ${token}`]]);

function setup() {
  const clock = new ManualClock(0);
  const valid = new Map([['tok-bob', 'bob']]);
  const tokens = countingTokens(valid);
  const cache = new TokenUserCache({ clock, ttlMs: 10_000, maxEntries: 2 });
  const chain = new AuthenticationChain([tokens], true, (t, u) => cache.remember(t, u));
  // plain in-flight limits: one read-only seat, no queue
  const fc = new FlowControl({ maxRequestsInflight: 1, maxMutatingRequestsInflight: 1, enablePriorityAndFairness: false, requestTimeoutMs: 60_000, systemNamespace: 'orch-system', nodeLeaseNamespace: 'orch-node-lease', clock });
  const peers: Record<string, PeerCertificate> = { alice: { verified: true, commonName: 'alice', organizations: [], raw: new Uint8Array() } };
  const shed = earlyShedder({ flow: fc, peerFor: (a) => peers[a], tokenUsers: cache });
  const head = (headers: Map<string, string>, peer = 'none') => ({ method: 'GET', path: PATH, query: new URLSearchParams(), headers, proxiedAddress: peer });
  const holdSeat = () => fc.admit({ user: { username: 'someone', groups: ['system:authenticated'] }, isResourceRequest: true, verb: 'list', apiGroup: '', resource: 'configmaps', namespace: 'default' });
  return { clock, valid, tokens, cache, chain, fc, shed, head, holdSeat };
}

describe('the token → user cache', () => {
  it('is filled by the chain with the user an accepted token made, not by refused tokens or certificate requests', async () => {
    const s = setup();
    expect(await s.chain.authenticate({ headers: bearer('tok-bob'), peer: undefined, path: PATH })).toMatchObject({ user: { username: 'bob' } });
    expect(s.cache.classifyAs('tok-bob')).toEqual({ username: 'bob', groups: ['devs', 'system:authenticated'] });
    expect(await s.chain.authenticate({ headers: bearer('tok-eve'), peer: undefined, path: PATH })).toMatchObject({ error: 'invalid token' });
    expect(s.cache.classifyAs('tok-eve')).toBeUndefined();
    // with a certificate beside the token, the token does not name the user for certain
    s.valid.set('tok-carol', 'carol');
    const peer: PeerCertificate = { verified: true, commonName: 'carol', organizations: [], raw: new Uint8Array() };
    expect(await s.chain.authenticate({ headers: bearer('tok-carol'), peer, path: PATH })).toMatchObject({ user: { username: 'carol' } });
    expect(s.cache.classifyAs('tok-carol')).toBeUndefined();
  });

  it('forgets an entry after its lifetime, and the oldest beyond its bound', async () => {
    const s = setup();
    s.cache.remember('a', { username: 'a', groups: [] });
    s.clock.advance(5_000);
    s.cache.remember('b', { username: 'b', groups: [] });
    s.cache.remember('c', { username: 'c', groups: [] });
    // bound 2: 'a' went first
    expect(s.cache.size).toBe(2);
    expect(s.cache.classifyAs('a')).toBeUndefined();
    expect(s.cache.classifyAs('b')?.username).toBe('b');
    s.clock.advance(10_000);
    expect(s.cache.classifyAs('b')).toBeUndefined();
    expect(s.cache.classifyAs('c')).toBeUndefined();
  });
});

describe('shedding token requests before authentication', () => {
  it('answers 429 with Retry-After for a known token over the limit without calling an authenticator', async () => {
    const s = setup();
    await s.chain.authenticate({ headers: bearer('tok-bob'), peer: undefined, path: PATH });
    expect(s.tokens.calls).toBe(1);
    // the level has room: not shed
    expect(s.shed(s.head(bearer('tok-bob')))).toBeUndefined();
    const held = await s.holdSeat();
    const r = s.shed(s.head(bearer('tok-bob')));
    expect(r).toMatchObject({ status: 429 });
    expect(Object.fromEntries(r!.headers)).toMatchObject({ 'Retry-After': '1', 'X-Orch-Pf-Priority-Level': 'readOnly' });
    expect(s.tokens.calls).toBe(1);
    held.release();
  });

  it('never authenticates to classify: an unknown, expired or certificate-accompanied token is left to the chain', async () => {
    const s = setup();
    await s.chain.authenticate({ headers: bearer('tok-bob'), peer: undefined, path: PATH });
    const held = await s.holdSeat();
    const calls = s.tokens.calls;
    // unknown to the cache (valid or not, nobody asks): not shed, the chain decides later
    s.valid.set('tok-dave', 'dave');
    expect(s.shed(s.head(bearer('tok-dave')))).toBeUndefined();
    expect(s.shed(s.head(bearer('tok-eve')))).toBeUndefined();
    // a certificate too: which of the two decides is the chain's business
    expect(s.shed(s.head(bearer('tok-bob'), 'alice'))).toBeUndefined();
    // an empty or non-Bearer Authorization
    expect(s.shed(s.head(bearer('')))).toBeUndefined();
    expect(s.shed(s.head(new Map([['authorization', 'Basic Ym9iOng=']])))).toBeUndefined();
    // expired from the cache: no longer classified
    s.clock.advance(10_001);
    expect(s.shed(s.head(bearer('tok-bob')))).toBeUndefined();
    expect(s.tokens.calls).toBe(calls);
    held.release();
  });

  it('a token revoked after it was cached is still refused by the chain: the cache only classifies', async () => {
    const s = setup();
    await s.chain.authenticate({ headers: bearer('tok-bob'), peer: undefined, path: PATH });
    s.valid.delete('tok-bob');
    // the level has room, so the request is not shed and the chain runs: 401's error
    expect(s.shed(s.head(bearer('tok-bob')))).toBeUndefined();
    expect(await s.chain.authenticate({ headers: bearer('tok-bob'), peer: undefined, path: PATH })).toEqual({ error: 'invalid token' });
  });
});
