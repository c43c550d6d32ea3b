// The MVCC state's change records (one per write revision, until compaction:
// the history window, spec 000 §8) stored by column: revisions, times and
// index times in Float64Arrays, the keys in one array. A record object per
// write cost its header and two boxed heap numbers (the times are ms since
// the epoch, beyond small integers): ≈ 90 B and three heap objects per
// write, promoted and marked by every major GC for the whole window
// (issue 14). Here a write costs 24 B of typed arrays and a slot.

/** one change record, as the snapshot encodes it: [rev, time, indexTime, keys] */
export interface ChangeRecord {
  rev: number;
  /** the command's time, as recorded in the log */
  time: number;
  /** max(time of every write so far): monotonic, for time→revision lookups */
  indexTime: number;
  /** the key of a one-key write (nearly all of them), else the keys */
  keys: string | string[];
}

/** a copy of the log's columns (MvccState.snapshotCut), oldest first */
export interface ChangeColumns {
  revs: Float64Array;
  times: Float64Array;
  indexTimes: Float64Array;
  keys: ReadonlyArray<string | string[]>;
}

/** a record's keys as a list */
export function recordKeys(keys: string | string[]): string[] {
  return typeof keys === 'string' ? [keys] : keys;
}

import { partitionPoint } from '../core/sorted.js';

export class ChangeLog {
  private revs = new Float64Array(64);
  private times = new Float64Array(64);
  private indexTimes = new Float64Array(64);
  /** keys of the records at the same positions as the columns */
  private keyList: Array<string | string[] | undefined> = [];
  /** the records are at [head, end) */
  private head = 0;
  private end = 0;

  get length(): number {
    return this.end - this.head;
  }

  /** the revision of the i-th retained record (0 = oldest) */
  rev(i: number): number {
    return this.revs[this.head + i]!;
  }

  time(i: number): number {
    return this.times[this.head + i]!;
  }

  indexTime(i: number): number {
    return this.indexTimes[this.head + i]!;
  }

  keys(i: number): string | string[] {
    return this.keyList[this.head + i]!;
  }

  /** appends the record of write `rev`; its index time is max(the newest record's, time), or time when none is retained */
  push(rev: number, time: number, keys: string | string[]): void {
    if (this.end === this.revs.length) this.makeRoom();
    const prev = this.end > this.head ? this.indexTimes[this.end - 1]! : 0;
    const at = this.end++;
    this.revs[at] = rev;
    this.times[at] = time;
    this.indexTimes[at] = Math.max(prev, time);
    this.keyList[at] = keys;
  }

  /** appends a record as a snapshot holds it (index time included) */
  pushRecord(r: ChangeRecord): void {
    if (this.end === this.revs.length) this.makeRoom();
    const at = this.end++;
    this.revs[at] = r.rev;
    this.times[at] = r.time;
    this.indexTimes[at] = r.indexTime;
    this.keyList[at] = r.keys;
  }

  /** drops the `n` oldest records (compaction) */
  dropOldest(n: number): void {
    const stop = Math.min(this.end, this.head + n);
    // release the keys now: they are the only references the columns hold
    for (let i = this.head; i < stop; i++) this.keyList[i] = undefined;
    this.head = stop;
    if (this.head === this.end) {
      this.head = this.end = 0;
      this.keyList.length = 0;
    }
  }

  /** the index of the first record with a time index > timeMs (records before it were written at or before timeMs) */
  countIndexedAtOrBefore(timeMs: number): number {
    const t = this.indexTimes;
    return partitionPoint(this.head, this.end, (i) => t[i]! <= timeMs) - this.head;
  }

  /** copies of the columns (memcpy for the numbers, references for the keys) */
  columns(): ChangeColumns {
    return {
      revs: this.revs.slice(this.head, this.end),
      times: this.times.slice(this.head, this.end),
      indexTimes: this.indexTimes.slice(this.head, this.end),
      keys: this.keyList.slice(this.head, this.end) as Array<string | string[]>,
    };
  }

  /** the records as objects, oldest first (the synchronous snapshot and tests) */
  records(): ChangeRecord[] {
    const out: ChangeRecord[] = [];
    for (let i = 0; i < this.length; i++) out.push({ rev: this.rev(i), time: this.time(i), indexTime: this.indexTime(i), keys: this.keys(i) });
    return out;
  }

  /** room for one more record at `end`: the live records moved to the front when at least half are dead, else twice the capacity */
  private makeRoom(): void {
    const n = this.length;
    const cap = this.revs.length;
    if (this.head >= n) {
      this.revs.copyWithin(0, this.head, this.end);
      this.times.copyWithin(0, this.head, this.end);
      this.indexTimes.copyWithin(0, this.head, this.end);
    } else {
      this.revs = grown(this.revs, this.head, this.end, cap * 2);
      this.times = grown(this.times, this.head, this.end, cap * 2);
      this.indexTimes = grown(this.indexTimes, this.head, this.end, cap * 2);
    }
    this.keyList = this.keyList.slice(this.head, this.end);
    this.head = 0;
    this.end = n;
  }
}

function grown(a: Float64Array, from: number, to: number, cap: number): Float64Array<ArrayBuffer> {
  const out = new Float64Array(cap);
  out.set(a.subarray(from, to));
  return out;
}
