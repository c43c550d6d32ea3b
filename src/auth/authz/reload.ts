// Reloads the `--authorization-config` file while serving (spec 001 §5.12,
// §8): on a change event (fs.watch on the file and its directory, since
// editors and config-map mounts replace files) and otherwise every 60 s.
// Unchanged content is not rebuilt. A file that fails to load or build keeps
// the previous chain; both outcomes are logged and counted.

import { type Clock, type TimerHandle, every } from '../../core/clock.js';
import { type FSWatcher, readFileSync, watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { AuthorizerChain, ChainEntry } from './chain.js';

export const CONFIG_RELOAD_INTERVAL_MS = 60_000;

export interface ConfigReloaderOptions {
  path: string;
  chain: AuthorizerChain;
  /** builds the whole chain (privileged group first) from the file's current content */
  build: (content: string) => Promise<ChainEntry[]>;
  log: (msg: string) => void;
  reloaded?: (status: 'success' | 'failure') => void;
  intervalMs?: number;
  /** the poll's timer (the composition root's) */
  clock: Clock;
}

export class ConfigReloader {
  private last: string;
  private timer: TimerHandle | undefined;
  private watchers: FSWatcher[] = [];
  private running: Promise<void> | undefined;
  private again = false;

  /** `initial` is the content the chain was built from */
  constructor(
    private readonly o: ConfigReloaderOptions,
    initial: string,
  ) {
    this.last = initial;
  }

  start(): void {
    this.timer = every(this.o.clock, this.o.intervalMs ?? CONFIG_RELOAD_INTERVAL_MS, () => void this.check());
    const name = basename(this.o.path);
    for (const [target, filter] of [
      [this.o.path, false],
      [dirname(this.o.path), true],
    ] as const) {
      try {
        const w = watch(target, { persistent: false }, (_event, file) => {
          if (!filter || file === null || String(file) === name) void this.check();
        });
        w.on('error', () => w.close());
        this.watchers.push(w);
      } catch {
        // the poll still covers it
      }
    }
  }

  stop(): void {
    this.timer?.cancel();
    for (const w of this.watchers) w.close();
    this.watchers = [];
  }

  /** Re-reads the file now; resolves when the resulting reload (if any) is done. */
  check(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.reload().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        void this.check();
      }
    });
    return this.running;
  }

  private async reload(): Promise<void> {
    let content: string;
    try {
      content = readFileSync(this.o.path, 'utf8');
    } catch (e) {
      // mid-replace: the file may briefly be missing; a later event or poll retries
      if (this.last !== '') this.fail(`cannot read: ${(e as Error).message}`, '');
      return;
    }
    if (content === this.last) return;
    this.last = content;
    let entries: ChainEntry[];
    try {
      entries = await this.o.build(content);
    } catch (e) {
      this.fail((e as Error).message, content);
      return;
    }
    this.o.chain.setEntries(entries);
    this.o.log(`authorization: reloaded ${this.o.path}: ${entries.map((e) => `${e.type}/${e.name}`).join(', ')}`);
    this.o.reloaded?.('success');
  }

  private fail(msg: string, content: string): void {
    this.last = content;
    this.o.log(`authorization: reloading ${this.o.path} failed, keeping the previous configuration: ${msg}`);
    this.o.reloaded?.('failure');
  }
}
