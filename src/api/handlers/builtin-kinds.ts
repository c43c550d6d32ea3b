// Verb handlers of built-in kinds' sub-resources that are not the generic
// ones: the Namespace `finalize` sub-resource (spec 000 §3.1) and the
// CertificateSigningRequest `approval` sub-resource. The kinds themselves live
// in the registry (src/registry/kinds/), which knows no handler; the server
// attaches these to the built-in definitions (`withBuiltinHandlers`), as it
// attaches the TokenRequest handler to ServiceAccounts.

import { badRequest } from '../../core/errors.js';
import { finalizersOf } from '../../registry/kinds/namespace.js';
import type { ResourceDefinition, VerbHandler } from '../../registry/types.js';
import { decodeObjectBody, parseDryRun } from './common.js';
import { handleGet } from './get.js';
import { handlePatch } from './patch.js';
import { handleUpdate } from './update.js';

/** PUT namespaces/{name}/finalize: replaces spec.finalizers and nothing else */
const finalizeNamespace: VerbHandler = async (ctx, req) => {
  const dryRun = parseDryRun(req.query);
  const { obj } = decodeObjectBody(req);
  if (obj.metadata?.name !== undefined && obj.metadata.name !== req.info.name) {
    throw badRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${req.info.name})`);
  }
  const wanted = finalizersOf(obj);
  if (!Array.isArray(wanted) || wanted.some((f) => typeof f !== 'string')) throw badRequest('spec.finalizers must be a list of strings');
  const r = await ctx.storeFor(req.def).guaranteedUpdate('', req.info.name, { dryRun }, (cur) => {
    const next = cur!;
    next.spec = { ...((next.spec as object | undefined) ?? {}), finalizers: [...wanted] };
    if (obj.metadata?.resourceVersion) next.metadata!.resourceVersion = obj.metadata.resourceVersion;
    return next;
  });
  return { status: 200, body: r.object };
};

/** `kubectl certificate approve|deny` PUTs the object to /approval: like /status, only status (the conditions) changes */
const CSR_APPROVAL: Record<string, VerbHandler> = {
  'approval/get': (ctx, req) => handleGet(ctx, { ...req, info: { ...req.info, subresource: '' } }),
  'approval/update': (ctx, req) => handleUpdate(ctx, { ...req, info: { ...req.info, subresource: 'status' } }),
  'approval/patch': (ctx, req) => handlePatch(ctx, { ...req, info: { ...req.info, subresource: 'status' } }),
};

/**
 * the built-in definitions (src/registry/kinds/index.ts `builtinDefinitions`)
 * with the handlers of their special sub-resources; other definitions unchanged
 */
export function withBuiltinHandlers(defs: ResourceDefinition[]): ResourceDefinition[] {
  return defs.map((d) => {
    if (d.group === '' && d.kind === 'Namespace') return { ...d, handlers: { ...(d.handlers ?? {}), 'finalize/update': finalizeNamespace } };
    if (d.kind === 'CertificateSigningRequest' && d.subresources?.includes('approval')) return { ...d, handlers: { ...(d.handlers ?? {}), ...CSR_APPROVAL } };
    return d;
  });
}
