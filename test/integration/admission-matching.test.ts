// Which requests reach a webhook: rules (operations, resources with
// sub-resources and wildcards, scope), namespaceSelector, objectSelector and
// CEL matchConditions (with their error handling per failurePolicy), CONNECT
// requests, exempt admission kinds, and configuration changes taking effect
// at once, with no restart.

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { type AdmissionWebhook, startAdmissionWebhook } from '../helpers/admission-webhook.js';

const AR = '/apis/admissionregistration.orch.io/v1';
const VWC = `${AR}/validatingwebhookconfigurations`;

let ts: TestServer;
let hook: AdmissionWebhook;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-admission-match-'));
  ts = await startTestServer();
  hook = await startAdmissionWebhook(dir);
  for (const [name, labels] of [['team-a', { team: 'a' }], ['team-b', { team: 'b' }]] as const) {
    expect((await ts.request('POST', '/api/v1/namespaces', { body: { metadata: { name, labels } } })).status).toBe(201);
  }
});

afterAll(async () => {
  await hook?.close();
  await ts?.stop();
  await rm(dir, { recursive: true, force: true });
});

afterEach(async () => {
  await ts.request('DELETE', VWC);
  hook.seen.length = 0;
});

async function configure(extra: Record<string, unknown>): Promise<void> {
  const r = await ts.request('POST', VWC, {
    body: {
      metadata: { name: 'match' },
      webhooks: [{
        name: 'match.test.x',
        clientConfig: { url: hook.url('/seen'), caBundle: hook.caBundle },
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        ...extra,
      }],
    },
  });
  expect(r.status, r.text).toBe(201);
}

let n = 0;
async function createCm(ns: string, labels: Record<string, string> = {}): Promise<number> {
  const r = await ts.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name: `cm-${n++}`, labels }, data: {} } });
  return r.status;
}

const names = () => hook.seen.map((s) => (s.review.request.object as { metadata: { name: string } }).metadata.name);

describe('selectors', () => {
  it('namespaceSelector: only namespaces whose labels match', async () => {
    await configure({ namespaceSelector: { matchLabels: { team: 'a' } } });
    expect(await createCm('team-a')).toBe(201);
    expect(await createCm('team-b')).toBe(201);
    expect(await createCm('default')).toBe(201);
    expect(hook.seen.map((s) => s.review.request.namespace)).toEqual(['team-a']);
  });

  it('namespaceSelector with matchExpressions (NotIn, DoesNotExist)', async () => {
    await configure({ namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'NotIn', values: ['a'] }] } });
    await createCm('team-a');
    await createCm('team-b');
    await createCm('default');
    expect(hook.seen.map((s) => s.review.request.namespace).sort()).toEqual(['default', 'team-b']);
  });

  it('objectSelector: only objects whose labels match', async () => {
    await configure({ objectSelector: { matchExpressions: [{ key: 'audit', operator: 'Exists' }] } });
    await createCm('default', { audit: 'yes' });
    await createCm('default', { other: 'x' });
    await createCm('default');
    expect(hook.seen).toHaveLength(1);
    expect((hook.seen[0]!.review.request.object as { metadata: { labels: Record<string, string> } }).metadata.labels.audit).toBe('yes');
  });
});

describe('matchConditions (CEL)', () => {
  it('all true calls; any false skips; request and object are visible', async () => {
    await configure({
      matchConditions: [
        { name: 'not-system', expression: "!request.userInfo.username.startsWith('system:')" },
        { name: 'only-big', expression: "has(object.metadata.labels) && 'big' in object.metadata.labels" },
      ],
    });
    await createCm('default', { big: '1' });
    await createCm('default', { small: '1' });
    expect(hook.seen).toHaveLength(1);
    expect(names()).toEqual([`cm-${n - 2}`]);
  });

  it('an error with no false condition follows the failure policy (Fail refuses, Ignore skips)', async () => {
    await configure({ matchConditions: [{ name: 'boom', expression: 'object.spec.missing == 1' }] });
    const r = await ts.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'mc-err' }, data: {} } });
    expect(r.status).toBe(500);
    expect(r.json<{ message: string }>().message).toContain('failed calling webhook "match.test.x": matchCondition "boom" failed');
    await ts.request('DELETE', VWC);
    await configure({ failurePolicy: 'Ignore', matchConditions: [{ name: 'boom', expression: 'object.spec.missing == 1' }] });
    expect(await createCm('default')).toBe(201);
    expect(hook.seen).toHaveLength(0);
  });

  it('a condition that is false wins over one that errors', async () => {
    await configure({ matchConditions: [{ name: 'boom', expression: 'object.spec.missing == 1' }, { name: 'no', expression: 'false' }] });
    expect(await createCm('default')).toBe(201);
    expect(hook.seen).toHaveLength(0);
  });
});

describe('rules', () => {
  it('sub-resources need their own rule form; scope Cluster skips namespaced kinds', async () => {
    await configure({ rules: [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/status'] }] });
    const pod = { metadata: { name: 'p1' }, spec: { containers: [{ name: 'c', image: 'x' }] } };
    expect((await ts.request('POST', '/api/v1/namespaces/default/pods', { body: pod })).status).toBe(201);
    expect((await ts.request('PATCH', '/api/v1/namespaces/default/pods/p1', { body: { metadata: { labels: { a: 'b' } } }, headers: { 'Content-Type': 'application/merge-patch+json' } })).status).toBe(200);
    expect(hook.seen).toHaveLength(0);
    const st = await ts.request('PATCH', '/api/v1/namespaces/default/pods/p1/status', { body: { status: { phase: 'Running' } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(st.status, st.text).toBe(200);
    expect(hook.seen).toHaveLength(1);
    expect(hook.seen[0]!.review.request.subResource).toBe('status');
    await ts.request('DELETE', VWC);
    hook.seen.length = 0;
    await configure({ rules: [{ operations: ['CREATE'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], scope: 'Cluster' }] });
    expect(await createCm('default')).toBe(201);
    expect((await ts.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'scoped-ns' } } })).status).toBe(201);
    expect(hook.seen.map((s) => s.review.request.resource)).toEqual([{ group: '', version: 'v1', resource: 'namespaces' }]);
  });

  it('CONNECT: a webhook can refuse pods/exec; it sees PodExecOptions', async () => {
    hook.on.set('/seen', { allowed: false, status: { message: 'no exec here' } });
    try {
      await configure({ rules: [{ operations: ['CONNECT'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/exec'] }] });
      const pod = { metadata: { name: 'p2' }, spec: { containers: [{ name: 'c', image: 'x' }] } };
      expect((await ts.request('POST', '/api/v1/namespaces/default/pods', { body: pod })).status).toBe(201);
      const r = await ts.request('POST', '/api/v1/namespaces/default/pods/p2/exec?command=ls&stdout=true&container=c');
      // a denial without a code is 400 (kube 1.32's ToStatusErr)
      expect(r.status, r.text).toBe(400);
      expect(r.json<{ message: string }>().message).toContain('no exec here');
      expect(hook.seen[0]!.review.request.operation).toBe('CONNECT');
      expect(hook.seen[0]!.review.request.object).toMatchObject({ kind: 'PodExecOptions', command: ['ls'], stdout: true, container: 'c' });
    } finally {
      hook.on.delete('/seen');
    }
  });

  it('webhook configurations themselves never go to webhooks (no lock-out)', async () => {
    hook.on.set('/seen', { allowed: false });
    try {
      await configure({ rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }] });
      const r = await ts.request('PATCH', `${VWC}/match`, { body: { metadata: { labels: { x: 'y' } } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
      expect(r.status).toBe(200);
      expect(await createCm('default')).toBe(400);
    } finally {
      hook.on.delete('/seen');
    }
  });
});

describe('configuration changes', () => {
  it('take effect at once: created, changed and deleted with no restart', async () => {
    expect(await createCm('default')).toBe(201);
    expect(hook.seen).toHaveLength(0);
    await configure({});
    expect(await createCm('default')).toBe(201);
    expect(hook.seen).toHaveLength(1);
    const cur = (await ts.request('GET', `${VWC}/match`)).json<{ webhooks: Record<string, unknown>[] }>();
    cur.webhooks[0]!.objectSelector = { matchLabels: { never: 'x' } };
    expect((await ts.request('PUT', `${VWC}/match`, { body: cur })).status).toBe(200);
    expect(await createCm('default')).toBe(201);
    expect(hook.seen).toHaveLength(1);
    expect((await ts.request('DELETE', `${VWC}/match`)).status).toBe(200);
    hook.on.set('/seen', { allowed: false });
    try {
      expect(await createCm('default')).toBe(201);
    } finally {
      hook.on.delete('/seen');
    }
  });
});
