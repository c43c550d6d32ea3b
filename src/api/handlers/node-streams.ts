// Sub-resources served by a node agent in Kubernetes (pods/log, exec, attach,
// portforward; pods, services and nodes /proxy). They are listed in discovery
// as kube lists them, but no node agent serves them yet (issue #11 item 7), so
// they answer a clear Status instead of 405: 404 when the object is absent,
// else 503 ServiceUnavailable saying what is missing (docs/compatibility.md).

import { StatusError, notFound } from '../errors.js';
import type { ApiRequest, ApiResponse } from '../request.js';
import type { ApiObject } from '../types.js';
import type { HandlerContext } from './context.js';

export const NODE_STREAM_SUBRESOURCES = new Set(['log', 'exec', 'attach', 'portforward', 'proxy']);

export async function handleNodeStream(ctx: HandlerContext, req: ApiRequest): Promise<ApiResponse> {
  const gs = ctx.storeFor(req.def);
  if (!gs.readRaw(req.info.namespace, req.info.name)) throw notFound(req.def.resource, req.def.group, req.info.name);
  // CONNECT admission sees the options object, as in kube (webhooks and policies may refuse an exec)
  const warnings = CONNECT_OPTIONS[req.info.subresource] && ctx.admitConnect
    ? await ctx.admitConnect({
      def: req.def,
      subresource: req.info.subresource,
      namespace: req.info.namespace,
      name: req.info.name,
      options: connectOptions(req),
      user: req.user,
    })
    : [];
  const e = new StatusError(
    503,
    'ServiceUnavailable',
    `${req.def.resource}/${req.info.subresource} of ${req.def.resource} "${req.info.name}" is served through a node agent, and no node agent serves it yet`,
    { name: req.info.name, kind: req.def.resource },
  );
  // no Retry-After: clients would retry something that will not change soon
  e.warnings.push(...warnings);
  throw e;
}

/** the options kind a CONNECT on each sub-resource carries */
const CONNECT_OPTIONS: Record<string, string> = { exec: 'PodExecOptions', attach: 'PodAttachOptions', portforward: 'PodPortForwardOptions', proxy: 'ProxyOptions' };

function connectOptions(req: ApiRequest): ApiObject {
  const q = req.query;
  const flag = (n: string) => q.get(n) === 'true' || q.get(n) === '1';
  const sub = req.info.subresource;
  const kind = sub === 'proxy' ? `${req.def.kind}ProxyOptions` : CONNECT_OPTIONS[sub]!;
  const o: ApiObject = { kind, apiVersion: 'v1' };
  if (sub === 'exec' || sub === 'attach') {
    for (const f of ['stdin', 'stdout', 'stderr', 'tty']) if (q.has(f)) o[f] = flag(f);
    if (q.get('container')) o.container = q.get('container')!;
    if (sub === 'exec') o.command = q.getAll('command');
  } else if (sub === 'portforward') {
    o.ports = q.getAll('ports').map(Number).filter((n) => Number.isInteger(n));
  } else if (q.get('path')) {
    o.path = q.get('path')!;
  }
  return o;
}
