// Content negotiation (spec 000 §4.3) before any other work, so that every
// later answer, errors included, is in the representation the client accepts.

import type { ProtobufCatalog } from '../../registry/protobuf-catalog.js';
import { negotiate } from '../negotiate.js';

const PARSE_BOOL_TRUE = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);
import { HEALTH_PATH } from './non-resource.js';
import { type Filter, infoOf } from './state.js';

export function negotiationFilter(apiDomain: string, protobuf: ProtobufCatalog): Filter {
  const metaGroups = [`meta.${apiDomain}`, 'meta.k8s.io'];
  return (s, next) => {
    const info = infoOf(s);
    const http = s.http;
    // kube reads `pretty` with Go's strconv.ParseBool (`True`, the Python client's spelling, included)
    const pretty = PARSE_BOOL_TRUE.has(http.query.get('pretty') ?? '');
    // OpenAPI documents negotiate their own media types (gnostic protobuf), and health answers
    // are text whatever the probe accepts; errors there are JSON
    if (!info.isResourceRequest && (http.path.startsWith('/openapi/') || HEALTH_PATH.test(http.path))) {
      s.accept = { format: 'json', pretty };
    } else {
      s.accept = negotiate(http.headers.get('accept'), {
        metaGroups,
        allowTable: info.verb === 'get' || info.verb === 'list' || info.verb === 'watch',
        pretty,
        // watches answer length-prefixed WatchEvent frames (src/watch/protobuf-encode.ts)
        protobuf: info.isResourceRequest && protobuf.supportsResource(info.group, info.version, info.resource),
        watch: info.verb === 'watch',
        discovery: !info.isResourceRequest && (http.path === '/api' || http.path === '/apis' || http.path === '/api/' || http.path === '/apis/'),
      });
    }
    return next(s);
  };
}
