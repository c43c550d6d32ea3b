// Audit policy (issue 16 item 3): loading errors name the file and the field;
// matching is kube's checker, first matching rule wins.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PolicyEvaluator, loadPolicyFile, parsePolicy } from '../../src/audit/policy.js';
import type { AuditAttributes } from '../../src/audit/types.js';

const alice = { username: 'alice', groups: ['devs', 'system:authenticated'] };
const res = (o: Partial<AuditAttributes>): AuditAttributes => ({
  user: alice,
  isResourceRequest: true,
  path: '/api/v1/namespaces/default/pods',
  verb: 'get',
  group: '',
  version: 'v1',
  namespace: 'default',
  resource: 'pods',
  subresource: '',
  name: '',
  ...o,
});
const nonRes = (path: string, verb = 'get'): AuditAttributes => res({ isResourceRequest: false, path, verb, resource: '', namespace: '', version: '' });

function evaluator(rules: string, head = ''): PolicyEvaluator {
  return new PolicyEvaluator(parsePolicy(`apiVersion: audit.orch.io/v1\nkind: Policy\n${head}rules:\n${rules}`, 'orch.io'));
}

describe('audit policy matching', () => {
  it('first matching rule wins; no match is None', () => {
    const p = evaluator(`
  - level: RequestResponse
    users: [alice]
    verbs: [create]
  - level: Request
    userGroups: [devs]
  - level: Metadata
    users: [bob]
`);
    expect(p.evaluate(res({ verb: 'create' })).level).toBe('RequestResponse');
    expect(p.evaluate(res({ verb: 'get' })).level).toBe('Request');
    expect(p.evaluate(res({ user: { username: 'carol', groups: [] } })).level).toBe('None');
    expect(p.evaluate(res({ user: { username: 'bob', groups: [] } })).level).toBe('Metadata');
    // no user (failed authentication) matches no user or group rule
    expect(p.evaluate(res({ user: undefined })).level).toBe('None');
  });

  it('resources: group, sub-resources, wildcards and names', () => {
    const p = evaluator(`
  - level: RequestResponse
    resources: [{group: "", resources: ["pods/log"]}]
  - level: Request
    resources: [{group: "", resources: ["*/status"]}]
  - level: Metadata
    resources: [{group: "apps", resources: ["deployments/*"]}]
  - level: None
    resources: [{group: "", resources: ["configmaps"], resourceNames: ["leader"]}]
  - level: Request
    resources: [{group: "", resources: ["configmaps"]}]
  - level: Metadata
    resources: [{group: "rbac.authorization.orch.io"}]
`);
    expect(p.evaluate(res({ subresource: 'log' })).level).toBe('RequestResponse');
    // `pods/log` does not match pods itself, nor `pods` any sub-resource
    expect(p.evaluate(res({})).level).toBe('None');
    expect(p.evaluate(res({ subresource: 'status' })).level).toBe('Request');
    expect(p.evaluate(res({ resource: 'nodes', subresource: 'status', namespace: '' })).level).toBe('Request');
    expect(p.evaluate(res({ group: 'apps', resource: 'deployments', subresource: 'scale' })).level).toBe('Metadata');
    // kube: `deployments/*` also matches the resource without a sub-resource
    expect(p.evaluate(res({ group: 'apps', resource: 'deployments' })).level).toBe('Metadata');
    // same resource name in another group does not match
    expect(p.evaluate(res({ group: 'extensions', resource: 'deployments' })).level).toBe('None');
    expect(p.evaluate(res({ resource: 'configmaps', name: 'leader' })).level).toBe('None');
    expect(p.evaluate(res({ resource: 'configmaps', name: 'other' })).level).toBe('Request');
    // a list has no name: resourceNames rules do not match it
    expect(p.evaluate(res({ resource: 'configmaps', verb: 'list' })).level).toBe('Request');
    // a group without resources matches every resource of that group
    expect(p.evaluate(res({ group: 'rbac.authorization.orch.io', resource: 'roles', subresource: '' })).level).toBe('Metadata');
  });

  it('namespaces ("" = cluster-scoped) and non-resource URLs with wildcards', () => {
    const p = evaluator(`
  - level: RequestResponse
    namespaces: ["kube-system"]
  - level: Request
    namespaces: [""]
  - level: None
    nonResourceURLs: ["/healthz*", "/version"]
  - level: Metadata
    nonResourceURLs: ["*"]
`);
    expect(p.evaluate(res({ namespace: 'kube-system' })).level).toBe('RequestResponse');
    expect(p.evaluate(res({ resource: 'nodes', namespace: '' })).level).toBe('Request');
    expect(p.evaluate(res({ namespace: 'default' })).level).toBe('None');
    expect(p.evaluate(nonRes('/healthz')).level).toBe('None');
    expect(p.evaluate(nonRes('/healthz/etcd')).level).toBe('None');
    expect(p.evaluate(nonRes('/version')).level).toBe('None');
    expect(p.evaluate(nonRes('/version/extra')).level).toBe('Metadata');
    expect(p.evaluate(nonRes('/apis')).level).toBe('Metadata');
    // namespace rules never match non-resource requests, URL rules never match resources
    expect(evaluator(`  - level: Metadata\n    namespaces: [""]\n`).evaluate(nonRes('/apis')).level).toBe('None');
    expect(evaluator(`  - level: Metadata\n    nonResourceURLs: ["*"]\n`).evaluate(res({})).level).toBe('None');
  });

  it('omitStages: the policy\'s are added to every rule\'s; omitManagedFields: the rule overrides the policy', () => {
    const p = evaluator(
      `
  - level: Metadata
    verbs: [watch]
    omitStages: [ResponseStarted]
    omitManagedFields: false
  - level: Request
`,
      'omitStages: [RequestReceived]\nomitManagedFields: true\n',
    );
    const w = p.evaluate(res({ verb: 'watch' }));
    expect([...w.omitStages].sort()).toEqual(['RequestReceived', 'ResponseStarted']);
    expect(w.omitManagedFields).toBe(false);
    const g = p.evaluate(res({}));
    expect([...g.omitStages]).toEqual(['RequestReceived']);
    expect(g.omitManagedFields).toBe(true);
  });
});

describe('audit policy loading', () => {
  const bad = (text: string) => () => parsePolicy(text, 'orch.io');

  it('names the field of every mistake', () => {
    expect(bad('apiVersion: audit.orch.io/v1\nkind: Policy\nrules:\n  - level: Loud\n')).toThrow(/rules\[0\]\.level: Unsupported value: "Loud"/);
    expect(bad('apiVersion: audit.orch.io/v1\nkind: Policy\nrules:\n  - users: [a]\n')).toThrow(/rules\[0\]\.level: Required value/);
    expect(bad('apiVersion: audit.orch.io/v1\nkind: Policy\nrules:\n  - level: None\n    omitStage: [RequestReceived]\n')).toThrow(/rules\[0\]\.omitStage: unknown field/);
    expect(bad('apiVersion: audit.orch.io/v1\nkind: Policy\nomitStages: [Done]\nrules:\n  - level: None\n')).toThrow(/omitStages\[0\]: Invalid value: "Done": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic/);
    expect(bad('apiVersion: audit.orch.io/v1\nkind: Policy\nrules:\n  - level: None\n    nonResourceURLs: ["healthz", "/a*b"]\n')).toThrow(
      /rules\[0\]\.nonResourceURLs\[0\]: .*must begin with a '\/'.*rules\[0\]\.nonResourceURLs\[1\]: .*must be the final character/,
    );
    expect(bad('apiVersion: audit.orch.io/v1\nkind: Policy\nrules:\n  - level: None\n    nonResourceURLs: ["/x"]\n    namespaces: [a]\n')).toThrow(/cannot apply to both/);
    expect(bad('apiVersion: audit.orch.io/v1\nkind: Policy\nrules:\n  - level: None\n    resources: [{group: "apps/v1", resourceNames: [x]}]\n')).toThrow(
      /rules\[0\]\.resources\[0\]\.group: Invalid value: "apps\/v1".*rules\[0\]\.resources\[0\]\.resourceNames: .*requires at least one resource/,
    );
    expect(bad('apiVersion: audit.orch.io/v1\nkind: Policy\nrules: []\n')).toThrow(/0 rules/);
    expect(bad('apiVersion: audit.k8s.io/v2\nkind: Policy\nrules:\n  - level: None\n')).toThrow(/apiVersion: Unsupported value: "audit.k8s.io\/v2"/);
    expect(bad('apiVersion: audit.orch.io/v1\nkind: Policy\nrules:\n  - level: None\n    verbs: get\n')).toThrow(/rules\[0\]\.verbs: Invalid value: must be a list of strings/);
    expect(bad('rules: [')).toThrow(/not valid YAML/);
  });

  it('reads Kubernetes policies unchanged (audit.k8s.io/v1) and names the file', async () => {
    expect(parsePolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n', 'orch.io').rules).toHaveLength(1);
    const dir = await mkdtemp(join(tmpdir(), 'orch-policy-'));
    try {
      const f = join(dir, 'p.yaml');
      await writeFile(f, 'apiVersion: audit.orch.io/v1\nkind: Policy\nrules:\n  - level: Metadatas\n');
      expect(() => loadPolicyFile(f, 'orch.io')).toThrow(`--audit-policy-file: ${f}: rules[0].level: Unsupported value: "Metadatas"`);
      expect(() => loadPolicyFile(join(dir, 'missing.yaml'), 'orch.io')).toThrow(/--audit-policy-file: .*missing\.yaml: ENOENT/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
