import { conflict, invalid } from '../../core/errors.js';
import type { ApiRequest, ApiResponse } from '../request.js';
import type { HandlerContext } from './context.js';
import {
  checkName,
  checkNamespace,
  confineWrite,
  decodeObjectBody,
  fieldWarnings,
  hasStatusSubresource,
  isPartialWrite,
  optionsRef,
  parseDryRun,
  parseFieldValidation,
  withAdmissionWarnings,
} from './common.js';
import { fieldManagerOf } from './create.js';

/**
 * PUT on an object path (spec 000 §4.1, §4.4): the full object; a stale
 * resourceVersion is 409; an absent object is created.
 */
export async function handleUpdate(ctx: HandlerContext, req: ApiRequest): Promise<ApiResponse> {
  const options = optionsRef(ctx.registry.apiDomain, 'UpdateOptions');
  const dryRun = parseDryRun(req.query, options);
  const fieldValidation = parseFieldValidation(req.query, options);
  const { obj, findings } = decodeUpdateBody(req);
  // a retry after a conflict decodes the body again: admission pruned and defaulted the last attempt's object in place
  let attempts = 0;
  const gs = ctx.storeFor(req.def);
  const manager = fieldManagerOf(ctx, req, 'UpdateOptions');
  const { result: r, warnings } = await withAdmissionWarnings(req.audit, (sink, auditAnnotations) => gs.guaranteedUpdate(
    req.info.namespace,
    req.info.name,
    {
      dryRun,
      fieldValidation,
      bodyFindings: findings,
      // the status sub-resource of an absent object is 404, not a create
      createIfAbsent: !isPartialWrite(req),
      // confineWrite copies nothing from the stored object of a kind without a status sub-resource
      transformReadsOnly: !hasStatusSubresource(req),
      // a uid in the body is a precondition, also on /status (kube's DefaultUpdatedObjectInfo.Preconditions)
      uidPrecondition: obj.metadata?.uid || undefined,
      manager,
      user: req.user,
      subresource: req.info.subresource || undefined,
      requester: req.user,
      warnings: sink, auditAnnotations,
      // the object was decoded from this request's body: the watch cache may share it
      shareWritten: true,
    },
    (current) => {
      const body = attempts++ === 0 ? obj : decodeUpdateBody(req).obj;
      // a resourceVersion is a precondition: an absent object does not meet it (spec 000 §4.4)
      if (!current && body.metadata?.resourceVersion) {
        throw conflict(req.def.resource, req.def.group, req.info.name, 'the object does not exist; it may have been deleted');
      }
      if (current && !allowsUnconditionalUpdate(ctx, req) && [undefined, '', '0'].includes(body.metadata?.resourceVersion)) {
        // kube words it with the resource as the kind (registry Store.Update)
        throw invalid(req.def.resource, req.def.group, req.info.name, [
          { field: 'metadata.resourceVersion', type: 'FieldValueInvalid', message: 'Invalid value: 0x0: must be specified for an update' },
        ]);
      }
      return confineWrite(req, body, current);
    },
  ));
  return {
    status: r.created ? 201 : 200,
    body: r.object,
    warnings: [...fieldWarnings(fieldValidation, r.unknownFields, findings), ...warnings],
  };
}

/**
 * the body of a PUT, named as the URL names it: kube's EnsureObjectNamespaceMatchesRequestNamespace,
 * then checkName — 400 for a body naming another object and for one naming none (`the name of the
 * object (x based on URL) was undeterminable: name must be provided`, ObjectName's errEmptyName)
 */
function decodeUpdateBody(req: ApiRequest): ReturnType<typeof decodeObjectBody> {
  const decoded = decodeObjectBody(req);
  checkNamespace(req, decoded.obj);
  checkName(req, decoded.obj.metadata);
  return decoded;
}

/**
 * kube's AllowUnconditionalUpdate: a PUT without a resourceVersion replaces the
 * object, except of custom resources and CRDs, whose strategies require one
 */
function allowsUnconditionalUpdate(ctx: HandlerContext, req: ApiRequest): boolean {
  if (req.def.customResource) return false;
  return !(req.def.group === `apiextensions.${ctx.registry.apiDomain}` && req.def.resource === 'customresourcedefinitions');
}
