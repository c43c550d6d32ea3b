import { parseResourceVersion } from '../../machinery/meta.js';
import type { ApiRequest, ApiResponse } from '../request.js';
import { toTable } from '../../registry/table.js';
import { checkPartialShape, partialObject } from '../../registry/partial-metadata.js';
import { includeObjectParam } from './list.js';
import type { HandlerContext } from './context.js';

/** GET on an object path (spec 000 §4.1; resourceVersion per the §4.6 get table) */
export async function handleGet(ctx: HandlerContext, req: ApiRequest): Promise<ApiResponse> {
  if (req.accept.partial) checkPartialShape(req.def, req.accept.partial, false);
  const gs = ctx.storeFor(req.def);
  const raw = req.query.get('resourceVersion') ?? undefined;
  const rv = parseResourceVersion(raw);
  const obj = await gs.get(req.info.namespace, req.info.name, rv === undefined ? undefined : { value: rv, raw: raw! });
  if (req.accept.table) {
    return {
      status: 200,
      body: toTable(req.def, [obj], { resourceVersion: obj.metadata?.resourceVersion }, {
        ...req.accept.table,
        includeObject: includeObjectParam(req.query),
        now: ctx.clock.now(),
      }),
    };
  }
  if (req.accept.partial) return { status: 200, body: partialObject(obj, req.accept.partial) };
  return { status: 200, body: obj };
}
