import { badRequest, forbidden, forbiddenRequest, invalid } from '../../core/errors.js';
import { aggregateErrors } from '../../auth/authz/errors.js';
import { UNSAFE_DELETE_GATE, UNSAFE_DELETE_OPTION } from '../../registry/deletion/corrupt.js';
import { deleteGracePeriod, deleteOptionsErrors } from '../../registry/deletion/delete-options.js';
import type { PropagationPolicy } from '../../lifecycles/deletion.js';
import type { ApiRequest, ApiResponse } from '../request.js';
import type { HandlerContext } from './context.js';
import { decodeProtobufBody, dryRunOf, mediaType, optionsRef, withAdmissionWarnings } from './common.js';
import { boolParam, intParam } from '../query-params.js';
import { isProtobufMediaType } from '../../machinery/protobuf/envelope.js';
import { parse as parseYaml } from 'yaml';
import { deleteOptionsTypeError } from '../../registry/deletion/delete-options-types.js';

/** DeleteOptions from the query and the optional body (spec 000 §2.6) */
export interface DeleteOptions {
  dryRun: boolean;
  gracePeriodSeconds?: number;
  propagationPolicy?: PropagationPolicy;
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
  ignoreStoreReadErrorWithClusterBreakingPotential?: boolean;
}

export function parseDeleteOptions(req: ApiRequest, apiDomain: string): DeleteOptions {
  let body: Record<string, unknown> = {};
  if (req.body && req.body.length > 0) {
    const text = new TextDecoder().decode(req.body);
    try {
      const type = mediaType(req.contentType);
      const v = isProtobufMediaType(type) ? decodeProtobufBody(req, 'DeleteOptions') : type === 'application/yaml' ? parseYaml(text) : JSON.parse(text);
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) body = v as Record<string, unknown>;
      else if (v !== null) throw new Error('not an object');
    } catch (e) {
      throw badRequest(`the body of the request must be DeleteOptions: ${(e as Error).message}`);
    }
    if (body.kind !== undefined && body.kind !== 'DeleteOptions') {
      throw badRequest(`the kind in the body (${String(body.kind)}) must be DeleteOptions`);
    }
    // a field of the wrong type is not dropped: a delete must not run without the options it was sent with
    const typeError = deleteOptionsTypeError(body);
    if (typeError) throw badRequest(typeError);
  }
  const q = req.query;
  const { dryRun, error: dryRunError } = dryRunOf(q, body.dryRun);
  const rawGrace = intParam(q, 'gracePeriodSeconds') ?? (typeof body.gracePeriodSeconds === 'number' ? body.gracePeriodSeconds : undefined);
  const rawPolicy = q.get('propagationPolicy') || (typeof body.propagationPolicy === 'string' ? body.propagationPolicy : undefined);
  const orphanQ = q.get('orphanDependents');
  const orphanDependents = orphanQ !== null ? boolParam(q, 'orphanDependents') : typeof body.orphanDependents === 'boolean' ? body.orphanDependents : undefined;
  // kube's delete handlers validate the options before reading any object: 422 on DeleteOptions
  const errors = deleteOptionsErrors(rawPolicy, orphanDependents);
  if (dryRunError) errors.push(dryRunError);
  if (errors.length > 0) {
    const ref = optionsRef(apiDomain, 'DeleteOptions');
    throw invalid(ref.kind, ref.group, '', errors);
  }
  const pre = body.preconditions as { uid?: unknown; resourceVersion?: unknown } | undefined;
  const preconditions =
    pre && typeof pre === 'object'
      ? {
          uid: typeof pre.uid === 'string' ? pre.uid : undefined,
          resourceVersion: typeof pre.resourceVersion === 'string' ? pre.resourceVersion : undefined,
        }
      : undefined;
  const unsafe =
    boolParam(q, 'ignoreStoreReadErrorWithClusterBreakingPotential') ||
    body.ignoreStoreReadErrorWithClusterBreakingPotential === true;
  return {
    dryRun,
    gracePeriodSeconds: rawGrace === undefined ? undefined : deleteGracePeriod(rawGrace),
    propagationPolicy: rawPolicy as PropagationPolicy | undefined,
    orphanDependents,
    preconditions,
    ignoreStoreReadErrorWithClusterBreakingPotential: unsafe || undefined,
  };
}

/**
 * The unsafe option's rules (spec 000 §4.10): the gate must be on, and
 * dryRun, gracePeriodSeconds, orphanDependents, preconditions and
 * propagationPolicy must be unset. Throws the refusal; returns normally when
 * the option may be used.
 */
export function checkUnsafeDeleteOptions(ctx: HandlerContext, opts: DeleteOptions): void {
  if (!ctx.featureGates?.enabled(UNSAFE_DELETE_GATE)) {
    throw forbidden(
      `${UNSAFE_DELETE_OPTION}: Forbidden: the delete option is only allowed when the feature gate ${UNSAFE_DELETE_GATE} is enabled (--feature-gates=${UNSAFE_DELETE_GATE}=true)`,
    );
  }
  const set: string[] = [];
  if (opts.dryRun) set.push('dryRun');
  if (opts.gracePeriodSeconds !== undefined) set.push('gracePeriodSeconds');
  if (opts.orphanDependents !== undefined) set.push('orphanDependents');
  if (opts.preconditions !== undefined && (opts.preconditions.uid !== undefined || opts.preconditions.resourceVersion !== undefined)) {
    set.push('preconditions');
  }
  if (opts.propagationPolicy !== undefined) set.push('propagationPolicy');
  if (set.length > 0) {
    throw badRequest(
      `${UNSAFE_DELETE_OPTION}: Invalid value: true: with ${UNSAFE_DELETE_OPTION} enabled, these options must be unset: ${set.join(', ')}`,
      set.map((f) => ({ reason: 'FieldValueForbidden', field: f, message: `must be unset with ${UNSAFE_DELETE_OPTION}` })),
    );
  }
}

/** DELETE on an object path (spec 000 §3.1, §4.10) */
export async function handleDelete(ctx: HandlerContext, req: ApiRequest): Promise<ApiResponse> {
  const opts = parseDeleteOptions(req, ctx.registry.apiDomain);
  const gs = ctx.storeFor(req.def);
  if (opts.ignoreStoreReadErrorWithClusterBreakingPotential) {
    checkUnsafeDeleteOptions(ctx, opts);
    await authorizeUnsafeDelete(ctx, req);
    await gs.deleteCorrupt(req.info.namespace, req.info.name);
    return {
      status: 200,
      body: deletedStatus(req, undefined),
      warnings: [`the object at ${gs.key(req.info.namespace, req.info.name)} was removed without running finalizers or admission (${UNSAFE_DELETE_OPTION})`],
    };
  }
  const { result, warnings } = await withAdmissionWarnings(req.audit, (sink, auditAnnotations) => gs.delete(req.info.namespace, req.info.name, { ...opts, requester: req.user, user: req.user, warnings: sink, auditAnnotations }));
  const { object, deleted } = result;
  // 200 with the object, removed or marked; 202 when a cascade was asked
  // with the legacy orphanDependents=false and the object is not gone yet
  // (Kubernetes keeps this quirk for old clients)
  const status = !deleted && opts.orphanDependents === false ? 202 : 200;
  if (deleted && !req.def.returnDeletedObject) return { status, body: deletedStatus(req, object.metadata?.uid), warnings };
  return { status, body: object, warnings };
}

/**
 * kube-apiserver's answer to a delete that removed the object (finalizeDelete): a Success
 * Status naming it, `kind` being the resource; clients typed to V1Status (the Java
 * client validates every field) cannot read the object instead
 */
function deletedStatus(req: ApiRequest, uid: string | undefined): object {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: { name: req.info.name, group: req.def.group || undefined, kind: req.def.resource, uid },
  };
}

/** the caller also needs the `unsafe-delete-ignore-read-errors` verb (spec 000 §4.10) */
async function authorizeUnsafeDelete(ctx: HandlerContext, req: ApiRequest): Promise<void> {
  if (!ctx.authorizer) return;
  const attrs = {
    user: req.user,
    verb: 'unsafe-delete-ignore-read-errors',
    isResourceRequest: true,
    path: req.info.path,
    apiGroup: req.info.group,
    apiVersion: req.info.version,
    namespace: req.info.namespace,
    resource: req.info.resource,
    subresource: req.info.subresource,
    name: req.info.name,
  };
  const d = await ctx.authorizer.authorize(attrs);
  // kube refuses on an authorizer error too, saying so
  const error = aggregateErrors(d.errors);
  if (error !== undefined) throw forbiddenRequest(attrs, `error while checking permission for ${JSON.stringify(attrs.verb)}, ${error}`);
  if (d.decision !== 'allow') throw forbiddenRequest(attrs, d.reason);
}
