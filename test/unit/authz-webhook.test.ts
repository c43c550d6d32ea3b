// The Webhook authorizer against a real HTTPS SubjectAccessReview server on
// loopback (generated CA, client certificate required).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import client from 'prom-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { compileCel } from '../../src/auth/authn/cel.js';
import { loadWebhookKubeconfig } from '../../src/auth/authn/webhook.js';
import { AuthorizationMetrics } from '../../src/auth/authz/metrics.js';
import type { RequestAttributes } from '../../src/auth/authz/types.js';
import { type FailurePolicy, WebhookAuthorizer, type WebhookAuthorizerOptions } from '../../src/auth/authz/webhook.js';
import { type AuthzWebhook, type ReviewHandler, answer, startAuthzWebhook } from '../helpers/authz-webhook.js';

let dir: string;
let hook: AuthzWebhook;

/** decides by user name: allow-*, deny-*, none-*, hang, garbage, wrongkind, wrongversion, badstatus, http500 */
const byUser: ReviewHandler = (review, res) => {
  const user = String(review.spec.user);
  if (user === 'hang') return;
  if (user === 'garbage') return void res.end('this is not json');
  if (user === 'wrongkind') return void res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'TokenReview', status: { allowed: true } }));
  if (user === 'wrongversion') return void res.end(JSON.stringify({ apiVersion: 'authorization.orch.io/v9', kind: 'SubjectAccessReview', status: { allowed: true } }));
  if (user === 'badstatus') return answer(res, review, { allowed: 'yes' });
  if (user === 'http500') {
    res.statusCode = 500;
    return void res.end('{}');
  }
  if (user.startsWith('allow')) return answer(res, review, { allowed: true, reason: 'hook says yes' });
  if (user.startsWith('deny')) return answer(res, review, { allowed: false, denied: true, reason: 'hook says no' });
  answer(res, review, { allowed: false });
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-authz-webhook-'));
  hook = await startAuthzWebhook(dir, byUser);
});
afterAll(async () => {
  await hook?.close();
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  hook.handler = byUser;
  hook.seen.length = 0;
});

let clock = 1_000_000;
function make(o: Partial<WebhookAuthorizerOptions> = {}): WebhookAuthorizer {
  return new WebhookAuthorizer({
    name: 'hook',
    target: loadWebhookKubeconfig(hook.kubeconfig, 'test'),
    group: 'authorization.orch.io',
    version: 'v1',
    timeoutMs: 2_000,
    authorizedTtlMs: 300_000,
    unauthorizedTtlMs: 30_000,
    failurePolicy: 'NoOpinion',
    now: () => clock,
    ...o,
  });
}

function attrs(user: string, extra: Partial<RequestAttributes> = {}): RequestAttributes {
  return {
    user: { username: user, uid: 'u-1', groups: ['g1', 'system:authenticated'], extra: { scopes: ['a', 'b'] } },
    verb: 'list',
    isResourceRequest: true,
    path: '/api/v1/namespaces/ns/pods',
    apiGroup: '',
    apiVersion: 'v1',
    namespace: 'ns',
    resource: 'pods',
    subresource: '',
    name: '',
    ...extra,
  };
}

describe('webhook answers', () => {
  it('allow, deny and no opinion; the review carries user, uid, groups, extra and resource attributes with selectors', async () => {
    const w = make();
    const sel = { labelSelector: [{ key: 'app', operator: 'In', values: ['web'] }], fieldSelector: [{ key: 'spec.nodeName', operator: 'NotIn', values: ['n1'] }] };
    expect(await w.authorize(attrs('allow-1', sel))).toEqual({ decision: 'allow', reason: 'hook says yes' });
    expect((await w.authorize(attrs('deny-1'))).decision).toBe('deny');
    expect((await w.authorize(attrs('none-1'))).decision).toBe('noOpinion');
    const first = hook.seen[0]!;
    expect(first.apiVersion).toBe('authorization.orch.io/v1');
    expect(first.kind).toBe('SubjectAccessReview');
    expect(first.peer).toBe('apiserver-client');
    expect(first.spec).toEqual({
      user: 'allow-1',
      uid: 'u-1',
      groups: ['g1', 'system:authenticated'],
      extra: { scopes: ['a', 'b'] },
      resourceAttributes: {
        namespace: 'ns',
        verb: 'list',
        group: '',
        version: 'v1',
        resource: 'pods',
        labelSelector: { requirements: sel.labelSelector },
        fieldSelector: { requirements: sel.fieldSelector },
      },
    });
  });

  it('non-resource requests carry path and verb; subresource and name are sent', async () => {
    const w = make();
    await w.authorize(attrs('allow-nr', { isResourceRequest: false, path: '/healthz', verb: 'get' }));
    expect(hook.seen[0]!.spec.nonResourceAttributes).toEqual({ path: '/healthz', verb: 'get' });
    expect(hook.seen[0]!.spec.resourceAttributes).toBeUndefined();
    await w.authorize(attrs('allow-sub', { verb: 'get', subresource: 'log', name: 'p1' }));
    expect(hook.seen[1]!.spec.resourceAttributes).toMatchObject({ subresource: 'log', name: 'p1' });
  });

  it('v1beta1 sends `group` instead of `groups` and expects the answer in v1beta1', async () => {
    const w = make({ version: 'v1beta1' });
    expect((await w.authorize(attrs('allow-beta'))).decision).toBe('allow');
    expect(hook.seen[0]!.apiVersion).toBe('authorization.orch.io/v1beta1');
    expect(hook.seen[0]!.spec.group).toEqual(['g1', 'system:authenticated']);
    expect(hook.seen[0]!.spec.groups).toBeUndefined();
  });
});

describe('failures follow failurePolicy', () => {
  const bad = ['garbage', 'wrongkind', 'wrongversion', 'badstatus', 'http500'];
  for (const policy of ['NoOpinion', 'Deny'] as FailurePolicy[]) {
    it(`${policy}: garbage answers are errors, never crashes, never cached`, async () => {
      const w = make({ failurePolicy: policy });
      for (const u of bad) {
        const d = await w.authorize(attrs(u));
        expect(d.decision, u).toBe(policy === 'Deny' ? 'deny' : 'noOpinion');
        // kube: (decisionOnError, "", err): the failure is an error, not a reason
        expect(d.reason, u).toBeUndefined();
        expect(d.errors, u).toEqual([expect.stringMatching(/^webhook hook: /)]);
      }
      const calls = w.calls;
      await w.authorize(attrs('garbage'));
      expect(w.calls).toBe(calls + 1);
    });
    it(`${policy}: a hanging webhook times out`, async () => {
      const w = make({ failurePolicy: policy, timeoutMs: 300 });
      const d = await w.authorize(attrs('hang'));
      expect(d.decision).toBe(policy === 'Deny' ? 'deny' : 'noOpinion');
      expect(d.errors?.[0]).toMatch(/timed out/);
    });
  }
  it('both allowed and denied: a deny with the reason and an error, as kube', async () => {
    hook.handler = (review, res) => answer(res, review, { allowed: true, denied: true, reason: 'confused' });
    expect(await make().authorize(attrs('both'))).toEqual({
      decision: 'deny',
      reason: 'confused',
      errors: ['webhook subject access review returned both allow and deny response'],
    });
  });
  it('cannot list rules: incomplete with kube\'s error', async () => {
    expect(await make().rulesFor(attrs('x').user, 'ns')).toEqual({
      resourceRules: [],
      nonResourceRules: [],
      incomplete: true,
      errors: ['webhook authorizer does not support user rule resolution'],
    });
  });
  it('an unreachable webhook is an error', async () => {
    const target = loadWebhookKubeconfig(hook.kubeconfig, 'test');
    const w = make({ target: { ...target, server: 'https://127.0.0.1:1/authorize' }, failurePolicy: 'Deny' });
    expect((await w.authorize(attrs('allow-x'))).decision).toBe('deny');
  });
});

describe('cache', () => {
  it('allowed answers live authorizedTTL, others unauthorizedTTL (injected clock)', async () => {
    const w = make({ authorizedTtlMs: 60_000, unauthorizedTtlMs: 10_000 });
    const a = attrs('allow-c');
    const n = attrs('none-c');
    await w.authorize(a);
    await w.authorize(n);
    expect(w.calls).toBe(2);
    clock += 9_999;
    await w.authorize(a);
    await w.authorize(n);
    expect(w.calls).toBe(2);
    clock += 1;
    await w.authorize(n);
    expect(w.calls).toBe(3);
    await w.authorize(a);
    expect(w.calls).toBe(3);
    clock += 50_000;
    await w.authorize(a);
    expect(w.calls).toBe(4);
  });
  it('the key is the whole review: another verb or namespace is a new review', async () => {
    const w = make();
    await w.authorize(attrs('allow-k'));
    await w.authorize(attrs('allow-k', { verb: 'watch' }));
    await w.authorize(attrs('allow-k', { namespace: 'other' }));
    await w.authorize(attrs('allow-k', { user: { username: 'allow-k', groups: ['other'] } }));
    expect(w.calls).toBe(4);
    await w.authorize(attrs('allow-k'));
    expect(w.calls).toBe(4);
  });
  it('deny answers are cached for unauthorizedTTL', async () => {
    const w = make();
    await w.authorize(attrs('deny-c'));
    expect((await w.authorize(attrs('deny-c'))).decision).toBe('deny');
    expect(w.calls).toBe(1);
  });
});

describe('matchConditions', () => {
  const cond = (e: string) => compileCel(e, ['request'], 'test');
  it('all true calls the webhook; any false skips it', async () => {
    const w = make({ matchConditions: [cond("has(request.resourceAttributes)"), cond("request.resourceAttributes.namespace != 'kube-system'")] });
    expect((await w.authorize(attrs('allow-m'))).decision).toBe('allow');
    expect(w.calls).toBe(1);
    expect((await w.authorize(attrs('allow-m', { namespace: 'kube-system' }))).decision).toBe('noOpinion');
    expect((await w.authorize(attrs('allow-m', { isResourceRequest: false, path: '/x', verb: 'get' }))).decision).toBe('noOpinion');
    expect(w.calls).toBe(1);
  });
  it('an error with no false follows failurePolicy; a false wins over an error', async () => {
    const erring = cond('request.resourceAttributes.nosuchfield == "x"');
    for (const [policy, want] of [
      ['Deny', 'deny'],
      ['NoOpinion', 'noOpinion'],
    ] as const) {
      const w = make({ failurePolicy: policy, matchConditions: [erring] });
      const d = await w.authorize(attrs('allow-e'));
      expect(d.decision).toBe(want);
      expect(d.errors?.[0]).toMatch(/matchConditions/);
      expect(w.calls).toBe(0);
    }
    const w = make({ failurePolicy: 'Deny', matchConditions: [erring, cond("request.user == 'someone-else'")] });
    expect((await w.authorize(attrs('allow-e'))).decision).toBe('noOpinion');
  });
  it('request.groups and user fields are visible (v1 shape, also for v1beta1 webhooks)', async () => {
    const w = make({ version: 'v1beta1', matchConditions: [cond("'g1' in request.groups && request.user.startsWith('allow')")] });
    expect((await w.authorize(attrs('allow-g'))).decision).toBe('allow');
    expect((await w.authorize(attrs('none-g'))).decision).toBe('noOpinion');
    expect(w.calls).toBe(1);
  });
});

describe('metrics', () => {
  it('counts evaluations, cache hits, fail-opens and match-condition exclusions', async () => {
    const registry = new client.Registry();
    const metrics = new AuthorizationMetrics(registry);
    const w = make({ metrics, matchConditions: [compileCel("request.user != 'skip'", ['request'], 't')] });
    await w.authorize(attrs('allow-q'));
    await w.authorize(attrs('allow-q'));
    await w.authorize(attrs('garbage'));
    await w.authorize(attrs('skip'));
    const text = await registry.metrics();
    expect(text).toContain('apiserver_authorization_webhook_evaluations_total{name="hook",result="success"} 1');
    expect(text).toContain('apiserver_authorization_webhook_evaluations_total{name="hook",result="error"} 1');
    expect(text).toContain('apiserver_authorization_webhook_cache_hits_total{name="hook"} 1');
    expect(text).toContain('apiserver_authorization_webhook_evaluations_fail_open_total{name="hook",result="error"} 1');
    expect(text).toContain('apiserver_authorization_match_condition_exclusions_total{type="Webhook",name="hook"} 1');
    expect(text).toMatch(/apiserver_authorization_webhook_duration_seconds_count\{name="hook",result="success"\} 1/);
  });
});

describe('deadline', () => {
  it('a webhook that keeps trickling bytes is cut at the timeout', async () => {
    hook.handler = (_review, res) => {
      res.setHeader('Content-Type', 'application/json');
      res.write(' ');
      const t = setInterval(() => res.write(' '), 50);
      res.on('close', () => clearInterval(t));
    };
    const w = make({ failurePolicy: 'Deny', timeoutMs: 400 });
    const d = await w.authorize(attrs('allow-trickle'));
    expect(d.decision).toBe('deny');
    expect(d.errors?.[0]).toMatch(/timed out after 400 ms/);
  });
});
