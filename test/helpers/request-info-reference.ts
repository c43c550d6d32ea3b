// The URL → RequestInfo parser as it was before the third request-path pass
// (f9276fd), kept as the reference test/property/request-info.property.test.ts
// compares the index-based parser with.


import { badRequest } from '../../src/core/errors.js';
import type { RequestInfo } from '../../src/endpoints/request.js';

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

export function referenceParseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const info: RequestInfo = {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    group: '',
    version: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
  };
  const raw = path.split('/').filter((p, i) => i > 0 || p !== '');
  if (raw[raw.length - 1] === '') raw.pop();
  let parts: string[];
  try {
    // most segments have no escapes: decode only those that do
    parts = raw.map((p) => (p.includes('%') ? decodeURIComponent(p) : p));
  } catch {
    throw badRequest(`malformed path: ${path}`);
  }
  if (parts[0] !== 'api' && parts[0] !== 'apis') return info;
  info.apiPrefix = parts[0];
  let rest: string[];
  if (parts[0] === 'api') {
    if (parts.length < 2) return info;
    info.version = parts[1]!;
    rest = parts.slice(2);
  } else {
    if (parts.length < 3) {
      if (parts.length === 2) info.group = parts[1]!;
      return info;
    }
    info.group = parts[1]!;
    info.version = parts[2]!;
    rest = parts.slice(3);
  }
  if (rest.length === 0) return info;
  info.isResourceRequest = true;
  let watchPrefix = false;
  if (rest[0] === 'watch') {
    watchPrefix = true;
    rest = rest.slice(1);
  }
  if (rest[0] === 'namespaces' && rest.length > 1) {
    info.namespace = rest[1]!;
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2]!)) {
      rest = rest.slice(2);
    } else {
      // the namespace object itself (or its status/finalize sub-resource)
      info.resource = 'namespaces';
      info.name = rest[1]!;
      info.namespace = '';
      if (rest.length > 2) info.subresource = rest[2]!;
      if (rest.length > 3) throw badRequest(`malformed path: ${path}`);
      info.verb = verbFor(method, true, query, watchPrefix);
      return info;
    }
  }
  info.resource = rest[0] ?? '';
  if (rest.length > 1) info.name = rest[1]!;
  if (rest.length > 2) info.subresource = rest[2]!;
  // `…/{name}/proxy/{path}`: the sub-resource is `proxy` whatever the path (kube's RequestInfo.Parts)
  if (rest.length > 3) info.subresource = rest[2] === 'proxy' ? 'proxy' : rest.slice(2).join('/');
  info.verb = verbFor(method, info.name !== '', query, watchPrefix);
  return info;
}

function verbFor(method: string, hasName: boolean, query: URLSearchParams, watchPrefix: boolean): string {
  switch (method.toUpperCase()) {
    case 'GET':
    case 'HEAD': {
      if (watchPrefix) return 'watch';
      const w = query.get('watch');
      if (!hasName && w !== null && w.toLowerCase() !== 'false' && w !== '0') return 'watch';
      return hasName ? 'get' : 'list';
    }
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return hasName ? 'delete' : 'deletecollection';
    default:
      return method.toLowerCase();
  }
}
