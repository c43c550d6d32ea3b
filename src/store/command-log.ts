// Durable storage of the single-node store: the write-ahead log of encoded
// `Command`s and the latest state snapshot, both in one level database.
//
// Layout (sublevels, binary keys and values):
//   log!<8-byte big-endian index>  -> msgpackr(Command)
//   meta!snapshot                  -> MvccState.snapshot() (carries its log index)
// Every append is one level batch written with `sync: true`, so an entry is
// on disk before the state machine applies it (docs/store.md "The log").

import { Level } from 'level';
import { decodeCommand, logIndexFromKey, logKey } from './codec.js';
import type { Command } from './types.js';

export interface LogEntry {
  index: number;
  cmd: Command;
}

/** A command already encoded with `encodeCommand` (encoded once, at proposal). */
export interface EncodedEntry {
  index: number;
  bytes: Uint8Array;
}

export interface CommandLog {
  /** Appends entries (consecutive indices) durably, as one synced batch. */
  append(entries: EncodedEntry[]): Promise<void>;
  /** Entries with index > `afterIndex`, in order. */
  readAfter(afterIndex: number): Promise<LogEntry[]>;
  loadSnapshot(): Promise<Uint8Array | undefined>;
  /** Stores the snapshot durably, then deletes log entries with index <= `coveredIndex`. */
  saveSnapshot(bytes: Uint8Array, coveredIndex: number): Promise<void>;
  close(): Promise<void>;
}

type Bytes = Uint8Array;
function binarySublevel(db: Level<Bytes, Bytes>, name: string) {
  return db.sublevel<Bytes, Bytes>(name, { keyEncoding: 'view', valueEncoding: 'view' });
}
type Sub = ReturnType<typeof binarySublevel>;

export class LevelCommandLog implements CommandLog {
  private constructor(
    private readonly db: Level<Bytes, Bytes>,
    private readonly log: Sub,
    private readonly meta: Sub,
  ) {}

  static async open(dir: string): Promise<LevelCommandLog> {
    const db = new Level<Bytes, Bytes>(dir, { keyEncoding: 'view', valueEncoding: 'view' });
    await db.open();
    return new LevelCommandLog(db, binarySublevel(db, 'log'), binarySublevel(db, 'meta'));
  }

  async append(entries: EncodedEntry[]): Promise<void> {
    // The root batch with sublevel ops takes `sync` straight to LevelDB.
    await this.db.batch(
      entries.map((e) => ({ type: 'put' as const, sublevel: this.log, key: logKey(e.index), value: e.bytes })),
      { sync: true },
    );
  }

  async readAfter(afterIndex: number): Promise<LogEntry[]> {
    const out: LogEntry[] = [];
    for await (const [key, value] of this.log.iterator({ gt: logKey(afterIndex) })) {
      out.push({ index: logIndexFromKey(key), cmd: decodeCommand(value) });
    }
    return out;
  }

  async loadSnapshot(): Promise<Uint8Array | undefined> {
    const v = await this.meta.get(SNAPSHOT_KEY);
    return v ?? undefined;
  }

  async saveSnapshot(bytes: Uint8Array, coveredIndex: number): Promise<void> {
    await this.db.batch([{ type: 'put', sublevel: this.meta, key: SNAPSHOT_KEY, value: bytes }], { sync: true });
    // Safe to lose on a crash: replay skips entries the snapshot covers.
    await this.log.clear({ lte: logKey(coveredIndex) });
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}

const SNAPSHOT_KEY = new TextEncoder().encode('snapshot');

/** No durability: for tests of upper layers (`LocalStore.openInMemory()`). */
export class MemoryCommandLog implements CommandLog {
  private entries: EncodedEntry[] = [];
  private snapshotBytes: Uint8Array | undefined;

  async append(entries: EncodedEntry[]): Promise<void> {
    for (const e of entries) this.entries.push(e);
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
