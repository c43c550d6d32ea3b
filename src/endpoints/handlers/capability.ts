// The endpoint side of the capability interfaces (src/registry/capabilities.ts,
// issue #9 item 1): the installer routes a verb of a resource or sub-resource
// with `ResourceDefinition.capabilities` here; this file decodes the request
// (body format, type meta, dryRun, a patch) and encodes the capability's
// answer, as the generic verb handlers do for stored kinds.

import { parse as parseYaml } from 'yaml';
import { badRequest, unsupportedMediaType } from '../../core/errors.js';
import { applyJsonPatch } from '../../machinery/patch/json-patch.js';
import { applyMergePatch } from '../../machinery/patch/merge-patch.js';
import { apiVersionOf } from '../../registry/registry.js';
import type { BodyDecoding, Capabilities, CapabilityContext } from '../../registry/capabilities.js';
import { type ApiObject, type JSONValue, listKindOf } from '../../registry/types.js';
import type { ApiRequest, ApiResponse } from '../request.js';
import { type OptionsRef, bodyText, checkName, checkNamespace, decodeObjectBody, optionsRef, parseBody, parseDryRun, parseFieldValidation } from './common.js';
import type { HandlerContext } from './context.js';
import { fieldManagerOf } from './create.js';
import { patchMediaTypes } from '../../machinery/patch/media-types.js';
import { scaleTable, toTable } from '../../registry/table.js';
import { compileFieldSelector } from '../../machinery/selectors/fields.js';
import { matchesLabels } from '../../machinery/selectors/labels.js';
import { parseListOptions } from '../list-params.js';
import { includeObjectParam } from './list.js';

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
      return async (ctx, req) => {
        const r = await cap.get!(context(ctx, req, false));
        // a Scale asked for as a Table gets kube's Scale columns; other sub-resource kinds have no table
        if (req.accept.table && r.object.kind === 'Scale') {
          return { status: r.status, body: scaleTable(r.object as ApiObject, { ...req.accept.table, includeObject: includeObjectParam(req.query) }) };
        }
        // a computed object of the definition's own kind (a ComponentStatus) prints with the kind's columns
        if (req.accept.table && req.info.subresource === '' && r.object.kind === req.def.kind) {
          return { status: r.status, body: toTable(req.def, [r.object as ApiObject], {}, { ...req.accept.table, includeObject: includeObjectParam(req.query), now: ctx.clock.now() }) };
        }
        return answer(r);
      };
    case 'list':
      if (!cap.list) return undefined;
      return async (ctx, req) => {
        // the selectors are checked before anything is computed (a bad one is a 400, src/registry/status-table.ts)
        const opts = parseListOptions(req.query, req.info.namespace, ctx.registry.apiDomain);
        const fields = compileFieldSelector(req.def, opts.fieldSelector);
        const { items } = await cap.list!(context(ctx, req, false));
        const selected = items.filter((o) => matchesLabels(opts.labelSelector, o.metadata?.labels) && fields(o));
        if (req.accept.table) {
          return { status: 200, body: toTable(req.def, selected, {}, { ...req.accept.table, includeObject: includeObjectParam(req.query), now: ctx.clock.now() }) };
        }
        // kube's list of a computed kind carries items without type meta and an empty ListMeta
        const bare = selected.map(({ kind: _k, apiVersion: _v, ...rest }) => rest);
        return { status: 200, body: { kind: listKindOf(req.def), apiVersion: apiVersionOf(req.def), metadata: {}, items: bare } };
      };
    case 'update':
      if (!cap.update) return undefined;
      return async (ctx, req) => {
        const c = context(ctx, req);
        const body = decodeBody(req, cap.body);
        // kube's update handler for every Updater (a Scale, a Namespace to finalize): the body's namespace, then its name, are the URL's
        checkNamespace(req, body);
        checkName(req, body.metadata);
        return answer(await cap.update!(c, body));
      };
    case 'patch':
      if (!cap.patch) return undefined;
      return async (ctx, req) => {
        const c = context(ctx, req);
        const { type, patch } = decodePatch(req);
        return answer(await cap.patch!(c, (current) => applyPatch(type, current, patch, cap.body?.kind?.kind ?? req.def.kind)));
      };
    default:
      return undefined;
  }
}

/** the options kind kube reads a capability write's query into, by method */
function writeOptions(ctx: HandlerContext, req: ApiRequest): OptionsRef {
  const v = req.info.verb;
  const kind = v === 'update' ? 'UpdateOptions' : v === 'patch' ? 'PatchOptions' : v === 'delete' ? 'DeleteOptions' : 'CreateOptions';
  return optionsRef(ctx.registry.apiDomain, kind);
}

/** a write's dryRun is parsed before the body, as the generic write handlers do; reads ignore it */
function context(ctx: HandlerContext, req: ApiRequest, write = true): CapabilityContext {
  return {
    user: req.user,
    namespace: req.info.namespace,
    name: req.info.name,
    dryRun: write && parseDryRun(req.query, writeOptions(ctx, req)),
    apiDomain: ctx.registry.apiDomain,
    store: () => ctx.storeFor(req.def),
    storeOf: (group, version, resource) => {
      const def = ctx.registry.lookup(group, version, resource);
      return def ? ctx.storeFor(def) : undefined;
    },
    now: () => ctx.clock.now(),
    admitCreate: async (obj, kind, warnings) =>
      ctx.admitSubresourceCreate
        ? ctx.admitSubresourceCreate({ def: req.def, subresource: req.info.subresource, kind, namespace: req.info.namespace, name: req.info.name, object: obj, dryRun: write && parseDryRun(req.query, writeOptions(ctx, req)), user: req.user, warnings })
        : obj,
    ...(ctx.authorizer ? { authorizer: ctx.authorizer } : {}),
    fieldValidation: () => parseFieldValidation(req.query, writeOptions(ctx, req)),
    fieldManager: (optionsKind) => fieldManagerOf(ctx, req, optionsKind),
  };
}

/** the patch document; its type is checked when it is applied (after the object was read) */
function decodePatch(req: ApiRequest): { type: string; patch: JSONValue } {
  const type = (req.contentType || '').split(';')[0]!.trim().toLowerCase(); // split returns at least one part
  try {
    // apply configurations are YAML (JSON is YAML too)
    return { type, patch: (type === 'application/apply-patch+yaml' ? parseYaml(bodyText(req)) : JSON.parse(bodyText(req))) as JSONValue };
  } catch (e) {
    throw badRequest(`the request body could not be decoded: ${(e as Error).message.split('\n')[0]}`);
  }
}

/**
 * applies a patch to a capability's view of the object; the views have no
 * lists (a Scale), so strategic merge and apply are a merge patch on them
 */
function applyPatch(type: string, current: ApiObject, patch: JSONValue, kind: string): ApiObject {
  const doc = current as unknown as JSONValue;
  switch (type) {
    case 'application/json-patch+json': return asObject(applyJsonPatch(doc, patch), kind);
    case 'application/merge-patch+json':
    case 'application/strategic-merge-patch+json':
    case 'application/apply-patch+yaml':
      return asObject(applyMergePatch(doc, patch), kind);
    default:
      throw unsupportedMediaType(`the body of the request was in an unknown format - accepted media types include: ${patchMediaTypes(true).join(', ')}`);
  }
}

function asObject(v: unknown, kind: string): ApiObject {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw badRequest(`the body of the request must be a ${kind} object`);
  return v as ApiObject;
}

/** a virtual kind's read as a Table with its columns when one was asked for (kubectl get), else as it is */
function answer(r: { status: number; object: Record<string, unknown>; warnings?: string[] }): ApiResponse {
  return { status: r.status, body: r.object, ...(r.warnings?.length ? { warnings: r.warnings } : {}) };
}

/** the body as the capability wants it: an object of the endpoint's kind, or of the sub-resource's own kind */
function decodeBody(req: ApiRequest, how: BodyDecoding | undefined): ApiObject {
  if (how?.optional && (!req.body || req.body.length === 0)) {
    return how.kind
      ? { ...(how.kind.apiVersions?.[0] !== undefined ? { apiVersion: how.kind.apiVersions[0] } : {}), kind: how.kind.kind }
      : { apiVersion: apiVersionOf(req.def), kind: req.def.kind };
  }
  if (!how?.kind) return decodeObjectBody(req).obj;
  // JSON, YAML or the protobuf envelope (the catalog knows the sub-resource kinds, e.g. TokenRequest)
  const { kind, apiVersions } = how.kind;
  const obj = asObject(parseBody(req, undefined, kind).value, kind);
  if (apiVersions && obj.apiVersion !== undefined && !apiVersions.includes(String(obj.apiVersion))) {
    throw badRequest(`the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${apiVersions[0] ?? ''})`);
  }
  if (obj.kind !== undefined && obj.kind !== kind) throw badRequest(`the kind in the data (${String(obj.kind)}) does not match the expected kind (${kind})`);
  return apiVersions?.[0] !== undefined && obj.apiVersion === undefined ? { ...obj, apiVersion: apiVersions[0] } : obj;
}
