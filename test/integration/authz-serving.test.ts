// Authorization against started servers with real identities (static token
// file users): an ABAC policy file, and an `--authorization-config` whose
// webhook (real, loopback TLS) is replaced while serving; a broken file keeps
// the previous chain and counts a failed reload. spec 001 §5.12, §5.16, §5.17.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import client from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthorizationMetrics } from '../../src/auth/authz/metrics.js';
import { type AuthorizationSetup, buildAuthorization } from '../../src/server/authorization-setup.js';
import { type AuthzWebhook, answer, startAuthzWebhook } from '../helpers/authz-webhook.js';
import { runKubectl } from '../helpers/kubectl.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let dir: string;
let tokens: string;
const as = (token: string) => ({ headers: { Authorization: `Bearer ${token}` }, anonymous: true });
const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-authz-serving-'));
  tokens = join(dir, 'tokens.csv');
  await writeFile(tokens, ['alice-token,alice,uid-alice,dev', 'bob-token,bob,uid-bob', 'carol-token,carol,uid-carol,"dev,ops"'].join('\n'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('ABAC (--authorization-mode=ABAC --authorization-policy-file)', () => {
  let t: TestServer;
  beforeAll(async () => {
    const p = (spec: object) => JSON.stringify({ apiVersion: 'abac.authorization.orch.io/v1beta1', kind: 'Policy', spec });
    const policy = join(dir, 'abac.jsonl');
    await writeFile(
      policy,
      [
        '# alice reads everything in default',
        p({ user: 'alice', namespace: 'default', resource: '*', apiGroup: '*', readonly: true }),
        '',
        p({ group: 'ops', namespace: 'default', resource: 'configmaps', apiGroup: '' }),
        p({ group: 'system:authenticated', nonResourcePath: '/version', readonly: true }),
      ].join('\n'),
    );
    const setup = await buildAuthorization({ mode: 'ABAC', policyFile: policy }, { apiDomain: 'orch.io', log: () => {} });
    t = await startTestServer({ authorizer: setup.chain, authn: { tokenAuthFile: tokens } });
  });
  afterAll(() => t?.stop());

  it('readonly: alice lists and gets but cannot write', async () => {
    expect((await t.request('GET', '/api/v1/namespaces/default/configmaps', as('alice-token'))).status).toBe(200);
    expect((await t.request('GET', '/api/v1/namespaces/default/pods?watch=false', as('alice-token'))).status).toBe(200);
    const w = await t.request('POST', '/api/v1/namespaces/default/configmaps', { ...as('alice-token'), body: cm('a') });
    expect(w.status).toBe(403);
    expect(w.json()).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403 });
    expect((await t.request('GET', '/api/v1/namespaces/kube-system/configmaps', as('alice-token'))).status).toBe(403);
  });
  it('group policies: ops (carol) writes configmaps in default only', async () => {
    expect((await t.request('POST', '/api/v1/namespaces/default/configmaps', { ...as('carol-token'), body: cm('c1') })).status).toBe(201);
    expect((await t.request('DELETE', '/api/v1/namespaces/default/configmaps/c1', as('carol-token'))).status).toBe(200);
    expect((await t.request('POST', '/api/v1/namespaces/default/secrets', { ...as('carol-token'), body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } } })).status).toBe(403);
  });
  it('non-resource paths: every authenticated user reads /version; bob nothing else', async () => {
    expect((await t.request('GET', '/version', as('bob-token'))).status).toBe(200);
    expect((await t.request('GET', '/api/v1/namespaces/default/configmaps', as('bob-token'))).status).toBe(403);
    expect((await t.request('GET', '/apis', as('bob-token'))).status).toBe(403);
  });
});

describe('--authorization-config with a webhook, changed while serving', () => {
  let t: TestServer;
  let hook: AuthzWebhook;
  let setup: AuthorizationSetup;
  let file: string;
  const registry = new client.Registry();
  const logs: string[] = [];
  // the webhook allows whoever the current config file lets through to it
  const config = (user: string, timeout = '3s') =>
    [
      'apiVersion: apiserver.config.orch.io/v1',
      'kind: AuthorizationConfiguration',
      'authorizers:',
      '- type: Webhook',
      '  name: remote',
      '  webhook:',
      `    timeout: ${timeout}`,
      '    subjectAccessReviewVersion: v1',
      '    matchConditionSubjectAccessReviewVersion: v1',
      '    failurePolicy: Deny',
      '    connectionInfo:',
      '      type: KubeConfigFile',
      `      kubeConfigFile: ${hook.kubeconfig}`,
      '    matchConditions:',
      `    - expression: "request.user == '${user}'"`,
      '',
    ].join('\n');

  beforeAll(async () => {
    hook = await startAuthzWebhook(dir, (review, res) => answer(res, review, { allowed: true, reason: 'remote ok' }));
    file = join(dir, 'authz-config.yaml');
    await writeFile(file, config('alice'));
    setup = await buildAuthorization({ configFile: file }, { apiDomain: 'orch.io', log: (m) => logs.push(m), metrics: new AuthorizationMetrics(registry) });
    setup.start();
    t = await startTestServer({ authorizer: setup.chain, authn: { tokenAuthFile: tokens } });
  });
  afterAll(async () => {
    setup?.stop();
    await t?.stop();
    await hook?.close();
  });

  it('the webhook decides with the user’s identity and the list’s selectors', async () => {
    const r = await t.request('GET', '/api/v1/namespaces/default/configmaps?labelSelector=app%3Dweb', as('alice-token'));
    expect(r.status).toBe(200);
    const sent = hook.seen.at(-1)!;
    expect(sent.spec).toMatchObject({
      user: 'alice',
      uid: 'uid-alice',
      groups: expect.arrayContaining(['dev', 'system:authenticated']),
      resourceAttributes: { namespace: 'default', verb: 'list', resource: 'configmaps', labelSelector: { requirements: [{ key: 'app', operator: 'In', values: ['web'] }] } },
    });
    expect((await t.request('GET', '/api/v1/namespaces/default/configmaps', as('bob-token'))).status).toBe(403);
  });

  it('a rule change takes effect; a broken file keeps the previous chain and counts a failure', async () => {
    await writeFile(file, config('bob'));
    await setup.reload!();
    expect((await t.request('GET', '/api/v1/namespaces/default/configmaps', as('bob-token'))).status).toBe(200);
    expect((await t.request('GET', '/api/v1/namespaces/default/configmaps', as('alice-token'))).status).toBe(403);

    await writeFile(file, config('alice', '90s'));
    await setup.reload!();
    expect((await t.request('GET', '/api/v1/namespaces/default/configmaps', as('bob-token'))).status).toBe(200);
    expect((await t.request('GET', '/api/v1/namespaces/default/configmaps', as('alice-token'))).status).toBe(403);
    expect(logs.some((l) => l.includes('keeping the previous configuration') && l.includes('webhook.timeout'))).toBe(true);
    const text = await registry.metrics();
    expect(text).toMatch(/apiserver_authorization_config_controller_automatic_reloads_total\{status="failure"\} [1-9]/);
    expect(text).toMatch(/apiserver_authorization_config_controller_automatic_reloads_total\{status="success"\} [1-9]/);
    expect(text).toMatch(/apiserver_authorization_decisions_total\{type="Webhook",name="remote",decision="allowed"\} [1-9]/);
    // the admin (system:masters) is never asked about
    expect((await t.request('GET', '/api/v1/namespaces/default/configmaps')).status).toBe(200);
  });
});

describe('--authorization-mode=Node,RBAC,Webhook (flag form), the webhook failing for bob', () => {
  let t: TestServer;
  let hook: AuthzWebhook;
  const failure = 'webhook webhook: remote answered status 500';
  beforeAll(async () => {
    // carol is allowed (answered in the version asked); bob's reviews fail with 500
    hook = await startAuthzWebhook(dir, (review, res) => {
      if (review.spec.user !== 'bob') return answer(res, review, { allowed: review.spec.user === 'carol' });
      res.statusCode = 500;
      res.end('{}');
    });
    t = await startTestServer({ authorization: { mode: 'Node,RBAC,Webhook', webhook: { configFile: hook.kubeconfig } }, authn: { tokenAuthFile: tokens } });
  });
  afterAll(async () => {
    await t?.stop();
    await hook?.close();
  });

  it('sends v1beta1 reviews by default and accepts the v1beta1 answer', async () => {
    expect((await t.request('GET', '/api/v1/namespaces/default/configmaps', as('carol-token'))).status).toBe(200);
    const sent = hook.seen.at(-1)!;
    expect(sent.apiVersion).toBe('authorization.orch.io/v1beta1');
    expect(sent.spec).toMatchObject({ user: 'carol', group: expect.arrayContaining(['dev', 'ops']) });
  });

  it('nobody allowed and the webhook failed: kube\'s plain-text 500, not 403', async () => {
    const r = await t.request('GET', '/api/v1/namespaces/default/configmaps?limit=5', as('bob-token'));
    expect(r.status, r.text).toBe(500);
    expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(r.text).toBe(`Internal Server Error: "/api/v1/namespaces/default/configmaps?limit=5": ${failure}\n`);
    // alice: RBAC and the webhook have no opinion, nothing failed: 403
    expect((await t.request('GET', '/api/v1/namespaces/default/configmaps', as('alice-token'))).status).toBe(403);
  });

  it('SubjectAccessReview reports the failure in status.evaluationError, not in the reason', async () => {
    const r = await t.request('POST', '/apis/authorization.orch.io/v1/subjectaccessreviews', {
      body: { apiVersion: 'authorization.orch.io/v1', kind: 'SubjectAccessReview', spec: { user: 'bob', resourceAttributes: { namespace: 'default', verb: 'list', resource: 'configmaps' } } },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.json<{ status: Record<string, unknown> }>().status).toEqual({ allowed: false, evaluationError: failure });
  });

  it('SelfSubjectRulesReview: the webhook cannot list rules (incomplete, kube\'s error)', async () => {
    const r = await t.request('POST', '/apis/authorization.orch.io/v1/selfsubjectrulesreviews', {
      ...as('carol-token'),
      body: { apiVersion: 'authorization.orch.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: 'default' } },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.json()).toMatchObject({ status: { incomplete: true, evaluationError: 'webhook authorizer does not support user rule resolution' } });
  });

  it('an impersonation check that fails is 403 with no error text (kube\'s impersonation filter)', async () => {
    const r = await t.request('GET', '/api/v1/namespaces/default/configmaps', { headers: { ...as('bob-token').headers, 'Impersonate-User': 'x' }, anonymous: true });
    expect(r.status, r.text).toBe(403);
    expect(r.json()).toMatchObject({ message: 'users "x" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope' });
  });

  it('kubectl shows the 500 as kube\'s InternalError', async () => {
    const r = await runKubectl(t.server.kubeconfigPath, ['get', 'configmaps', '--as=bob']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`Error from server (InternalError): an error on the server ("Internal Server Error: \\"/api/v1/namespaces/default/configmaps?limit=500\\": ${failure}") has prevented the request from succeeding (get configmaps)`);
  });
});
