// Object metadata helpers shared by every verb: names, uids, timestamps,
// resource versions (spec 000 §2.1, §4.6).

import { randomBytes, randomUUID } from 'node:crypto';
import { badRequest } from '../core/errors.js';
import type { ApiObject, ObjectMeta } from '../core/object.js';

/** the alphabet Kubernetes uses for generated name suffixes: no vowels, no confusable digits */
const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export function generateName(prefix: string): string {
  const bytes = randomBytes(5);
  let s = '';
  for (const b of bytes) s += SUFFIX_ALPHABET[b % SUFFIX_ALPHABET.length];
  // keep the result within the 63/253 name limits like Kubernetes (prefix trimmed to 58)
  return prefix.slice(0, 58) + s;
}

export function newUid(): string {
  return randomUUID();
}

/** RFC 3339 UTC with second precision, as Kubernetes' metav1.Time serialises; `ms` from the caller's clock (src/core/clock.ts) */
export function nowTimestamp(ms: number): string {
  // one string per second: a write stamps two (creationTimestamp, its
  // managedFields entry), and formatting a Date was ~1% of a create's CPU
  const second = Math.floor(ms / 1000);
  if (second !== lastSecond) {
    lastStamp = new Date(second * 1000).toISOString().replace('.000Z', 'Z');
    lastSecond = second;
  }
  return lastStamp;
}
let lastSecond = Number.NaN;
let lastStamp = '';

/** RFC 3339 with microseconds (metav1.MicroTime) */
export function nowMicroTimestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * Resource versions are opaque to clients (spec 000 §4.6) but ours are the
 * decimal store revision. Empty → undefined; anything else must parse.
 */
export function parseResourceVersion(rv: string | undefined | null, what = 'resourceVersion'): number | undefined {
  if (rv === undefined || rv === null || rv === '') return undefined;
  if (!/^\d{1,16}$/.test(rv)) throw badRequest(`${what}: Invalid value: "${rv}": invalid resource version`);
  return Number(rv);
}

/** an owner reference as the API stores it (metadata.ownerReferences[]) */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** the owner reference marked `controller: true`, if any (kube's metav1.GetControllerOf) */
export function controllerRefOf(o: ApiObject): OwnerReference | undefined {
  const refs = o.metadata?.ownerReferences as unknown as OwnerReference[] | undefined;
  return Array.isArray(refs) ? refs.find((r) => r !== null && typeof r === 'object' && r.controller === true) : undefined;
}

/**
 * The reference a controller puts on what it makes or adopts (kube's
 * metav1.NewControllerRef): `controller` and `blockOwnerDeletion` set.
 */
export function newControllerRef(owner: { apiVersion: string; kind: string; name: string; uid: string }): OwnerReference {
  return { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name, uid: owner.uid, controller: true, blockOwnerDeletion: true };
}

/** whether `ref` names a `kind` of the API group `group` ('' for the core group) in any version, as kube's controllers compare */
export function refersTo(ref: OwnerReference, group: string, kind: string): boolean {
  const slash = ref.apiVersion.indexOf('/');
  return ref.kind === kind && (slash < 0 ? '' : ref.apiVersion.slice(0, slash)) === group;
}

export function metaOf(obj: ApiObject): ObjectMeta {
  if (obj.metadata === undefined || obj.metadata === null || typeof obj.metadata !== 'object' || Array.isArray(obj.metadata)) {
    obj.metadata = {};
  }
  return obj.metadata;
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  let n = 0;
  for (const k in ao) {
    if (ao[k] === undefined) continue;
    n++;
    if (!deepEqual(ao[k], bo[k])) return false;
  }
  for (const k in bo) if (bo[k] !== undefined) n--;
  return n === 0;
}

export function clone<T>(v: T): T {
  return structuredClone(v);
}

/** metadata fields Go's ObjectMeta marks `omitempty` whose empty value is a map or a list */
const OMIT_EMPTY_META = ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const;

/**
 * kube-apiserver decodes every body into Go's ObjectMeta, whose maps and lists
 * are `omitempty`: `labels: {}` or `finalizers: []` is stored and served as
 * absent, and owns no field. kubectl's client-side diff patches with
 * `annotations: {}`, so keeping it shows a change that is none (exit 1).
 * `managedFields: []` is left alone: it means "keep the entries" (spec 000 §4.9).
 */
export function dropEmptyMetadata(obj: ApiObject): void {
  const meta = obj.metadata as Record<string, unknown> | undefined;
  if (meta === undefined || meta === null || typeof meta !== 'object') return;
  for (const k of OMIT_EMPTY_META) {
    const v = meta[k];
    if (v === null || (Array.isArray(v) ? v.length === 0 : typeof v === 'object' && v !== null && Object.keys(v).length === 0)) delete meta[k];
  }
}
