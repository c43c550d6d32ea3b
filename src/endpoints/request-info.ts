// URL → RequestInfo (spec 000 §4.1), as Kubernetes' RequestInfoFactory:
// /api/v1/..., /apis/{group}/{version}/..., namespaces/{ns}/{resource}/{name}/{sub},
// the old /watch/ prefix, and the namespace sub-resources status/finalize.

import { badRequest } from '../core/errors.js';
import type { RequestInfo } from './request.js';
import { queryBool } from './query-params.js';

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/** the lower-case verb of a method (a non-resource request's verb), made once per method */
const LOWER = new Map<string, string>();
function lower(method: string): string {
  let v = LOWER.get(method);
  if (v === undefined) {
    v = method.toLowerCase();
    if (LOWER.size < 32) LOWER.set(method, v);
  }
  return v;
}

/**
 * Works on the array of `path.split('/')` by index (issue 14, every request
 * parses its URL once): no filtered, mapped or sliced copies of it.
 */
export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const info: RequestInfo = {
    isResourceRequest: false,
    path,
    verb: lower(method),
    group: '',
    version: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
  };
  // segments raw[start..end): a leading empty segment and one trailing empty segment dropped
  const raw = path.split('/');
  const start = raw[0] === '' ? 1 : 0;
  let end = raw.length;
  if (end > start && raw[end - 1] === '') end--;
  // most segments have no escapes: decode only those that do
  for (let i = start; i < end; i++) {
    const p = raw[i]!;
    if (!p.includes('%')) continue;
    try {
      raw[i] = decodeURIComponent(p);
    } catch {
      throw badRequest(`malformed path: ${path}`);
    }
  }
  const n = end - start;
  const first = n > 0 ? raw[start] : undefined;
  if (first !== 'api' && first !== 'apis') return info;
  info.apiPrefix = first;
  // r: where the rest (after /api/{v} or /apis/{g}/{v}) begins
  let r: number;
  if (first === 'api') {
    if (n < 2) return info;
    info.version = raw[start + 1]!;
    r = start + 2;
  } else {
    if (n < 3) {
      if (n === 2) info.group = raw[start + 1]!;
      return info;
    }
    info.group = raw[start + 1]!;
    info.version = raw[start + 2]!;
    r = start + 3;
  }
  if (r >= end) return info;
  info.isResourceRequest = true;
  let watchPrefix = false;
  if (raw[r] === 'watch') {
    watchPrefix = true;
    r++;
  }
  let len = end - r;
  if (len > 1 && raw[r] === 'namespaces') {
    info.namespace = raw[r + 1]!;
    if (len > 2 && !NAMESPACE_SUBRESOURCES.has(raw[r + 2]!)) {
      r += 2;
      len -= 2;
    } else {
      // the namespace object itself (or its status/finalize sub-resource)
      info.resource = 'namespaces';
      info.name = raw[r + 1]!;
      info.namespace = '';
      if (len > 2) info.subresource = raw[r + 2]!;
      if (len > 3) throw badRequest(`malformed path: ${path}`);
      info.verb = verbFor(method, true, query, watchPrefix);
      return info;
    }
  }
  if (len > 0) info.resource = raw[r]!;
  if (len > 1) info.name = raw[r + 1]!;
  if (len > 2) info.subresource = raw[r + 2]!;
  // `…/{name}/proxy/{path}`: the sub-resource is `proxy` whatever the path (kube's RequestInfo.Parts)
  if (len > 3) info.subresource = raw[r + 2] === 'proxy' ? 'proxy' : raw.slice(r + 2, end).join('/');
  info.verb = verbFor(method, info.name !== '', query, watchPrefix);
  return info;
}

function verbFor(method: string, hasName: boolean, query: URLSearchParams, watchPrefix: boolean): string {
  switch (method) {
    case 'GET':
    case 'HEAD': {
      if (watchPrefix) return 'watch';
      // kube's RequestInfo reads `watch` only on a collection: `…/{name}?watch=true` is a get
      if (hasName) return 'get';
      if (queryBool(query.get('watch'))) return 'watch';
      return 'list';
    }
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return hasName ? 'delete' : 'deletecollection';
    default: {
      // methods arrive upper-case; any other spelling is matched as kube does, case-insensitively
      const upper = method.toUpperCase();
      return upper === method ? lower(method) : verbFor(upper, hasName, query, watchPrefix);
    }
  }
}
