import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAuthorizationConfiguration, parseAuthorizationConfiguration, parseGoDuration } from '../../src/auth/authz/config.js';

const V = 'apiserver.config.orch.io/v1';
const webhook = (over: Record<string, unknown> = {}) => ({
  timeout: '3s',
  subjectAccessReviewVersion: 'v1',
  matchConditionSubjectAccessReviewVersion: 'v1',
  failurePolicy: 'NoOpinion',
  connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: '/etc/hook.kubeconfig' },
  ...over,
});
const doc = (authorizers: unknown[]) => ({ apiVersion: V, kind: 'AuthorizationConfiguration', authorizers });
const parse = (authorizers: unknown[]) => parseAuthorizationConfiguration(doc(authorizers), 'orch.io');
const parseWebhook = (over: Record<string, unknown>) => parse([{ type: 'Webhook', name: 'w', webhook: webhook(over) }]);

describe('durations', () => {
  it('parses Go durations', () => {
    expect(parseGoDuration('5m0s')).toBe(300_000);
    expect(parseGoDuration('1h2m3s')).toBe(3_723_000);
    expect(parseGoDuration('1.5s')).toBe(1500);
    expect(parseGoDuration('250ms')).toBe(250);
    expect(parseGoDuration('0')).toBe(0);
    for (const bad of ['', '5', 'abc', '5 m', '5x', '-1s']) expect(parseGoDuration(bad), bad).toBeUndefined();
  });
});

describe('AuthorizationConfiguration', () => {
  it('applies defaults: authorizedTTL 5m0s, unauthorizedTTL 30s, no matchConditions', () => {
    const c = parse([{ type: 'Webhook', name: 'w', webhook: webhook() }, { type: 'Node', name: 'node' }, { type: 'RBAC', name: 'rbac' }]);
    expect(c.authorizers.map((a) => `${a.type}/${a.name}`)).toEqual(['Webhook/w', 'Node/node', 'RBAC/rbac']);
    const w = c.authorizers[0]!;
    if (w.type !== 'Webhook') throw new Error('expected a webhook');
    expect(w.webhook).toMatchObject({ timeoutMs: 3000, authorizedTtlMs: 300_000, unauthorizedTtlMs: 30_000, subjectAccessReviewVersion: 'v1', failurePolicy: 'NoOpinion', kubeConfigFile: '/etc/hook.kubeconfig' });
    expect(w.webhook.matchConditions).toEqual([]);
  });
  it('reads every webhook field', () => {
    const c = parseWebhook({ authorizedTTL: '10s', unauthorizedTTL: '1m', subjectAccessReviewVersion: 'v1beta1', failurePolicy: 'Deny', timeout: '30s', matchConditions: [{ expression: 'has(request.resourceAttributes)' }] });
    const w = c.authorizers[0]!;
    if (w.type !== 'Webhook') throw new Error('expected a webhook');
    expect(w.webhook).toMatchObject({ timeoutMs: 30_000, authorizedTtlMs: 10_000, unauthorizedTtlMs: 60_000, subjectAccessReviewVersion: 'v1beta1', failurePolicy: 'Deny' });
    expect(w.webhook.matchConditions[0]!.evaluate({ request: { resourceAttributes: {} } })).toBe(true);
  });

  const cases: [string, () => unknown, RegExp][] = [
    ['apiVersion', () => parseAuthorizationConfiguration({ ...doc([]), apiVersion: 'apiserver.config.k8s.io/v1' }, 'orch.io'), /^apiVersion: Invalid value/],
    ['kind', () => parseAuthorizationConfiguration({ ...doc([]), kind: 'AuthenticationConfiguration' }, 'orch.io'), /^kind: Invalid value/],
    ['unknown top field', () => parseAuthorizationConfiguration({ ...doc([{ type: 'RBAC', name: 'r' }]), extra: 1 }, 'orch.io'), /\.extra: unknown field/],
    ['no authorizers', () => parse([]), /^authorizers: Required value/],
    ['type missing', () => parse([{ name: 'x' }]), /^authorizers\[0\]\.type: Required value/],
    ['type unsupported', () => parse([{ type: 'ABAC', name: 'x' }]), /^authorizers\[0\]\.type: Unsupported value: "ABAC"/],
    ['name missing', () => parse([{ type: 'RBAC' }]), /^authorizers\[0\]\.name: Required value/],
    ['name not a DNS label', () => parse([{ type: 'RBAC', name: 'My_RBAC' }]), /^authorizers\[0\]\.name: Invalid value/],
    ['name duplicate', () => parse([{ type: 'RBAC', name: 'a' }, { type: 'Node', name: 'a' }]), /^authorizers\[1\]\.name: Duplicate value: "a"/],
    ['type twice (Node/RBAC)', () => parse([{ type: 'RBAC', name: 'a' }, { type: 'RBAC', name: 'b' }]), /^authorizers\[1\]\.type: Duplicate value/],
    ['webhook section on RBAC', () => parse([{ type: 'RBAC', name: 'a', webhook: webhook() }]), /^authorizers\[0\]\.webhook: Invalid value/],
    ['webhook section missing', () => parse([{ type: 'Webhook', name: 'w' }]), /^authorizers\[0\]\.webhook: Required value/],
    ['timeout missing', () => parseWebhook({ timeout: undefined }), /^authorizers\[0\]\.webhook\.timeout: Required value/],
    ['timeout > 30s', () => parseWebhook({ timeout: '31s' }), /^authorizers\[0\]\.webhook\.timeout: Invalid value: "31s": must be at most 30s/],
    ['timeout 0', () => parseWebhook({ timeout: '0s' }), /webhook\.timeout: .*greater than 0/],
    ['timeout malformed', () => parseWebhook({ timeout: 'soon' }), /webhook\.timeout: Invalid value: "soon"/],
    ['authorizedTTL malformed', () => parseWebhook({ authorizedTTL: 5 }), /webhook\.authorizedTTL: Invalid value: 5/],
    ['unauthorizedTTL malformed', () => parseWebhook({ unauthorizedTTL: '1d' }), /webhook\.unauthorizedTTL: Invalid value/],
    ['subjectAccessReviewVersion missing', () => parseWebhook({ subjectAccessReviewVersion: undefined }), /webhook\.subjectAccessReviewVersion: Required value/],
    ['subjectAccessReviewVersion bad', () => parseWebhook({ subjectAccessReviewVersion: 'v2' }), /webhook\.subjectAccessReviewVersion: Unsupported value: "v2"/],
    ['matchConditionSubjectAccessReviewVersion missing', () => parseWebhook({ matchConditionSubjectAccessReviewVersion: undefined }), /webhook\.matchConditionSubjectAccessReviewVersion: Required value/],
    ['matchConditionSubjectAccessReviewVersion v1beta1', () => parseWebhook({ matchConditionSubjectAccessReviewVersion: 'v1beta1' }), /matchConditionSubjectAccessReviewVersion: Unsupported value/],
    ['failurePolicy missing', () => parseWebhook({ failurePolicy: undefined }), /webhook\.failurePolicy: Required value/],
    ['failurePolicy bad', () => parseWebhook({ failurePolicy: 'Allow' }), /webhook\.failurePolicy: Unsupported value: "Allow"/],
    ['connectionInfo missing', () => parseWebhook({ connectionInfo: undefined }), /webhook\.connectionInfo: Required value/],
    ['connectionInfo type bad', () => parseWebhook({ connectionInfo: { type: 'URL' } }), /webhook\.connectionInfo\.type: Unsupported value/],
    ['InClusterConfig refused', () => parseWebhook({ connectionInfo: { type: 'InClusterConfig' } }), /connectionInfo\.type: Invalid value: "InClusterConfig": the server cannot call its own/],
    ['kubeConfigFile missing', () => parseWebhook({ connectionInfo: { type: 'KubeConfigFile' } }), /connectionInfo\.kubeConfigFile: Required value/],
    ['unknown webhook field', () => parseWebhook({ timeoutSeconds: 3 }), /webhook\.timeoutSeconds: unknown field/],
    ['> 64 matchConditions', () => parseWebhook({ matchConditions: Array.from({ length: 65 }, (_, i) => ({ expression: `request.user != 'u${i}'` })) }), /webhook\.matchConditions: Too many: 65: must have at most 64/],
    ['matchCondition without expression', () => parseWebhook({ matchConditions: [{}] }), /matchConditions\[0\]\.expression: Required value/],
    ['matchCondition duplicate', () => parseWebhook({ matchConditions: [{ expression: 'true' }, { expression: 'true' }] }), /matchConditions\[1\]\.expression: Duplicate value/],
    ['matchCondition syntax', () => parseWebhook({ matchConditions: [{ expression: 'request.user ==' }] }), /matchConditions\[0\]\.expression: Invalid value: compilation failed/],
    ['matchCondition unknown variable', () => parseWebhook({ matchConditions: [{ expression: "claims.sub == 'x'" }] }), /matchConditions\[0\]\.expression: .*undeclared reference to 'claims'/],
  ];
  for (const [what, run, err] of cases) it(`rejects: ${what}`, () => expect(run).toThrow(err));

  it('64 matchConditions are accepted', () => {
    expect(() => parseWebhook({ matchConditions: Array.from({ length: 64 }, (_, i) => ({ expression: `request.user != 'u${i}'` })) })).not.toThrow();
  });
});

describe('the file', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'orch-authz-config-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));
  it('reads YAML and JSON; errors name the flag and the path', async () => {
    const y = join(dir, 'c.yaml');
    await writeFile(y, `apiVersion: ${V}\nkind: AuthorizationConfiguration\nauthorizers:\n- type: RBAC\n  name: rbac\n`);
    expect(loadAuthorizationConfiguration(y, 'orch.io').authorizers).toEqual([{ type: 'RBAC', name: 'rbac' }]);
    const j = join(dir, 'c.json');
    await writeFile(j, JSON.stringify(doc([{ type: 'Node', name: 'node' }])));
    expect(loadAuthorizationConfiguration(j, 'orch.io').authorizers).toEqual([{ type: 'Node', name: 'node' }]);
    await writeFile(j, JSON.stringify(doc([{ type: 'Webhook', name: 'w', webhook: webhook({ timeout: '1m' }) }])));
    expect(() => loadAuthorizationConfiguration(j, 'orch.io')).toThrow(`--authorization-config: ${j}: authorizers[0].webhook.timeout: Invalid value: "1m": must be at most 30s`);
    await writeFile(y, 'authorizers: [\n');
    expect(() => loadAuthorizationConfiguration(y, 'orch.io')).toThrow(/^--authorization-config: .*c\.yaml: /);
    expect(() => loadAuthorizationConfiguration(join(dir, 'missing.yaml'), 'orch.io')).toThrow(/^--authorization-config: .*ENOENT/);
  });
});
