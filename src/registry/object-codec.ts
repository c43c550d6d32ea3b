// The stored form of an object (JSON without its resourceVersion, which is
// the key's mod revision) and the decoded objects shared by the read-only
// consumers of the applied feed, so one write is decoded at most once
// (docs/architecture.md "Write path cost").

import { type StoredJson, encodeStoredJson } from './stored-json.js';
import type { KeyValue } from '../store/types.js';
import { handOverValue } from '../store/types.js';
import { metaOf } from '../machinery/meta.js';
import { CorruptObjectError } from './deletion/corrupt.js';
import type { ApiObject } from './types.js';

const encoder = new TextEncoder();
const strictDecoder = new TextDecoder('utf-8', { fatal: true });

/** the stored form: the object without its resourceVersion (that is the key's mod revision) */
export function encodeObject(obj: ApiObject): Uint8Array {
  const meta = obj.metadata;
  const rv = meta?.resourceVersion;
  if (meta && rv !== undefined) delete meta.resourceVersion;
  const bytes = encoder.encode(JSON.stringify(obj));
  if (meta && rv !== undefined) meta.resourceVersion = rv;
  return bytes;
}

/** throws CorruptObjectError (a 500 naming the key) when the stored bytes do not decode (spec 000 §4.10) */
export function decodeObject(kv: KeyValue): ApiObject {
  let obj: unknown;
  try {
    obj = JSON.parse(strictDecoder.decode(kv.value));
  } catch (e) {
    throw new CorruptObjectError(kv.key, e);
  }
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) throw new CorruptObjectError(kv.key, new Error('not an object'));
  metaOf(obj as ApiObject).resourceVersion = String(kv.modRevision);
  return obj as ApiObject;
}

/**
 * Decoded objects shared by the read-only consumers of the applied feed (the
 * watch caches and the garbage collector): one decode per applied write
 * instead of one per consumer, keyed by the applied value's bytes, which
 * every listener of one write sees as the same array (within one run of
 * applies, see remember). A create or update
 * also hands over the object it just encoded (handOver), so a write made
 * through this process is not decoded at all. docs/architecture.md "Write path cost".
 */
const sharedByBytes = new Map<Uint8Array, ApiObject>();
let sharedClearQueued = false;

/**
 * The memo lives for one synchronous run of applies (a store applies a batch
 * and publishes every write to every listener before its callers resume), so
 * it never holds objects past that: a long-lived map keyed by the stored bytes
 * would keep a decoded copy of every object the store holds.
 */
function remember(bytes: Uint8Array, obj: ApiObject): void {
  sharedByBytes.set(bytes, obj);
  if (sharedClearQueued) return;
  sharedClearQueued = true;
  queueMicrotask(() => {
    sharedByBytes.clear();
    sharedClearQueued = false;
  });
}
/** storage key -> the object a write in flight encoded, and the exact bytes */
const handedOver = new Map<string, { bytes: Uint8Array; obj: ApiObject }>();

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a === b || (a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.length).equals(b));
}

/**
 * decodeObject for callers that only read: the object may be shared with the
 * other consumers of the same write (and with the response of the write that
 * made it) and must not be modified.
 */
export function decodeShared(kv: KeyValue): ApiObject {
  const rv = String(kv.modRevision);
  const hit = sharedByBytes.get(kv.value);
  if (hit) {
    const meta = metaOf(hit);
    if (meta.resourceVersion === rv) return hit;
    if (meta.resourceVersion === undefined) {
      meta.resourceVersion = rv;
      return hit;
    }
    return decodeObject(kv);
  }
  const handed = handedOver.get(kv.key);
  let obj: ApiObject;
  if (handed && sameBytes(handed.bytes, kv.value)) {
    handedOver.delete(kv.key);
    obj = handed.obj;
    metaOf(obj).resourceVersion = rv;
  } else {
    obj = decodeObject(kv);
  }
  remember(kv.value, obj);
  return obj;
}

/** encodes `obj` for `key` and, when `share`, offers it to decodeShared until `release` (the write settled) */
export function handOver(key: string, obj: ApiObject, share: boolean | undefined): HandedOver {
  const encoded = encodeStoredJson(obj);
  // fresh bytes nobody modifies: the store may keep them without a copy
  const bytes = handOverValue(encoded.bytes);
  if (!share) return new HandedOver(bytes, encoded);
  const entry = { bytes, obj };
  handedOver.set(key, entry);
  return new HandedOver(bytes, encoded, key, entry);
}

/**
 * The stored bytes of a write and what it handed over. A class, not closures
 * made per write (issue 14, docs/architecture.md "Third pass: the request path").
 */
export class HandedOver {
  constructor(
    readonly bytes: Uint8Array,
    private readonly encoded?: StoredJson,
    private readonly key?: string,
    private readonly entry?: { bytes: Uint8Array; obj: ApiObject },
  ) {}

  /** the object's JSON with `rv` as its resourceVersion, from the same text as `bytes` (stored-json.ts); undefined when not available */
  json(rv: string): string | undefined {
    return this.encoded?.withResourceVersion(rv);
  }

  release(): void {
    if (this.entry && handedOver.get(this.key!) === this.entry) handedOver.delete(this.key!);
  }
}
