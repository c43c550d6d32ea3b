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
// unchanged): a msgpack map or array is its header followed by its elements'
// encodings, so each chunk is a msgpackr array of consecutive elements whose
// own header is dropped, written after the header of the whole array.

import { encodeMsgpack } from './codec.js';
import { changeSizeBound, entrySizeBound, recordKeys, SNAPSHOT_FORMAT, type SnapshotCut } from './mvcc-state.js';

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
  pos = 0;
  constructor(size: number) {
    // its own ArrayBuffer, not a pool slab; never zero-filled (every byte up to pos is written)
    const b = Buffer.allocUnsafeSlow(size);
    this.bytes = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
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
  for (let i = 0; i < cut.changes.length; i++) {
    size += changeSizeBound(cut.changes[i]!);
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
  let chunk: unknown[] = [];
  let chunkBytes = 0;
  for (let i = 0; i < cut.keys.length; i++) {
    const flat: Array<number | Uint8Array | null> = [];
    for (const e of cut.entries[i]!) {
      flat.push(e.rev, e.create, e.version, e.value);
      chunkBytes += 16 + (e.value === null ? 0 : e.value.byteLength);
    }
    chunk.push(cut.keys[i], flat);
    if (chunkBytes >= CHUNK_BYTES || chunk.length >= chunkElements) {
      out.putElements(chunk);
      chunk = [];
      chunkBytes = 0;
      if (!(await slice())) return undefined;
    }
  }
  if (chunk.length > 0) out.putElements(chunk);

  // changes: [rev, time, indexTime, keys]
  out.putElements(['changes']);
  out.put(arrayHeader(cut.changes.length));
  for (let i = 0; i < cut.changes.length; i += chunkElements) {
    if (!(await slice())) return undefined;
    const records = cut.changes.slice(i, i + chunkElements);
    out.putElements(records.map((c) => [c.rev, c.time, c.indexTime, recordKeys(c)]));
  }
  return out.result();
}
