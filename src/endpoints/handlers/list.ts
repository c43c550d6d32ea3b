import { badRequest } from '../../core/errors.js';
import { type ListResult, listMetaOf, listObjects, listSemantics } from '../../registry/list.js';
import { apiVersionOf } from '../../registry/registry.js';
import { listKindOf } from '../../registry/types.js';
import type { ApiRequest, ApiResponse } from '../request.js';
import { toTable } from '../../registry/table.js';
import { checkPartialShape, partialList } from '../../registry/partial-metadata.js';
import type { HandlerContext } from './context.js';
import { listParams, parseListOptions } from '../../endpoints/list-params.js';

export function includeObjectParam(q: URLSearchParams): 'None' | 'Metadata' | 'Object' {
  const v = q.get('includeObject');
  if (v === null || v === '') return 'Metadata';
  if (v === 'None' || v === 'Metadata' || v === 'Object') return v;
  throw badRequest(`includeObject: Unsupported value: "${v}": supported values: "None", "Metadata", "Object"`);
}

/** GET on a collection path: `<Kind>List` with list metadata (spec 000 §2.2, §4.5, §4.6) */
export async function handleList(ctx: HandlerContext, req: ApiRequest): Promise<ApiResponse> {
  if (req.accept.partial) checkPartialShape(req.def, req.accept.partial, true);
  const params = listParams(parseListOptions(req.query, req.info.namespace, ctx.registry.apiDomain));
  const gs = ctx.storeFor(req.def);
  let result: ListResult | undefined;
  // spec 000 §4.6: an unpaged "Most Recent" list may be served from the
  // watch cache once it has caught up to the ReadIndex; a paged one reads
  // the store, whose MVCC history keeps the first chunk's revision readable.
  // A bad field selector is a 400 of the Status table (src/registry/status-table.ts).
  const unpaged = params.limit === undefined || params.limit === 0;
  if (ctx.listFromCache && unpaged && listSemantics(params, ctx.tokens).kind === 'mostRecent') {
    result = await ctx.listFromCache(gs, params);
  }
  result ??= await listObjects(gs, params, ctx.tokens);
  const listMeta = listMetaOf(result);
  if (req.accept.table) {
    return {
      status: 200,
      body: toTable(req.def, result.items, listMeta, { ...req.accept.table, includeObject: includeObjectParam(req.query), now: ctx.clock.now() }),
    };
  }
  if (req.accept.partial) return { status: 200, body: partialList(result.items, listMeta, req.accept.partial) };
  return {
    status: 200,
    body: { kind: listKindOf(req.def), apiVersion: apiVersionOf(req.def), metadata: listMeta, items: result.items },
  };
}
