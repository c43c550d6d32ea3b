// Raw verb handlers of built-in kinds' sub-resources that reuse the generic
// handlers of another sub-resource: the CertificateSigningRequest `approval`
// sub-resource (with kube's CertificateApproval check) and a Pod's `ephemeralcontainers`. The kinds themselves live in the registry (src/registry/kinds/),
// which knows no handler; the server attaches these to the built-in definitions
// (`withBuiltinHandlers`). Sub-resources with behaviour of their own on a
// decoded object (Namespace `finalize`, ServiceAccount `token`) are capabilities
// instead (src/registry/capabilities.ts, handlers/capability.ts).

import { forbidden } from '../../core/errors.js';
import { isAuthorizedForSignerName } from '../../auth/authz/signer-names.js';
import type { ResourceDefinition, VerbHandler } from '../../registry/types.js';
import type { HandlerContext } from './context.js';
import type { ApiRequest } from '../request.js';
import { handleGet } from './get.js';
import { handlePatch } from './patch.js';
import { handleUpdate } from './update.js';

/**
 * `kubectl certificate approve|deny` PUTs the object to /approval: only the conditions change (the CSR
 * strategy's prepareForUpdate keeps the rest of the stored status) — after kube's CertificateApproval
 * admission check (`authorizeApproval`)
 */
const CSR_APPROVAL: Record<string, VerbHandler> = {
  'approval/get': (ctx, req) => handleGet(ctx, asSubresource(req, '')),
  'approval/update': async (ctx, req) => {
    await authorizeApproval(ctx, req);
    return handleUpdate(ctx, req);
  },
  'approval/patch': async (ctx, req) => {
    await authorizeApproval(ctx, req);
    return handlePatch(ctx, req);
  },
};

/**
 * kube's CertificateApproval admission plugin: approving or denying needs the
 * `approve` verb on `signers` named by the request's signerName, or on
 * `<domain>/*` (IsAuthorizedForSignerName); the stored request's signer counts,
 * as spec is immutable. A missing request is left to the update's own 404.
 */
async function authorizeApproval(ctx: HandlerContext, req: ApiRequest): Promise<void> {
  if (!ctx.authorizer) return;
  const stored = ctx.storeFor(req.def).readRaw('', req.info.name);
  if (!stored) return;
  const signerName = String((ctx.storeFor(req.def).decode(stored).spec as { signerName?: unknown } | undefined)?.signerName ?? '');
  if (await isAuthorizedForSignerName(ctx.authorizer, req.user, 'approve', signerName, req.info.group)) return;
  throw forbidden(`${req.def.resource}.${req.def.group} ${JSON.stringify(req.info.name)} is forbidden: user not permitted to approve requests with signerName ${JSON.stringify(signerName)}`, {
    name: req.info.name, group: req.def.group, kind: req.def.resource,
  });
}

/**
 * a pod's `ephemeralcontainers` (kubectl debug): GET is the pod, PUT and PATCH
 * change only spec.ephemeralContainers (confineWrite); the request keeps its
 * sub-resource, so authorization, admission and audit see pods/ephemeralcontainers
 */
const POD_EPHEMERAL: Record<string, VerbHandler> = {
  'ephemeralcontainers/get': (ctx, req) => handleGet(ctx, asSubresource(req, '')),
  'ephemeralcontainers/update': handleUpdate,
  'ephemeralcontainers/patch': handlePatch,
};

/** `req` for another sub-resource; `signal` copied by name (the dispatcher's request has it as a getter, which a spread leaves out) */
export function asSubresource(req: ApiRequest, subresource: string): ApiRequest {
  return { ...req, signal: req.signal, info: { ...req.info, subresource } };
}

/**
 * the built-in definitions (src/registry/kinds/index.ts `builtinDefinitions`)
 * with the handlers of their special sub-resources; other definitions unchanged
 */
export function withBuiltinHandlers(defs: ResourceDefinition[]): ResourceDefinition[] {
  return defs.map((d) => {
    if (d.kind === 'CertificateSigningRequest' && d.subresources?.includes('approval')) return { ...d, handlers: { ...(d.handlers ?? {}), ...CSR_APPROVAL } };
    if (d.kind === 'Pod' && d.group === '' && d.subresources?.includes('ephemeralcontainers')) return { ...d, handlers: { ...(d.handlers ?? {}), ...POD_EPHEMERAL } };
    return d;
  });
}
