// kubectl's move from client-side to server-side apply (Kubernetes'
// lastAppliedManager and lastAppliedUpdater, applied only to the field manager
// `kubectl`, which other managers use to opt out):
//  - an apply that conflicts only on fields the object's
//    `kubectl.kubernetes.io/last-applied-configuration` sets, to the values the
//    object still holds, is forced: those fields were the same user's,
//    applied client-side;
//  - after an apply, an existing annotation is rewritten to the new
//    configuration, so a later client-side apply sees what was applied.

import type { ApiObject, JSONObject, JSONValue } from '../../core/object.js';
import type { FieldSet } from './fieldpath.js';
import { goJSON } from './fieldpath.js';
import { compareObjects, toFieldSet, type TypeContext } from './typed.js';

export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
export const KUBECTL_MANAGER = 'kubectl';

function lastAppliedOf(obj: ApiObject | undefined): string | undefined {
  const v = obj?.metadata?.annotations?.[LAST_APPLIED];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** the fields a conflict may take from the client-side applier; undefined without a readable annotation */
export function allowedFromLastApplied(live: ApiObject | undefined, liveClean: JSONValue | undefined, ctx: TypeContext): FieldSet | undefined {
  const text = lastAppliedOf(live);
  if (text === undefined || liveClean === undefined) return undefined;
  let last: unknown;
  try {
    last = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (last === null || typeof last !== 'object' || Array.isArray(last)) return undefined;
  try {
    const set = toFieldSet(last as JSONObject, ctx);
    return set.difference(compareObjects(last as JSONObject, liveClean, ctx).modified);
  } catch {
    // an annotation that does not fit the schema allows nothing
    return undefined;
  }
}

/** `obj` with its existing last-applied annotation set to `config` (without that annotation), as Go encodes it */
export function syncLastApplied(obj: ApiObject, live: ApiObject | undefined, config: ApiObject): ApiObject {
  if (lastAppliedOf(live) === undefined) return obj;
  const cfg = structuredClone(config) as JSONObject & ApiObject;
  const annotations = { ...(cfg.metadata?.annotations ?? {}) };
  delete annotations[LAST_APPLIED];
  if (cfg.metadata) {
    if (Object.keys(annotations).length > 0) cfg.metadata.annotations = annotations;
    else delete cfg.metadata.annotations;
  }
  const meta = { ...(obj.metadata ?? {}) };
  meta.annotations = { ...(meta.annotations ?? {}), [LAST_APPLIED]: `${goJSON(cfg as JSONValue)}\n` };
  return { ...obj, metadata: meta };
}
