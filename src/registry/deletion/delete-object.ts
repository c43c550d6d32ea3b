// The generic store's delete path (spec 000 §3.1, §4.10): the deletion
// machine (src/lifecycles/deletion.ts) decides, this module checks the
// preconditions and carries the decision out with a compare-and-swap; and
// the machine's verdict on an update of a Terminating object.

import type { Clock } from '../../core/clock.js';
import { STALE_OBJECT, badRequest, conflict, invalid, notFound } from '../../core/errors.js';
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER, decide } from '../../lifecycles/deletion.js';
import { clone, metaOf } from '../../machinery/meta.js';
import type { KeyValue, RevisionedStore } from '../../store/types.js';
import { decodeObject, encodeObject } from '../object-codec.js';
import type { ApiObject, ResourceDefinition } from '../types.js';
import type { DeleteRequestOptions, WriteHooks, WriteOptions } from '../write-options.js';
import { CorruptObjectError } from './corrupt.js';
import { applyDecision, factsOf } from './facts.js';
import { gracePeriodFor } from './graceful.js';
import { checkDeletePreconditions } from '../preconditions.js';

/** what the delete path uses of a generic store (GenericStore is one) */
export interface DeletableStore {
  readonly def: ResourceDefinition;
  readonly store: RevisionedStore;
  readonly clock: Clock;
  key(namespace: string, name: string): string;
  catchUp(): Promise<void>;
  readRaw(namespace: string, name: string): KeyValue | undefined;
  decode(kv: KeyValue): ApiObject;
  encode(obj: ApiObject): Uint8Array;
  /** a CRD's conversion webhook converts this definition's objects (asynchronously: the two below) */
  readonly convertsByWebhook: boolean;
  decodeConverted(kv: KeyValue): Promise<ApiObject>;
  toStorage(obj: ApiObject): Promise<ApiObject>;
}

/**
 * delete (spec 000 §3.1, §4.10): the deletion machine (src/lifecycles/deletion.ts)
 * decides from the object and the request whether the key goes, the object
 * is marked Terminating (finalizers, graceful pods, the GC finalizers the
 * propagation policy adds), or nothing changes; this function checks the
 * preconditions and carries the decision out with a compare-and-swap.
 */
export async function deleteObject(
  s: DeletableStore,
  hooks: WriteHooks,
  namespace: string,
  name: string,
  opts: WriteOptions & DeleteRequestOptions,
): Promise<{ object: ApiObject; deleted: boolean }> {
  const def = s.def;
  const key = s.key(namespace, name);
  await s.catchUp();
  for (let attempt = 0; ; attempt++) {
    const kv = s.readRaw(namespace, name);
    if (!kv) throw notFound(def.resource, def.group, name);
    const current = s.convertsByWebhook ? await s.decodeConverted(kv) : s.decode(kv);
    hooks.beforeDelete?.(def, current, opts);
    // kube's rest.BeforeDelete checks them on the object read, before admission
    checkDeletePreconditions(def, current, opts.preconditions);
    if (attempt === 0 && (hooks.mutate || hooks.validateAdmission)) {
      // DELETE admission sees the stored object as oldObject and no object (patches do not apply)
      const call = { operation: 'DELETE' as const, def, namespace, name, object: undefined, oldObject: current, opts };
      await hooks.mutate?.(call);
      await hooks.validateAdmission?.(call);
    }
    const defaulted = opts.propagationPolicy === undefined && opts.orphanDependents === undefined ? def.strategy.defaultDeletePropagation : undefined;
    // once per response, as kube's warning recorder dedupes (a deletecollection shares the sink)
    if (defaulted?.warning && attempt === 0 && !opts.warnings?.includes(defaulted.warning)) opts.warnings?.push(defaulted.warning);
    const gcFinalizer = (current.metadata?.finalizers ?? []).some((f) => f === ORPHAN_FINALIZER || f === FOREGROUND_FINALIZER);
    const decision = decide(factsOf(current, extraFinalizersOf(def, current)), {
      type: 'DELETE',
      // a kind's default (batch/v1 Jobs orphan) applies without an option and without a GC finalizer already there
      policy: opts.propagationPolicy ?? (defaulted && !gcFinalizer ? defaulted.policy : undefined),
      orphanDependents: opts.orphanDependents,
      gracePeriodSeconds: gracePeriodFor(def, current, opts.gracePeriodSeconds),
      now: s.clock.now(),
    });
    if (decision.outcome === 'unchanged' || decision.outcome === 'reject') return { object: current, deleted: false };
    let op: { type: 'put'; key: string; value: Uint8Array } | { type: 'delete'; key: string };
    let result: ApiObject;
    if (decision.outcome === 'write') {
      result = clone(current);
      applyDecision(metaOf(result), decision);
      if (decision.firstMark) def.strategy.prepareForDelete?.(result);
      op = { type: 'put', key, value: s.convertsByWebhook ? encodeObject(await s.toStorage(result)) : s.encode(result) };
    } else {
      result = current;
      op = { type: 'delete', key };
    }
    // dry run (spec 000 §4.7): every step but the write; the would-be result is returned
    if (opts.dryRun) return { object: result, deleted: decision.outcome === 'remove' };
    const res = await s.store.txn({
      compare: [{ key, target: 'mod', op: '=', value: kv.modRevision }],
      success: [op],
      failure: [],
    });
    if (!res.succeeded) {
      if (opts.preconditions?.resourceVersion || attempt > 50) {
        throw conflict(def.resource, def.group, name, STALE_OBJECT);
      }
      continue;
    }
    if (decision.outcome === 'write') metaOf(result).resourceVersion = String(res.revision);
    return { object: result, deleted: decision.outcome === 'remove' };
  }
}

/**
 * Force deletion of a corrupt object (spec 000 §4.10): only when the stored
 * bytes do not decode; finalizers and preconditions are ignored. A readable
 * object is refused (the caller must use a normal delete). The caller checks
 * the feature gate and that no other option is set.
 */
export async function deleteCorruptObject(s: DeletableStore, namespace: string, name: string): Promise<{ key: string }> {
  const def = s.def;
  const key = s.key(namespace, name);
  await s.catchUp();
  const kv = s.readRaw(namespace, name);
  if (!kv) throw notFound(def.resource, def.group, name);
  try {
    decodeObject(kv);
  } catch (e) {
    if (!(e instanceof CorruptObjectError)) throw e;
    const res = await s.store.txn({
      compare: [{ key, target: 'mod', op: '=', value: kv.modRevision }],
      success: [{ type: 'delete', key }],
      failure: [],
    });
    if (!res.succeeded) throw conflict(def.resource, def.group, name, STALE_OBJECT);
    return { key };
  }
  throw badRequest(
    `${def.resource}${def.group ? `.${def.group}` : ''} "${name}" is readable: ignoreStoreReadErrorWithClusterBreakingPotential applies only to objects whose stored data cannot be read; use a normal delete`,
  );
}

/** the deletion machine's verdict on an update of a Terminating object; 422 when it refuses */
export function decideUpdate(def: ResourceDefinition, current: ApiObject, next: ApiObject): ReturnType<typeof decide> {
  const nextFinalizers = next.metadata?.finalizers;
  const d = decide(factsOf(current, extraFinalizersOf(def, current)), {
    type: 'UPDATE',
    finalizers: Array.isArray(nextFinalizers) ? nextFinalizers : [],
    extraFinalizers: extraFinalizersOf(def, next),
  });
  if (d.outcome === 'reject') {
    throw invalid(def.kind, def.group, next.metadata?.name ?? '', [
      { field: 'metadata.finalizers', type: 'FieldValueForbidden', message: `Forbidden: ${d.reason ?? ''}` },
    ]);
  }
  return d;
}

function extraFinalizersOf(def: ResourceDefinition, obj: ApiObject): string[] {
  return def.strategy.extraFinalizers?.(obj) ?? [];
}
