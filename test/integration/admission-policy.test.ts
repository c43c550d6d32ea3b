// ValidatingAdmissionPolicy and bindings against a real server: CEL
// validations that Deny (the validation's reason and code), Warn (a Warning
// header) or Audit; parameters by name and by selector, with
// parameterNotFoundAction; messageExpression; namespaceObject; failurePolicy
// on expression errors; and the 422s for bad policies and bindings.

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer } from '../helpers/server.js';

const AR = '/apis/admissionregistration.orch.io/v1';
const VAP = `${AR}/validatingadmissionpolicies`;
const VAPB = `${AR}/validatingadmissionpolicybindings`;
const CM = (ns = 'default') => `/api/v1/namespaces/${ns}/configmaps`;

let ts: TestServer;

beforeAll(async () => {
  ts = await startTestServer();
  expect((await ts.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'strict', labels: { tier: 'strict' } } } })).status).toBe(201);
});

afterAll(async () => {
  await ts?.stop();
});

afterEach(async () => {
  await ts.request('DELETE', VAPB);
  await ts.request('DELETE', VAP);
  await ts.request('DELETE', `${CM()}?labelSelector=param`);
});

const CM_RULES = { resourceRules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }] };

async function policy(name: string, spec: Record<string, unknown>): Promise<void> {
  const r = await ts.request('POST', VAP, { body: { metadata: { name }, spec: { matchConstraints: CM_RULES, ...spec } } });
  expect(r.status, r.text).toBe(201);
}

async function binding(name: string, spec: Record<string, unknown>): Promise<void> {
  const r = await ts.request('POST', VAPB, { body: { metadata: { name }, spec } });
  expect(r.status, r.text).toBe(201);
}

let n = 0;
function cm(keys: number, labels?: Record<string, string>) {
  const data: Record<string, string> = {};
  for (let i = 0; i < keys; i++) data[`k${i}`] = 'v';
  return { metadata: { name: `vap-${n++}`, ...(labels ? { labels } : {}) }, data };
}

function warnings(h: Record<string, string | string[] | undefined>): string[] {
  const w = h.warning;
  // Node joins repeated headers with ", "
  return (w === undefined ? [] : Array.isArray(w) ? w : [w]).flatMap((x) => x.split(/, (?=299 - ")/));
}

describe('validations', () => {
  it('Deny refuses with 422 Invalid and the policy and binding named; nothing is written', async () => {
    await policy('max-keys', { validations: [{ expression: 'size(object.data) <= 2' }] });
    await binding('max-keys-b', { policyName: 'max-keys', validationActions: ['Deny'] });
    expect((await ts.request('POST', CM(), { body: cm(2) })).status).toBe(201);
    const body = cm(3);
    const r = await ts.request('POST', CM(), { body });
    expect(r.status).toBe(422);
    const s = r.json<{ reason: string; message: string }>();
    expect(s.reason).toBe('Invalid');
    expect(s.message).toBe("ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys-b' denied request: failed expression: size(object.data) <= 2");
    expect((await ts.request('GET', `${CM()}/${body.metadata.name}`)).status).toBe(404);
  });

  it('Warn admits with a Warning header; message, messageExpression and reason are used', async () => {
    await policy('warn-keys', {
      validations: [
        { expression: 'size(object.data) <= 1', messageExpression: "'has ' + string(size(object.data)) + ' keys'" },
        { expression: "!has(object.metadata.labels) || !('bad' in object.metadata.labels)", message: 'label bad is not allowed', reason: 'Forbidden' },
      ],
    });
    await binding('warn-keys-b', { policyName: 'warn-keys', validationActions: ['Warn'] });
    const r = await ts.request('POST', CM(), { body: cm(3, { bad: 'x' }) });
    expect(r.status).toBe(201);
    expect(warnings(r.headers)).toEqual([
      `299 - "Validation failed for ValidatingAdmissionPolicy 'warn-keys' with binding 'warn-keys-b': has 3 keys"`,
      `299 - "Validation failed for ValidatingAdmissionPolicy 'warn-keys' with binding 'warn-keys-b': label bad is not allowed"`,
    ]);
    // the same policy bound for Deny too: the reason decides the code (Forbidden → 403)
    await binding('warn-keys-deny', { policyName: 'warn-keys', validationActions: ['Deny', 'Audit'], matchResources: { objectSelector: { matchLabels: { bad: 'x' } }, ...CM_RULES } });
    const d = await ts.request('POST', CM(), { body: cm(1, { bad: 'x' }) });
    expect(d.status).toBe(403);
    expect(d.json<{ message: string }>().message).toContain('label bad is not allowed');
    expect(warnings(d.headers)).toHaveLength(1);
    // Audit alone neither warns nor refuses
    await ts.request('DELETE', VAPB);
    await binding('audit-only', { policyName: 'warn-keys', validationActions: ['Audit'] });
    const a = await ts.request('POST', CM(), { body: cm(3, { bad: 'x' }) });
    expect(a.status).toBe(201);
    expect(warnings(a.headers)).toEqual([]);
  });

  it('oldObject on update, namespaceObject and matchConstraints selectors', async () => {
    await policy('immutable-k0', {
      matchConstraints: { ...CM_RULES, namespaceSelector: { matchLabels: { tier: 'strict' } } },
      validations: [
        { expression: "request.operation != 'UPDATE' || object.data.k0 == oldObject.data.k0", message: 'k0 is immutable' },
        { expression: "namespaceObject.metadata.labels.tier == 'strict'" },
      ],
    });
    await binding('immutable-k0-b', { policyName: 'immutable-k0', validationActions: ['Deny'] });
    const c = await ts.request('POST', CM('strict'), { body: { metadata: { name: 'imm' }, data: { k0: 'a' } } });
    expect(c.status, c.text).toBe(201);
    const u = await ts.request('PATCH', `${CM('strict')}/imm`, { body: { data: { k0: 'b' } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(u.status).toBe(422);
    expect(u.json<{ message: string }>().message).toContain('k0 is immutable');
    // outside the selected namespaces the policy does not apply
    expect((await ts.request('POST', CM(), { body: { metadata: { name: 'imm' }, data: { k0: 'a' } } })).status).toBe(201);
    expect((await ts.request('PATCH', `${CM()}/imm`, { body: { data: { k0: 'b' } }, headers: { 'Content-Type': 'application/merge-patch+json' } })).status).toBe(200);
  });
});

describe('params', () => {
  it('by name: the params object decides, changes take effect at once; absent params per parameterNotFoundAction', async () => {
    await policy('param-max', {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      validations: [{ expression: 'size(object.data) <= int(params.data.max)', messageExpression: "'at most ' + params.data.max + ' keys'" }],
    });
    await binding('param-max-b', { policyName: 'param-max', validationActions: ['Deny'], paramRef: { name: 'limits', namespace: 'default', parameterNotFoundAction: 'Deny' }, matchResources: { ...CM_RULES, objectSelector: { matchExpressions: [{ key: 'param', operator: 'DoesNotExist' }] } } });
    // no params yet: Deny
    const none = await ts.request('POST', CM(), { body: cm(1) });
    expect(none.status).toBe(422);
    expect(none.json<{ message: string }>().message).toContain('no params found for policy binding with `Deny` parameterNotFoundAction');
    expect((await ts.request('POST', CM(), { body: { metadata: { name: 'limits', labels: { param: 'yes' } }, data: { max: '2' } } })).status).toBe(201);
    expect((await ts.request('POST', CM(), { body: cm(2) })).status).toBe(201);
    const over = await ts.request('POST', CM(), { body: cm(3) });
    expect(over.status).toBe(422);
    expect(over.json<{ message: string }>().message).toContain('at most 2 keys');
    expect((await ts.request('PATCH', `${CM()}/limits`, { body: { data: { max: '5' } }, headers: { 'Content-Type': 'application/merge-patch+json' } })).status).toBe(200);
    expect((await ts.request('POST', CM(), { body: cm(3) })).status).toBe(201);
    // Allow: no params, no evaluation
    await ts.request('DELETE', VAPB);
    await binding('param-allow', { policyName: 'param-max', validationActions: ['Deny'], paramRef: { name: 'absent', namespace: 'default', parameterNotFoundAction: 'Allow' } });
    expect((await ts.request('POST', CM(), { body: cm(9) })).status).toBe(201);
  });

  it('by selector: evaluated with every matching params object', async () => {
    await policy('param-sel', {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      validations: [{ expression: '!(params.data.forbidden in object.data)', messageExpression: "'key ' + params.data.forbidden + ' is forbidden'" }],
    });
    for (const [name, key] of [['p-a', 'alpha'], ['p-b', 'beta']]) {
      expect((await ts.request('POST', CM(), { body: { metadata: { name, labels: { param: 'sel' } }, data: { forbidden: key! } } })).status).toBe(201);
    }
    await binding('param-sel-b', { policyName: 'param-sel', validationActions: ['Warn'], paramRef: { selector: { matchLabels: { param: 'sel' } }, parameterNotFoundAction: 'Deny' } });
    const r = await ts.request('POST', CM(), { body: { metadata: { name: 'sel-1' }, data: { alpha: '1', beta: '2' } } });
    expect(r.status).toBe(201);
    const w = warnings(r.headers);
    expect(w.some((x) => x.includes('key alpha is forbidden'))).toBe(true);
    expect(w.some((x) => x.includes('key beta is forbidden'))).toBe(true);
  });

  it('a paramKind that is not served follows the failurePolicy', async () => {
    await policy('param-missing-kind', { paramKind: { apiVersion: 'example.com/v1', kind: 'Nope' }, validations: [{ expression: 'true' }] });
    await binding('pmk', { policyName: 'param-missing-kind', validationActions: ['Deny'], paramRef: { name: 'x', parameterNotFoundAction: 'Allow' } });
    const r = await ts.request('POST', CM(), { body: cm(1) });
    expect(r.status).toBe(422);
    expect(r.json<{ message: string }>().message).toContain('paramKind example.com/v1, Kind=Nope is not served');
  });
});

describe('failure policy and bad configuration', () => {
  it('an expression error: Fail refuses, Ignore admits', async () => {
    await policy('err', { validations: [{ expression: 'object.spec.replicas > 1' }] });
    await binding('err-b', { policyName: 'err', validationActions: ['Deny'] });
    const r = await ts.request('POST', CM(), { body: cm(1) });
    expect(r.status).toBe(422);
    expect(r.json<{ message: string }>().message).toContain("expression 'object.spec.replicas > 1' resulted in error");
    const p = (await ts.request('GET', `${VAP}/err`)).json<{ spec: Record<string, unknown> }>();
    p.spec.failurePolicy = 'Ignore';
    expect((await ts.request('PUT', `${VAP}/err`, { body: p })).status).toBe(200);
    expect((await ts.request('POST', CM(), { body: cm(1) })).status).toBe(201);
  });

  it('invalid CEL, reasons, actions and paramRefs are 422 with the field named', async () => {
    const bad = await ts.request('POST', VAP, {
      body: { metadata: { name: 'bad' }, spec: { matchConstraints: CM_RULES, failurePolicy: 'Sometimes', validations: [{ expression: 'object.data ==' }, { expression: 'nope.x', reason: 'Teapot' }, { expression: 'true', messageExpression: '1 +' }] } },
    });
    expect(bad.status).toBe(422);
    const fields = bad.json<{ details: { causes: { field: string }[] } }>().details.causes.map((c) => c.field);
    expect(fields).toEqual(expect.arrayContaining(['spec.failurePolicy', 'spec.validations[0].expression', 'spec.validations[1].expression', 'spec.validations[1].reason', 'spec.validations[2].messageExpression']));
    expect(bad.text).toContain("undeclared reference to 'nope'");
    const noRules = await ts.request('POST', VAP, { body: { metadata: { name: 'bad2' }, spec: { validations: [{ expression: 'true' }] } } });
    expect(noRules.status).toBe(422);
    expect(noRules.text).toContain('spec.matchConstraints');
    const b = await ts.request('POST', VAPB, { body: { metadata: { name: 'bad-b' }, spec: { policyName: 'x', validationActions: ['Deny', 'Warn'], paramRef: { name: 'a', selector: {} } } } });
    expect(b.status).toBe(422);
    const bf = b.json<{ details: { causes: { field: string }[] } }>().details.causes.map((c) => c.field);
    expect(bf).toEqual(expect.arrayContaining(['spec.validationActions', 'spec.paramRef', 'spec.paramRef.parameterNotFoundAction']));
    expect((await ts.request('GET', `${VAP}/bad`)).status).toBe(404);
  });

  it('a binding naming no policy does nothing', async () => {
    await binding('orphan', { policyName: 'does-not-exist', validationActions: ['Deny'] });
    expect((await ts.request('POST', CM(), { body: cm(5) })).status).toBe(201);
  });
});
