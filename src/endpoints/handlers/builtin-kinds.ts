// Raw verb handlers of built-in kinds' sub-resources that reuse the generic
// handlers of another sub-resource: the CertificateSigningRequest `approval`
// sub-resource and a Pod's `ephemeralcontainers`. The kinds themselves live in the registry (src/registry/kinds/),
// which knows no handler; the server attaches these to the built-in definitions
// (`withBuiltinHandlers`). Sub-resources with behaviour of their own on a
// decoded object (Namespace `finalize`, ServiceAccount `token`) are capabilities
// instead (src/registry/capabilities.ts, handlers/capability.ts).

import type { ResourceDefinition, VerbHandler } from '../../registry/types.js';
import type { ApiRequest } from '../request.js';
import { handleGet } from './get.js';
import { handlePatch } from './patch.js';
import { handleUpdate } from './update.js';

/** `kubectl certificate approve|deny` PUTs the object to /approval: like /status, only status (the conditions) changes */
const CSR_APPROVAL: Record<string, VerbHandler> = {
  'approval/get': (ctx, req) => handleGet(ctx, asSubresource(req, '')),
  'approval/update': (ctx, req) => handleUpdate(ctx, asSubresource(req, 'status')),
  'approval/patch': (ctx, req) => handlePatch(ctx, asSubresource(req, 'status')),
};

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
