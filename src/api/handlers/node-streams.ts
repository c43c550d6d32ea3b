// Sub-resources served by a node agent in Kubernetes (pods/log, exec, attach,
// portforward; pods, services and nodes /proxy). They are listed in discovery
// as kube lists them, but no node agent serves them yet (issue #11 item 7), so
// they answer a clear Status instead of 405: 404 when the object is absent,
// else 503 ServiceUnavailable saying what is missing (docs/compatibility.md).

import { StatusError, notFound } from '../errors.js';
import type { ApiRequest, ApiResponse } from '../request.js';
import type { HandlerContext } from './context.js';

export const NODE_STREAM_SUBRESOURCES = new Set(['log', 'exec', 'attach', 'portforward', 'proxy']);

export async function handleNodeStream(ctx: HandlerContext, req: ApiRequest): Promise<ApiResponse> {
  const gs = ctx.storeFor(req.def);
  if (!gs.readRaw(req.info.namespace, req.info.name)) throw notFound(req.def.resource, req.def.group, req.info.name);
  const e = new StatusError(
    503,
    'ServiceUnavailable',
    `${req.def.resource}/${req.info.subresource} of ${req.def.resource} "${req.info.name}" is served through a node agent, and no node agent serves it yet`,
    { name: req.info.name, kind: req.def.resource },
  );
  // no Retry-After: clients would retry something that will not change soon
  throw e;
}
