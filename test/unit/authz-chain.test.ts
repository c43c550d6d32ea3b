// The authorizer chain as kube's union authorizer (spec 001 §5.12): reasons and
// errors of the links that had no opinion are kept, a deciding link answers with
// its own; rules reviews take the union of rules, incompleteness and errors; and
// kube's utilerrors.Aggregate text.

import { describe, expect, it } from 'vitest';
import { AuthorizerChain } from '../../src/auth/authz/chain.js';
import { aggregateErrors } from '../../src/auth/authz/errors.js';
import type { Authorizer, Decision, RequestAttributes, RulesResult } from '../../src/auth/authz/types.js';

const attrs: RequestAttributes = {
  user: { username: 'bob', groups: ['system:authenticated'] },
  verb: 'list',
  isResourceRequest: true,
  path: '/api/v1/namespaces/team/pods',
  apiGroup: '',
  apiVersion: 'v1',
  namespace: 'team',
  resource: 'pods',
  subresource: '',
  name: '',
};

const link = (d: Decision, rules?: RulesResult): Authorizer => ({ authorize: async () => d, ...(rules ? { rulesFor: async () => rules } : {}) });
const chain = (...as: Authorizer[]) => new AuthorizerChain(as.map((authorizer, i) => ({ type: 'Webhook', name: `l${i}`, authorizer })));

describe('AuthorizerChain (kube union authorizer)', () => {
  it('no decision: every reason (joined by newlines) and every error', async () => {
    const c = chain(
      link({ decision: 'noOpinion', errors: ['webhook a: remote answered status 500'] }),
      link({ decision: 'noOpinion', reason: 'no relationship found' }),
      link({ decision: 'noOpinion', reason: 'RBAC: x' }),
    );
    expect(await c.authorize(attrs)).toEqual({ decision: 'noOpinion', reason: 'no relationship found\nRBAC: x', errors: ['webhook a: remote answered status 500'] });
  });

  it('a deciding link answers with its own reason and error only', async () => {
    const failing = link({ decision: 'noOpinion', errors: ['first'] });
    expect(await chain(failing, link({ decision: 'allow', reason: 'ok' })).authorize(attrs)).toEqual({ decision: 'allow', reason: 'ok' });
    expect(await chain(failing, link({ decision: 'deny', errors: ['second'] })).authorize(attrs)).toEqual({ decision: 'deny', errors: ['second'] });
  });

  it('rules: the union, incomplete when a link is, every error', async () => {
    const node = link({ decision: 'noOpinion' }, { resourceRules: [], nonResourceRules: [], incomplete: true, errors: ['node authorizer does not support user rule resolution'] });
    const rbac = link(
      { decision: 'noOpinion' },
      { resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }], nonResourceRules: [], incomplete: false, errors: ['role.rbac.authorization.k8s.io "x" not found'] },
    );
    const r = await chain(node, rbac).rulesFor(attrs.user, 'team');
    expect(r).toEqual({
      resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
      nonResourceRules: [],
      incomplete: true,
      errors: ['node authorizer does not support user rule resolution', 'role.rbac.authorization.k8s.io "x" not found'],
    });
    expect(aggregateErrors(r.errors)).toBe('[node authorizer does not support user rule resolution, role.rbac.authorization.k8s.io "x" not found]');
  });
});

describe('aggregateErrors (utilerrors.Aggregate)', () => {
  it('none, one bare, several in brackets, each distinct message once', () => {
    expect(aggregateErrors(undefined)).toBeUndefined();
    expect(aggregateErrors([])).toBeUndefined();
    expect(aggregateErrors(['a'])).toBe('a');
    expect(aggregateErrors(['a', 'b'])).toBe('[a, b]');
    expect(aggregateErrors(['a', 'a'])).toBe('a');
    expect(aggregateErrors(['a', 'b', 'a'])).toBe('[a, b]');
  });
});
