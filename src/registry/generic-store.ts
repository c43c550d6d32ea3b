// One generic store serves every kind (the Kubernetes apiserver pattern):
// keys, encoding, optimistic concurrency on the store's mod revision, and the
// metadata rules common to all objects. Per-kind behaviour comes from the
// definition's schema and strategy only.

import type { KeyValue, RevisionedStore } from '../store/types.js';
import { FutureRevisionError, prefixEnd } from '../store/types.js';
import { throwAsStatus } from './status-table.js';
import { STALE_OBJECT, StatusError, alreadyExists, badRequest, conflict, notFound, tooLargeResourceVersion } from '../core/errors.js';
import { clone, deepEqual, generateName, metaOf } from '../machinery/meta.js';
import { convertObject, convertObjects } from './conversion.js';
import { apiVersionOf } from './registry.js';
import type { ApiObject, ResourceDefinition } from './types.js';
import { CorruptObjectError } from './deletion/corrupt.js';
import { decideUpdate, deleteCorruptObject, deleteObject } from './deletion/delete-object.js';
import { type Clock, systemClock } from '../core/clock.js';
import { HandedOver, decodeObject, encodeObject, handOver } from './object-codec.js';
import { servedObject, servedObjects, storageKey, storagePrefix } from './storage-keys.js';
import { carryOver, specOf, stripVolatile } from './update-metadata.js';
import { prepareCreate } from './create-metadata.js';
import type { DeleteRequestOptions, ObjectAdmission, UpdateOptions, WriteHooks, WriteOptions } from './write-options.js';
import { admitAgain, checkNamespaceForCreate, checkNamespaceForUpdate, decodeWrite, validateWrite } from './write-validation.js';
import { fillZeroShape } from './zero-shape.js';
import { uidPreconditionFailed } from './preconditions.js';

// the store's vocabulary, from the modules that hold it (importers keep one entry point)
export { decodeObject, decodeShared, encodeObject } from './object-codec.js';
export { servedObject, servedObjects, storageKey, storagePrefix, storageResource } from './storage-keys.js';
export type { AdmissionCall, DeleteRequestOptions, ObjectAdmission, UpdateOptions, WriteHooks, WriteOptions } from './write-options.js';
export { decodeError } from './write-validation.js';

/** How long a request waits for a resource version newer than the store has applied (spec 000 §4.6) */
export const TOO_LARGE_RV_WAIT_MS = 3000;

/** attempts at claiming values (`WriteHooks.reserve`) before a create gives up */
const RESERVE_ATTEMPTS = 20;

/**
 * maps store errors to API errors through the Status table (410 for
 * compacted, 504 for future revisions); a future revision names the
 * resourceVersion as the client wrote it
 */
export function storeErrorToStatus(err: unknown, requested?: string): never {
  if (err instanceof FutureRevisionError && requested !== undefined) throw tooLargeResourceVersion(requested, err.current);
  throwAsStatus(err);
}

/** what one attempt of guaranteedUpdate decided before its compare-and-swap */
type UpdateStep =
  | { kind: 'stale' }
  | { kind: 'done'; result: { object: ApiObject; created: boolean; unknownFields: string[] } }
  | { kind: 'create'; object: ApiObject }
  | {
      kind: 'write';
      next: ApiObject;
      unknownFields: string[];
      stored: { bytes: Uint8Array; release: () => void } | undefined;
      /** the stored form, when a conversion webhook made it (the answer is converted back from it) */
      storedForm?: ApiObject;
      claimed: { key: string; value: Uint8Array }[];
      modRevision: number;
      pinned: boolean;
    };

export class GenericStore {
  constructor(
    readonly def: ResourceDefinition,
    readonly store: RevisionedStore,
    private readonly admission: ObjectAdmission,
    private readonly hooks: WriteHooks = {},
    private readonly namespaceExists: (ns: string) => 'Active' | 'Terminating' | undefined = () => 'Active',
    /** creation and deletion timestamps and the deletion decision (the composition root's clock, src/core/clock.ts) */
    readonly clock: Clock = systemClock,
  ) {
    this.convertsByWebhook = def.storage?.webhook !== undefined;
  }

  key(namespace: string, name: string): string {
    return storageKey(this.def, namespace, name);
  }

  /** waits for `rv` to be applied; 504 "Too large resource version" after a short wait */
  async ensureRevision(rv: number, raw: string): Promise<void> {
    if (rv <= this.store.revision) return;
    const ok = await this.store.waitForRevision(rv, TOO_LARGE_RV_WAIT_MS);
    if (!ok) throw tooLargeResourceVersion(raw, this.store.revision);
  }

  /**
   * Makes the local state at least as new as every write acknowledged
   * anywhere before this call (Raft ReadIndex; immediate on one node). A
   * follower that is behind must not answer 404/409 from stale state.
   */
  async catchUp(): Promise<void> {
    const idx = await this.store.readIndex();
    if (idx > this.store.revision) await this.store.waitForRevision(idx, TOO_LARGE_RV_WAIT_MS);
  }

  /** a stored key-value as this version serves it (spec 000 §6: converted from the storage version) */
  decode(kv: KeyValue): ApiObject {
    return servedObject(this.def, decodeObject(kv));
  }

  /** the stored form of an object of this version */
  encode(obj: ApiObject): Uint8Array {
    const storage = this.def.storage;
    if (!storage) return encodeObject(obj);
    const served = { ...obj, apiVersion: apiVersionOf(this.def), kind: this.def.kind };
    return encodeObject(convertObject(storage, served, storage.storageVersion));
  }

  /**
   * Conversion webhooks (a CRD's `strategy: Webhook`, src/registry/crd/conversion-webhook.ts) are
   * asynchronous: a definition whose binding has one reads and writes through the methods below,
   * chosen by one property test, so kinds without a webhook keep the synchronous path.
   */
  readonly convertsByWebhook: boolean;

  /** `decode` through the conversion webhook */
  async decodeConverted(kv: KeyValue): Promise<ApiObject> {
    return (await servedObjects(this.def, [decodeObject(kv)]))[0]!;
  }

  /** stored key-values as this version serves them: one conversion review for them all */
  decodeAll(kvs: readonly KeyValue[]): Promise<ApiObject[]> {
    return servedObjects(this.def, kvs.map((kv) => decodeObject(kv)), 'read', true);
  }

  /** `encode` through the conversion webhook: the stored form of an object of this version */
  async toStorage(obj: ApiObject): Promise<ApiObject> {
    const storage = this.def.storage!;
    const served = { ...obj, apiVersion: apiVersionOf(this.def), kind: this.def.kind };
    return (await convertObjects(storage, [served], storage.storageVersion, 'write'))[0]!;
  }

  /** `readBack` through the conversion webhook: the written stored form, at `rv`, as this version serves it */
  private async readBackConverted(storedForm: ApiObject, rv: string): Promise<ApiObject> {
    metaOf(storedForm).resourceVersion = rv;
    return (await servedObjects(this.def, [storedForm], 'write'))[0]!;
  }

  /** a dry run's answer: kube's dry-run storage round-trips the object through the storage codec (the webhook may refuse) */
  private async roundTrip(obj: ApiObject): Promise<ApiObject> {
    const storedForm = await this.toStorage(obj);
    return (await servedObjects(this.def, [storedForm], 'write'))[0]!;
  }

  /** the stored bytes of `obj`; shared with the watch cache only when stored as served (no conversion) */
  private handOver(key: string, obj: ApiObject, share: boolean | undefined): HandedOver {
    if (this.def.storage) return new HandedOver(this.encode(obj));
    return handOver(key, obj, share);
  }

  /**
   * a webhook's patched object as kube decodes it through its scheme: defaulted and
   * zero-shaped again (e2e "should mutate pod and apply defaults after mutation": an added
   * init container's defaults)
   */
  private decodedAgain(obj: ApiObject): ApiObject {
    this.def.strategy.default?.(obj);
    fillZeroShape(obj, this.def.strategy.zeroShape);
    return obj;
  }

  readRaw(namespace: string, name: string): KeyValue | undefined {
    return this.store.range({ key: this.key(namespace, name) }).kvs[0];
  }

  /** get (spec 000 §4.6 get table): unset = most recent (consistent), 0 = any, N = not older than N */
  async get(namespace: string, name: string, rv?: { value: number; raw: string }): Promise<ApiObject> {
    if (rv === undefined) {
      await this.catchUp();
    } else if (rv.value > 0) {
      await this.ensureRevision(rv.value, rv.raw);
    }
    const kv = this.readRaw(namespace, name);
    if (!kv) throw notFound(this.def.resource, this.def.group, name);
    return this.convertsByWebhook ? this.decodeConverted(kv) : this.decode(kv);
  }

  /**
   * Create (POST). `obj` has passed decoding and field validation already.
   * Returns the stored object and the unknown fields that were pruned.
   */
  /**
   * `json` (when present) is `object` as compact JSON, made from the stored
   * text (the response need not stringify the object again)
   */
  async create(namespace: string, obj: ApiObject, opts: WriteOptions): Promise<{ object: ApiObject; unknownFields: string[]; json?: string }> {
    let meta = metaOf(obj);
    // kube's etcd3 store refuses only a version it can parse and that is not 0; another is cleared
    // (kube's field_validation_test.go creates with "%!s(MISSING)")
    if (meta.resourceVersion !== undefined && /^\d+$/.test(meta.resourceVersion) && Number(meta.resourceVersion) !== 0) {
      throw badRequest('resourceVersion should not be set on objects to be created');
    }
    // kube's admission errors name the prefix of a name not generated yet (admission/errors.go extractResourceName)
    const shownName = meta.name || meta.generateName || '';
    if (!meta.name && meta.generateName) meta.name = generateName(meta.generateName);
    if (this.def.scope === 'Namespaced') meta.namespace = namespace;
    else delete meta.namespace;
    const name = meta.name ?? '';
    prepareCreate(this.def, obj, this.clock.now(), opts.user);
    // kube decodes the write into its Go type: admission, validation and managedFields see its zero values
    fillZeroShape(obj, this.def.strategy.zeroShape);
    let admitted = decodeWrite(this.def, this.admission, obj, undefined, opts);
    // kube's NamespaceLifecycle is the first admission plugin: a missing or Terminating namespace
    // is refused before the object is validated (an invalid object in a missing namespace is 404)
    await checkNamespaceForCreate(this.def, this.namespaceExists, namespace, shownName);
    const putFields = this.hooks.recordFields?.(this.def, obj, undefined, opts);
    if (this.hooks.mutate) {
      const system = { uid: meta.uid, creationTimestamp: meta.creationTimestamp, generation: meta.generation };
      const mutated = await this.hooks.mutate({ operation: 'CREATE', def: this.def, namespace, name, object: obj, oldObject: undefined, opts });
      const copied = mutated !== undefined && mutated !== obj;
      if (copied) obj = this.decodedAgain(mutated);
      // a webhook may not move the object or change what the server assigns
      const m = metaOf(obj);
      m.name = name;
      if (this.def.scope === 'Namespaced') m.namespace = namespace;
      else delete m.namespace;
      m.uid = system.uid;
      m.creationTimestamp = system.creationTimestamp;
      if (system.generation !== undefined) m.generation = system.generation;
      else delete m.generation;
      delete m.deletionTimestamp;
      delete m.deletionGracePeriodSeconds;
      delete m.resourceVersion;
      meta = m;
      if (copied || this.mutatedInPlace(opts)) admitted = admitAgain(this.def, this.admission, obj, undefined, opts, admitted);
    }
    const unknownFields = admitted.unknownFields;
    validateWrite(this.def, this.admission, obj, undefined, name, opts, admitted);
    putFields?.(obj);
    this.hooks.beforeWrite?.(this.def, obj, undefined, opts);
    if (this.hooks.validateAdmission) {
      await this.hooks.validateAdmission({ operation: 'CREATE', def: this.def, namespace, name, object: obj, oldObject: undefined, opts });
    }
    if (this.hooks.authorizeWrite) await this.hooks.authorizeWrite(this.def, obj, undefined, opts);
    const key = this.key(namespace, name);
    if (opts.dryRun) {
      if (this.readRaw(namespace, name)) throw alreadyExists(this.def.resource, this.def.group, name);
      // the answer shows what would be allocated; nothing is claimed
      this.hooks.reserve?.(this.def, obj, undefined);
      return { object: this.convertsByWebhook ? await this.roundTrip(obj) : obj, unknownFields };
    }
    // values a failed attempt filled in (a cluster IP, node ports) are not what the
    // client asked for: every attempt claims from the object as validated, else the
    // next attempt would take a value lost to a concurrent write for a requested one
    const unclaimed = this.hooks.reserve ? clone(obj) : undefined;
    for (let attempt = 1; ; attempt++) {
      const candidate = attempt === 1 || !unclaimed ? obj : clone(unclaimed);
      const claimed = this.hooks.reserve?.(this.def, candidate, undefined)?.keys ?? [];
      const guards = this.hooks.guardCreate?.(this.def) ?? [];
      const storedForm = this.convertsByWebhook ? await this.toStorage(candidate) : undefined;
      // shareWritten: from here on `candidate` is not modified but for its resourceVersion (the watch cache may share it)
      const stored = storedForm ? new HandedOver(encodeObject(storedForm)) : this.handOver(key, candidate, opts.shareWritten);
      const res = await this.store
        .txn({
          compare: [
            { key, target: 'create', op: '=', value: 0 },
            ...claimed.map((c) => ({ key: c.key, target: 'create' as const, op: '=' as const, value: 0 })),
            ...guards.map((g) => ({ key: g.key, target: 'mod' as const, op: '=' as const, value: g.modRevision })),
          ],
          success: [{ type: 'put', key, value: stored.bytes }, ...claimed.map((c) => ({ type: 'put' as const, key: c.key, value: c.value }))],
          failure: [],
        })
        .finally(() => stored.release());
      if (res.succeeded) {
        const rv = String(res.revision);
        metaOf(candidate).resourceVersion = rv;
        if (storedForm) return { object: await this.readBackConverted(storedForm, rv), unknownFields };
        const json = stored.json(rv);
        return json === undefined ? { object: this.readBack(candidate), unknownFields } : { object: candidate, unknownFields, json };
      }
      // the object exists, or a value it claimed was taken meanwhile, or a guard moved: try again
      if ((claimed.length === 0 && guards.length === 0) || this.readRaw(namespace, name)) throw alreadyExists(this.def.resource, this.def.group, name);
      if (attempt >= RESERVE_ATTEMPTS) throw conflict(this.def.resource, this.def.group, name, 'the values it claims were taken by concurrent writes; try again');
    }
  }

  /**
   * The optimistic-concurrency loop every mutation of an existing object uses
   * (Kubernetes' GuaranteedUpdate): read, transform, compare-and-swap on the
   * mod revision; retry when someone else wrote in between, unless the
   * caller pinned a resourceVersion (then it is a 409).
   */
  async guaranteedUpdate(
    namespace: string,
    name: string,
    opts: WriteOptions & UpdateOptions,
    transform: (current: ApiObject | undefined) => ApiObject,
  ): Promise<{ object: ApiObject; created: boolean; unknownFields: string[] }> {
    const key = this.key(namespace, name);
    // Optimistic first attempt (docs/raft.md "Optimistic updates"): on a Raft
    // member the local state may lag, but the compare-and-swap on the mod
    // revision is judged by the state machine at the entry's place in the log,
    // so a write built on the local state and accepted by it is linearizable
    // without a ReadIndex round trip first. Anything the local state would
    // *refuse* (404, 409, invalid, a no-op, a create) is judged again after a
    // ReadIndex, so a lagging member never answers from stale state.
    let fresh = this.store.readIndexIsRemote !== true || opts.dryRun === true;
    if (fresh) await this.catchUp();
    for (let attempt = 0; ; attempt++) {
      let step: UpdateStep;
      try {
        step = await this.updateStep(key, namespace, name, opts, transform, fresh);
      } catch (err) {
        // a refusal judged on local state that may lag: judge again after a ReadIndex
        if (fresh) throw err;
        step = { kind: 'stale' };
      }
      if (step.kind === 'stale') {
        fresh = true;
        await this.catchUp();
        continue;
      }
      if (step.kind === 'done') return step.result;
      if (step.kind === 'create') {
        const r = await this.create(namespace, step.object, opts);
        return { ...r, created: true };
      }
      const { next, unknownFields, stored, storedForm, claimed, modRevision } = step;
      const res = await this.store
        .txn({
          compare: [{ key, target: 'mod', op: '=', value: modRevision }, ...claimed.map((c) => ({ key: c.key, target: 'create' as const, op: '=' as const, value: 0 }))],
          success: !stored
            ? [{ type: 'delete', key }]
            : [{ type: 'put', key, value: stored.bytes }, ...claimed.map((c) => ({ type: 'put' as const, key: c.key, value: c.value }))],
          failure: [],
        })
        .finally(() => stored?.release());
      if (!res.succeeded) {
        // the optimistic attempt lost the compare: the write is judged (409 or retried) on consistent state
        if (!fresh) {
          fresh = true;
          await this.catchUp();
          continue;
        }
        if (step.pinned) throw conflict(this.def.resource, this.def.group, name, STALE_OBJECT);
        if (attempt > 50) throw conflict(this.def.resource, this.def.group, name, STALE_OBJECT);
        continue;
      }
      metaOf(next).resourceVersion = String(res.revision);
      if (storedForm) return { object: await this.readBackConverted(storedForm, String(res.revision)), created: false, unknownFields };
      return { object: this.readBack(next), created: false, unknownFields };
    }
  }

  /**
   * what a write answers: for a kind stored in another version, the object as a read returns it
   * (kube answers the object decoded from storage, so fields only conversion fills in — an
   * events/v1 Event's null `deprecatedFirstTimestamp` — are in the answer too)
   */
  private readBack(obj: ApiObject): ApiObject {
    const storage = this.def.storage;
    if (!storage) return obj;
    const served = { ...obj, apiVersion: apiVersionOf(this.def), kind: this.def.kind };
    return servedObject(this.def, convertObject(storage, served, storage.storageVersion));
  }

  /**
   * One attempt of guaranteedUpdate up to its compare-and-swap: read,
   * transform, admit, validate. On local state that may lag (`fresh` false)
   * every outcome but a write to attempt is `stale` (judged again after a
   * ReadIndex).
   */
  private async updateStep(
    key: string,
    namespace: string,
    name: string,
    opts: WriteOptions & UpdateOptions,
    transform: (current: ApiObject | undefined) => ApiObject,
    fresh: boolean,
  ): Promise<UpdateStep> {
    const kv = this.readRaw(namespace, name);
    const decoded = kv ? (this.convertsByWebhook ? await this.decodeConverted(kv) : this.decode(kv)) : undefined;
    // stored before orch wrote quantities and times in Go's form: compared as kube's decoded object would be
    const current = decoded && this.admission.asDecoded ? this.admission.asDecoded(this.def, decoded) : decoded;
    if (!current && !fresh) return { kind: 'stale' };
    if (!current && !opts.createIfAbsent) throw notFound(this.def.resource, this.def.group, name);
    if (opts.uidPrecondition !== undefined && opts.uidPrecondition !== current?.metadata?.uid) {
      if (!fresh) return { kind: 'stale' };
      throw uidPreconditionFailed(this.def, key, name, opts.uidPrecondition, current?.metadata?.uid);
    }
    // the transform gets its own copy unless it promises to neither change nor keep any part of it
    const transformed = transform(current && !opts.transformReadsOnly ? clone(current) : current);
    // a transform may hand back the same object on every attempt: values claimed by a
    // failed attempt must not look requested on the next (see create)
    let next = this.hooks.reserve && current ? clone(transformed) : transformed;
    if (!current) {
      const meta = metaOf(next);
      delete meta.resourceVersion;
      return { kind: 'create', object: next };
    }
    const pinned = metaOf(next).resourceVersion;
    // "0" pins nothing: kube parses it as version 0, an unconditional update
    if (pinned !== undefined && pinned !== '' && pinned !== '0' && pinned !== current.metadata!.resourceVersion) {
      if (!fresh) return { kind: 'stale' };
      throw conflict(this.def.resource, this.def.group, name, STALE_OBJECT);
    }
    const prepared = await this.prepareUpdate(next, current, name, namespace, opts);
    next = prepared.object;
    const unknownFields = prepared.unknownFields;
    // a Terminating object: the deletion machine says whether this update removes it (spec 000 §3.1)
    const lifecycle = current.metadata?.deletionTimestamp ? decideUpdate(this.def, current, next) : undefined;
    // a no-op write is not written and does not advance the resource version
    if (deepEqual(stripVolatile(next), stripVolatile(current))) {
      if (!fresh) return { kind: 'stale' };
      return { kind: 'done', result: { object: current, created: false, unknownFields } };
    }
    await checkNamespaceForUpdate(this.def, this.namespaceExists, namespace);
    prepared.putFields?.(next);
    this.hooks.beforeWrite?.(this.def, next, current, opts);
    if (this.hooks.validateAdmission) {
      await this.hooks.validateAdmission({ operation: 'UPDATE', def: this.def, namespace, name, object: next, oldObject: current, opts });
    }
    if (this.hooks.authorizeWrite) await this.hooks.authorizeWrite(this.def, next, current, opts);
    const removeNow = lifecycle?.outcome === 'remove';
    const claimed = removeNow ? [] : (this.hooks.reserve?.(this.def, next, current)?.keys ?? []);
    if (opts.dryRun) {
      // nothing is written, so the answer carries the stored object's resourceVersion, as
      // kube-apiserver's does (kubectl diff compares it with the live object's)
      metaOf(next).resourceVersion = current.metadata!.resourceVersion;
      return { kind: 'done', result: { object: this.convertsByWebhook ? await this.roundTrip(next) : next, created: false, unknownFields } };
    }
    if (this.convertsByWebhook && !removeNow) {
      const storedForm = await this.toStorage(next);
      return { kind: 'write', next, unknownFields, stored: new HandedOver(encodeObject(storedForm)), storedForm, claimed, modRevision: kv!.modRevision, pinned: pinned !== undefined && pinned !== '' };
    }
    const stored = removeNow ? undefined : this.handOver(key, next, opts.shareWritten);
    return { kind: 'write', next, unknownFields, stored, claimed, modRevision: kv!.modRevision, pinned: pinned !== undefined && pinned !== '' };
  }

  /** carries the immutable metadata over from the stored object, runs mutating admission, then validates */
  private async prepareUpdate(
    next: ApiObject,
    current: ApiObject,
    name: string,
    namespace: string,
    opts: WriteOptions,
  ): Promise<{ object: ApiObject; unknownFields: string[]; putFields: ((written: ApiObject) => void) | undefined }> {
    if (next.metadata?.name !== undefined && next.metadata.name !== name) {
      throw badRequest(`the name of the object (${next.metadata.name}) does not match the name on the URL (${name})`);
    }
    carryOver(this.def, next, current, name);
    this.def.strategy.default?.(next);
    this.def.strategy.prepareForUpdate?.(next, current, this.clock.now(), opts.subresource);
    fillZeroShape(next, this.def.strategy.zeroShape); // as on create (an apply's merged result too)
    let admitted = decodeWrite(this.def, this.admission, next, current, opts);
    const putFields = this.hooks.recordFields?.(this.def, next, current, opts);
    if (this.hooks.mutate) {
      const mutated = await this.hooks.mutate({ operation: 'UPDATE', def: this.def, namespace, name, object: next, oldObject: current, opts });
      const copied = mutated !== undefined && mutated !== next;
      if (copied) next = this.decodedAgain(mutated);
      // what a webhook may not change is carried over again
      const rv = next.metadata?.resourceVersion;
      carryOver(this.def, next, current, name);
      if (rv !== undefined) metaOf(next).resourceVersion = rv;
      if (copied || this.mutatedInPlace(opts)) admitted = admitAgain(this.def, this.admission, next, current, opts, admitted);
    }
    const meta = metaOf(next);
    const cur = current.metadata!;
    validateWrite(this.def, this.admission, next, current, name, opts, admitted);
    // generation counts changes to the desired state (everything but metadata and status)
    if (this.def.strategy.tracksGeneration && !deepEqual(specOf(next), specOf(current))) {
      meta.generation = (cur.generation ?? 0) + 1;
    }
    return { object: next, unknownFields: admitted.unknownFields, putFields };
  }

  /** an admission plugin may have changed the object in place (no plugin changes a status write: a node agent's frequent pod status updates) */
  private mutatedInPlace(opts: WriteOptions): boolean {
    return opts.subresource !== 'status' && this.hooks.mutatesInPlace?.(this.def) === true;
  }

  /** delete (spec 000 §3.1, §4.10): see deletion/delete-object.ts */
  delete(namespace: string, name: string, opts: WriteOptions & DeleteRequestOptions): Promise<{ object: ApiObject; deleted: boolean }> {
    return deleteObject(this, this.hooks, namespace, name, opts);
  }

  /** force deletion of a corrupt object (spec 000 §4.10): see deletion/delete-object.ts */
  deleteCorrupt(namespace: string, name: string): Promise<{ key: string }> {
    return deleteCorruptObject(this, namespace, name);
  }

  finalizersOf(obj: ApiObject): string[] {
    const own = obj.metadata?.finalizers ?? [];
    const extra = this.def.strategy.extraFinalizers?.(obj) ?? [];
    return extra.length === 0 ? own : [...own, ...extra];
  }

  get apiVersion(): string {
    return apiVersionOf(this.def);
  }

  /**
   * The objects of one namespace ('' = every namespace), read after a catch-up
   * (consistent). Undecodable values are left out: for server-side reads of a
   * few objects (pods/eviction's PodDisruptionBudgets), not for serving lists.
   */
  async list(namespace: string): Promise<ApiObject[]> {
    await this.catchUp();
    const out: ApiObject[] = [];
    const kvs = this.store.range(this.rangeKeys(namespace)).kvs;
    if (this.convertsByWebhook) return this.decodeAll(kvs);
    for (const kv of kvs) {
      try {
        out.push(this.decode(kv));
      } catch (e) {
        if (!(e instanceof CorruptObjectError)) throw e;
      }
    }
    return out;
  }

  rangeKeys(namespace: string): { key: string; end: string } {
    const p = storagePrefix(this.def, namespace);
    return { key: p, end: prefixEnd(p) };
  }
}

export function isStatusError(e: unknown): e is StatusError {
  return e instanceof StatusError;
}
