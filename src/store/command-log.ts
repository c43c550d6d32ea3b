// Durable storage of the single-node store: the write-ahead log of encoded
// `Command`s and the latest state snapshot, both in one level database.
//
// Layout (sublevels, binary keys and values):
//   log!<8-byte big-endian index>  -> msgpackr(Command) (one entry), or
//                                     a group of entries ending at index (below)
//   meta!snapshotFile              -> the name of the file in `snap/` holding the latest
//                                     MvccState snapshot (it carries its log index;
//                                     src/raft/snapshot-file.ts)
//   meta!snapshot                  -> the same image in level, as written before 2026-11-27
//                                     (read when there is no snapshotFile, deleted by the next)
// Every append is one level batch written with `sync: true`, so an entry is
// on disk before the state machine applies it (docs/store.md "The log").
//
// A group commit of several entries is one record, keyed by its *last*
// index: GROUP_MAGIC, the entry count (u32 BE), then each entry as its
// length (u32 BE) and bytes. One level op per group instead of one per
// entry: abstract-level's and classic-level's per-op work on the main
// thread was ≈ 10–14 µs per entry (docs/architecture.md "Write path cost").
// Keyed by the last index, a snapshot's `clear({ lte: covered })` drops only
// groups it covers whole; a group reaching past `covered` stays, and
// `readAfter` returns only its entries past the index asked for. A log of
// single-entry records (written before groups) reads the same way.

import { join } from 'node:path';
import type { Level } from 'level';
import { type BinarySublevel, binarySublevel, openLogDb } from '../raft/log-db.js';
import { SnapshotFiles } from '../raft/snapshot-file.js';
import { decodeCommand, logIndexFromKey, logKey } from './codec.js';
import { commandSize, writeCommand } from './command-writer.js';
import type { Command } from './types.js';

export interface LogEntry {
  index: number;
  cmd: Command;
}

/** A command already encoded with `encodeCommand`. */
export interface EncodedEntry {
  index: number;
  bytes: Uint8Array;
}

export interface CommandLog {
  /**
   * Appends entries (consecutive indices) durably, as one synced batch; the
   * commands are encoded into the record here (`recordOf`). Resolves with the
   * bytes written.
   */
  append(entries: readonly LogEntry[]): Promise<number>;
  /** Entries with index > `afterIndex`, in order. */
  readAfter(afterIndex: number): Promise<LogEntry[]>;
  loadSnapshot(): Promise<Uint8Array | undefined>;
  /** Stores the snapshot durably, then deletes log entries with index <= `coveredIndex`. */
  saveSnapshot(bytes: Uint8Array, coveredIndex: number): Promise<void>;
  close(): Promise<void>;
}

type Bytes = Uint8Array;
type Sub = BinarySublevel;

export class LevelCommandLog implements CommandLog {
  private constructor(
    private readonly db: Level<Bytes, Bytes>,
    private readonly log: Sub,
    private readonly meta: Sub,
    private readonly files: SnapshotFiles,
  ) {}

  static async open(dir: string): Promise<LevelCommandLog> {
    const db = await openLogDb(dir);
    const files = await SnapshotFiles.open(join(dir, 'snap'));
    return new LevelCommandLog(db, binarySublevel(db, 'log'), binarySublevel(db, 'meta'), files);
  }

  async append(entries: readonly LogEntry[]): Promise<number> {
    if (entries.length === 0) return 0;
    const last = entries[entries.length - 1]!;
    const value = recordOf(entries);
    // The root batch with sublevel ops takes `sync` straight to LevelDB.
    await this.db.batch([{ type: 'put' as const, sublevel: this.log, key: logKey(last.index), value }], { sync: true });
    return value.byteLength;
  }

  async readAfter(afterIndex: number): Promise<LogEntry[]> {
    const out: LogEntry[] = [];
    for await (const [key, value] of this.log.iterator({ gt: logKey(afterIndex) })) {
      const index = logIndexFromKey(key);
      if (value[0] !== GROUP_MAGIC) {
        out.push({ index, cmd: decodeCommand(value) });
        continue;
      }
      const group = decodeGroup(value);
      const first = index - group.length + 1;
      for (let i = 0; i < group.length; i++) {
        if (first + i > afterIndex) out.push({ index: first + i, cmd: decodeCommand(group[i]!) });
      }
    }
    return out;
  }

  async loadSnapshot(): Promise<Uint8Array | undefined> {
    const file = await this.meta.get(SNAPSHOT_FILE_KEY);
    if (file) return this.files.read(new TextDecoder().decode(file));
    const v = await this.meta.get(SNAPSHOT_KEY);
    return v ?? undefined;
  }

  async saveSnapshot(bytes: Uint8Array, coveredIndex: number): Promise<void> {
    // The image goes to its own file from the thread pool; put into a level batch, 250 MB were
    // copied on the event loop for 1.4 s (src/raft/snapshot-file.ts). The record naming it is
    // synced after the file is.
    const file = SnapshotFiles.nameFor(coveredIndex);
    await this.files.write(file, bytes);
    await this.db.batch(
      [
        { type: 'put', sublevel: this.meta, key: SNAPSHOT_FILE_KEY, value: new TextEncoder().encode(file) },
        { type: 'del', sublevel: this.meta, key: SNAPSHOT_KEY },
      ],
      { sync: true },
    );
    await this.files.removeAllBut(file);
    // Safe to lose on a crash: replay skips entries the snapshot covers.
    await this.log.clear({ lte: logKey(coveredIndex) });
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}

const SNAPSHOT_KEY = new TextEncoder().encode('snapshot');
const SNAPSHOT_FILE_KEY = new TextEncoder().encode('snapshotFile');

/** 0xc1 is never used by msgpack, so no single encoded command starts with it */
export const GROUP_MAGIC = 0xc1;

/**
 * The log record of `entries`: the command itself for one, else a group
 * record (the layout above), each command written in place by
 * command-writer.ts — one buffer per record, no encoding per command to copy
 * out again. Equal to `encodeGroup` of the commands' msgpackr encodings
 * (test/unit/command-writer.test.ts).
 */
export function recordOf(entries: readonly LogEntry[]): Uint8Array {
  const one = entries.length === 1;
  let size = one ? 0 : 5;
  const sizes = entries.map((e) => commandSize(e.cmd));
  for (const n of sizes) size += one ? n : 4 + n;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  if (one) {
    writeCommand(entries[0]!.cmd, out, view, 0);
    return out;
  }
  out[0] = GROUP_MAGIC;
  view.setUint32(1, entries.length);
  let at = 5;
  for (let i = 0; i < entries.length; i++) {
    view.setUint32(at, sizes[i]!);
    at = writeCommand(entries[i]!.cmd, out, view, at + 4);
  }
  return out;
}

/** the entries' bytes as one group record (see the layout above) */
export function encodeGroup(entries: readonly EncodedEntry[]): Uint8Array {
  let size = 5;
  for (const e of entries) size += 4 + e.bytes.byteLength;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  out[0] = GROUP_MAGIC;
  view.setUint32(1, entries.length);
  let at = 5;
  for (const e of entries) {
    view.setUint32(at, e.bytes.byteLength);
    out.set(e.bytes, at + 4);
    at += 4 + e.bytes.byteLength;
  }
  return out;
}

/** the entries of a group record, as views into `value`; throws on a malformed record */
export function decodeGroup(value: Uint8Array): Uint8Array[] {
  const view = new DataView(value.buffer, value.byteOffset, value.byteLength);
  if (value.byteLength < 5 || value[0] !== GROUP_MAGIC) throw new Error('log: not a group record');
  const count = view.getUint32(1);
  const out: Uint8Array[] = [];
  let at = 5;
  for (let i = 0; i < count; i++) {
    if (at + 4 > value.byteLength) throw new Error('log: truncated group record');
    const len = view.getUint32(at);
    if (at + 4 + len > value.byteLength) throw new Error('log: truncated group record');
    out.push(value.subarray(at + 4, at + 4 + len));
    at += 4 + len;
  }
  if (at !== value.byteLength) throw new Error('log: trailing bytes in group record');
  return out;
}

/** No durability: for tests of upper layers (`LocalStore.openInMemory()`). */
export class MemoryCommandLog implements CommandLog {
  private entries: EncodedEntry[] = [];
  private snapshotBytes: Uint8Array | undefined;

  async append(entries: readonly LogEntry[]): Promise<number> {
    let bytes = 0;
    for (const e of entries) {
      const encoded = recordOf([e]);
      bytes += encoded.byteLength;
      this.entries.push({ index: e.index, bytes: encoded });
    }
    return bytes;
  }

  async readAfter(afterIndex: number): Promise<LogEntry[]> {
    return this.entries.filter((e) => e.index > afterIndex).map((e) => ({ index: e.index, cmd: decodeCommand(e.bytes) }));
  }

  async loadSnapshot(): Promise<Uint8Array | undefined> {
    return this.snapshotBytes;
  }

  async saveSnapshot(bytes: Uint8Array, coveredIndex: number): Promise<void> {
    this.snapshotBytes = bytes;
    this.entries = this.entries.filter((e) => e.index > coveredIndex);
  }

  async close(): Promise<void> {}
}
