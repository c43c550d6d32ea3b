import { listObjects } from '../list.js';
import { apiVersionOf } from '../registry.js';
import type { ApiRequest, ApiResponse } from '../request.js';
import type { ApiObject } from '../types.js';
import { StatusError } from '../errors.js';
import type { HandlerContext } from './context.js';
import { parseDeleteOptions } from './delete.js';
import { listParams } from './list.js';

/**
 * DELETE on a collection path: every object matching the selectors is
 * deleted as by DELETE on its path; the response lists what was deleted or
 * marked. (Query parameters are "not shown" in spec 000 §4.1: we take the
 * list selectors and the delete options, see docs/api.md.)
 */
export async function handleDeleteCollection(ctx: HandlerContext, req: ApiRequest): Promise<ApiResponse> {
  const opts = parseDeleteOptions(req);
  const params = listParams(req);
  const gs = ctx.storeFor(req.def);
  const { items, resourceVersion } = await listObjects(gs, { ...params, limit: undefined, continueToken: undefined }, ctx.tokens);
  const out: ApiObject[] = [];
  for (const item of items) {
    try {
      const r = await gs.delete(item.metadata?.namespace ?? '', item.metadata!.name!, {
        ...opts,
        preconditions: undefined,
      });
      out.push(r.object);
    } catch (e) {
      // an object deleted concurrently is simply gone
      if (e instanceof StatusError && e.code === 404) continue;
      throw e;
    }
  }
  return {
    status: 200,
    body: { kind: `${req.def.kind}List`, apiVersion: apiVersionOf(req.def), metadata: { resourceVersion }, items: out },
  };
}
