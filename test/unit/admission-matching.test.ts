// Rule matching of admission webhooks and policies: operations, groups,
// versions (Exact and Equivalent), resources with their sub-resource and
// wildcard forms, and scope.

import { describe, expect, it } from 'vitest';
import { ruleMatches, toLabelSelector, labelsMatch } from '../../src/registry/admission/matching.js';
import type { AdmissionRequest } from '../../src/registry/admission/types.js';
import type { ResourceDefinition } from '../../src/registry/types.js';

function req(resource: string, sub = '', scope: 'Namespaced' | 'Cluster' = 'Namespaced', op: AdmissionRequest['operation'] = 'CREATE', group = ''): AdmissionRequest {
  const def = { group, version: 'v1', kind: 'X', resource, singular: resource, scope, schema: {}, strategy: {} } as ResourceDefinition;
  return { uid: 'u', operation: op, def, subresource: sub, namespace: scope === 'Namespaced' ? 'ns' : '', name: 'n', object: undefined, oldObject: undefined, options: undefined, dryRun: false, user: { username: 'u', groups: [] }, warnings: [], auditAnnotations: {} };
}

const rule = (resources: string[], extra: Record<string, unknown> = {}) => ({ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources, ...extra });

describe('ruleMatches', () => {
  it.each([
    [['pods'], 'pods', '', true],
    [['pods'], 'pods', 'status', false],
    [['pods/status'], 'pods', 'status', true],
    [['pods/status'], 'pods', '', false],
    [['*'], 'pods', '', true],
    [['*'], 'pods', 'status', false],
    [['*/*'], 'pods', 'status', true],
    [['*/*'], 'pods', '', true],
    [['pods/*'], 'pods', 'exec', true],
    [['pods/*'], 'pods', '', false],
    [['*/status'], 'deployments', 'status', true],
    [['*/status'], 'deployments', 'scale', false],
    [['configmaps'], 'pods', '', false],
  ] as const)('%j against %s/%s → %s', (resources, resource, sub, expected) => {
    expect(ruleMatches(rule([...resources]), req(resource, sub), ['v1'])).toBe(expected);
  });

  it('operations, groups, versions and scope', () => {
    expect(ruleMatches(rule(['pods'], { operations: ['UPDATE'] }), req('pods'), ['v1'])).toBe(false);
    expect(ruleMatches(rule(['pods'], { operations: ['CREATE', 'UPDATE'] }), req('pods'), ['v1'])).toBe(true);
    expect(ruleMatches(rule(['deployments'], { apiGroups: ['apps'] }), req('deployments', '', 'Namespaced', 'CREATE', 'apps'), ['v1'])).toBe(true);
    expect(ruleMatches(rule(['deployments'], { apiGroups: [''] }), req('deployments', '', 'Namespaced', 'CREATE', 'apps'), ['v1'])).toBe(false);
    expect(ruleMatches(rule(['pods'], { apiVersions: ['v2'] }), req('pods'), ['v1'])).toBe(false);
    // Equivalent: another served version of the same resource matches
    expect(ruleMatches(rule(['pods'], { apiVersions: ['v2'] }), req('pods'), ['v1', 'v2'])).toBe(true);
    expect(ruleMatches(rule(['pods'], { scope: 'Cluster' }), req('pods'), ['v1'])).toBe(false);
    expect(ruleMatches(rule(['nodes'], { scope: 'Cluster' }), req('nodes', '', 'Cluster'), ['v1'])).toBe(true);
    expect(ruleMatches(rule(['nodes'], { scope: 'Namespaced' }), req('nodes', '', 'Cluster'), ['v1'])).toBe(false);
    expect(ruleMatches(rule(['pods'], { resourceNames: ['other'] }), req('pods'), ['v1'])).toBe(false);
    expect(ruleMatches(rule(['pods'], { resourceNames: ['n'] }), req('pods'), ['v1'])).toBe(true);
  });
});

describe('label selectors', () => {
  it('matchLabels and matchExpressions; an empty selector matches everything', () => {
    expect(labelsMatch(toLabelSelector({}), undefined)).toBe(true);
    const s = toLabelSelector({ matchLabels: { a: '1' }, matchExpressions: [{ key: 'b', operator: 'NotIn', values: ['x'] }, { key: 'c', operator: 'DoesNotExist' }] });
    expect(labelsMatch(s, { a: '1' })).toBe(true);
    expect(labelsMatch(s, { a: '1', b: 'x' })).toBe(false);
    expect(labelsMatch(s, { a: '1', c: '' })).toBe(false);
    expect(labelsMatch(s, { a: '2' })).toBe(false);
  });
});
