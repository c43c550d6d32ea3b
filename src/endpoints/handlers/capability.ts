// The endpoint side of the capability interfaces (src/registry/capabilities.ts,
// issue #9 item 1): the installer routes a verb of a resource or sub-resource
// with `ResourceDefinition.capabilities` here; this file decodes the request
// (body format, type meta, dryRun, the name on the URL) and encodes the
// capability's answer, as the generic verb handlers do for stored kinds.

import { badRequest } from '../../core/errors.js';
import { apiVersionOf } from '../../registry/registry.js';
import type { BodyDecoding, Capabilities, CapabilityContext } from '../../registry/capabilities.js';
import type { ApiObject } from '../../registry/types.js';
import type { ApiRequest, ApiResponse } from '../request.js';
import { decodeObjectBody, parseBody, parseDryRun } from './common.js';
import type { HandlerContext } from './context.js';

type Handler = (ctx: HandlerContext, req: ApiRequest) => Promise<ApiResponse>;

/** the handler of `verb` served by `cap`; undefined when the capabilities do not serve it */
export function capabilityHandler(cap: Capabilities, verb: string): Handler | undefined {
  switch (verb) {
    case 'create':
      if (!cap.create) return undefined;
      return async (ctx, req) => {
        const c = context(ctx, req);
        return answer(await cap.create!(c, decodeBody(req, cap.body)));
      };
    case 'get':
      if (!cap.get) return undefined;
      return async (ctx, req) => answer(await cap.get!(context(ctx, req)));
    case 'update':
      if (!cap.update) return undefined;
      return async (ctx, req) => {
        const c = context(ctx, req);
        const obj = decodeBody(req, cap.body);
        // a PUT names its object on the URL; the body may not name another (as the generic update)
        const bodyName = obj.metadata?.name;
        if (bodyName !== undefined && bodyName !== req.info.name) {
          throw badRequest(`the name of the object (${bodyName}) does not match the name on the URL (${req.info.name})`);
        }
        return answer(await cap.update!(c, obj));
      };
    default:
      return undefined;
  }
}

/** dryRun is parsed before the body, as the generic write handlers do */
function context(ctx: HandlerContext, req: ApiRequest): CapabilityContext {
  return {
    user: req.user,
    namespace: req.info.namespace,
    name: req.info.name,
    dryRun: parseDryRun(req.query),
    store: () => ctx.storeFor(req.def),
    ...(ctx.authorizer ? { authorizer: ctx.authorizer } : {}),
  };
}

function answer(r: { status: number; object: Record<string, unknown>; warnings?: string[] }): ApiResponse {
  return { status: r.status, body: r.object, ...(r.warnings?.length ? { warnings: r.warnings } : {}) };
}

/** the body as the capability wants it: an object of the endpoint's kind, or of the sub-resource's own kind */
function decodeBody(req: ApiRequest, how: BodyDecoding | undefined): ApiObject {
  if (how?.optional && (!req.body || req.body.length === 0)) {
    return how.kind
      ? { apiVersion: how.kind.apiVersions[0], kind: how.kind.kind }
      : { apiVersion: apiVersionOf(req.def), kind: req.def.kind };
  }
  if (!how?.kind) return decodeObjectBody(req).obj;
  // JSON, YAML or the protobuf envelope (the catalog knows the sub-resource kinds, e.g. TokenRequest)
  const { kind, apiVersions } = how.kind;
  const expected = apiVersions[0] ?? '';
  const value = parseBody(req).value;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw badRequest(`the body of the request must be a ${kind} object`);
  const obj = value as ApiObject;
  if (obj.apiVersion !== undefined && !apiVersions.includes(String(obj.apiVersion))) {
    throw badRequest(`the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${expected})`);
  }
  if (obj.kind !== undefined && obj.kind !== kind) throw badRequest(`the kind in the data (${String(obj.kind)}) does not match the expected kind (${kind})`);
  return obj.apiVersion === undefined ? { ...obj, apiVersion: expected } : obj;
}
