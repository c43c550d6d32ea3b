// Small pieces around RBAC: aggregation selectors (matchLabels,
// matchExpressions, `{}` = everything, unknown operators = nothing), the
// default policy's shape per API domain, and the Go-style durations of the
// authorization webhook flags.

import { describe, expect, it } from 'vitest';
import { forbiddenRequest } from '../../src/core/errors.js';
import { matchesLabels } from '../../src/machinery/selectors/labels.js';
import { defaultPolicy } from '../../src/auth/authz/rbac/bootstrap-policy.js';
import { goDuration } from '../../src/cli/authz-flags.js';
import { selectorsOf } from '../../src/controllers/clusterrole-aggregation.js';

const sel = (s: unknown) => selectorsOf({ aggregationRule: { clusterRoleSelectors: [s] } } as never)![0]!;

describe('aggregation selectors', () => {
  it('matchLabels and matchExpressions', () => {
    const s = sel({ matchLabels: { a: 'true' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['x', 'y'] }, { key: 'off', operator: 'DoesNotExist' }] });
    expect(matchesLabels(s, { a: 'true', tier: 'x' })).toBe(true);
    expect(matchesLabels(s, { a: 'true', tier: 'z' })).toBe(false);
    expect(matchesLabels(s, { a: 'true', tier: 'x', off: '' })).toBe(false);
    expect(matchesLabels(s, { tier: 'x' })).toBe(false);
  });

  it('{} matches every role; an unknown operator matches none; no aggregationRule is not aggregated', () => {
    expect(matchesLabels(sel({}), {})).toBe(true);
    expect(matchesLabels(sel({ matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] }), { a: '5' })).toBe(false);
    expect(selectorsOf({ rules: [] } as never)).toBeUndefined();
  });
});

describe('default policy', () => {
  it('names groups after the API domain, the bootstrap label and annotation after kube\'s label domain', () => {
    const p = defaultPolicy('k8s.io');
    const view = p.clusterRoles.find((r) => r.metadata.name === 'view')!;
    expect(view.metadata.labels).toEqual({ 'kubernetes.io/bootstrapping': 'rbac-defaults', 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' });
    expect(view.metadata.annotations).toEqual({ 'rbac.authorization.kubernetes.io/autoupdate': 'true' });
    expect(view.aggregationRule).toEqual({ clusterRoleSelectors: [{ matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }] });
    const basic = p.clusterRoles.find((r) => r.metadata.name === 'system:basic-user')!;
    expect(basic.rules!.flatMap((r) => r.apiGroups)).toEqual(['authorization.k8s.io', 'authentication.k8s.io']);
    const names = new Set<string>();
    for (const r of p.clusterRoles) {
      expect(names.has(r.metadata.name), r.metadata.name).toBe(false);
      names.add(r.metadata.name);
    }
    // every default binding refers to a default role
    for (const b of p.clusterRoleBindings) expect(names.has(b.roleRef.name), b.metadata.name).toBe(true);
  });
});

describe('webhook TTL flags', () => {
  it('Go durations', () => {
    expect(goDuration('5m0s')).toBe(300_000);
    expect(goDuration('30s')).toBe(30_000);
    expect(goDuration('1h30m')).toBe(5_400_000);
    expect(goDuration('250ms')).toBe(250);
    expect(() => goDuration('5 minutes')).toThrow(/duration/);
    expect(() => goDuration('')).toThrow(/duration/);
    expect(() => goDuration('30')).toThrow(/duration/);
    expect(goDuration('0')).toBe(0);
  });
});

describe("kube's 403 messages", () => {
  const base = { user: { username: 'alice' }, verb: 'get', isResourceRequest: true, path: '', apiGroup: '', namespace: 'default', resource: 'secrets', subresource: '', name: 's' };
  it('object, collection, cluster scope, sub-resource, group, non-resource, reason', () => {
    expect(forbiddenRequest(base).toStatus()).toMatchObject({
      code: 403,
      reason: 'Forbidden',
      message: 'secrets "s" is forbidden: User "alice" cannot get resource "secrets" in API group "" in the namespace "default"',
      details: { name: 's', kind: 'secrets' },
    });
    expect(forbiddenRequest({ ...base, verb: 'list', name: '', namespace: '' }).message).toBe('secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" at the cluster scope');
    expect(forbiddenRequest({ ...base, resource: 'pods', subresource: 'log', name: 'p' }).message).toBe('pods "p" is forbidden: User "alice" cannot get resource "pods/log" in API group "" in the namespace "default"');
    expect(forbiddenRequest({ ...base, apiGroup: 'apps', resource: 'deployments', name: 'd' }).toStatus()).toMatchObject({
      message: 'deployments.apps "d" is forbidden: User "alice" cannot get resource "deployments" in API group "apps" in the namespace "default"',
      details: { name: 'd', group: 'apps', kind: 'deployments' },
    });
    expect(forbiddenRequest({ ...base, isResourceRequest: false, path: '/foo', resource: '', name: '', namespace: '' }, 'no way').message).toBe('forbidden: User "alice" cannot get path "/foo": no way');
  });
});
