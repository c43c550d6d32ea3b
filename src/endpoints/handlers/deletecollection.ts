import { listMetaOf, listObjects } from '../../registry/list.js';
import { apiVersionOf } from '../../registry/registry.js';
import type { ApiRequest, ApiResponse } from '../request.js';
import { listKindOf } from '../../registry/types.js';
import { StatusError, badRequest } from '../../core/errors.js';
import { UNSAFE_DELETE_OPTION } from '../../registry/deletion/corrupt.js';
import type { HandlerContext } from './context.js';
import { parseDeleteOptions } from './delete.js';
import { listParams, parseListOptions } from '../../endpoints/list-params.js';

/**
 * DELETE on a collection path: every object matching the selectors is
 * deleted as by DELETE on its path (the deletion machine decides per object:
 * removed, or marked Terminating when finalizers hold it); the response is the
 * list the objects were deleted from, one page of it with `limit`. Query
 * parameters are "not shown" in spec 000 §4.1: we take the list selectors and
 * the delete options; preconditions are per object and ignored here
 * (docs/deletion.md).
 */
export async function handleDeleteCollection(ctx: HandlerContext, req: ApiRequest): Promise<ApiResponse> {
  const opts = parseDeleteOptions(req, ctx.registry.apiDomain);
  // force deletion names one corrupt object; a collection cannot be read to find them (spec 000 §4.10)
  if (opts.ignoreStoreReadErrorWithClusterBreakingPotential) {
    throw badRequest(`${UNSAFE_DELETE_OPTION}: Invalid value: true: the option is not supported by deletecollection; delete the corrupt object by name`);
  }
  const params = listParams(parseListOptions(req.query, req.info.namespace, ctx.registry.apiDomain));
  const gs = ctx.storeFor(req.def);
  // kube's Store.DeleteCollection lists with the request's options: with a limit it deletes
  // that one page and answers it (continue token included); without, every match
  const paged = params.limit !== undefined && params.limit > 0;
  const list = await listObjects(gs, paged ? params : { ...params, limit: undefined, continueToken: undefined }, ctx.tokens);
  const warnings: string[] = [];
  for (const item of list.items) {
    try {
      await gs.delete(item.metadata?.namespace ?? '', item.metadata!.name!, {
        ...opts,
        preconditions: undefined,
        requester: req.user,
        user: req.user,
        warnings,
      });
    } catch (e) {
      // an object deleted concurrently is simply gone
      if (e instanceof StatusError && e.code === 404) continue;
      if (e instanceof StatusError) e.warnings.push(...warnings);
      throw e;
    }
  }
  // the items as listed, before their deletion (kube answers the list it deleted from)
  return {
    status: 200,
    body: { kind: listKindOf(req.def), apiVersion: apiVersionOf(req.def), metadata: listMetaOf(list), items: list.items },
    warnings: [...new Set(warnings)],
  };
}
