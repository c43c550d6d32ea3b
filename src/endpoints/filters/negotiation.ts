// Content negotiation (spec 000 §4.3) before any other work, so that every
// later answer, errors included, is in the representation the client accepts.

import type { ProtobufCatalog } from '../../registry/protobuf-catalog.js';
import { protobufMediaType } from '../../machinery/protobuf/envelope.js';
import { negotiate } from '../negotiate.js';

import { HEALTH_PATH } from './non-resource.js';
import { type Filter, infoOf } from './state.js';

const PARSE_BOOL_TRUE = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);
/** clients kube pretty-prints JSON for when `pretty` is not given: browsers and command-line HTTP tools */
const PRETTY_AGENTS = ['curl', 'Wget', 'Mozilla/5.0'];

/**
 * kube's isPrettyPrint: a non-empty `pretty` decides (Go's strconv.ParseBool, `True` included; anything
 * unparseable is false), else the User-Agent does.
 */
export function prettyPrint(pretty: string | null, userAgent: string | null | undefined): boolean {
  if (pretty) return PARSE_BOOL_TRUE.has(pretty);
  return typeof userAgent === 'string' && PRETTY_AGENTS.some((p) => userAgent.startsWith(p));
}

export function negotiationFilter(apiDomain: string, protobuf: ProtobufCatalog): Filter {
  const metaGroups = [`meta.${apiDomain}`, 'meta.k8s.io'];
  const protobufName = protobufMediaType(apiDomain);
  return (s, next) => {
    const info = infoOf(s);
    const http = s.http;
    const pretty = prettyPrint(http.query.get('pretty'), http.headers.get('user-agent'));
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
        protobufName,
        watch: info.verb === 'watch',
        discovery: !info.isResourceRequest && (http.path === '/api' || http.path === '/apis' || http.path === '/api/' || http.path === '/apis/'),
      });
    }
    return next(s);
  };
}
