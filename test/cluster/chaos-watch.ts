// Watchers for the chaos run: each follows the ConfigMaps of `default`
// across members (a stream per member, ending after a few seconds or when the
// member dies, continued from the last resourceVersion on another member; a
// 410 means re-list and start again), and the check that every stream saw a
// gap-free sequence: within each stream the revisions rise, every revision
// any stream saw between a stream's start and its last event is in that
// stream too, all streams agree on what happened at a revision, and every
// acknowledged write inside a stream's range is in it.

import type { ChaosCluster, Member } from './chaos-cluster.js';
import { sleep } from './chaos-cluster.js';

export interface WatchEvent {
  rv: number;
  type: string;
  name: string;
  value: string | undefined;
}

export interface WatchSegment {
  member: string;
  startRv: number;
  events: WatchEvent[];
  end: 'open' | 'closed' | 'expired' | 'error';
}

export class WatchFollower {
  private rv: number | undefined;
  private stopped = false;
  private cancel: (() => void) | undefined;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly cluster: ChaosCluster,
    private readonly pick: () => Member | undefined,
    private readonly segments: WatchSegment[],
  ) {}

  start(): void {
    this.loop = this.run();
  }

  /** waits until this follower has seen `rv` (or the timeout), then stops it */
  async stopAfter(rv: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while ((this.rv ?? 0) < rv && Date.now() < deadline) await sleep(100);
    this.stopped = true;
    this.cancel?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const m = this.pick();
      if (!m) {
        await sleep(100);
        continue;
      }
      if (this.rv === undefined) {
        try {
          const list = await this.cluster.api(m, 'GET', '/api/v1/namespaces/default/configmaps', undefined, 5000);
          if (list.status !== 200) throw new Error(String(list.status));
          this.rv = Number((list.body.metadata as { resourceVersion: string }).resourceVersion);
        } catch {
          await sleep(200);
          continue;
        }
      }
      await this.follow(m, this.rv);
      // a refused or empty stream (no leader yet) is not retried in a tight loop
      const last = this.segments[this.segments.length - 1];
      if (last && last.events.length === 0) await sleep(100);
    }
  }

  private follow(m: Member, startRv: number): Promise<void> {
    const seg: WatchSegment = { member: m.name, startRv, events: [], end: 'open' };
    this.segments.push(seg);
    const timeoutSeconds = 3 + Math.floor(Math.random() * 6);
    return new Promise<void>((resolve) => {
      let buffered = '';
      let done = false;
      let guard: NodeJS.Timeout | undefined;
      const finish = (end: WatchSegment['end']) => {
        if (done) return;
        done = true;
        clearTimeout(guard);
        if (seg.end === 'open') seg.end = end;
        this.cancel = undefined;
        cancel();
        resolve();
      };
      // a stream that hangs (a paused or cut-off member) is given up after a while; the next one continues
      guard = setTimeout(() => finish('closed'), (timeoutSeconds + 10) * 1000);
      const cancel = this.cluster.stream(
        m,
        `/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${startRv}&timeoutSeconds=${timeoutSeconds}`,
        (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            if (res.statusCode === 410) this.rv = undefined;
            res.on('end', () => finish(res.statusCode === 410 ? 'expired' : 'error'));
            return;
          }
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buffered += chunk;
            let nl: number;
            while ((nl = buffered.indexOf('\n')) >= 0) {
              const line = buffered.slice(0, nl).trim();
              buffered = buffered.slice(nl + 1);
              if (line) this.onLine(seg, line, finish);
            }
          });
          res.on('end', () => finish('closed'));
          res.on('error', () => finish('closed'));
        },
        () => finish('closed'),
      );
      this.cancel = () => finish('closed');
    });
  }

  private onLine(seg: WatchSegment, line: string, finish: (end: WatchSegment['end']) => void): void {
    let ev: { type: string; object: { metadata?: { name?: string; resourceVersion?: string }; data?: { v?: string }; code?: number } };
    try {
      ev = JSON.parse(line) as typeof ev;
    } catch {
      finish('error');
      return;
    }
    if (ev.type === 'ERROR') {
      if (ev.object.code === 410) {
        this.rv = undefined;
        finish('expired');
      } else finish('error');
      return;
    }
    if (ev.type === 'BOOKMARK') return;
    const rv = Number(ev.object.metadata?.resourceVersion);
    seg.events.push({ rv, type: ev.type, name: ev.object.metadata?.name ?? '', value: ev.object.data?.v });
    this.rv = rv;
  }
}

export function checkWatches(segments: WatchSegment[], acked: { key: string; value: string; rv: number }[]): { segments: number; events: number; expired: number; problems: string[] } {
  const problems: string[] = [];
  const union = new Map<number, WatchEvent>();
  let events = 0;
  for (const s of segments) {
    let prev = s.startRv;
    for (const e of s.events) {
      events++;
      if (!(e.rv > prev)) problems.push(`${s.member}@${s.startRv}: revision ${e.rv} after ${prev}`);
      prev = e.rv;
      const seen = union.get(e.rv);
      if (!seen) union.set(e.rv, e);
      else if (seen.name !== e.name || seen.type !== e.type || seen.value !== e.value) {
        problems.push(`revision ${e.rv}: ${seen.type} ${seen.name}=${seen.value} in one stream, ${e.type} ${e.name}=${e.value} in another`);
      }
    }
  }
  const ackedByRv = new Map(acked.map((a) => [a.rv, a]));
  for (const s of segments) {
    if (s.events.length === 0) continue;
    const last = s.events[s.events.length - 1]!.rv;
    const have = new Set(s.events.map((e) => e.rv));
    for (const rv of union.keys()) {
      if (rv > s.startRv && rv <= last && !have.has(rv)) problems.push(`${s.member}@${s.startRv}: missed revision ${rv} (seen elsewhere)`);
    }
    for (const [rv, a] of ackedByRv) {
      if (rv <= s.startRv || rv > last) continue;
      const e = s.events.find((x) => x.rv === rv);
      if (!e) problems.push(`${s.member}@${s.startRv}: missed acknowledged write ${a.key}@${rv}`);
      else if (e.name !== a.key || e.value !== a.value) problems.push(`${s.member}@${s.startRv}: revision ${rv} is ${e.name}=${e.value}, acknowledged as ${a.key}=${a.value}`);
    }
  }
  return { segments: segments.length, events, expired: segments.filter((s) => s.end === 'expired').length, problems };
}
