// Documents that are not resources: /version, discovery (/api, /apis, …) and
// OpenAPI (/openapi/v2, /openapi/v3, /openapi/v3/<group-version>). All are
// derived from the registry, so custom resources appear as soon as they register.

import * as discovery from '../api/discovery.js';
import type { Registry } from '../api/registry.js';
import { OpenAPIDocuments } from '../api/schema/openapi.js';
import { OPENAPI_V2_PROTOBUF, encodeOpenAPIV2Protobuf } from '../api/schema/openapi-v2-protobuf.js';
import type { NonResourceDoc, NonResourceHandler } from '../gateway/router.js';
import type { ServerMetrics } from './metrics.js';
import { ORCH_VERSION, versionInfo } from './version.js';

export function nonResourceHandler(registry: Registry, metrics?: ServerMetrics, extra?: (path: string) => NonResourceDoc | undefined): NonResourceHandler {
  const openapi = new OpenAPIDocuments(registry, { title: 'orch', version: `v1.32.0+orch.${ORCH_VERSION}` });
  // the protobuf form of /openapi/v2, made when first asked for each registry version
  let v2Protobuf: { json: string; bytes: Uint8Array; etag: string } | undefined;
  return (path, query, _accept, acceptHeader) => {
    const p = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    // documents of other components (service-account issuer discovery, spec 001 §5.5)
    const own = extra?.(p);
    if (own) return own;
    if (p === '/version') return { status: 200, body: versionInfo() };
    if (p === '/metrics' && metrics) {
      return metrics.render().then((text) => ({ status: 200, body: null, raw: { contentType: 'text/plain; version=0.0.4; charset=utf-8', text } }));
    }
    if (p === '/openapi/v2') {
      const v2 = openapi.v2();
      if (acceptHeader?.includes('application/com.github.proto-openapi.spec.v2')) {
        if (v2Protobuf?.json !== v2.json) v2Protobuf = { json: v2.json, bytes: encodeOpenAPIV2Protobuf(v2.doc), etag: `"${v2.hash}-pb"` };
        return { status: 200, body: null, raw: { contentType: OPENAPI_V2_PROTOBUF, text: v2Protobuf.bytes, etag: v2Protobuf.etag } };
      }
      return { status: 200, body: null, raw: { contentType: 'application/json', text: v2.json, etag: `"${v2.hash}"` } };
    }
    if (p === '/openapi/v3') {
      const index = openapi.v3Index();
      return { status: 200, body: null, raw: { contentType: 'application/json', text: index.json, etag: `"${index.hash}"` } };
    }
    if (p.startsWith('/openapi/v3/')) {
      const doc = openapi.v3(p.slice('/openapi/v3/'.length));
      if (!doc) return undefined;
      void query;
      return { status: 200, body: null, raw: { contentType: 'application/json', text: doc.json, etag: `"${doc.hash}"` } };
    }
    const d = discovery.serveDiscovery(registry, p);
    return d === undefined ? undefined : { status: 200, body: d };
  };
}
