// A snapshot image kept as a file beside the level database instead of as a
// level value (docs/raft.md "Storage"), as etcd keeps its `.snap` files. A
// 250 MB image put into a level batch was copied on the event loop twice —
// msgpack of the record around it, then classic-level's WriteBatch — 0.5–1.4 s
// of a stalled member at 5,000 nodes; and went through level's write-ahead
// log and compactions. Here the bytes go to the file from the thread pool in
// chunks (the main thread hands over pointers, copies nothing), are fsynced,
// and the file is renamed into place and its directory fsynced before the
// level record that names it is written: a crash leaves either the old record
// and its file or the new ones.

import { mkdir, open, readdir, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/** bytes per write call: each is one thread-pool job, so other I/O interleaves */
const WRITE_CHUNK = 8 << 20;

export class SnapshotFiles {
  private constructor(private readonly dir: string) {}

  /** the snapshot directory `dir` (created if missing) */
  static async open(dir: string): Promise<SnapshotFiles> {
    await mkdir(dir, { recursive: true });
    return new SnapshotFiles(dir);
  }

  /** the file name of the snapshot at log index `index` */
  static nameFor(index: number): string {
    return `${index.toString(16).padStart(16, '0')}.snap`;
  }

  /** writes `data` durably as `name` (see the header); resolves once file and directory are synced */
  async write(name: string, data: Uint8Array): Promise<void> {
    const tmp = join(this.dir, `${name}.tmp`);
    const fh = await open(tmp, 'w');
    try {
      for (let off = 0; off < data.byteLength; ) {
        const { bytesWritten } = await fh.write(data, off, Math.min(WRITE_CHUNK, data.byteLength - off), off);
        off += bytesWritten;
      }
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, join(this.dir, name));
    const d = await open(this.dir, 'r');
    try {
      await d.sync();
    } finally {
      await d.close();
    }
  }

  /** the image named `name` (read in the thread pool) */
  async read(name: string): Promise<Uint8Array> {
    const b = await readFile(join(this.dir, name));
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  }

  /** deletes every file but `keep` (older snapshots, a temporary file a crash left) */
  async removeAllBut(keep: string): Promise<void> {
    for (const f of await readdir(this.dir)) {
      if (f !== keep) await unlink(join(this.dir, f)).catch(() => {});
    }
  }
}
