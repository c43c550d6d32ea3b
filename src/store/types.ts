// The revisioned key-value store: the shape etcd's mvcc layer has.
// One global revision, +1 per committed write (a txn with at least one put or
// delete is one write; a txn that changes nothing does not advance it).
// The API layer turns the store revision into `metadata.resourceVersion`
// (spec 000 §4.6: resource versions are opaque to clients).

export interface KeyValue {
  key: string;
  value: Uint8Array;
  /** revision of the write that created this incarnation of the key */
  createRevision: number;
  /** revision of the last write to the key */
  modRevision: number;
  /** number of writes since creation (1 after create) */
  version: number;
}

export type CompareTarget = 'mod' | 'create' | 'version';
export type CompareOp = '=' | '!=' | '<' | '>';

/** Compare on a key. An absent key has mod = create = version = 0. */
export interface Compare {
  key: string;
  target: CompareTarget;
  op: CompareOp;
  value: number;
}

export type Op =
  | { type: 'put'; key: string; value: Uint8Array }
  | { type: 'delete'; key: string }
  | { type: 'get'; key: string };

export interface TxnRequest {
  compare: Compare[];
  success: Op[];
  failure: Op[];
}

export type OpResult =
  | { type: 'put'; prevKv?: KeyValue; kv: KeyValue }
  | { type: 'delete'; prevKv?: KeyValue; deleted: boolean }
  | { type: 'get'; kv?: KeyValue };

export interface TxnResult {
  succeeded: boolean;
  /** store revision after the txn (unchanged when nothing was written) */
  revision: number;
  results: OpResult[];
}

export interface RangeRequest {
  /** start key (inclusive) */
  key: string;
  /** end key (exclusive); absent = only `key` itself. Use prefixEnd(p) for a prefix. */
  end?: string;
  /** maximum number of kvs returned; 0/absent = no limit */
  limit?: number;
  /** read at this revision; 0/absent = current */
  revision?: number;
  countOnly?: boolean;
  /**
   * With `limit`: stop at the limit instead of counting the whole range
   * (`count` is then not the range's total, `more` still tells whether any key
   * follows): a page of a large range costs the page, not the range
   * (the informers' sliced first lists, src/controllers/runtime/informer-factory.ts).
   */
  skipCount?: boolean;
}

export interface RangeResult {
  kvs: KeyValue[];
  /** total number of keys in the range at that revision (ignores limit) */
  count: number;
  /** true when limit cut the result short */
  more: boolean;
  /** the revision the range was served at (the store's current revision when unset) */
  revision: number;
}

export interface StoreEvent {
  type: 'put' | 'delete';
  /** for delete: key with empty value, modRevision = the delete's revision */
  kv: KeyValue;
  prevKv?: KeyValue;
}

/** One committed write as seen by watchers: all events share `revision`. */
export interface AppliedWrite {
  revision: number;
  /** wall-clock milliseconds recorded in the log entry (deterministic on replay) */
  time: number;
  events: StoreEvent[];
}

export interface WatchRequest {
  key: string;
  end?: string;
  /** deliver events with revision >= startRevision; 0/absent = only future events */
  startRevision?: number;
}

export interface Watcher {
  cancel(): void;
}

/** Log entries of the replicated state machine. Encoded with msgpackr. */
export type Command =
  | { type: 'txn'; txn: TxnRequest; time: number }
  | { type: 'compact'; revision: number; time: number };

export type CommandResult =
  | { type: 'txn'; result: TxnResult }
  | { type: 'compact'; revision: number };

export class CompactedError extends Error {
  constructor(
    readonly requested: number,
    readonly compactRevision: number,
  ) {
    super(`required revision ${requested} has been compacted (compacted at ${compactRevision})`);
    this.name = 'CompactedError';
  }
}

export class FutureRevisionError extends Error {
  constructor(
    readonly requested: number,
    readonly current: number,
  ) {
    super(`required revision ${requested} is a future revision (current ${current})`);
    this.name = 'FutureRevisionError';
  }
}

/**
 * What the API layer needs from storage. The single-node implementation
 * writes commands to its own write-ahead log; the Raft implementation
 * proposes them to the cluster. Both apply them to the same MVCC state machine.
 */
export interface RevisionedStore {
  /** current (applied) revision */
  readonly revision: number;
  /** the oldest revision still readable */
  readonly compactRevision: number;
  txn(req: TxnRequest): Promise<TxnResult>;
  range(req: RangeRequest): RangeResult;
  /**
   * A revision that is at least as new as every write acknowledged anywhere
   * before the call (ReadIndex on Raft; the current revision on one node).
   */
  readIndex(): Promise<number>;
  /**
   * true when readIndex() costs a round trip and the local state may lag the
   * cluster (a Raft member): writers then try a compare-and-swap on the local
   * state first and read at a ReadIndex only to judge a failure (docs/raft.md
   * "Optimistic updates"). Absent or false: local state is the latest.
   */
  readonly readIndexIsRemote?: boolean;
  /** waits until the applied revision reaches `revision` or the timeout ends; resolves true when reached */
  waitForRevision(revision: number, timeoutMs: number): Promise<boolean>;
  watch(req: WatchRequest, onEvents: (write: AppliedWrite) => void, onError?: (err: Error) => void): Watcher;
  /**
   * The retained writes with a revision greater than `revision` that touch
   * [key, end) (end absent = `key` only), oldest first, each with only those
   * events: rebuilt from the MVCC history, synchronously at the current
   * revision (a watch cache created later backfills its window from it, so
   * the watch service keeps no copy of the writes; spec 000 §8). Throws
   * CompactedError when `revision + 1` is below the compact revision.
   */
  writesAfter(revision: number, key: string, end?: string): AppliedWrite[];
  /** observe every applied write, in order (the watch cache feeds from this) */
  onApplied(listener: (write: AppliedWrite) => void): () => void;
  compact(revision: number): Promise<void>;
  /** health of the storage (for /readyz and /livez) */
  healthy(): boolean;
  close(): Promise<void>;
  /**
   * Whether this member leads its cluster, so that in-process controllers run
   * on one member only (src/controllers/leader-gate.ts). Absent = always the
   * leader (a single-node store has nobody to share the work with).
   */
  isLeader?(): boolean;
  /**
   * Observe changes of `isLeader()` (called only on a change; a closing or
   * failed member reports `false`). Returns the unsubscribe function.
   */
  onLeadershipChange?(listener: (leader: boolean) => void): () => void;
}

/** The smallest key greater than every key with the given prefix. */
/** values whose writer promised never to modify them (`handOverValue`) */
const handedOverValues = new WeakSet<Uint8Array>();

/**
 * Marks `value` as handed over to the store: the caller will never modify it
 * (nor anything sharing its memory), so a store may keep it as it is instead
 * of copying it. Only a value that owns its whole ArrayBuffer is kept
 * uncopied (a view into a shared slab, like a small Buffer, would keep the
 * slab alive). Used by the registry for the JSON it just encoded.
 */
export function handOverValue(value: Uint8Array): Uint8Array {
  handedOverValues.add(value);
  return value;
}

/**
 * whether `value` may be kept without a copy (see handOverValue); the mark is
 * taken, so the set holds only values in flight, not every stored value
 * (a large weak set is work for every full GC)
 */
export function takeHandedOverValue(value: Uint8Array): boolean {
  if (!handedOverValues.delete(value)) return false;
  return value.byteOffset === 0 && value.byteLength === value.buffer.byteLength && !Buffer.isBuffer(value);
}

export function prefixEnd(prefix: string): string {
  return prefix + '\uffff';
}

// the class lives in src/core/ so the Status mapping (src/core/errors.ts) can know it without importing the store
export { StoreUnavailableError } from '../core/store-unavailable.js';
