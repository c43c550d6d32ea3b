// Server-side apply and managedFields bookkeeping (spec 000 §2.4, §4.9),
// following Kubernetes' structured-merge-diff model:
//
// Apply (PATCH application/apply-patch+yaml):
//   1. merge the configuration into the live object (typed.ts merge rules);
//   2. prune: fields the applier owned last time, does not set now and no
//      other manager owns are removed (containers included);
//   3. conflicts: fields that change value (or appear) and that another
//      manager owns conflict unless `force`; with force they leave the other
//      managers' sets. Equal values create shared ownership;
//   4. the applier's `Apply` entry becomes exactly the configuration's fields.
// Update (create, PUT, non-apply PATCH): the writer's `Update` entry gains
// every field it added or changed, other entries lose them, never a conflict.

import type { Definitions, Schema } from '../schema/types.js';
import type { ApiObject, JSONObject, JSONValue } from '../../core/object.js';
import { badRequest } from '../../core/errors.js';
import { FieldSet, pathToString, type Path } from './fieldpath.js';
import { createdFieldsV1 } from './created-fields.js';
import { KUBECTL_MANAGER, allowedFromLastApplied, syncLastApplied } from './last-applied.js';
import {
  compareObjects,
  deepEqual,
  mergeObjects,
  reconcileWithSchema,
  removeItems,
  toFieldSet,
  toNodeSet,
  validateConfig,
  withoutManagedFields,
  type TypeContext,
} from './typed.js';
import {
  MAX_UPDATE_MANAGERS,
  SYSTEM_FIELDS,
  capUpdateManagers,
  decodeManagedFields,
  decodeManagedFieldsOrEmpty,
  encodeManagedFields,
  entryIdentity,
  stripSystemFields,
  ManagedFieldsError,
  type ManagerEntry,
  type Operation,
} from './managed.js';

export { fieldManagerFromUserAgent, inferFieldManager, validateFieldManager } from './field-manager.js';

/** One field another manager owns with a different value (spec 000 §4.9). */
export interface Conflict {
  manager: string;
  operation: Operation;
  /** the other manager's apiVersion */
  apiVersion: string;
  subresource?: string;
  /** Kubernetes-style path: `.spec.replicas`, `.spec.containers[name="c"].image` */
  field: string;
  path: Path;
}

export interface ApplyArgs {
  live: ApiObject | undefined;
  config: ApiObject;
  manager: string;
  force: boolean;
  /** version the configuration is written in (`v1`, `apps/v1`) */
  apiVersion: string;
  /** RFC 3339 time of the operation */
  now: string;
  schema?: Schema;
  defs?: Definitions;
  /** '' / undefined for the main resource */
  subresource?: string;
  /**
   * What the store does to the object it writes (a built-in kind's empty maps dropped, as Go's
   * `omitempty`), done to the merged object before it is compared with the live one: an applied
   * `data: {}` is then no change, and a second apply of it stays a no-op
   */
  normalize?(obj: JSONObject): void;
}

export interface ApplyResult {
  /** the object to store; when there are conflicts, the live object unchanged (or the configuration on create) */
  object: ApiObject;
  conflicts: Conflict[];
  /** false when applying changed nothing, not even managedFields: the caller need not write */
  changed: boolean;
}

function setManagedFields(obj: JSONValue, entries: ManagerEntry[]): ApiObject {
  const out = structuredClone(obj) as ApiObject;
  const encoded = encodeManagedFields(capUpdateManagers(entries));
  const meta = { ...(out.metadata ?? {}) };
  if (encoded) meta.managedFields = encoded;
  else delete meta.managedFields;
  out.metadata = meta;
  return out;
}

/** Server-side apply (spec 000 §4.9). Pure: inputs are not modified. */
export function serverSideApply(args: ApplyArgs): ApplyResult {
  const { live, config, manager, force, apiVersion, now, subresource } = args;
  const ctx: TypeContext = { schema: args.schema, defs: args.defs };
  if (config.metadata?.managedFields !== undefined && config.metadata.managedFields !== null) {
    throw badRequest('metadata.managedFields must be nil');
  }
  // a configuration that does not fit the schema throws ApplyShapeError: 400 in the Status table (src/registry/status-table.ts)
  validateConfig(config as JSONObject, ctx);

  const liveClean = live === undefined ? undefined : withoutManagedFields(live as JSONObject);
  const entries = (live === undefined ? [] : decodeManagedFieldsOrEmpty(live.metadata?.managedFields as JSONValue)).map(
    (e) => ({ ...e, set: reconcileWithSchema(e.set, ctx) }),
  );
  const mine: Pick<ManagerEntry, 'manager' | 'operation' | 'apiVersion' | 'subresource'> = {
    manager,
    operation: 'Apply',
    apiVersion,
    ...(subresource ? { subresource } : {}),
  };
  const myId = entryIdentity(mine);
  const last = entries.find((e) => entryIdentity(e) === myId);
  const others = entries.filter((e) => e !== last);

  const configSet: FieldSet = toFieldSet(config as JSONObject, ctx);
  let merged: JSONValue = mergeObjects(liveClean, config as JSONObject, ctx);

  // Prune what the applier gave up, unless someone (the applier's new
  // configuration included) still owns it or something below it.
  if (last && !last.set.isEmpty()) {
    // Everything the configuration mentions stays, containers included (an
    // applied `items: []` keeps the list), so a second apply is a no-op.
    let keep = toNodeSet(config as JSONObject, ctx).union(SYSTEM_FIELDS);
    for (const o of others) keep = keep.union(o.set);
    const drop = last.set.withAncestors().difference(keep.withAncestors());
    if (!drop.isEmpty()) merged = removeItems(merged, drop, ctx);
  }

  if (args.normalize && merged !== null && typeof merged === 'object' && !Array.isArray(merged)) args.normalize(merged);
  const cmp = compareObjects(liveClean ?? {}, merged, ctx);
  const changed = cmp.modified.union(cmp.added);
  const conflicts: Conflict[] = [];
  const taken = new Map<ManagerEntry, FieldSet>();
  for (const o of others) {
    const c = o.set.intersection(changed);
    if (c.isEmpty()) continue;
    taken.set(o, c);
    for (const p of c.paths()) {
      const conflict: Conflict = { manager: o.manager, operation: o.operation, apiVersion: o.apiVersion, field: pathToString(p), path: p };
      if (o.subresource) conflict.subresource = o.subresource;
      conflicts.push(conflict);
    }
  }
  let forced = force;
  if (conflicts.length > 0 && !force && manager === KUBECTL_MANAGER) {
    // kubectl moving from client-side apply: the annotation's own fields may be taken
    const allowed = allowedFromLastApplied(live, liveClean, ctx);
    if (allowed) {
      const rest = conflicts.filter((c) => !allowed.has(c.path));
      if (rest.length === 0) forced = true;
      else conflicts.splice(0, conflicts.length, ...rest);
    }
  }
  if (conflicts.length > 0 && !forced) {
    conflicts.sort(compareConflicts);
    return { object: structuredClone(live ?? config), conflicts, changed: false };
  }

  const next: ManagerEntry[] = [];
  for (const o of others) {
    let set = o.set.difference(cmp.removed);
    const t = taken.get(o);
    if (t) set = set.difference(t); // force moves ownership (spec 000 §4.9)
    next.push(set.equals(o.set) ? o : withSet(o, set));
  }
  const mySet = stripSystemFields(configSet);
  const objectChanged = !deepEqual(liveClean, merged);
  const entry: ManagerEntry = { ...mine, set: mySet };
  if (last && last.set.equals(mySet) && last.apiVersion === apiVersion && !objectChanged) {
    if (last.time !== undefined) entry.time = last.time;
    if (last.storedFieldsV1) entry.storedFieldsV1 = last.storedFieldsV1;
  } else entry.time = now;
  next.push(entry);

  let object = setManagedFields(merged, next);
  if (manager === KUBECTL_MANAGER) object = syncLastApplied(object, live, config);
  const result: ApplyResult = { object, conflicts: [], changed: true };
  if (live !== undefined) result.changed = !deepEqual(object as JSONObject, live as JSONObject);
  return result;
}

function withSet(e: ManagerEntry, set: FieldSet): ManagerEntry {
  const { storedFieldsV1: _drop, ...rest } = e;
  void _drop;
  return { ...rest, set };
}

function compareConflicts(a: Conflict, b: Conflict): number {
  const ka = entryIdentity(a);
  const kb = entryIdentity(b);
  if (ka !== kb) return a.manager < b.manager ? -1 : a.manager > b.manager ? 1 : ka < kb ? -1 : 1;
  return 0; // paths already come in set order
}

export interface UpdateArgs {
  /** the stored object; undefined on create */
  live: ApiObject | undefined;
  /** the object about to be stored (its managedFields as the client sent them) */
  updated: ApiObject;
  manager: string;
  apiVersion: string;
  now: string;
  schema?: Schema;
  defs?: Definitions;
  subresource?: string;
}

/**
 * managedFields for a non-apply write (spec 000 §4.9): create, PUT and
 * JSON/merge/strategic PATCH. Returns `updated` with the new managedFields.
 *
 * Which entries the write starts from:
 *  - `updated` carries a non-empty, readable managedFields → those (clients
 *    may edit managedFields directly); a list holding one empty object thus
 *    resets tracking, and the writer then owns everything it changed;
 *  - absent, null, `[]` or unreadable → the live object's entries (an empty
 *    list does not reset anything).
 * As in Kubernetes, an existing object with no entries at all is not tracked
 * by updates (tracking resumes with the next apply); a create is always tracked.
 */
export function recordUpdate(args: UpdateArgs): ApiObject {
  const updatedClean = withoutManagedFields(args.updated as JSONObject);
  const out = structuredClone(updatedClean) as ApiObject;
  const encoded = updateEntries(args, updatedClean);
  if (encoded === null) return out; // not tracked: metadata as sent, less managedFields
  const meta = { ...(out.metadata ?? {}) };
  if (encoded) meta.managedFields = encoded;
  else delete meta.managedFields;
  out.metadata = meta;
  return out;
}

/**
 * The managedFields `recordUpdate` would store, without copying the object:
 * the write path only needs this list (spec 000 §4.9), and cloning every
 * created object cost more than computing its field set.
 * `undefined` means the stored object carries no managedFields.
 */
export function updateManagedFields(args: UpdateArgs): JSONObject[] | undefined {
  const sent = args.updated.metadata?.managedFields as JSONValue | undefined;
  // a create with no entries sent: the writer owns what it sent, built without field sets
  if (args.live === undefined && !(Array.isArray(sent) && sent.length > 0)) {
    const v1 = createdFieldsV1(args.updated as JSONObject, { schema: args.schema, defs: args.defs });
    if (v1 === undefined) return undefined;
    if (v1 !== null) {
      const entry: JSONObject = { manager: args.manager, operation: 'Update', apiVersion: args.apiVersion, time: args.now, fieldsType: 'FieldsV1', fieldsV1: v1 };
      if (args.subresource) entry.subresource = args.subresource;
      return [entry];
    }
  }
  return updateEntries(args, withoutManagedFields(args.updated as JSONObject)) ?? undefined;
}

/** null: the object is not tracked (an existing object with no entries) */
function updateEntries(args: UpdateArgs, updatedClean: JSONValue): JSONObject[] | undefined | null {
  const { live, updated, manager, apiVersion, now, subresource } = args;
  const ctx: TypeContext = { schema: args.schema, defs: args.defs };
  const liveEntries = live === undefined ? [] : decodeManagedFieldsOrEmpty(live.metadata?.managedFields as JSONValue);
  const sent = updated.metadata?.managedFields as JSONValue | undefined;
  let entries = liveEntries;
  if (Array.isArray(sent) && sent.length > 0) {
    try {
      entries = decodeManagedFields(sent);
    } catch (e) {
      if (!(e instanceof ManagedFieldsError)) throw e;
    }
  }
  if (live !== undefined && entries.length === 0) return null;
  entries = entries.map((e) => ({ ...e, set: reconcileWithSchema(e.set, ctx) }));

  // a create compares against the empty object, so maps and lists it adds are owned themselves
  const liveClean = live === undefined ? {} : withoutManagedFields(live as JSONObject);
  const cmp = compareObjects(liveClean, updatedClean, ctx);
  const touched = cmp.modified.union(cmp.added);
  const changed = stripSystemFields(touched);
  // what other managers lose: only needed when there are other entries (never on a create)
  const lost = entries.length === 0 ? touched : touched.union(cmp.removed);

  const mine: ManagerEntry = {
    manager,
    operation: 'Update',
    apiVersion,
    set: new FieldSet(),
    ...(subresource ? { subresource } : {}),
  };
  // a create has no entries: no identity to compare
  const myId = entries.length > 0 ? entryIdentity(mine) : '';
  const next: ManagerEntry[] = [];
  let prev: ManagerEntry | undefined;
  for (const e of entries) {
    if (entryIdentity(e) === myId) {
      prev = e;
      continue;
    }
    const set = e.set.difference(lost);
    next.push(set.equals(e.set) ? e : withSet(e, set));
  }
  const mySet = prev ? prev.set.difference(cmp.removed).union(changed) : changed;
  if (prev && changed.isEmpty()) {
    next.push(mySet.equals(prev.set) ? prev : withSet(prev, mySet));
  } else if (!mySet.isEmpty()) {
    mine.set = mySet;
    mine.time = now;
    next.push(mine);
  }
  // within the cap there is nothing to fold (capUpdateManagers would only copy the entries)
  return encodeManagedFields(next.length <= MAX_UPDATE_MANAGERS ? next : capUpdateManagers(next));
}

/** The field set an object's managedFields give one manager entry (for tests and tools). */
export function managedSetOf(obj: ApiObject, manager: string, operation: Operation = 'Apply'): FieldSet {
  const entries = decodeManagedFieldsOrEmpty(obj.metadata?.managedFields as JSONValue);
  let out = new FieldSet();
  for (const e of entries) if (e.manager === manager && e.operation === operation) out = out.union(e.set);
  return out;
}
