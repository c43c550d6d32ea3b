import { badRequest } from '../errors.js';
import type { ApiRequest, ApiResponse } from '../request.js';
import type { HandlerContext } from './context.js';
import { checkNamespace, decodeObjectBody, fieldWarnings, parseDryRun, parseFieldValidation } from './common.js';

/** POST on a collection path (spec 000 §4.1) */
export async function handleCreate(ctx: HandlerContext, req: ApiRequest): Promise<ApiResponse> {
  const dryRun = parseDryRun(req.query);
  const fieldValidation = parseFieldValidation(req.query);
  const { obj, duplicates } = decodeObjectBody(req);
  checkNamespace(req, obj);
  if (!obj.metadata?.name && !obj.metadata?.generateName) {
    throw badRequest(`${req.def.kind} in version "${req.def.version}" cannot be handled: name or generateName is required`);
  }
  const gs = ctx.storeFor(req.def);
  const { object, unknownFields } = await gs.create(req.info.namespace, obj, {
    dryRun,
    fieldValidation,
    duplicateFields: duplicates,
    manager: fieldManagerOf(req),
  });
  return { status: 201, body: object, warnings: fieldWarnings(fieldValidation, unknownFields, duplicates) };
}

/** the manager recorded in managedFields for non-apply writes (spec 000 §4.9): fieldManager or the User-Agent's product */
export function fieldManagerOf(req: ApiRequest): string {
  const explicit = req.query.get('fieldManager');
  if (explicit !== null && explicit !== '') {
    if (explicit.length > 128) throw badRequest('fieldManager: Too long: may not be more than 128 bytes');
    return explicit;
  }
  const ua = req.headers.get('user-agent') ?? '';
  const product = ua.split('/')[0]?.trim() ?? '';
  return product.slice(0, 128) || 'unknown';
}
