import { describe, expect, it } from 'vitest';
import { authorizationAttributes } from '../../src/endpoints/filters/authz-attributes.js';
import { parseRequestInfo } from '../../src/endpoints/request-info.js';

const user = { username: 'u', groups: ['system:authenticated'] };
function attrs(method: string, url: string) {
  const u = new URL(url, 'https://x');
  return authorizationAttributes(user, parseRequestInfo(method, u.pathname, u.searchParams), u.pathname, u.searchParams);
}

describe('authorization attributes (spec 001 §5.13)', () => {
  it('maps methods to verbs for resource requests', () => {
    expect(attrs('GET', '/api/v1/namespaces/ns/pods').verb).toBe('list');
    expect(attrs('HEAD', '/api/v1/namespaces/ns/pods/p').verb).toBe('get');
    expect(attrs('GET', '/api/v1/namespaces/ns/pods?watch=true').verb).toBe('watch');
    expect(attrs('GET', '/api/v1/watch/namespaces/ns/pods').verb).toBe('watch');
    expect(attrs('POST', '/api/v1/namespaces/ns/pods').verb).toBe('create');
    expect(attrs('PUT', '/api/v1/namespaces/ns/pods/p').verb).toBe('update');
    expect(attrs('PATCH', '/api/v1/namespaces/ns/pods/p').verb).toBe('patch');
    expect(attrs('DELETE', '/api/v1/namespaces/ns/pods/p').verb).toBe('delete');
    expect(attrs('DELETE', '/api/v1/namespaces/ns/pods').verb).toBe('deletecollection');
  });
  it('non-resource requests: lowercased method and the path', () => {
    expect(attrs('GET', '/healthz')).toMatchObject({ isResourceRequest: false, verb: 'get', path: '/healthz' });
    expect(attrs('POST', '/logs/x')).toMatchObject({ isResourceRequest: false, verb: 'post' });
    expect(attrs('GET', '/apis')).toMatchObject({ isResourceRequest: false, verb: 'get', path: '/apis' });
  });
  it('fills group, version, namespace, resource, subresource and name', () => {
    expect(attrs('GET', '/apis/apps/v1/namespaces/ns/deployments/d/scale')).toMatchObject({
      isResourceRequest: true,
      apiGroup: 'apps',
      apiVersion: 'v1',
      namespace: 'ns',
      resource: 'deployments',
      subresource: 'scale',
      name: 'd',
      verb: 'get',
      path: '/apis/apps/v1/namespaces/ns/deployments/d/scale',
    });
    expect(attrs('PUT', '/api/v1/namespaces/ns/finalize')).toMatchObject({ resource: 'namespaces', name: 'ns', namespace: '', subresource: 'finalize', verb: 'update' });
  });
  it('carries label and field selector requirements for list, watch and deletecollection', () => {
    const a = attrs('GET', '/api/v1/pods?labelSelector=' + encodeURIComponent('app=web,tier!=db,env in (a,b),!legacy,ready') + '&fieldSelector=' + encodeURIComponent('spec.nodeName=n1,status.phase!=Failed'));
    expect(a.labelSelector).toEqual([
      { key: 'app', operator: 'In', values: ['web'] },
      { key: 'tier', operator: 'NotIn', values: ['db'] },
      { key: 'env', operator: 'In', values: ['a', 'b'] },
      { key: 'legacy', operator: 'DoesNotExist' },
      { key: 'ready', operator: 'Exists' },
    ]);
    expect(a.fieldSelector).toEqual([
      { key: 'spec.nodeName', operator: 'In', values: ['n1'] },
      { key: 'status.phase', operator: 'NotIn', values: ['Failed'] },
    ]);
    expect(attrs('DELETE', '/api/v1/namespaces/ns/pods?labelSelector=app%3D%3Dweb').labelSelector).toEqual([{ key: 'app', operator: 'In', values: ['web'] }]);
    expect(attrs('GET', '/api/v1/pods?watch=1&fieldSelector=spec.nodeName%3D%3Dn2').fieldSelector).toEqual([{ key: 'spec.nodeName', operator: 'In', values: ['n2'] }]);
  });
  it('no selectors on get/create, none when they do not parse', () => {
    expect(attrs('GET', '/api/v1/namespaces/ns/pods/p?labelSelector=app%3Dweb').labelSelector).toBeUndefined();
    expect(attrs('GET', '/api/v1/pods?labelSelector=' + encodeURIComponent('a in (')).labelSelector).toBeUndefined();
    expect(attrs('GET', '/api/v1/pods?fieldSelector=nonsense').fieldSelector).toBeUndefined();
  });
  it('a list or watch with metadata.name=<n> is authorized for that name', () => {
    expect(attrs('GET', '/api/v1/namespaces/ns/configmaps?watch=true&fieldSelector=metadata.name%3Dcm1')).toMatchObject({ verb: 'watch', name: 'cm1' });
    expect(attrs('DELETE', '/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Dcm1').name).toBe('');
  });
});
