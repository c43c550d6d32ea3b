// buildAuthorization with real files and a real TLS webhook on loopback:
// `--authorization-config` (webhook links, reload while serving, a broken
// reload keeps the previous chain and counts a failure), the flag-form
// webhook, ABAC, and the startup errors of spec 001 §5.12 / §7.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import client from 'prom-client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AuthorizationMetrics } from '../../src/auth/authz/metrics.js';
import type { RequestAttributes } from '../../src/auth/authz/types.js';
import { type AuthorizationDeps, buildAuthorization } from '../../src/server/authorization-setup.js';
import { type AuthzWebhook, answer, startAuthzWebhook } from '../helpers/authz-webhook.js';

let dir: string;
let hook: AuthzWebhook;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-authz-setup-'));
  // the remote allows users named allow-* and alice/bob, denies deny-*, has no opinion otherwise
  hook = await startAuthzWebhook(dir, (review, res) => {
    const u = String(review.spec.user);
    if (u.startsWith('deny')) return answer(res, review, { allowed: false, denied: true, reason: 'no' });
    answer(res, review, { allowed: u.startsWith('allow') || u === 'alice' || u === 'bob' });
  });
});
afterAll(async () => {
  await hook?.close();
  await rm(dir, { recursive: true, force: true });
});

const req = (username: string, groups: string[] = ['system:authenticated'], verb = 'get'): RequestAttributes => ({
  user: { username, groups },
  verb,
  isResourceRequest: true,
  path: '/api/v1/namespaces/default/pods/p',
  apiGroup: '',
  apiVersion: 'v1',
  namespace: 'default',
  resource: 'pods',
  subresource: '',
  name: 'p',
});

function config(authorizers: string): string {
  return `apiVersion: apiserver.config.orch.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n${authorizers}`;
}
const webhookYaml = (name: string, cond: string, extra = '') =>
  `- type: Webhook\n  name: ${name}\n  webhook:\n    timeout: 3s\n    subjectAccessReviewVersion: v1\n    matchConditionSubjectAccessReviewVersion: v1\n    failurePolicy: NoOpinion\n    connectionInfo:\n      type: KubeConfigFile\n      kubeConfigFile: ${hook.kubeconfig}\n    matchConditions:\n    - expression: "${cond}"\n${extra}`;

function deps(logs: string[], registry = new client.Registry()): AuthorizationDeps & { registry: client.Registry } {
  return { apiDomain: 'orch.io', log: (m) => logs.push(m), metrics: new AuthorizationMetrics(registry), registry };
}

describe('--authorization-config', () => {
  it('builds system:masters first then the file’s links; a change takes effect; a broken file keeps the previous chain', async () => {
    const file = join(dir, 'authz.yaml');
    await writeFile(file, config(webhookYaml('only-alice', "request.user == 'alice'")));
    const logs: string[] = [];
    const d = deps(logs);
    const setup = await buildAuthorization({ configFile: file }, d);
    expect(setup.chain.current().map((e) => `${e.type}/${e.name}`)).toEqual(['SystemMasters/system:masters', 'Webhook/only-alice']);
    expect((await setup.chain.authorize(req('alice'))).decision).toBe('allow');
    expect((await setup.chain.authorize(req('bob'))).decision).toBe('noOpinion');
    expect((await setup.chain.authorize(req('root', ['system:masters']))).decision).toBe('allow');

    await writeFile(file, config(webhookYaml('only-bob', "request.user == 'bob'")));
    await setup.reload!();
    expect((await setup.chain.authorize(req('bob'))).decision).toBe('allow');
    expect((await setup.chain.authorize(req('alice'))).decision).toBe('noOpinion');
    expect(logs.some((l) => /reloaded .*Webhook\/only-bob/.test(l))).toBe(true);

    await writeFile(file, config(webhookYaml('broken', 'true', '    authorizedTTL: 1d\n')));
    await setup.reload!();
    expect(setup.chain.current().map((e) => e.name)).toEqual(['system:masters', 'only-bob']);
    expect((await setup.chain.authorize(req('bob'))).decision).toBe('allow');
    expect(logs.some((l) => /failed, keeping the previous configuration: .*authorizers\[0\]\.webhook\.authorizedTTL/.test(l))).toBe(true);

    await writeFile(file, config(`- type: Webhook\n  name: dup\n${webhookYaml('dup', 'true').split('\n').slice(1).join('\n')}`));
    await setup.reload!();
    expect(setup.chain.current().map((e) => e.name)).toEqual(['system:masters', 'only-bob']);

    const text = await d.registry.metrics();
    expect(text).toContain('apiserver_authorization_config_controller_automatic_reloads_total{status="success"} 1');
    expect(text).toContain('apiserver_authorization_config_controller_automatic_reloads_total{status="failure"} 2');
    expect(text).toMatch(/apiserver_authorization_config_controller_automatic_reload_last_timestamp_seconds\{status="failure"\} \d/);
    expect(text).toContain('apiserver_authorization_decisions_total{type="Webhook",name="only-alice",decision="allowed"} 1');
    expect(text).toContain('apiserver_authorization_decisions_total{type="SystemMasters",name="system:masters",decision="allowed"} 1');
    setup.stop();
  });

  it('notices a changed file by itself (watch or poll)', async () => {
    const file = join(dir, 'watched.yaml');
    await writeFile(file, config(webhookYaml('first', "request.user == 'alice'")));
    const setup = await buildAuthorization({ configFile: file }, { ...deps([]), configReloadIntervalMs: 200 });
    setup.start();
    try {
      await writeFile(file, config(webhookYaml('second', "request.user == 'bob'")));
      await vi.waitFor(() => expect(setup.chain.current().map((e) => e.name)).toContain('second'), { timeout: 20_000, interval: 50 });
      expect((await setup.chain.authorize(req('bob'))).decision).toBe('allow');
    } finally {
      setup.stop();
    }
  });

  it('a bad file at start is a startup error naming the field', async () => {
    const file = join(dir, 'bad.yaml');
    await writeFile(file, config(webhookYaml('w', 'true', '    timeout: 45s\n').replace('    timeout: 3s\n', '')));
    await expect(buildAuthorization({ configFile: file }, deps([]))).rejects.toThrow(/authorizers\[0\]\.webhook\.timeout: Invalid value: "45s": must be at most 30s/);
    await writeFile(file, config(webhookYaml('w', 'true').replace(hook.kubeconfig, join(dir, 'nope.kubeconfig'))));
    await expect(buildAuthorization({ configFile: file }, deps([]))).rejects.toThrow(/authorizers\[0\]\.webhook\.connectionInfo\.kubeConfigFile: .*nope\.kubeconfig/);
  });

  it('cannot be combined with --authorization-mode, --authorization-webhook-* or --authorization-policy-file', async () => {
    const file = join(dir, 'authz.yaml');
    await expect(buildAuthorization({ configFile: file, mode: 'RBAC' }, deps([]))).rejects.toThrow('--authorization-config and --authorization-mode cannot be used together');
    await expect(buildAuthorization({ configFile: file, webhook: { configFile: hook.kubeconfig } }, deps([]))).rejects.toThrow(
      '--authorization-config and --authorization-webhook-config-file cannot be used together',
    );
    await expect(buildAuthorization({ configFile: file, webhook: { configFile: '', unauthorizedTtlMs: 1000 } }, deps([]))).rejects.toThrow(
      '--authorization-config and --authorization-webhook-cache-unauthorized-ttl cannot be used together',
    );
    await expect(buildAuthorization({ configFile: file, policyFile: 'p' }, deps([]))).rejects.toThrow('--authorization-config and --authorization-policy-file cannot be used together');
  });
});

describe('flag form', () => {
  it('--authorization-mode=Webhook with --authorization-webhook-config-file and version v1beta1', async () => {
    const setup = await buildAuthorization({ mode: 'Webhook', webhook: { configFile: hook.kubeconfig, version: 'v1beta1' } }, deps([]));
    const before = hook.seen.length;
    expect((await setup.chain.authorize(req('allow-flag'))).decision).toBe('allow');
    expect((await setup.chain.authorize(req('deny-flag'))).decision).toBe('deny');
    expect((await setup.chain.authorize(req('nobody'))).decision).toBe('noOpinion');
    expect(hook.seen[before]!.apiVersion).toBe('authorization.orch.io/v1beta1');
  });
  it('without --authorization-webhook-version sends v1beta1 (`group`, not `groups`) and takes a v1beta1 answer (kube\'s default, §5.16)', async () => {
    const setup = await buildAuthorization({ mode: 'Webhook', webhook: { configFile: hook.kubeconfig } }, deps([]));
    const before = hook.seen.length;
    expect(await setup.chain.authorize(req('allow-default', ['dev', 'system:authenticated']))).toMatchObject({ decision: 'allow' });
    const sent = hook.seen[before]!;
    expect(sent.apiVersion).toBe('authorization.orch.io/v1beta1');
    expect(sent.spec.group).toEqual(['dev', 'system:authenticated']);
    expect(sent.spec.groups).toBeUndefined();
  });
  it('a failing webhook is no opinion with the error, never a reason (kube: NoOpinion + error in the flag form)', async () => {
    const down = join(dir, 'down.kubeconfig');
    await writeFile(down, (await readFile(hook.kubeconfig, 'utf8')).replace(/server: https:\/\/127\.0\.0\.1:\d+/, 'server: https://127.0.0.1:1'));
    const setup = await buildAuthorization({ mode: 'Webhook', webhook: { configFile: down } }, deps([]));
    const d = await setup.chain.authorize(req('anyone'));
    expect(d.decision).toBe('noOpinion');
    expect(d.reason).toBeUndefined();
    expect(d.errors).toEqual([expect.stringMatching(/^webhook webhook: .*ECONNREFUSED/)]);
  });
  it('Webhook mode needs the config file, and the file needs the mode', async () => {
    await expect(buildAuthorization({ mode: 'Webhook' }, deps([]))).rejects.toThrow(/Webhook requires --authorization-webhook-config-file/);
    await expect(buildAuthorization({ mode: 'AlwaysDeny', webhook: { configFile: hook.kubeconfig } }, deps([]))).rejects.toThrow(/requires Webhook in --authorization-mode/);
  });
  it('--authorization-mode=ABAC,Webhook: ABAC decides first, the webhook after', async () => {
    const policy = join(dir, 'abac.jsonl');
    await writeFile(policy, `# readers\n${JSON.stringify({ apiVersion: 'abac.authorization.orch.io/v1beta1', kind: 'Policy', spec: { user: 'carol', namespace: '*', resource: '*', apiGroup: '*', readonly: true } })}\n`);
    const setup = await buildAuthorization({ mode: 'ABAC,Webhook', policyFile: policy, webhook: { configFile: hook.kubeconfig } }, deps([]));
    expect((await setup.chain.authorize(req('carol'))).decision).toBe('allow');
    expect((await setup.chain.authorize(req('carol', [], 'delete'))).decision).toBe('noOpinion');
    expect((await setup.chain.authorize(req('deny-x', [], 'delete'))).decision).toBe('deny');
  });
  it('ABAC: a missing flag or a malformed line is a startup error naming the line', async () => {
    await expect(buildAuthorization({ mode: 'ABAC' }, deps([]))).rejects.toThrow(/ABAC requires --authorization-policy-file/);
    const policy = join(dir, 'bad.jsonl');
    await writeFile(policy, `\n\n{"apiVersion": "abac.authorization.orch.io/v1beta1", "kind": "Policy", "spec": {"user": "a"}}\n{oops\n`);
    await expect(buildAuthorization({ mode: 'ABAC', policyFile: policy }, deps([]))).rejects.toThrow(/bad\.jsonl: line 4: not valid JSON/);
  });
});
