// PATCH on an object path (spec 000 §4.3, §4.4, §4.9): the Content-Type
// selects JSON Patch, JSON Merge Patch, Strategic Merge Patch or server-side
// apply. A resourceVersion the patch sets is a precondition; otherwise the
// patch is re-applied on the latest object when a concurrent write wins.

import { parse as parseYaml } from 'yaml';
import { serverSideApply } from '../../machinery/apply/apply.js';
import { conflictStatusError } from '../../machinery/apply/conflict-status.js';
import { STALE_OBJECT, badRequest, conflict, invalid, unsupportedMediaType } from '../../core/errors.js';
import { nowTimestamp } from '../../machinery/meta.js';
import { PATCH_MEDIA_TYPES, UnsupportedPatchType, applyParsedPatch } from '../../machinery/patch/index.js';
import { statusFor } from '../../registry/status-table.js';
import { boolParam } from '../query-params.js';
import { decodeError } from '../../registry/generic-store.js';
import { apiVersionOf } from '../../registry/registry.js';
import type { ApiRequest, ApiResponse } from '../request.js';
import type { ApiObject, JSONValue, ResourceDefinition } from '../../registry/types.js';
import type { JSONObject } from '../../core/object.js';
import type { HandlerContext } from './context.js';
import {
  bodyText,
  checkName,
  checkNamespace,
  confineApplyConfig,
  confineWrite,
  fieldWarnings,
  isPartialWrite,
  mediaType,
  optionsRef,
  parseDryRun,
  parseFieldValidation,
  withAdmissionWarnings,
} from './common.js';
import { checkFieldManager, fieldManagerOf } from './create.js';
import { duplicateKeyLinesYaml, findDuplicateKeys } from '../../machinery/schema/duplicates.js';
import { type BodyFindings, duplicateFieldText, typedJsonErrors } from '../../machinery/schema/strict-decoding.js';
import { dropEmptyTypedMaps, validateAgainstSchema } from '../../machinery/schema/validate.js';
import { compileSchema } from '../../machinery/schema/compile.js';
import type { Definitions } from '../../machinery/schema/types.js';

export async function handlePatch(ctx: HandlerContext, req: ApiRequest): Promise<ApiResponse> {
  const type = mediaType(req.contentType);
  if (!PATCH_MEDIA_TYPES.includes(type)) {
    throw unsupportedMediaType(
      `the body of the request was in an unknown format - accepted media types include: ${PATCH_MEDIA_TYPES.join(', ')}`,
    );
  }
  const options = optionsRef(ctx.registry.apiDomain, 'PatchOptions');
  const dryRun = parseDryRun(req.query, options);
  const fieldValidation = parseFieldValidation(req.query, options);
  const force = boolParam(req.query, 'force');
  if (type === 'application/apply-patch+yaml') return applyHandler(ctx, req, { dryRun, fieldValidation, force });
  if (req.query.has('force')) {
    throw invalid('PatchOptions', `meta.${ctx.registry.apiDomain}`, '', [
      { field: 'force', type: 'FieldValueForbidden', message: 'Forbidden: may not be specified for non-apply patch' },
    ]);
  }
  // strategic merge needs the patch strategies of built-in types; custom resources refuse it (spec 000 §4.3)
  // (415 through the Status table, src/registry/status-table.ts)
  if (type === 'application/strategic-merge-patch+json' && req.def.customResource) throw new UnsupportedPatchType(type);
  const text = bodyText(req);
  // decoded once: a retry after a conflict re-applies the same decoded patch
  const patch = checkPatchShape(type, text);
  // duplicate keys in the patch body are reported like those of a full body (spec 000 §4.8)
  const findings = patchFindings(type, patch, text, req.def.customResource === true);
  const gs = ctx.storeFor(req.def);
  const { name, namespace } = req.info;
  const writeOpts = {
    dryRun,
    fieldValidation,
    bodyFindings: findings,
    patched: true,
    ...(type === 'application/strategic-merge-patch+json' ? { strategicPatch: patch } : {}),
    manager: fieldManagerOf(ctx, req, 'PatchOptions'),
    user: req.user,
    subresource: req.info.subresource || undefined,
    requester: req.user,
    warnings: [] as string[],
  };
  const ifMatch = ifMatchVersion(req.headers.get('if-match'));
  const r = await withAdmissionWarnings(req.audit, (sink, auditAnnotations) => gs.guaranteedUpdate(namespace, name, { ...writeOpts, warnings: sink, auditAnnotations }, (current) => {
    const cur = current!;
    const currentRv = cur.metadata?.resourceVersion;
    let patched: ApiObject;
    try {
      patched = applyParsedPatch(type, cur, patch, req.def.schema, ctx.registry.defs) as ApiObject;
    } catch (e) {
      throw patchErrorToStatus(e);
    }
    if (patched === null || typeof patched !== 'object' || Array.isArray(patched)) {
      throw badRequest('the patch must produce an object');
    }
    if (patched.apiVersion !== cur.apiVersion || patched.kind !== cur.kind) {
      throw badRequest('the patch must not change apiVersion or kind');
    }
    const meta = (patched.metadata ??= {});
    // a patch may not move or rename the object, nor remove its name (kube's applyPatch:
    // EnsureObjectNamespaceMatchesRequestNamespace, then checkName)
    checkNamespace(req, patched);
    checkName(req, meta);
    // only a resourceVersion the patch itself set is a precondition
    if (meta.resourceVersion === currentRv) delete meta.resourceVersion;
    // so is an If-Match header (spec 000 §4.3: it carries a version precondition)
    if (ifMatch !== undefined) {
      if (ifMatch !== currentRv) throw conflict(req.def.resource, req.def.group, name, STALE_OBJECT);
      meta.resourceVersion ??= ifMatch;
    }
    return confineWrite(req, patched, cur);
  })).then(({ result, warnings }) => ({ ...result, admissionWarnings: warnings }));
  return { status: 200, body: r.object, warnings: [...fieldWarnings(fieldValidation, r.unknownFields, findings), ...r.admissionWarnings] };
}

async function applyHandler(
  ctx: HandlerContext,
  req: ApiRequest,
  opts: { dryRun: boolean; fieldValidation: 'Ignore' | 'Warn' | 'Strict'; force: boolean },
): Promise<ApiResponse> {
  const manager = req.query.get('fieldManager');
  if (!manager) {
    throw invalid('PatchOptions', `meta.${ctx.registry.apiDomain}`, '', [
      { field: 'fieldManager', type: 'FieldValueRequired', message: 'Required value: is required for apply patch' },
    ]);
  }
  checkFieldManager(ctx, manager, 'PatchOptions');
  const text = bodyText(req);
  let config: unknown;
  try {
    config = parseYaml(text, { uniqueKeys: false, maxAliasCount: 100, merge: true });
  } catch (e) {
    throw badRequest(`error decoding YAML: ${(e as Error).message.split('\n')[0]}`);
  }
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw badRequest('the apply configuration must be an object');
  }
  const cfg = confineApplyConfig(req, config as ApiObject);
  const apiVersion = apiVersionOf(req.def);
  if (cfg.apiVersion !== apiVersion) {
    throw badRequest(`the API version in the data (${String(cfg.apiVersion ?? '')}) does not match the expected API version (${apiVersion})`);
  }
  if (cfg.kind !== req.def.kind) {
    throw badRequest(`the kind in the data (${String(cfg.kind ?? '')}) does not match the expected kind (${req.def.kind})`);
  }
  const meta = cfg.metadata;
  if (meta?.managedFields !== undefined) throw badRequest('metadata.managedFields must be nil');
  if (meta?.name !== undefined && meta.name !== req.info.name) {
    throw badRequest(`the name of the object (${String(meta.name)}) does not match the name on the URL (${req.info.name})`);
  }
  if (req.def.scope === 'Namespaced' && meta?.namespace !== undefined && meta.namespace !== req.info.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  // kube strict-decodes the configuration's YAML after applying it: yaml.v2's duplicate keys
  const duplicates = duplicateKeyLinesYaml(text);
  const findings: BodyFindings = { kind: 'first', problems: duplicates, yaml: true, sortUnknown: false };
  // The configuration is decoded like an object of the kind before it is
  // merged (Kubernetes types it first): unknown fields are dropped (so the
  // applier never owns them) and type errors are 400 before any ownership
  // check could answer 409. Required fields are not checked here: an apply
  // configuration is partial; the merged object is validated in full later.
  // `null` stays: in a configuration it means "delete" (spec 000 §4.8, §4.9).
  const decoded = validateAgainstSchema(cfg, req.def.schema, ctx.registry.defs, { prune: true, dropNulls: false });
  const typeError = decoded.errors.find((e) => e.type === 'FieldValueTypeInvalid');
  if (typeError) throw decodeError(req.def, typeError);
  const configUnknown = decoded.unknownFields;
  if (opts.fieldValidation === 'Strict') strictApplyCheck(req.def, cfg, configUnknown, duplicates);
  const gs = ctx.storeFor(req.def);
  const { result: r, warnings: admissionWarnings } = await withAdmissionWarnings(req.audit, (sink, auditAnnotations) => gs.guaranteedUpdate(
    req.info.namespace,
    req.info.name,
    {
      ...opts,
      warnings: sink, auditAnnotations,
      bodyFindings: findings,
      // the status sub-resource of an absent object is 404, not a create
      createIfAbsent: !isPartialWrite(req),
      manager,
      operation: 'Apply',
      user: req.user,
      subresource: req.info.subresource || undefined,
      requester: req.user,
    },
    (current) => {
      const currentRv = current?.metadata?.resourceVersion;
      const result = serverSideApply({
        live: current,
        config: cfg,
        manager,
        force: opts.force,
        apiVersion,
        now: nowTimestamp(ctx.clock.now()),
        schema: req.def.schema,
        defs: ctx.registry.defs,
        subresource: req.info.subresource || undefined,
        normalize: normalizeFor(req.def, ctx.registry.defs),
      });
      if (result.conflicts.length > 0) throw conflictStatusError(result.conflicts, apiVersion);
      const out = result.object;
      const m = (out.metadata ??= {});
      m.name = req.info.name;
      if (req.def.scope === 'Namespaced') m.namespace = req.info.namespace;
      // a resourceVersion in the configuration is a precondition (spec 000 §4.3)
      if (current && m.resourceVersion === currentRv && cfg.metadata?.resourceVersion === undefined) delete m.resourceVersion;
      if (!current && cfg.metadata?.resourceVersion) {
        throw conflict(req.def.resource, req.def.group, req.info.name, 'the object does not exist; it may have been deleted');
      }
      if (!current) delete m.resourceVersion;
      return confineWrite(req, out, current);
    },
  ));
  const unknown = [...new Set([...configUnknown, ...r.unknownFields])];
  return {
    status: r.created ? 201 : 200,
    body: r.object,
    warnings: [...fieldWarnings(opts.fieldValidation, unknown, findings), ...admissionWarnings],
  };
}

/**
 * Strict field validation of an apply configuration, worded as kube's: a field the
 * schema does not declare fails the conversion to a typed patch first (structured
 * merge diff's paths, `.spec.a`), then duplicate keys fail the strict YAML decoding
 * (yaml.v2's `line 9: key "foo" already set in map`). Kube answers the first with
 * 500 (kubernetes/kubernetes#122480); the spec's 400 is kept.
 */
function strictApplyCheck(def: ResourceDefinition, cfg: ApiObject, unknown: string[], duplicateLines: string[]): void {
  if (unknown.length > 0) {
    const where = `${cfg.metadata?.namespace ?? ''}/${cfg.metadata?.name ?? ''}; ${def.group}/${def.version}, Kind=${def.kind}`;
    const errs = unknown.map((f) => `.${f}: field not declared in schema`);
    throw badRequest(`failed to create typed patch object (${where}): ${errs.length === 1 ? errs[0] : ['errors:', ...errs].join('\n  ')}`);
  }
  if (duplicateLines.length > 0) {
    const lines = duplicateLines.map((l) => `\n  ${l}`).join('');
    throw badRequest(`error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:${lines}`);
  }
}

/**
 * What decoding a patch body finds before the patched object's unknown fields (kube's
 * patch handler, strict-decoding the patch): a merge patch's duplicate keys, or a JSON
 * Patch's operations' unknown and duplicate fields (`json patch unknown field "[0].foo"`,
 * decoded into {op, path, from, value}). The patched object's unknown fields follow,
 * sorted for a built-in kind (kube decodes the patched JSON, whose keys Go sorts).
 */
function patchFindings(type: string, patch: JSONValue, text: string, customResource: boolean): BodyFindings {
  const duplicates = findDuplicateKeys(text);
  if (type !== 'application/json-patch+json') {
    return { kind: 'first', problems: duplicates.map((d) => duplicateFieldText(d.path)), sortUnknown: !customResource };
  }
  const opUnknown: string[] = [];
  (patch as JSONValue[]).forEach((op, i) => {
    if (op === null || typeof op !== 'object' || Array.isArray(op)) return;
    for (const k in op) if (k !== 'op' && k !== 'path' && k !== 'from' && k !== 'value') opUnknown.push(`[${i}].${k}`);
  });
  const problems = typedJsonErrors(text, duplicates, opUnknown).map((e) => `json patch ${e}`);
  return { kind: 'first', problems, sortUnknown: !customResource };
}

/**
 * A body that cannot be a patch of an object at all is a bad request (400):
 * JSON Patch must be a list of operations, merge and strategic merge patches
 * must be JSON objects. Problems inside a well-formed patch are 422/409.
 */
function checkPatchShape(type: string, text: string): JSONValue {
  let value: JSONValue;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw badRequest(`the patch body could not be decoded as JSON: ${(e as Error).message}`);
  }
  if (type === 'application/json-patch+json') {
    if (!Array.isArray(value)) throw badRequest('the JSON Patch body must be a list of operations');
  } else if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw badRequest('the patch body must be a JSON object');
  }
  return value;
}

/** the resourceVersion an If-Match header names (`"42"`, `W/"42"` or `42`); `*` is no precondition */
function ifMatchVersion(header: string | null | undefined): string | undefined {
  if (header === null || header === undefined) return undefined;
  const v = header.trim().replace(/^W\//, '').replace(/^"(.*)"$/, '$1');
  return v === '' || v === '*' ? undefined : v;
}

/** a patch engine's failure: PatchError and UnsupportedPatchType through the Status table, anything else a 400 */
function patchErrorToStatus(e: unknown): Error {
  return statusFor(e) ?? badRequest(`the patch could not be applied: ${(e as Error)?.message ?? String(e)}`);
}

/** the store's normalization of what it writes (src/registry/admission.ts): a built-in kind's empty maps dropped */
function normalizeFor(def: ResourceDefinition, defs: Definitions): ((obj: JSONObject) => void) | undefined {
  return def.customResource ? undefined : (obj) => dropEmptyTypedMaps(obj, compileSchema(def.schema, defs));
}
