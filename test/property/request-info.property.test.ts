// The URL parser (src/endpoints/request-info.ts) works on the split path by
// index since the third request-path pass; for every method, path and query it
// must give what the array-copying parser it replaced gave (the same
// RequestInfo, or the same 400).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRequestInfo } from '../../src/endpoints/request-info.js';
import { referenceParseRequestInfo } from '../helpers/request-info-reference.js';

const PREFIXES = ['', 'api', 'api/v1', 'apis', 'apis/apps', 'apis/apps/v1', 'api/v1/watch', 'api/v1/namespaces', 'api/v1/namespaces/d', 'apis/apps/v1/watch/namespaces/d'];
const SEGMENTS = ['api', 'apis', 'v1', 'apps', 'namespaces', 'default', 'watch', 'status', 'finalize', 'proxy', 'pods', 'cm', 'log', '', 'a%2Fb', '%zz', '%41', 'x y', '.'];
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'get', 'Post', 'delete', 'TRACE'];
const QUERIES = ['', 'watch=true', 'watch=0', 'watch=false', 'watch=', 'watch=1&x=y'];

function outcome(parse: () => unknown): unknown {
  try {
    return { ok: parse() };
  } catch (e) {
    return { error: (e as { code?: number; message?: string }).code, message: (e as Error).message };
  }
}

describe('parseRequestInfo', () => {
  it('answers as the reference parser for every method, path and query', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...METHODS),
        fc.boolean(),
        fc.constantFrom(...PREFIXES),
        fc.array(fc.constantFrom(...SEGMENTS), { maxLength: 6 }),
        fc.boolean(),
        fc.constantFrom(...QUERIES),
        (method, leadingSlash, prefix, segments, trailingSlash, q) => {
          const parts = prefix === '' ? segments : [prefix, ...segments];
          const path = `${leadingSlash ? '/' : ''}${parts.join('/')}${trailingSlash ? '/' : ''}`;
          const query = new URLSearchParams(q);
          expect(outcome(() => parseRequestInfo(method, path, query))).toStrictEqual(outcome(() => referenceParseRequestInfo(method, path, query)));
        },
      ),
      { numRuns: 5000 },
    );
  });

  it('parses the paths a create, a namespace status write and a watch use', () => {
    expect(parseRequestInfo('POST', '/api/v1/namespaces/d/configmaps', new URLSearchParams())).toMatchObject({ isResourceRequest: true, verb: 'create', version: 'v1', namespace: 'd', resource: 'configmaps', name: '' });
    expect(parseRequestInfo('PUT', '/api/v1/namespaces/d/status', new URLSearchParams())).toMatchObject({ verb: 'update', resource: 'namespaces', name: 'd', namespace: '', subresource: 'status' });
    expect(parseRequestInfo('GET', '/apis/apps/v1/watch/namespaces/d/deployments/', new URLSearchParams())).toMatchObject({ verb: 'watch', group: 'apps', resource: 'deployments', namespace: 'd' });
    expect(() => parseRequestInfo('GET', '/api/v1/namespaces/%zz/pods', new URLSearchParams())).toThrow(/malformed path/);
  });
});
