// The level database a member keeps its log in (src/raft/storage.ts) and a
// single-node store its command log in (src/store/command-log.ts), opened
// the same way: binary keys and values, and a larger write buffer.
//
// Why the write buffer (docs/performance.md "Level's write buffer"): a log
// is a stream of writes that a snapshot later deletes. With leveldb's
// default 4 MiB memtable, 64 creates in flight fill one every second or so;
// each fill is flushed to a level-0 file and compacted, work that runs on
// leveldb's thread and, when it lags, stalls the next synced batch. 32 MiB
// flushes an eighth as often: −1 to −2 µs of CPU per entry and a shorter
// tail for the synced batch (p90 of a 54-entry batch 2.4 → 0.6 ms, measured
// in isolation). It costs at most two memtables of memory per database.

import { Level } from 'level';

type Bytes = Uint8Array;

/** leveldb's memtable size for the log databases (header) */
export const LOG_DB_WRITE_BUFFER = 32 * 1024 * 1024;

/** opens the log database in `dir`, creating it if needed */
export async function openLogDb(dir: string): Promise<Level<Bytes, Bytes>> {
  const db = new Level<Bytes, Bytes>(dir, { keyEncoding: 'view', valueEncoding: 'view', writeBufferSize: LOG_DB_WRITE_BUFFER });
  try {
    await db.open();
  } catch (e) {
    // leveldb's LOCK: what a user sees when a second server is started on the same --data-dir
    if ((e as { cause?: { code?: string } }).cause?.code === 'LEVEL_LOCKED') {
      throw new Error(`${dir} is in use by another process (another orch server on the same --data-dir?): stop it or use another --data-dir`, { cause: e });
    }
    throw e;
  }
  return db;
}

/** a sublevel with binary keys and values */
export function binarySublevel(db: Level<Bytes, Bytes>, name: string) {
  return db.sublevel<Bytes, Bytes>(name, { keyEncoding: 'view', valueEncoding: 'view' });
}
export type BinarySublevel = ReturnType<typeof binarySublevel>;
