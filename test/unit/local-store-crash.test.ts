// Crash safety of the write-ahead log: a real child process is SIGKILLed
// while writing; every write it acknowledged must survive (docs/store.md
// "Invariants": acknowledged => durable).
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { LevelCommandLog } from '../../src/store/command-log.js';
import { LocalStore } from '../../src/store/local-store.js';
import { MvccState } from '../../src/store/mvcc-state.js';
import { prefixEnd, type AppliedWrite } from '../../src/store/types.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const writer = fileURLToPath(new URL('../fixtures/store-crash-writer.ts', import.meta.url));
const dec = (b: Uint8Array | undefined): string | undefined => (b === undefined ? undefined : new TextDecoder().decode(b));

interface Ack {
  i: number;
  revision: number;
}

/** Runs the writer until it has acknowledged at least `minAcks` writes, then kill -9s it. */
async function runAndKill(dir: string, minAcks: number): Promise<{ acks: Ack[]; startRevision: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', writer, dir, '40'], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const acks: Ack[] = [];
  let startRevision = -1;
  let stderr = '';
  let buf = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.on('exit', (code, sig) => resolve(sig ?? code)));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        const [tag, a, b] = line.split(' ');
        if (tag === 'ready') startRevision = Number(a);
        if (tag === 'ack') acks.push({ i: Number(a), revision: Number(b) });
      }
      if (acks.length >= minAcks && !child.killed) {
        child.kill('SIGKILL');
        resolve();
      }
    });
    child.on('exit', () => {
      if (acks.length < minAcks) reject(new Error(`writer exited early after ${acks.length} acks: ${stderr}`));
    });
  });
  // Lines already in the pipe when the kill landed are acknowledged too.
  await exited;
  for (const line of buf.split('\n')) {
    const [tag, a, b] = line.split(' ');
    if (tag === 'ack' && b !== undefined) acks.push({ i: Number(a), revision: Number(b) });
  }
  return { acks, startRevision };
}

describe('LocalStore crash safety (kill -9)', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('keeps every acknowledged write, with its revision, across a SIGKILL', async () => {
    dir = await mkdtemp(join(tmpdir(), 'orch-store-crash-'));
    const { acks, startRevision } = await runAndKill(dir, 150);
    expect(startRevision).toBe(0);
    expect(acks.length).toBeGreaterThanOrEqual(150);
    // sequential writes: revisions 1..n in order
    acks.forEach((a, idx) => expect(a).toEqual({ i: idx + 1, revision: idx + 1 }));

    // The writer snapshotted every 40 entries and dropped the log they cover,
    // so recovery below goes through snapshot + log tail.
    const raw = await LevelCommandLog.open(dir);
    const snapshot = await raw.loadSnapshot();
    const tail = await raw.readAfter(0);
    await raw.close();
    expect(snapshot).toBeDefined();
    expect(MvccState.restore(snapshot!).appliedIndex).toBeGreaterThanOrEqual(40);
    // (a kill between storing a snapshot and clearing its log may leave older entries; replay skips them)
    expect(tail[0]!.index).toBeGreaterThan(1);
    expect(tail[0]!.index).toBeLessThanOrEqual(MvccState.restore(snapshot!).appliedIndex + 1);

    const store = await LocalStore.open(dir, { compactIntervalMs: 0 });
    try {
      // at least everything acknowledged (the write in flight at the kill may also be there)
      expect(store.revision).toBeGreaterThanOrEqual(acks.length);
      expect(store.revision).toBeLessThanOrEqual(acks.length + 1);
      for (const a of acks) {
        const kv = store.range({ key: `k/${a.i}` }).kvs[0];
        expect(dec(kv?.value)).toBe(`v${a.i}`);
        expect(kv!.modRevision).toBe(a.revision);
        expect(kv!.createRevision).toBe(a.revision);
      }
      expect(Number(dec(store.range({ key: 'last' }).kvs[0]!.value))).toBe(store.revision);
      expect(store.range({ key: 'k/', end: prefixEnd('k/'), countOnly: true }).count).toBe(store.revision);

      // watch from a revision before the crash: history replays, then live writes follow without a gap
      const seen: AppliedWrite[] = [];
      const w = store.watch({ key: 'k/', end: prefixEnd('k/'), startRevision: 100 }, (wr) => seen.push(wr));
      const r = await store.txn({ compare: [], success: [{ type: 'put', key: 'k/after', value: new Uint8Array([1]) }], failure: [] });
      await new Promise((res) => setImmediate(res));
      w.cancel();
      expect(r.revision).toBe(store.revision);
      expect(seen.map((x) => x.revision)).toEqual(Array.from({ length: r.revision - 99 }, (_, k) => 100 + k));
      for (const wr of seen) {
        expect(wr.events).toHaveLength(1); // "last" is outside the watched range
        expect(wr.events[0]!.kv.key.startsWith('k/')).toBe(true);
      }
      expect(dec(seen[0]!.events[0]!.kv.value)).toBe('v100');
    } finally {
      await store.close();
    }
  });

  it('recovers again after a second crash on top of a recovered store', async () => {
    dir = await mkdtemp(join(tmpdir(), 'orch-store-crash2-'));
    const first = await runAndKill(dir, 60);
    const second = await runAndKill(dir, 60);
    // the second run starts from what the first left durable
    expect(second.startRevision).toBeGreaterThanOrEqual(first.acks.length);
    const store = await LocalStore.open(dir, { compactIntervalMs: 0 });
    try {
      for (const a of second.acks) {
        expect(store.range({ key: `k/${a.i}` }).kvs[0]?.modRevision).toBe(a.revision);
      }
      // k/1.. k/n were created by the first run and never rewritten (create-if-absent)
      for (const a of first.acks) expect(store.range({ key: `k/${a.i}` }).kvs[0]?.modRevision).toBe(a.revision);
    } finally {
      await store.close();
    }
  });
});
