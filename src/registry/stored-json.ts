// The stored form of an object and, from the same JSON text, the response
// form with its resourceVersion (issue #14 item 1, docs/architecture.md
// "Write path cost"): a create used to stringify the object twice, once
// without its resourceVersion for the store (spec 000 §4.6: that is the
// key's mod revision) and once with it for the response.

import type { ApiObject } from './types.js';

const encoder = new TextEncoder();

export interface StoredJson {
  /** the stored bytes: UTF-8 of JSON.stringify(obj), the object having no resourceVersion */
  bytes: Uint8Array;
  /**
   * JSON.stringify of the object once `metadata.resourceVersion = rv` is set
   * (a new key, so it comes last in metadata); undefined when the object has
   * no metadata object
   */
  withResourceVersion(rv: string): string | undefined;
}

/**
 * Stringifies `obj` (which must have no `metadata.resourceVersion`) key by
 * key at the top level, as JSON.stringify does (own enumerable keys in order,
 * keys whose value does not serialize left out), remembering where the
 * metadata object's text ends, so the response text is the stored text with
 * `,"resourceVersion":"<rv>"` spliced in there.
 */
export function encodeStoredJson(obj: ApiObject): StoredJson {
  const o = obj as unknown as Record<string, unknown>;
  let text = '{';
  let metaEnd = -1;
  let metaEmpty = false;
  for (const k of Object.keys(o)) {
    const t = JSON.stringify(o[k]);
    if (t === undefined) continue;
    if (text.length > 1) text += ',';
    text += `${JSON.stringify(k)}:${t}`;
    if (k === 'metadata' && t.charCodeAt(0) === 123 /* { */) {
      metaEnd = text.length - 1;
      metaEmpty = t === '{}';
    }
  }
  text += '}';
  // the precondition, checked: a resourceVersion already there would be written twice
  const meta = o.metadata as Record<string, unknown> | undefined;
  if (metaEnd >= 0 && meta?.resourceVersion !== undefined) metaEnd = -1;
  return new EncodedJson(encoder.encode(text), text, metaEnd, metaEmpty);
}

/** a class, not a closure per write: its method is made once */
class EncodedJson implements StoredJson {
  constructor(
    readonly bytes: Uint8Array,
    private readonly text: string,
    private readonly metaEnd: number,
    private readonly metaEmpty: boolean,
  ) {}

  withResourceVersion(rv: string): string | undefined {
    const { text, metaEnd } = this;
    return metaEnd < 0 ? undefined : `${text.slice(0, metaEnd)}${this.metaEmpty ? '' : ','}"resourceVersion":${JSON.stringify(rv)}${text.slice(metaEnd)}`;
  }
}
