import { inferFieldManager, validateFieldManager } from '../../machinery/apply/field-manager.js';
import { invalid } from '../../core/errors.js';
import type { ApiRequest, ApiResponse } from '../request.js';
import type { HandlerContext } from './context.js';
import { checkNamespace, decodeObjectBody, fieldWarnings, optionsRef, parseDryRun, parseFieldValidation, withAdmissionWarnings } from './common.js';

/** POST on a collection path (spec 000 §4.1) */
export async function handleCreate(ctx: HandlerContext, req: ApiRequest): Promise<ApiResponse> {
  const options = optionsRef(ctx.registry.apiDomain, 'CreateOptions');
  const dryRun = parseDryRun(req.query, options);
  const fieldValidation = parseFieldValidation(req.query, options);
  const { obj, findings } = decodeObjectBody(req);
  checkNamespace(req, obj);
  // neither name nor generateName: the object metadata validation's 422 (kube's ValidateObjectMeta)
  const gs = ctx.storeFor(req.def);
  const manager = fieldManagerOf(ctx, req, 'CreateOptions');
  const { result, warnings } = await withAdmissionWarnings(req.audit, (sink, auditAnnotations) =>
    gs.create(req.info.namespace, obj, {
      dryRun,
      fieldValidation,
      bodyFindings: findings,
      manager,
      user: req.user,
      requester: req.user,
      warnings: sink, auditAnnotations,
      // the object was decoded from this request's body: the watch cache may share it
      shareWritten: true,
    }),
  );
  return {
    status: 201,
    body: result.object,
    ...(result.json !== undefined ? { bodyJson: result.json } : {}),
    warnings: [...fieldWarnings(fieldValidation, result.unknownFields, findings), ...warnings],
  };
}

/**
 * The manager recorded in managedFields for non-apply writes (spec 000 §4.9):
 * `fieldManager`, else the User-Agent's product, else `unknown`. A bad
 * `fieldManager` is 422 Invalid on the request's options kind, as in Kubernetes.
 */
export function fieldManagerOf(ctx: HandlerContext, req: ApiRequest, optionsKind: OptionsKind): string {
  const explicit = req.query.get('fieldManager');
  if (explicit !== null && explicit !== '') {
    checkFieldManager(ctx, explicit, optionsKind);
    return explicit;
  }
  return inferFieldManager(undefined, req.headers.get('user-agent') ?? undefined) || 'unknown';
}

export type OptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions';

/** 422 Invalid naming `fieldManager` when it is too long or not printable */
export function checkFieldManager(ctx: HandlerContext, name: string, optionsKind: OptionsKind): void {
  const why = validateFieldManager(name);
  if (why === undefined) return;
  const tooLong = why.startsWith('must be no more');
  throw invalid(optionsKind, `meta.${ctx.registry.apiDomain}`, '', [
    {
      field: 'fieldManager',
      type: tooLong ? 'FieldValueTooLong' : 'FieldValueInvalid',
      message: tooLong ? `Too long: ${why}` : `Invalid value: ${JSON.stringify(name)}: ${why}`,
    },
  ]);
}
