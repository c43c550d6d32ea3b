// Dispatch of non-apply PATCH bodies by Content-Type (spec 000 §4.3). Server-side
// apply (`application/apply-patch+yaml`) is handled by src/machinery/apply, not here.

import type { Definitions, Schema } from '../schema/types.js';
import type { ApiObject, JSONValue } from '../../core/object.js';
import { PatchError, UnsupportedPatchType } from './errors.js';
import { applyJsonPatch } from './json-patch.js';
import { applyMergePatch } from './merge-patch.js';
import { applyStrategicMergePatch } from './strategic-merge.js';

export { PatchError, UnsupportedPatchType, type PatchErrorReason } from './errors.js';
export { applyJsonPatch, parseJsonPatch, type JsonPatchOperation } from './json-patch.js';
export { applyMergePatch, createMergePatch } from './merge-patch.js';
export { applyStrategicMergePatch, createStrategicMergePatch } from './strategic-merge.js';

import { JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH } from './media-types.js';

export { APPLY_PATCH, JSON_PATCH, MERGE_PATCH, PATCH_MEDIA_TYPES, STRATEGIC_MERGE_PATCH, patchMediaTypes } from './media-types.js';

/** The patch media types this module applies. */
export const SUPPORTED_PATCH_TYPES: readonly string[] = [JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH];

/**
 * Applies a PATCH body of the given Content-Type to `original`.
 *
 * Throws `UnsupportedPatchType` for a media type not handled here, and for
 * strategic merge without a schema (custom resources, spec 000 §4.3: the
 * caller answers 415); `PatchError` with reason `Malformed` when the body is
 * not JSON, `Invalid` when it is not a valid patch, `TestFailed` when a JSON
 * Patch `test` does not hold.
 */
export function applyPatch(
  contentType: string,
  original: JSONValue | ApiObject,
  patchBody: Uint8Array | string,
  schema?: Schema,
  defs?: Definitions,
): JSONValue {
  checkPatchType(contentType, schema);
  return applyParsedPatch(contentType, original, parsePatchBody(patchBody), schema, defs);
}

/**
 * `applyPatch` for a body already decoded (`parsePatchBody`): a PATCH that is
 * re-applied after a conflict reuses its one decoded patch, which the engines
 * only read (src/machinery/patch/json-value.ts: inputs are never mutated).
 */
export function applyParsedPatch(
  contentType: string,
  original: JSONValue | ApiObject,
  patch: JSONValue,
  schema?: Schema,
  defs?: Definitions,
): JSONValue {
  const type = checkPatchType(contentType, schema);
  // an ApiObject is JSON whose optional members may be `undefined`; the engines treat those as absent
  const doc = original as JSONValue;
  switch (type) {
    case JSON_PATCH:
      return applyJsonPatch(doc, patch);
    case MERGE_PATCH:
      return applyMergePatch(doc, patch);
    default:
      return applyStrategicMergePatch(doc, patch, schema!, defs ?? {});
  }
}

function checkPatchType(contentType: string, schema: Schema | undefined): string {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (!SUPPORTED_PATCH_TYPES.includes(type)) throw new UnsupportedPatchType(type);
  if (type === STRATEGIC_MERGE_PATCH && !schema) {
    throw new UnsupportedPatchType(type, `strategic merge patch is not supported for this resource (no schema); use ${MERGE_PATCH} or ${JSON_PATCH}`);
  }
  return type;
}

/** decodes a PATCH body (`PatchError` Malformed when it is not UTF-8 JSON) */
export function parsePatchBody(body: Uint8Array | string): JSONValue {
  let text: string;
  try {
    text = typeof body === 'string' ? body : new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new PatchError('Malformed', 'the patch body is not valid UTF-8');
  }
  if (text.trim() === '') throw new PatchError('Malformed', 'the patch body is empty');
  try {
    return JSON.parse(text) as JSONValue;
  } catch (e) {
    throw new PatchError('Malformed', `the patch body is not valid JSON: ${(e as Error).message}`);
  }
}
