import { describe, expect, it } from 'vitest';
import { AbacAuthorizer, parseAbacPolicies } from '../../src/auth/authz/abac.js';
import type { RequestAttributes } from '../../src/auth/authz/types.js';

const V = 'abac.authorization.orch.io/v1beta1';
const line = (spec: Record<string, unknown>) => JSON.stringify({ apiVersion: V, kind: 'Policy', spec });

function res(user: string, groups: string[], verb: string, resource: string, namespace = 'default', apiGroup = ''): RequestAttributes {
  return { user: { username: user, groups }, verb, isResourceRequest: true, path: '/x', apiGroup, apiVersion: 'v1', namespace, resource, subresource: '', name: '' };
}
function nonres(user: string, groups: string[], verb: string, path: string): RequestAttributes {
  return { user: { username: user, groups }, verb, isResourceRequest: false, path, apiGroup: '', apiVersion: '', namespace: '', resource: '', subresource: '', name: '' };
}
const authz = (...specs: Record<string, unknown>[]) => new AbacAuthorizer(parseAbacPolicies(specs.map(line).join('\n'), 'orch.io'));
const dec = async (a: AbacAuthorizer, r: RequestAttributes) => (await a.authorize(r)).decision;

describe('ABAC policy file parsing', () => {
  it('skips blank and # lines, and defaults unset fields', () => {
    const p = parseAbacPolicies(`# comment\n\n${line({ user: 'alice' })}\n   \n`, 'orch.io');
    expect(p).toEqual([{ user: 'alice', group: '', readonly: false, apiGroup: '', resource: '', namespace: '', nonResourcePath: '' }]);
  });
  it('names the line number of a malformed line', () => {
    expect(() => parseAbacPolicies(`${line({ user: 'a' })}\n\n{not json`, 'orch.io', 'p.jsonl')).toThrow(/p\.jsonl: line 3: not valid JSON/);
    expect(() => parseAbacPolicies(`${line({ user: 'a' })}\n[1]`, 'orch.io')).toThrow(/line 2: a policy must be a JSON object/);
    expect(() => parseAbacPolicies(JSON.stringify({ apiVersion: 'abac.authorization.kubernetes.io/v1beta1', kind: 'Policy', spec: {} }), 'orch.io')).toThrow(/line 1: apiVersion must be/);
    expect(() => parseAbacPolicies(JSON.stringify({ apiVersion: V, kind: 'Pol', spec: {} }), 'orch.io')).toThrow(/line 1: kind must be "Policy"/);
    expect(() => parseAbacPolicies(line({ readonly: 'yes' }), 'orch.io')).toThrow(/line 1: spec.readonly: must be a boolean/);
    expect(() => parseAbacPolicies(line({ user: 3 }), 'orch.io')).toThrow(/spec.user: must be a string/);
    expect(() => parseAbacPolicies(line({ usr: 'a' }), 'orch.io')).toThrow(/spec.usr: unknown field/);
  });
});

describe('ABAC matching', () => {
  it('matches user, group and * subjects; a policy with neither matches nobody', async () => {
    const a = authz({ user: 'alice', namespace: '*', resource: '*', apiGroup: '*' });
    expect(await dec(a, res('alice', [], 'create', 'pods'))).toBe('allow');
    expect(await dec(a, res('bob', [], 'get', 'pods'))).toBe('noOpinion');
    const g = authz({ group: 'system:authenticated', namespace: '*', resource: 'pods', apiGroup: '' });
    expect(await dec(g, res('bob', ['system:authenticated'], 'get', 'pods'))).toBe('allow');
    expect(await dec(g, res('system:anonymous', ['system:unauthenticated'], 'get', 'pods'))).toBe('noOpinion');
    // spec §5.9: a * user or group is every authenticated user, never an anonymous one (kube's v1beta1 conversion)
    for (const subject of [{ user: '*' }, { group: '*' }, { user: '*', group: 'dev' }]) {
      const star = authz({ ...subject, namespace: '*', resource: '*', apiGroup: '*' });
      expect(await dec(star, res('anyone', ['system:authenticated'], 'delete', 'x'))).toBe('allow');
      expect(await dec(star, res('system:anonymous', ['system:unauthenticated'], 'get', 'configmaps'))).toBe('noOpinion');
    }
    const anyPath = authz({ user: '*', nonResourcePath: '*', readonly: true });
    expect(await dec(anyPath, nonres('system:anonymous', ['system:unauthenticated'], 'get', '/api'))).toBe('noOpinion');
    expect(await dec(anyPath, nonres('bob', ['system:authenticated'], 'get', '/api'))).toBe('allow');
    const anonymous = authz({ group: 'system:unauthenticated', nonResourcePath: '/healthz', readonly: true });
    expect(await dec(anonymous, nonres('system:anonymous', ['system:unauthenticated'], 'get', '/healthz'))).toBe('allow');
    const none = authz({ namespace: '*', resource: '*', apiGroup: '*' });
    expect(await dec(none, res('alice', ['g'], 'get', 'pods'))).toBe('noOpinion');
    const both = authz({ user: 'alice', group: 'dev', namespace: '*', resource: '*', apiGroup: '*' });
    expect(await dec(both, res('alice', ['ops'], 'get', 'pods'))).toBe('noOpinion');
    expect(await dec(both, res('alice', ['dev'], 'get', 'pods'))).toBe('allow');
  });
  it('namespace, resource and apiGroup: * or equal; empty equals only empty', async () => {
    const a = authz({ user: 'u', namespace: 'team', resource: 'deployments', apiGroup: 'apps' });
    expect(await dec(a, res('u', [], 'get', 'deployments', 'team', 'apps'))).toBe('allow');
    expect(await dec(a, res('u', [], 'get', 'deployments', 'other', 'apps'))).toBe('noOpinion');
    expect(await dec(a, res('u', [], 'get', 'pods', 'team', 'apps'))).toBe('noOpinion');
    expect(await dec(a, res('u', [], 'get', 'deployments', 'team', 'extensions'))).toBe('noOpinion');
    const cluster = authz({ user: 'u', resource: 'nodes' });
    expect(await dec(cluster, res('u', [], 'get', 'nodes', ''))).toBe('allow');
    expect(await dec(cluster, res('u', [], 'get', 'nodes', 'default'))).toBe('noOpinion');
  });
  it('readonly allows only get, list and watch', async () => {
    const a = authz({ user: 'u', namespace: '*', resource: '*', apiGroup: '*', readonly: true });
    for (const v of ['get', 'list', 'watch']) expect(await dec(a, res('u', [], v, 'pods'))).toBe('allow');
    for (const v of ['create', 'update', 'patch', 'delete', 'deletecollection']) expect(await dec(a, res('u', [], v, 'pods'))).toBe('noOpinion');
    const n = authz({ user: 'u', nonResourcePath: '*', readonly: true });
    expect(await dec(n, nonres('u', [], 'get', '/healthz'))).toBe('allow');
    expect(await dec(n, nonres('u', [], 'post', '/healthz'))).toBe('noOpinion');
  });
  it('nonResourcePath: *, exact and /prefix/*; never matches resource requests', async () => {
    const a = authz({ user: 'u', nonResourcePath: '/apis/*' }, { user: 'u', nonResourcePath: '/version' });
    expect(await dec(a, nonres('u', [], 'get', '/apis/apps'))).toBe('allow');
    expect(await dec(a, nonres('u', [], 'get', '/version'))).toBe('allow');
    expect(await dec(a, nonres('u', [], 'get', '/version/x'))).toBe('noOpinion');
    expect(await dec(a, nonres('u', [], 'get', '/api'))).toBe('noOpinion');
    expect(await dec(a, res('u', [], 'get', 'pods'))).toBe('noOpinion');
    const r = authz({ user: 'u', namespace: '*', resource: '*', apiGroup: '*' });
    expect(await dec(r, nonres('u', [], 'get', '/healthz'))).toBe('noOpinion');
  });
  it('rulesFor lists the matching policies', async () => {
    const a = authz({ user: 'u', namespace: 'ns', resource: 'pods', apiGroup: '', readonly: true }, { user: 'u', nonResourcePath: '/healthz' }, { user: 'x', namespace: '*', resource: '*' });
    const r = await a.rulesFor({ username: 'u', groups: [] }, 'ns');
    expect(r.resourceRules).toEqual([{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods'] }]);
    expect(r.nonResourceRules).toEqual([{ verbs: ['*'], nonResourceURLs: ['/healthz'] }]);
    expect((await a.rulesFor({ username: 'u', groups: [] }, 'other')).resourceRules).toEqual([]);
  });
});
