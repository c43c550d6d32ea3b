// Every authorization decision goes through the Authorizer interface (spec 001
// §3): the request itself, impersonation (§5.10, verb `impersonate`) and the
// unsafe deletion of corrupt objects (spec 000 §4.10, verb
// `unsafe-delete-ignore-read-errors`). A small policy authorizer stands in for
// the RBAC authorizer that a later issue builds.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Authorizer, Decision, RequestAttributes } from '../../src/auth/authz/types.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

class PolicyAuthorizer implements Authorizer {
  readonly seen: RequestAttributes[] = [];
  async authorize(a: RequestAttributes): Promise<Decision> {
    this.seen.push(a);
    if (a.verb === 'impersonate' && a.resource === 'users' && a.name === 'root') return { decision: 'deny', reason: 'nobody may be root' };
    if (a.verb === 'unsafe-delete-ignore-read-errors') return { decision: 'noOpinion' };
    if (a.verb === 'delete' && a.resource === 'secrets' && a.user.username === 'orch-admin') return { decision: 'deny', reason: 'no' };
    return { decision: 'allow' };
  }
}

let t: TestServer;
const authz = new PolicyAuthorizer();

beforeAll(async () => {
  t = await startTestServer({ authorizer: authz, featureGates: { AllowUnsafeMalformedObjectDeletion: true } });
});
afterAll(async () => {
  await t?.stop();
});

const whoami = (headers: Record<string, string>) =>
  t.request('POST', '/apis/authentication.orch.io/v1/selfsubjectreviews', {
    body: { apiVersion: 'authentication.orch.io/v1', kind: 'SelfSubjectReview' },
    headers,
  });

describe('authorizer interface', () => {
  it('a denied request is 403 with a Status naming the user and verb', async () => {
    await t.request('POST', '/api/v1/namespaces/default/secrets', { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } } });
    const r = await t.request('DELETE', '/api/v1/namespaces/default/secrets/s');
    expect(r.status).toBe(403);
    expect(r.json()).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403 });
    expect(r.json<{ message: string }>().message).toContain('orch-admin');
    expect((await t.request('GET', '/api/v1/namespaces/default/secrets/s')).status).toBe(200);
  });

  it('impersonation is checked with the impersonate verb', async () => {
    const denied = await whoami({ 'Impersonate-User': 'root' });
    expect(denied.status).toBe(403);
    expect(authz.seen.some((a) => a.verb === 'impersonate' && a.resource === 'users' && a.name === 'root')).toBe(true);
    const ok = await whoami({ 'Impersonate-User': 'erin' });
    expect(ok.status).toBe(201);
    expect(ok.json()).toMatchObject({ status: { userInfo: { username: 'erin' } } });
  });

  it('unsafe deletion needs the unsafe-delete-ignore-read-errors verb', async () => {
    await t.request('POST', '/api/v1/namespaces/default/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bad' } } });
    await t.server.store.txn({
      compare: [],
      success: [{ type: 'put', key: '/registry/core/configmaps/default/bad', value: new Uint8Array([0xff, 0x00]) }],
      failure: [],
    });
    const r = await t.request('DELETE', '/api/v1/namespaces/default/configmaps/bad?ignoreStoreReadErrorWithClusterBreakingPotential=true');
    expect(r.status).toBe(403);
    expect(r.json<{ message: string }>().message).toContain('unsafe-delete-ignore-read-errors');
    // the corrupt object is still there
    expect(t.server.store.range({ key: '/registry/core/configmaps/default/bad' }).kvs).toHaveLength(1);
  });
});
