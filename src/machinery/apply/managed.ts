// `metadata.managedFields` ⇄ per-manager field sets (spec 000 §2.4).
//
// One entry per manager identity, as Kubernetes keys them: an `Apply` entry
// is identified by (manager, subresource) — an applier keeps one entry
// whatever version it applies through — and an `Update` entry by
// (manager, apiVersion, subresource). Entries whose set is empty are dropped.
// The list is sorted the way Kubernetes sorts it: operation (`Apply` before
// `Update`), then time in whole seconds, manager, apiVersion, subresource.

import type { JSONObject, JSONValue } from '../../core/object.js';
import { FieldSet, FieldPathError, path } from './fieldpath.js';

export type Operation = 'Apply' | 'Update';

export interface ManagerEntry {
  manager: string;
  operation: Operation;
  apiVersion: string;
  time?: string;
  subresource?: string;
  set: FieldSet;
  /** the stored `fieldsV1` when the set is unchanged, re-emitted as it was */
  storedFieldsV1?: JSONObject;
}

export class ManagedFieldsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ManagedFieldsError';
  }
}

/** Identity of an entry; two entries with the same identity are one entry. */
export function entryIdentity(e: Pick<ManagerEntry, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  return JSON.stringify([e.manager, e.operation, e.operation === 'Apply' ? '' : e.apiVersion, e.subresource ?? '']);
}

const isObject = (v: unknown): v is JSONObject => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Decodes a managedFields list. Throws ManagedFieldsError on malformed
 * entries. Entries with no fields decode to empty sets (they matter for the
 * reset rule and disappear when re-encoded).
 */
export function decodeManagedFields(list: JSONValue | undefined): ManagerEntry[] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new ManagedFieldsError('metadata.managedFields must be a list');
  const byId = new Map<string, ManagerEntry>();
  for (const raw of list) {
    if (!isObject(raw)) throw new ManagedFieldsError('metadata.managedFields entries must be objects');
    const str = (k: string): string | undefined => {
      const v = raw[k];
      if (v === undefined || v === null) return undefined;
      if (typeof v !== 'string') throw new ManagedFieldsError(`metadata.managedFields[].${k} must be a string`);
      return v;
    };
    const op = str('operation') ?? 'Update';
    if (op !== 'Apply' && op !== 'Update') {
      throw new ManagedFieldsError(`metadata.managedFields[].operation: must be \`Apply\` or \`Update\`, got ${JSON.stringify(op)}`);
    }
    const fieldsType = str('fieldsType');
    if (fieldsType !== undefined && fieldsType !== 'FieldsV1') {
      throw new ManagedFieldsError(`metadata.managedFields[].fieldsType: must be \`FieldsV1\`, got ${JSON.stringify(fieldsType)}`);
    }
    let set = new FieldSet();
    let storedFieldsV1: JSONObject | undefined;
    const fv = raw.fieldsV1;
    if (fv !== undefined && fv !== null) {
      try {
        set = FieldSet.fromFieldsV1(fv);
      } catch (e) {
        if (e instanceof FieldPathError) throw new ManagedFieldsError(`metadata.managedFields[].fieldsV1: ${e.message}`);
        throw e;
      }
      storedFieldsV1 = fv as JSONObject;
    }
    const entry: ManagerEntry = {
      manager: str('manager') ?? '',
      operation: op,
      apiVersion: str('apiVersion') ?? '',
      set,
    };
    const time = str('time');
    if (time !== undefined) entry.time = time;
    const sub = str('subresource');
    if (sub) entry.subresource = sub;
    if (storedFieldsV1) entry.storedFieldsV1 = storedFieldsV1;
    const id = entryIdentity(entry);
    const prev = byId.get(id);
    if (prev) {
      // duplicate identities merge into one entry (Kubernetes keeps one per identity)
      prev.set = prev.set.union(entry.set);
      delete prev.storedFieldsV1;
    } else byId.set(id, entry);
  }
  return [...byId.values()];
}

/** Decodes, or returns no entries when the stored list is unreadable (Kubernetes resets it then). */
export function decodeManagedFieldsOrEmpty(list: JSONValue | undefined): ManagerEntry[] {
  try {
    return decodeManagedFields(list);
  } catch (e) {
    if (e instanceof ManagedFieldsError) return [];
    throw e;
  }
}

function seconds(time: string | undefined): number {
  if (!time) return 0;
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Kubernetes' order of managedFields entries. */
export function compareEntries(p: ManagerEntry, q: ManagerEntry): number {
  return (
    cmp(p.operation, q.operation) ||
    seconds(p.time) - seconds(q.time) ||
    cmp(p.manager, q.manager) ||
    cmp(p.apiVersion, q.apiVersion) ||
    cmp(p.subresource ?? '', q.subresource ?? '')
  );
}

/** Encodes the entries with fields, sorted; `undefined` when none remain. */
export function encodeManagedFields(entries: readonly ManagerEntry[]): JSONObject[] | undefined {
  const kept = entries.filter((e) => !e.set.isEmpty()).sort(compareEntries);
  if (kept.length === 0) return undefined;
  return kept.map((e) => {
    const out: JSONObject = { manager: e.manager, operation: e.operation, apiVersion: e.apiVersion };
    if (e.time !== undefined) out.time = e.time;
    out.fieldsType = 'FieldsV1';
    out.fieldsV1 = e.storedFieldsV1 ? structuredClone(e.storedFieldsV1) : e.set.toFieldsV1();
    if (e.subresource) out.subresource = e.subresource;
    return out;
  });
}

/**
 * Fields no manager owns: type meta and server-maintained metadata
 * (Kubernetes strips the same paths from every set).
 */
export const SYSTEM_FIELDS: FieldSet = FieldSet.fromPaths([
  path('apiVersion'),
  path('kind'),
  path('metadata'),
  path('metadata', 'name'),
  path('metadata', 'namespace'),
  path('metadata', 'creationTimestamp'),
  path('metadata', 'selfLink'),
  path('metadata', 'uid'),
  path('metadata', 'clusterName'),
  path('metadata', 'generation'),
  path('metadata', 'managedFields'),
  path('metadata', 'resourceVersion'),
]);

export function stripSystemFields(set: FieldSet): FieldSet {
  return set.difference(SYSTEM_FIELDS);
}

/** Kubernetes keeps at most this many `Update` entries (older ones fold into `ancient-changes`). */
export const MAX_UPDATE_MANAGERS = 10;
export const ANCIENT_CHANGES_MANAGER = 'ancient-changes';

/**
 * Folds the oldest `Update` entries into one `ancient-changes` entry per
 * apiVersion until at most MAX_UPDATE_MANAGERS remain, so objects touched by
 * many writers do not grow without bound.
 */
export function capUpdateManagers(input: readonly ManagerEntry[], max = MAX_UPDATE_MANAGERS): ManagerEntry[] {
  const entries = input.map((e) => ({ ...e }));
  const updaters = entries.filter((e) => e.operation === 'Update' && !e.set.isEmpty());
  if (updaters.length <= max) return entries;
  // oldest first
  updaters.sort((a, b) => seconds(a.time) - seconds(b.time) || cmp(entryIdentity(a), entryIdentity(b)));
  const removed = new Set<ManagerEntry>();
  const added: ManagerEntry[] = [];
  const firstByVersion = new Map<string, ManagerEntry>();
  const isBucket = (x: ManagerEntry, v: string): boolean =>
    x.manager === ANCIENT_CHANGES_MANAGER && x.operation === 'Update' && x.apiVersion === v && !x.subresource && !removed.has(x);
  let count = updaters.length;
  for (const e of updaters) {
    if (count <= max) break;
    const first = firstByVersion.get(e.apiVersion);
    if (!first) {
      firstByVersion.set(e.apiVersion, e);
      continue;
    }
    let bucket = [...entries, ...added].find((x) => isBucket(x, e.apiVersion));
    if (bucket === e) continue;
    if (!bucket) {
      // the first (oldest) entry of this version becomes the bucket
      bucket = { manager: ANCIENT_CHANGES_MANAGER, operation: 'Update', apiVersion: e.apiVersion, set: first.set };
      if (first.time !== undefined) bucket.time = first.time;
      removed.add(first);
      added.push(bucket);
    }
    bucket.set = bucket.set.union(e.set);
    delete bucket.storedFieldsV1;
    if (e.time !== undefined) bucket.time = e.time;
    removed.add(e);
    count--;
  }
  return [...entries.filter((e) => !removed.has(e)), ...added];
}
