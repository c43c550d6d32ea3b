// Documents that are not resources: /version, discovery (/api, /apis, …) and
// OpenAPI (/openapi/v2, /openapi/v3, /openapi/v3/<group-version>). All are
// derived from the registry, so custom resources appear as soon as they register.

import * as discovery from '../api/discovery.js';
import type { Registry } from '../api/registry.js';
import { OpenAPIDocuments } from '../api/schema/openapi.js';
import type { NonResourceDoc, NonResourceHandler } from '../gateway/router.js';
import type { ServerMetrics } from './metrics.js';
import { ORCH_VERSION, versionInfo } from './version.js';

export function nonResourceHandler(registry: Registry, metrics?: ServerMetrics, extra?: (path: string) => NonResourceDoc | undefined): NonResourceHandler {
  const openapi = new OpenAPIDocuments(registry, { title: 'orch', version: `v1.32.0+orch.${ORCH_VERSION}` });
  return (path, query) => {
    const p = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    // documents of other components (service-account issuer discovery, spec 001 §5.5)
    const own = extra?.(p);
    if (own) return own;
    if (p === '/version') return { status: 200, body: versionInfo() };
    if (p === '/metrics' && metrics) {
      return metrics.render().then((text) => ({ status: 200, body: null, raw: { contentType: 'text/plain; version=0.0.4; charset=utf-8', text } }));
    }
    if (p === '/openapi/v2') return { status: 200, body: null, raw: { contentType: 'application/json', text: openapi.v2().json } };
    if (p === '/openapi/v3') return { status: 200, body: null, raw: { contentType: 'application/json', text: openapi.v3Index().json } };
    if (p.startsWith('/openapi/v3/')) {
      const doc = openapi.v3(p.slice('/openapi/v3/'.length));
      if (!doc) return undefined;
      void query;
      return { status: 200, body: null, raw: { contentType: 'application/json', text: doc.json } };
    }
    const d = discovery.serveDiscovery(registry, p);
    return d === undefined ? undefined : { status: 200, body: d };
  };
}
