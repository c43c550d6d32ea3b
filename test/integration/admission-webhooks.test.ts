// Admission webhooks against a real server and a real webhook over TLS on
// loopback (its own CA passed as caBundle): mutation by JSON patch and
// re-validation, denial with the webhook's status, warnings as Warning
// headers, each failure policy with the webhook down, a timeout, answers that
// are garbage, dry run with each sideEffects value (spec 000 §4.7), a Service
// reference resolved through Endpoints, and bad configurations (422).

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestServer } from '../helpers/server.js';
import { type AdmissionWebhook, startAdmissionWebhook, useServerWithWebhook } from '../helpers/admission-webhook.js';
import { freePort } from '../helpers/ports.js';

const AR = '/apis/admissionregistration.orch.io/v1';
const VWC = `${AR}/validatingwebhookconfigurations`;
const MWC = `${AR}/mutatingwebhookconfigurations`;
const CM = '/api/v1/namespaces/default/configmaps';

let ts: TestServer;
let hook: AdmissionWebhook;
useServerWithWebhook('orch-admission-', (s, h) => {
  ts = s;
  hook = h;
});

afterEach(async () => {
  await ts.request('DELETE', VWC);
  await ts.request('DELETE', MWC);
  hook.on.clear();
  hook.seen.length = 0;
});

type Hook = Record<string, unknown>;

function webhook(name: string, path: string, extra: Hook = {}): Hook {
  return {
    name,
    clientConfig: { url: hook.url(path), caBundle: hook.caBundle },
    rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    ...extra,
  };
}

async function configure(kind: 'validating' | 'mutating', name: string, hooks: Hook[]): Promise<void> {
  const r = await ts.request('POST', kind === 'validating' ? VWC : MWC, {
    body: { metadata: { name }, webhooks: hooks },
  });
  expect(r.status, r.text).toBe(201);
}

const cm = (name: string, extra: Record<string, unknown> = {}) => ({ metadata: { name, ...extra }, data: { k: 'v' } });

function warnings(h: Record<string, string | string[] | undefined>): string[] {
  const w = h.warning;
  // Node joins repeated headers with ", "
  return (w === undefined ? [] : Array.isArray(w) ? w : [w]).flatMap((x) => x.split(/, (?=299 - ")/));
}

describe('webhook configurations are ordinary kinds', () => {
  it('are defaulted as v1 says and listed in discovery', async () => {
    await configure('validating', 'defaults', [webhook('a.defaults.test', '/allow')]);
    const got = (await ts.request('GET', `${VWC}/defaults`)).json<{ webhooks: Hook[] }>();
    expect(got.webhooks[0]).toMatchObject({ failurePolicy: 'Fail', matchPolicy: 'Equivalent', timeoutSeconds: 10, namespaceSelector: {}, objectSelector: {} });
    expect((got.webhooks[0]!.rules as Hook[])[0]!.scope).toBe('*');
    const disc = (await ts.request('GET', AR)).json<{ resources: { name: string }[] }>();
    expect(disc.resources.map((r) => r.name)).toEqual(
      expect.arrayContaining(['mutatingwebhookconfigurations', 'validatingwebhookconfigurations', 'validatingadmissionpolicies', 'validatingadmissionpolicybindings']),
    );
  });

  it('refuses bad configurations with 422 naming each field, and stores nothing', async () => {
    const r = await ts.request('POST', VWC, {
      body: {
        metadata: { name: 'bad' },
        webhooks: [
          { name: 'short', clientConfig: {}, rules: [{ operations: ['FROB'], apiGroups: [], apiVersions: ['v1'], resources: ['pods'] }], timeoutSeconds: 31, admissionReviewVersions: ['v1'] },
          { ...webhook('dup.bad.test', '/x'), sideEffects: 'Some', clientConfig: { url: 'http://127.0.0.1/x' } },
          { ...webhook('dup.bad.test', '/x'), matchConditions: [{ name: 'c', expression: 'object.metadata.name ==' }] },
        ],
      },
    });
    expect(r.status).toBe(422);
    const s = r.json<{ reason: string; details: { causes: { field: string }[] } }>();
    expect(s.reason).toBe('Invalid');
    const fields = s.details.causes.map((c) => c.field);
    expect(fields).toEqual(
      expect.arrayContaining([
        'webhooks[0].name',
        'webhooks[0].sideEffects',
        'webhooks[0].timeoutSeconds',
        'webhooks[0].clientConfig',
        'webhooks[0].rules[0].operations',
        'webhooks[0].rules[0].apiGroups',
        'webhooks[1].sideEffects',
        'webhooks[1].clientConfig.url',
        'webhooks[2].name',
        'webhooks[2].matchConditions[0].expression',
      ]),
    );
    expect((await ts.request('GET', `${VWC}/bad`)).status).toBe(404);
  });
});

describe('mutating and validating webhooks', () => {
  it('a mutating webhook patches, the result is validated, a validating webhook sees the patched object', async () => {
    hook.on.set('/mutate', { allowed: true, patch: [{ op: 'add', path: '/data/added', value: 'by-webhook' }, { op: 'add', path: '/metadata/labels', value: { mutated: 'yes' } }], warnings: ['mutated for you'] });
    await configure('mutating', 'm', [webhook('m.mutate.test', '/mutate')]);
    await configure('validating', 'v', [webhook('v.validate.test', '/validate')]);
    const r = await ts.request('POST', CM, { body: cm('mut1') });
    expect(r.status, r.text).toBe(201);
    const o = r.json<{ data: Record<string, string>; metadata: { labels: Record<string, string> } }>();
    expect(o.data.added).toBe('by-webhook');
    expect(o.metadata.labels.mutated).toBe('yes');
    expect(warnings(r.headers)).toContain('299 - "mutated for you"');
    const v = hook.seen.find((s) => s.path === '/validate')!;
    expect(v.review.apiVersion).toBe('admission.orch.io/v1');
    expect(v.review.request).toMatchObject({ operation: 'CREATE', namespace: 'default', name: 'mut1', resource: { group: '', version: 'v1', resource: 'configmaps' } });
    expect((v.review.request.object as { data: Record<string, string> }).data.added).toBe('by-webhook');
    const m = hook.seen.find((s) => s.path === '/mutate')!;
    expect(m.review.request.uid).toBe(v.review.request.uid);
    expect((m.review.request.userInfo as { username: string }).username).toBe('orch-admin');
    // stored as patched
    const g = (await ts.request('GET', `${CM}/mut1`)).json<{ data: Record<string, string> }>();
    expect(g.data.added).toBe('by-webhook');
  });

  it('an update a webhook patched is defaulted again, as kube decodes the patched object through its scheme', async () => {
    const dep = '/apis/apps/v1/namespaces/default/deployments';
    const tmpl = { metadata: { labels: { app: 'redefault' } }, spec: { containers: [{ name: 'a', image: 'busybox:1.36' }] } };
    const body = { metadata: { name: 'redefault' }, spec: { replicas: 1, selector: { matchLabels: { app: 'redefault' } }, template: tmpl } };
    expect((await ts.request('POST', dep, { body })).status).toBe(201);
    hook.on.set('/mutate', { allowed: true, patch: [{ op: 'add', path: '/spec/template/spec/containers/-', value: { name: 'added', image: 'busybox' } }] });
    await configure('mutating', 'm', [webhook('m.mutate.test', '/mutate', { rules: [{ operations: ['UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }] })]);
    const r = await ts.request('PATCH', `${dep}/redefault`, { body: { metadata: { labels: { touched: 'yes' } } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(r.status, r.text).toBe(200);
    const added = r.json<{ spec: { template: { spec: { containers: Record<string, unknown>[] } } } }>().spec.template.spec.containers[1]!;
    expect(added).toMatchObject({ name: 'added', imagePullPolicy: 'Always', terminationMessagePolicy: 'File' });
  });

  it('a patch that breaks the schema is refused like a bad request body, nothing stored', async () => {
    hook.on.set('/mutate', { allowed: true, patch: [{ op: 'add', path: '/data/n', value: 5 }] });
    await configure('mutating', 'm', [webhook('m.mutate.test', '/mutate')]);
    const r = await ts.request('POST', CM, { body: cm('mut-bad') });
    expect(r.status).toBe(400);
    expect(r.text).toContain('data[n]');
    expect((await ts.request('GET', `${CM}/mut-bad`)).status).toBe(404);
  });

  it('a denial returns the webhook status code and message; warnings come with it; nothing is written', async () => {
    hook.on.set('/deny', { allowed: false, status: { code: 403, reason: 'Forbidden', message: 'configmaps named deny-* are not welcome' }, warnings: ['think again'] });
    await configure('validating', 'v', [webhook('deny.validate.test', '/deny')]);
    const r = await ts.request('POST', CM, { body: cm('deny-1') });
    expect(r.status).toBe(403);
    const s = r.json<{ message: string; reason: string; code: number }>();
    expect(s.message).toBe('admission webhook "deny.validate.test" denied the request: configmaps named deny-* are not welcome');
    expect(s.reason).toBe('Forbidden');
    expect(warnings(r.headers)).toContain('299 - "think again"');
    expect((await ts.request('GET', `${CM}/deny-1`)).status).toBe(404);
    // another code passes through as given
    hook.on.set('/deny', { allowed: false, status: { code: 422, reason: 'Invalid', message: 'nope' } });
    const r2 = await ts.request('POST', CM, { body: cm('deny-2') });
    expect(r2.status).toBe(422);
    expect(r2.json<{ reason: string }>().reason).toBe('Invalid');
  });

  it('update and delete go to webhooks with oldObject; a denied delete leaves the object', async () => {
    expect((await ts.request('POST', CM, { body: cm('upd1') })).status).toBe(201);
    hook.on.set('/deny-delete', (s, res) => {
      res.setHeader('Content-Type', 'application/json');
      const allowed = s.review.request.operation !== 'DELETE';
      res.end(JSON.stringify({ apiVersion: s.review.apiVersion, kind: 'AdmissionReview', response: { uid: s.review.request.uid, allowed, status: { message: 'kept' } } }));
    });
    await configure('validating', 'v', [webhook('d.validate.test', '/deny-delete', { rules: [{ operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }] })]);
    const u = await ts.request('PATCH', `${CM}/upd1`, { body: { data: { k: 'v2' } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(u.status).toBe(200);
    const upd = hook.seen.find((s) => s.review.request.operation === 'UPDATE')!;
    expect((upd.review.request.oldObject as { data: Record<string, string> }).data.k).toBe('v');
    expect((upd.review.request.object as { data: Record<string, string> }).data.k).toBe('v2');
    const d = await ts.request('DELETE', `${CM}/upd1`);
    // the webhook's status has no code: 400, as kube 1.32's ToStatusErr
    expect(d.status).toBe(400);
    expect(d.json<{ message: string }>().message).toContain('kept');
    const del = hook.seen.find((s) => s.review.request.operation === 'DELETE')!;
    expect(del.review.request.object).toBeNull();
    expect((del.review.request.oldObject as { metadata: { name: string } }).metadata.name).toBe('upd1');
    expect((await ts.request('GET', `${CM}/upd1`)).status).toBe(200);
  });

  it('IfNeeded webhooks are called again when a later webhook changed the object', async () => {
    let firstCalls = 0;
    hook.on.set('/first', (s, res) => {
      firstCalls++;
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ apiVersion: s.review.apiVersion, kind: 'AdmissionReview', response: { uid: s.review.request.uid, allowed: true } }));
    });
    hook.on.set('/second', { allowed: true, patch: [{ op: 'add', path: '/data/second', value: 'x' }] });
    await configure('mutating', 'a-first', [webhook('first.mutate.test', '/first', { reinvocationPolicy: 'IfNeeded' })]);
    await configure('mutating', 'b-second', [webhook('second.mutate.test', '/second')]);
    expect((await ts.request('POST', CM, { body: cm('reinv') })).status).toBe(201);
    expect(firstCalls).toBe(2);
    const seenFirst = hook.seen.filter((s) => s.path === '/first');
    expect((seenFirst[1]!.review.request.object as { data: Record<string, string> }).data.second).toBe('x');
    // Never: called once
    firstCalls = 0;
    await ts.request('DELETE', MWC);
    await configure('mutating', 'a-first', [webhook('first.mutate.test', '/first')]);
    await configure('mutating', 'b-second', [webhook('second.mutate.test', '/second')]);
    expect((await ts.request('POST', CM, { body: cm('reinv2') })).status).toBe(201);
    expect(firstCalls).toBe(1);
  });
});

describe('failures and the failure policy', () => {
  it('webhook down: Fail refuses with 500 naming the webhook; Ignore lets the write through', async () => {
    const dead = await freePort();
    const down = (name: string, failurePolicy: string): Hook => ({ ...webhook(name, '/x', { failurePolicy }), clientConfig: { url: `https://127.0.0.1:${dead}/x`, caBundle: hook.caBundle } });
    await configure('validating', 'down', [down('down.fail.test', 'Fail')]);
    const r = await ts.request('POST', CM, { body: cm('down1') });
    expect(r.status).toBe(500);
    const s = r.json<{ message: string; reason: string }>();
    expect(s.reason).toBe('InternalError');
    expect(s.message).toContain('failed calling webhook "down.fail.test"');
    expect(s.message).toContain('connection refused');
    expect((await ts.request('GET', `${CM}/down1`)).status).toBe(404);
    await ts.request('DELETE', VWC);
    await configure('validating', 'down', [down('down.ignore.test', 'Ignore')]);
    expect((await ts.request('POST', CM, { body: cm('down2') })).status).toBe(201);
    const metrics = (await ts.request('GET', '/metrics')).text;
    expect(metrics).toContain('apiserver_admission_webhook_rejection_count{name="down.fail.test",type="validating",error_type="calling_webhook_error"} 1');
    expect(metrics).toContain('apiserver_admission_webhook_fail_open_count{name="down.ignore.test",type="validating"} 1');
  });

  it('a webhook that does not answer in timeoutSeconds: Fail → 500 deadline exceeded; Ignore → allowed', async () => {
    hook.on.set('/hang', () => {});
    await configure('validating', 'slow', [webhook('slow.fail.test', '/hang', { timeoutSeconds: 1 })]);
    const r = await ts.request('POST', CM, { body: cm('slow1') });
    expect(r.status).toBe(500);
    expect(r.json<{ message: string }>().message).toMatch(/failed calling webhook "slow.fail.test": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/hang\?timeout=1s": context deadline exceeded/);
    await ts.request('DELETE', VWC);
    await configure('validating', 'slow', [webhook('slow.ignore.test', '/hang', { timeoutSeconds: 1, failurePolicy: 'Ignore' })]);
    expect((await ts.request('POST', CM, { body: cm('slow2') })).status).toBe(201);
  });

  it('garbage answers are the webhook failing, never a crash', async () => {
    const answers: [string, (res: ServerResponse, uid: string) => void, RegExp][] = [
      ['/not-json', (res) => res.end('<html>hello</html>'), /invalid webhook response/],
      ['/wrong-uid', (res) => res.end(JSON.stringify({ apiVersion: 'admission.orch.io/v1', kind: 'AdmissionReview', response: { uid: 'nope', allowed: true } })), /expected response.uid/],
      ['/wrong-kind', (res, uid) => res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Status', response: { uid, allowed: true } })), /expected webhook response of admission.orch.io\/v1/],
      ['/no-response', (res) => res.end(JSON.stringify({ apiVersion: 'admission.orch.io/v1', kind: 'AdmissionReview' })), /response was absent/],
      ['/status-500', (res) => { res.statusCode = 500; res.end(); }, /status code 500/],
      ['/bad-patch', (res, uid) => res.end(JSON.stringify({ apiVersion: 'admission.orch.io/v1', kind: 'AdmissionReview', response: { uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from('[{"op":"frob"}]').toString('base64') } })), /JSON patch could not be applied/],
      ['/bad-patchtype', (res, uid) => res.end(JSON.stringify({ apiVersion: 'admission.orch.io/v1', kind: 'AdmissionReview', response: { uid, allowed: true, patchType: 'MergePatch', patch: 'e30=' } })), /patchType "MergePatch" is not supported/],
    ];
    for (const [path, answer] of answers) hook.on.set(path, (s, res) => answer(res, s.review.request.uid));
    let i = 0;
    for (const [path, , message] of answers) {
      await ts.request('DELETE', MWC);
      await configure('mutating', 'garbage', [webhook(`g${i}.garbage.test`, path)]);
      const r = await ts.request('POST', CM, { body: cm(`garbage-${i}`) });
      expect(r.status, path).toBe(500);
      expect(r.json<{ message: string }>().message, path).toMatch(message);
      expect((await ts.request('GET', `${CM}/garbage-${i}`)).status).toBe(404);
      i++;
    }
    // the server is fine
    expect((await ts.request('GET', '/readyz')).status).toBe(200);
  });

  it('a webhook whose certificate the caBundle does not trust fails per failurePolicy', async () => {
    const otherDir = await mkdtemp(join(tmpdir(), 'orch-admission-other-'));
    const other = await startAdmissionWebhook(otherDir);
    try {
      await configure('validating', 'untrusted', [{ ...webhook('untrusted.test.x', '/x'), clientConfig: { url: other.url('/x'), caBundle: hook.caBundle } }]);
      const r = await ts.request('POST', CM, { body: cm('untrusted') });
      expect(r.status).toBe(500);
      expect(r.json<{ message: string }>().message).toMatch(/tls|certificate/i);
      expect(other.seen).toHaveLength(0);
    } finally {
      await other.close();
      await rm(otherDir, { recursive: true, force: true });
    }
  });
});

describe('dry run and sideEffects (spec 000 §4.7)', () => {
  it('None and NoneOnDryRun are called with dryRun=true; nothing is stored', async () => {
    for (const se of ['None', 'NoneOnDryRun']) {
      await ts.request('DELETE', VWC);
      hook.seen.length = 0;
      await configure('validating', 'dry', [webhook(`dry-${se.toLowerCase()}.test.x`, '/allow', { sideEffects: se })]);
      const r = await ts.request('POST', `${CM}?dryRun=All`, { body: cm(`dry-${se.toLowerCase()}`) });
      expect(r.status, se).toBe(201);
      expect(hook.seen).toHaveLength(1);
      expect(hook.seen[0]!.review.request.dryRun).toBe(true);
      expect((await ts.request('GET', `${CM}/dry-${se.toLowerCase()}`)).status).toBe(404);
    }
  });

  it('Unknown and Some (kept from older versions) refuse a dry run without calling the webhook', async () => {
    for (const se of ['Unknown', 'Some']) {
      await ts.request('DELETE', VWC);
      hook.seen.length = 0;
      // v1 no longer accepts these on create (422), so the stored object is written as an older version would have
      const refused = await ts.request('POST', VWC, { body: { metadata: { name: 'legacy' }, webhooks: [webhook('legacy.test.x', '/allow', { sideEffects: se })] } });
      expect(refused.status).toBe(422);
      const obj = { apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'legacy', uid: 'u', creationTimestamp: '2026-01-01T00:00:00Z' }, webhooks: [webhook('legacy.test.x', '/allow', { sideEffects: se })] };
      await ts.server.store.txn({ compare: [], success: [{ type: 'put', key: '/registry/admissionregistration.orch.io/validatingwebhookconfigurations/legacy', value: new TextEncoder().encode(JSON.stringify(obj)) }], failure: [] });
      const r = await ts.request('POST', `${CM}?dryRun=All`, { body: cm(`dry-${se.toLowerCase()}`) });
      expect(r.status, r.text).toBe(400);
      expect(r.json<{ message: string }>().message).toBe('admission webhook "legacy.test.x" does not support dry run');
      expect(hook.seen).toHaveLength(0);
      // a real write still calls it
      expect((await ts.request('POST', CM, { body: cm(`real-${se.toLowerCase()}`) })).status).toBe(201);
      expect(hook.seen).toHaveLength(1);
      expect(hook.seen[0]!.review.request.dryRun).toBe(false);
    }
  });
});

describe('service references', () => {
  it('resolve through the Service and its Endpoints, checking the certificate for <svc>.<ns>.svc', async () => {
    const svc = await ts.request('POST', '/api/v1/namespaces/default/services', { body: { metadata: { name: 'hook' }, spec: { ports: [{ name: 'https', port: 443, targetPort: hook.port }] } } });
    expect(svc.status, svc.text).toBe(201);
    const ref = { ...webhook('svc.validate.test', '/x'), clientConfig: { service: { namespace: 'default', name: 'hook', path: '/svc' }, caBundle: hook.caBundle } };
    await configure('validating', 'svc', [ref]);
    // no endpoints yet: a clear failure per failurePolicy
    const r1 = await ts.request('POST', CM, { body: cm('svc1') });
    expect(r1.status).toBe(500);
    expect(r1.json<{ message: string }>().message).toContain('no endpoints available for service "hook"');
    const ep = await ts.request('POST', '/api/v1/namespaces/default/endpoints', { body: { metadata: { name: 'hook' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: hook.port }] }] } });
    expect([200, 201]).toContain(ep.status);
    const r2 = await ts.request('POST', CM, { body: cm('svc2') });
    expect(r2.status, r2.text).toBe(201);
    expect(hook.seen.some((s) => s.path === '/svc')).toBe(true);
    // pointing at nothing at all
    await ts.request('DELETE', VWC);
    await configure('validating', 'nothing', [{ ...ref, name: 'nothing.validate.test', clientConfig: { service: { namespace: 'default', name: 'absent' } } }]);
    const r3 = await ts.request('POST', CM, { body: cm('svc3') });
    expect(r3.status).toBe(500);
    expect(r3.json<{ message: string }>().message).toContain('service "absent" not found');
    await ts.request('DELETE', VWC);
    await configure('validating', 'nothing', [{ ...ref, name: 'nothing.validate.test', failurePolicy: 'Ignore', clientConfig: { service: { namespace: 'default', name: 'absent' } } }]);
    expect((await ts.request('POST', CM, { body: cm('svc4') })).status).toBe(201);
  });
});
