// The MVCC state's snapshot encoded in bounded slices across event-loop turns
// (docs/raft.md "The replicated store"). MvccState.snapshot() encoded the whole
// state and its history in one synchronous msgpackr call: ~250 MB and 1–2 s
// of a stalled event loop at 5,000 nodes with 5 minutes of history, longer
// than the election timeout. Here the state is cut synchronously by reference
// (MvccState.snapshotCut) and encoded a chunk at a time, yielding to the event
// loop (I/O included) whenever a slice has run `sliceMs`; writes and applies
// go on meanwhile and do not touch the cut.
//
// The bytes are exactly snapshot()'s (same SNAPSHOT_FORMAT, MvccState.restore
// unchanged). The keys and change records are written in place with
// command-writer.ts's msgpack primitives (msgpackr's forms): encoding them
// with msgpackr a chunk at a time built an array per key, a 256 KiB encoding
// per chunk and a copy of it, 4–17 µs per stored object, against ≈ 1 µs
// written in place (docs/architecture.md "Write path cost", fifth pass).

import { encodeMsgpack } from './codec.js';
import { arrayHeader as writeArrayHeader, writeBin, writeNum, writeStr } from './command-writer.js';
import type { VersionEntry } from './key-history.js';
import { changeSizeBound, entrySizeBound, SNAPSHOT_FORMAT, type SnapshotCut } from './mvcc-state.js';

export interface SliceOptions {
  /** run at most about this long before yielding to the event loop (default 4 ms) */
  sliceMs?: number;
  /** checked at every yield: true ends the encoding, which then resolves undefined (close) */
  cancelled?: () => boolean;
  /** waits for a later event-loop turn (default: setImmediate, after pending I/O) */
  nextTurn?: () => Promise<void>;
  /** elements per chunk at most (default 4096; tests use small chunks to slice small states) */
  chunkElements?: number;
}

/** the options a store takes (StateMachineOptions.snapshotEncoding); it sets `cancelled` itself */
export type SnapshotEncoding = Omit<SliceOptions, 'cancelled'>;

/** a chunk's elements stop at about this many bytes (below LARGE_ENCODING_BYTES: msgpackr keeps its buffer) */
const CHUNK_BYTES = 256 * 1024;
/** ...or this many elements (SliceOptions.chunkElements) */
const CHUNK_ELEMENTS = 4096;

const nextImmediate = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** msgpack array header for `n` elements, as msgpackr writes it */
function arrayHeader(n: number): Uint8Array {
  if (n < 0x10) return Uint8Array.of(0x90 | n);
  if (n < 0x10000) return Uint8Array.of(0xdc, n >>> 8, n & 0xff);
  return Uint8Array.of(0xdd, n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
}

/** length of the array header msgpackr put in front of `bytes` */
function headerLength(bytes: Uint8Array): number {
  const b = bytes[0]!;
  if ((b & 0xf0) === 0x90) return 1;
  if (b === 0xdc) return 3;
  if (b === 0xdd) return 5;
  throw new Error(`snapshot encoder: not a msgpack array (0x${b.toString(16)})`);
}

/** the destination buffer and where the next bytes go */
class Output {
  readonly bytes: Uint8Array;
  readonly view: DataView;
  pos = 0;
  constructor(size: number) {
    // its own ArrayBuffer, not a pool slab; never zero-filled (every byte up to pos is written)
    const b = Buffer.allocUnsafeSlow(size);
    this.bytes = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    this.view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  }
  put(bytes: Uint8Array): void {
    this.bytes.set(bytes, this.pos);
    this.pos += bytes.byteLength;
  }
  /** the elements of a msgpackr-encoded array, without its header */
  putElements(elements: unknown[]): void {
    const enc = encodeMsgpack(elements);
    this.put(enc.subarray(headerLength(enc)));
  }
  /** a key and its flat entries [rev, create, version, value|null, ...], as the two elements msgpackr writes */
  putKey(key: string, entries: readonly VersionEntry[]): void {
    const { bytes, view } = this;
    let p = writeStr(bytes, this.pos, key);
    p = writeArrayHeader(bytes, view, p, 4 * entries.length);
    for (const e of entries) {
      p = writeNum(bytes, view, p, e.rev);
      p = writeNum(bytes, view, p, e.create);
      p = writeNum(bytes, view, p, e.version);
      if (e.value === null) bytes[p++] = 0xc0;
      else p = writeBin(bytes, view, p, e.value);
    }
    this.pos = p;
  }
  /** a change record as [rev, time, indexTime, keys] */
  putChange(rev: number, time: number, indexTime: number, keys: string | string[]): void {
    const { bytes, view } = this;
    let p = writeArrayHeader(bytes, view, this.pos, 4);
    p = writeNum(bytes, view, p, rev);
    p = writeNum(bytes, view, p, time);
    p = writeNum(bytes, view, p, indexTime);
    if (typeof keys === 'string') {
      bytes[p++] = 0x91;
      p = writeStr(bytes, p, keys);
    } else {
      p = writeArrayHeader(bytes, view, p, keys.length);
      for (const k of keys) p = writeStr(bytes, p, k);
    }
    this.pos = p;
  }
  result(): Uint8Array {
    return this.bytes.subarray(0, this.pos);
  }
}

/**
 * Encodes `cut` as MvccState.snapshot() would have at the cut's index, in
 * slices of about `sliceMs`. Resolves undefined when `cancelled` turned true.
 */
export async function encodeSnapshotCut(cut: SnapshotCut, opts: SliceOptions = {}): Promise<Uint8Array | undefined> {
  const sliceMs = opts.sliceMs ?? 4;
  const cancelled = opts.cancelled ?? (() => false);
  const nextTurn = opts.nextTurn ?? nextImmediate;
  const chunkElements = Math.max(1, opts.chunkElements ?? CHUNK_ELEMENTS);
  let sliceStart = performance.now();
  /** false when cancelled */
  const slice = async (): Promise<boolean> => {
    if (performance.now() - sliceStart < sliceMs) return true;
    await nextTurn();
    sliceStart = performance.now();
    return !cancelled();
  };

  // an upper bound of the size first (as snapshot()'s; in slices too, 30–100 ms at 5,000
  // nodes), so the output is one buffer, never grown (a copy of everything so far)
  let size = 128; // the map's header and scalar fields
  for (let i = 0; i < cut.keys.length; i++) {
    size += entrySizeBound(cut.keys[i]!, cut.entries[i]!);
    if (i % 256 === 255 && !(await slice())) return undefined;
  }
  const changes = cut.changes;
  for (let i = 0; i < changes.keys.length; i++) {
    size += changeSizeBound(changes.keys[i]!);
    if (i % 4096 === 4095 && !(await slice())) return undefined;
  }
  const out = new Output(size);

  // the map of SnapshotData, in snapshot()'s field order (msgpackr gives an object's map a 16-bit header)
  out.put(Uint8Array.of(0xde, 0x00, 0x06));
  const fields: Array<[string, number]> = [
    ['format', SNAPSHOT_FORMAT],
    ['revision', cut.revision],
    ['compactRevision', cut.compactRevision],
    ['appliedIndex', cut.appliedIndex],
  ];
  for (const [name, value] of fields) out.putElements([name, value]);

  // keys: alternating key, flat entries [rev, create, version, value|null, ...]
  out.putElements(['keys']);
  out.put(arrayHeader(2 * cut.keys.length));
  let chunkStart = out.pos;
  let chunkKeys = 0;
  for (let i = 0; i < cut.keys.length; i++) {
    out.putKey(cut.keys[i]!, cut.entries[i]!);
    chunkKeys += 1;
    if (out.pos - chunkStart >= CHUNK_BYTES || 2 * chunkKeys >= chunkElements) {
      chunkStart = out.pos;
      chunkKeys = 0;
      if (!(await slice())) return undefined;
    }
  }

  // changes: [rev, time, indexTime, keys]
  out.putElements(['changes']);
  out.put(arrayHeader(changes.keys.length));
  for (let i = 0; i < changes.keys.length; i += chunkElements) {
    if (!(await slice())) return undefined;
    const end = Math.min(changes.keys.length, i + chunkElements);
    for (let j = i; j < end; j++) out.putChange(changes.revs[j]!, changes.times[j]!, changes.indexTimes[j]!, changes.keys[j]!);
  }
  return out.result();
}
