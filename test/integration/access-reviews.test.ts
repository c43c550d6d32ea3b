// The access reviews of `authorization.<domain>` (spec 001 §2.3, §4): each kind
// over raw HTTPS against the default allow-all server and a server with a
// policy authorizer, and `kubectl auth can-i` (which uses SelfSubjectAccessReview
// and, with --list, SelfSubjectRulesReview) against a server named k8s.io.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Authorizer, Decision, RequestAttributes, RulesResult } from '../../src/auth/authz/types.js';
import type { UserInfo } from '../../src/auth/types.js';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { runKubectl } from '../helpers/kubectl.js';


/** allows reads, denies deletes of secrets, no opinion on everything else it does not know */
class PolicyAuthorizer implements Authorizer {
  readonly seen: RequestAttributes[] = [];
  async authorize(a: RequestAttributes): Promise<Decision> {
    // the review requests themselves (and the discovery kubectl does) are allowed
    if (a.resource.endsWith('accessreviews') || a.resource === 'selfsubjectrulesreviews' || (!a.isResourceRequest && a.verb === 'get' && !a.path.startsWith('/secret'))) {
      return { decision: 'allow' };
    }
    this.seen.push(a);
    if (a.verb === 'delete' && a.resource === 'secrets') return { decision: 'deny', reason: 'secrets are forever' };
    if (a.user.username === 'mallory') return { decision: 'deny', reason: 'not mallory' };
    if (a.user.groups.includes('readers') && (a.verb === 'get' || a.verb === 'list')) return { decision: 'allow', reason: 'readers read' };
    if (a.user.username === 'orch-admin' && a.verb !== 'escalate') return { decision: 'allow', reason: 'admin' };
    if (a.verb === 'explode') throw new Error('the policy engine broke');
    return { decision: 'noOpinion' };
  }
  async rulesFor(user: UserInfo, namespace: string): Promise<RulesResult> {
    return {
      resourceRules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'], ...(namespace === 'team' ? { resourceNames: ['p1'] } : {}) }],
      nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }],
      incomplete: user.username !== 'orch-admin',
    };
  }
}

const AUTHZ = 'authorization.orch.io';
const review = (kind: string, spec: unknown, extra: Record<string, unknown> = {}) => ({ apiVersion: `${AUTHZ}/v1`, kind, spec, ...extra });
const podGet = { resourceAttributes: { namespace: 'default', verb: 'get', resource: 'pods' } };

describe('access reviews, allow-all authorizer', () => {
  let t: TestServer;
  beforeAll(async () => {
    // this block is about the review kinds' shapes under AlwaysAllow (every answer allowed, rules complete);
    // the answers of the default Node,RBAC chain are tested in rbac.test.ts
    t = await startTestServer({ authorization: { mode: 'AlwaysAllow' } });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('SelfSubjectAccessReview: allowed, spec echoed, nothing stored', async () => {
    const r = await t.request('POST', `/apis/${AUTHZ}/v1/selfsubjectaccessreviews`, { body: review('SelfSubjectAccessReview', podGet) });
    expect(r.status, r.text).toBe(201);
    expect(r.json()).toMatchObject({ kind: 'SelfSubjectAccessReview', apiVersion: `${AUTHZ}/v1`, spec: podGet, status: { allowed: true } });
    expect(r.json<{ status: { denied?: boolean } }>().status.denied).toBeUndefined();
    const keys = t.server.store.range({ key: '/registry/', end: '/registry0' }).kvs.map((kv) => kv.key);
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.filter((k) => k.includes('accessreview'))).toEqual([]);
    // create only: a read is not a verb of the kind
    expect((await t.request('GET', `/apis/${AUTHZ}/v1/selfsubjectaccessreviews`)).status).toBe(405);
  });

  it('SubjectAccessReview and LocalSubjectAccessReview are allowed', async () => {
    const sar = await t.request('POST', `/apis/${AUTHZ}/v1/subjectaccessreviews`, {
      body: review('SubjectAccessReview', { ...podGet, user: 'bob', groups: ['devs'] }),
    });
    expect(sar.status, sar.text).toBe(201);
    expect(sar.json()).toMatchObject({ spec: { user: 'bob', groups: ['devs'] }, status: { allowed: true } });
    const lsar = await t.request('POST', `/apis/${AUTHZ}/v1/namespaces/default/localsubjectaccessreviews`, {
      body: review('LocalSubjectAccessReview', { resourceAttributes: { verb: 'list', resource: 'configmaps' }, user: 'bob' }),
    });
    expect(lsar.status, lsar.text).toBe(201);
    // an empty namespace is defaulted to the request's
    expect(lsar.json()).toMatchObject({ metadata: { namespace: 'default' }, spec: { resourceAttributes: { namespace: 'default' } }, status: { allowed: true } });
  });

  it('SelfSubjectRulesReview lists everything and is complete', async () => {
    const r = await t.request('POST', `/apis/${AUTHZ}/v1/selfsubjectrulesreviews`, { body: review('SelfSubjectRulesReview', { namespace: 'default' }) });
    expect(r.status, r.text).toBe(201);
    expect(r.json()).toMatchObject({
      spec: { namespace: 'default' },
      status: {
        resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
        nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
        incomplete: false,
      },
    });
  });

  it('a spec without exactly one kind of attributes is 422 Invalid', async () => {
    const cases: [string, string, unknown, string][] = [
      ['selfsubjectaccessreviews', 'SelfSubjectAccessReview', undefined, 'spec'],
      ['selfsubjectaccessreviews', 'SelfSubjectAccessReview', {}, 'spec.resourceAttributes'],
      ['selfsubjectaccessreviews', 'SelfSubjectAccessReview', { ...podGet, nonResourceAttributes: { path: '/healthz', verb: 'get' } }, 'spec.nonResourceAttributes'],
      ['subjectaccessreviews', 'SubjectAccessReview', podGet, 'spec.user'],
      ['subjectaccessreviews', 'SubjectAccessReview', { user: 'bob' }, 'spec.resourceAttributes'],
    ];
    for (const [resource, kind, spec, field] of cases) {
      const r = await t.request('POST', `/apis/${AUTHZ}/v1/${resource}`, { body: spec === undefined ? { apiVersion: `${AUTHZ}/v1`, kind } : review(kind, spec) });
      expect(r.status, `${kind} ${JSON.stringify(spec)}: ${r.text}`).toBe(422);
      expect(r.json()).toMatchObject({ kind: 'Status', reason: 'Invalid', details: { kind, group: AUTHZ } });
      expect(r.json<{ details: { causes: { field: string }[] } }>().details.causes.map((c) => c.field)).toContain(field);
    }
    const nonResourceLocal = await t.request('POST', `/apis/${AUTHZ}/v1/namespaces/default/localsubjectaccessreviews`, {
      body: review('LocalSubjectAccessReview', { nonResourceAttributes: { path: '/healthz', verb: 'get' }, user: 'bob' }),
    });
    expect(nonResourceLocal.status).toBe(422);
  });

  it('LocalSubjectAccessReview: a namespace that differs from the path is 400', async () => {
    const r = await t.request('POST', `/apis/${AUTHZ}/v1/namespaces/default/localsubjectaccessreviews`, {
      body: review('LocalSubjectAccessReview', { resourceAttributes: { namespace: 'other', verb: 'get', resource: 'pods' }, user: 'bob' }),
    });
    expect(r.status, r.text).toBe(400);
    expect(r.json()).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
    expect(r.json<{ message: string }>().message).toContain('spec.resourceAttributes.namespace must match namespace: default');
    const meta = await t.request('POST', `/apis/${AUTHZ}/v1/namespaces/default/localsubjectaccessreviews`, {
      body: review('LocalSubjectAccessReview', { resourceAttributes: { verb: 'get', resource: 'pods' }, user: 'bob' }, { metadata: { namespace: 'other' } }),
    });
    expect(meta.status, meta.text).toBe(400);
  });
});

describe('access reviews, policy authorizer', () => {
  let t: TestServer;
  const authz = new PolicyAuthorizer();
  beforeAll(async () => {
    t = await startTestServer({ authorizer: authz });
  });
  afterAll(async () => {
    await t?.stop();
  });

  const sar = (spec: Record<string, unknown>) => t.request('POST', `/apis/${AUTHZ}/v1/subjectaccessreviews`, { body: review('SubjectAccessReview', spec) });

  it('SubjectAccessReview: allowed, denied, no opinion, evaluation error', async () => {
    let r = await sar({ resourceAttributes: { namespace: 'ns1', verb: 'list', group: 'apps', version: 'v1', resource: 'deployments', subresource: 'scale', name: 'd' }, user: 'ann', groups: ['readers'], uid: 'u-1', extra: { scopes: ['a', 'b'] } });
    expect(r.status, r.text).toBe(201);
    expect(r.json()).toMatchObject({ status: { allowed: true, reason: 'readers read' } });
    // the authorizer saw the spec's subject and attributes
    expect(authz.seen.at(-1)).toEqual({
      user: { username: 'ann', groups: ['readers'], uid: 'u-1', extra: { scopes: ['a', 'b'] } },
      verb: 'list', isResourceRequest: true, path: '', apiGroup: 'apps', apiVersion: 'v1', namespace: 'ns1', resource: 'deployments', subresource: 'scale', name: 'd',
    });

    r = await sar({ ...podGet, user: 'mallory' });
    expect(r.json()).toMatchObject({ status: { allowed: false, denied: true, reason: 'not mallory' } });

    r = await sar({ ...podGet, user: 'nobody', groups: ['x'] });
    expect(r.status).toBe(201);
    const noOpinion = r.json<{ status: Record<string, unknown> }>().status;
    expect(noOpinion.allowed).toBe(false);
    expect(noOpinion.denied).toBeUndefined();

    r = await sar({ nonResourceAttributes: { path: '/secret/thing', verb: 'explode' }, user: 'nobody' });
    expect(r.json()).toMatchObject({ status: { allowed: false, evaluationError: 'the policy engine broke' } });
    expect(authz.seen.at(-1)).toMatchObject({ isResourceRequest: false, path: '/secret/thing', verb: 'explode', resource: '' });
  });

  it('SelfSubjectAccessReview asks about the caller', async () => {
    const ssar = (spec: unknown, headers: Record<string, string> = {}) =>
      t.request('POST', `/apis/${AUTHZ}/v1/selfsubjectaccessreviews`, { body: review('SelfSubjectAccessReview', spec), headers });
    let r = await ssar({ resourceAttributes: { namespace: 'default', verb: 'delete', resource: 'secrets', name: 's' } });
    expect(r.json()).toMatchObject({ status: { allowed: false, denied: true, reason: 'secrets are forever' } });
    r = await ssar(podGet);
    expect(r.json()).toMatchObject({ status: { allowed: true, reason: 'admin' } });
    expect(authz.seen.at(-1)?.user.username).toBe('orch-admin');
    r = await ssar({ resourceAttributes: { verb: 'escalate', resource: 'roles' } });
    expect(r.json()).toMatchObject({ status: { allowed: false } });
    expect(r.json<{ status: { denied?: boolean } }>().status.denied).toBeUndefined();
  });

  it('LocalSubjectAccessReview decides in the path namespace', async () => {
    const r = await t.request('POST', `/apis/${AUTHZ}/v1/namespaces/team/localsubjectaccessreviews`, {
      body: review('LocalSubjectAccessReview', { resourceAttributes: { verb: 'delete', resource: 'secrets' }, user: 'ann' }),
    });
    expect(r.status, r.text).toBe(201);
    expect(r.json()).toMatchObject({ status: { allowed: false, denied: true } });
    expect(authz.seen.at(-1)).toMatchObject({ namespace: 'team', verb: 'delete', resource: 'secrets', user: { username: 'ann' } });
  });

  it('SelfSubjectRulesReview reports the rules of the authorizer', async () => {
    const r = await t.request('POST', `/apis/${AUTHZ}/v1/selfsubjectrulesreviews`, { body: review('SelfSubjectRulesReview', { namespace: 'team' }) });
    expect(r.status, r.text).toBe(201);
    expect(r.json()).toMatchObject({
      status: {
        resourceRules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'], resourceNames: ['p1'] }],
        nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }],
        incomplete: false,
      },
    });
    const other = await t.request('POST', `/apis/${AUTHZ}/v1/selfsubjectrulesreviews`, {
      body: review('SelfSubjectRulesReview', { namespace: 'default' }),
      headers: { 'Impersonate-User': 'ann' },
    });
    expect(other.json()).toMatchObject({ status: { incomplete: true } });
  });
});

describe('access reviews, an authorizer that cannot list rules', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ authorizer: { authorize: async () => ({ decision: 'allow' }) } });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('SelfSubjectRulesReview is incomplete', async () => {
    const r = await t.request('POST', `/apis/${AUTHZ}/v1/selfsubjectrulesreviews`, { body: review('SelfSubjectRulesReview', { namespace: 'default' }) });
    expect(r.status, r.text).toBe(201);
    expect(r.json()).toMatchObject({ status: { resourceRules: [], nonResourceRules: [], incomplete: true } });
  });
});

describe('kubectl auth can-i', () => {
  let open: TestServer;
  let policed: TestServer;
  beforeAll(async () => {
    open = await startTestServer({ apiDomain: 'k8s.io' });
    policed = await startTestServer({ apiDomain: 'k8s.io', authorizer: new PolicyAuthorizer() });
  });
  afterAll(async () => {
    await open?.stop();
    await policed?.stop();
  });

  const kubectl = (t: TestServer, ...args: string[]) => runKubectl(t.server.kubeconfigPath, args);

  it('allow-all: yes, and --list prints the * rules', async () => {
    let r = await kubectl(open, 'auth', 'can-i', 'get', 'pods');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('yes');
    r = await kubectl(open, 'auth', 'can-i', '--list');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs/);
    expect(r.stdout).toMatch(/\*\.\*\s+\[\]\s+\[\]\s+\[\*\]/);
  });

  it('policy: a denied verb is no with exit code 1; --list prints the rules', async () => {
    let r = await kubectl(policed, 'auth', 'can-i', 'delete', 'secrets');
    expect(r.code).toBe(1);
    expect(r.stdout.trim()).toBe('no - secrets are forever');
    r = await kubectl(policed, 'auth', 'can-i', 'get', 'pods');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('yes');
    r = await kubectl(policed, 'auth', 'can-i', '--list', '-n', 'team');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/pods\s+\[\]\s+\[p1\]\s+\[get list\]/);
    expect(r.stdout).toMatch(/\[\/healthz\]\s+\[\]\s+\[get\]/);
  });
});
