// The /readyz checks that say whether every part of a member can serve
// (issue #15 item 1), next to the liveness checks in server.ts. Each part is
// a named check, so `/readyz?verbose` shows which one is failing, a probe can
// ask for one (`/readyz/etcd-readiness`) and an operator can `?exclude=` one
// (src/gateway/health.ts, spec 000 §4.11):
//
// - `etcd-readiness` (kube's name for the same question): a ReadIndex
//   through the store answered within `timeoutMs`. On a Raft member that
//   means a leader with a quorum confirmed it and this member has applied up
//   to the leader's commit index; a member cut off from the quorum, or one
//   still replaying its log after a restart, is not ready. On one node it is
//   the current revision at once.
// - `watch-cache`: the watch fan-out has seen every write up to that index,
//   so a watch or a cached list started here is not behind the store.
// - `tls-workers` (with `--tls-workers`): at least one worker process holds
//   the listening socket and serves; a worker being restarted costs capacity,
//   not readiness (the others serve its share).
// - `informer-sync`: on the member that leads, every leader-only controller
//   has started and the informers of the controller runtime it uses have
//   listed (src/controllers/runtime/: `LeaderGate.synced()` asks the
//   controller's `hasSynced()`, client-go's HasSynced; leader-gate.ts starts
//   them one turn of the event loop after leadership arrives; the garbage
//   collector builds its graph first). A follower runs none, so it is synced
//   by definition.
//
// The store probe is single-flight and reused for a short while: health
// checks are never flow-controlled, so a flood of probes must not become a
// flood of ReadIndex rounds.

import type { Clock } from '../core/clock.js';
import type { HealthChecks } from '../gateway/health.js';
import type { RevisionedStore } from '../store/types.js';

/** how long a probe waits for the store (kubelet probes give up after 1 s by default; kube's --etcd-readycheck-timeout is 2 s) */
export const DEFAULT_READY_TIMEOUT_MS = 800;
/** a probe's answer is reused this long */
const REUSE_MS = 250;

export interface LeaderOnlyController {
  name: string;
  /** whether the gate runs the controller now (src/controllers/leader-gate.ts) */
  readonly running: boolean;
  /** whether its informers (the start-up scan) are done; absent = done once running */
  synced?(): boolean;
}

export interface ReadinessSources {
  store: Pick<RevisionedStore, 'readIndex' | 'isLeader'>;
  watch: { waitForRevision(revision: number, timeoutMs: number): Promise<boolean> };
  /** TLS worker processes, when the front runs in workers */
  tlsWorkers?: { readonly configured: number; readyWorkers(): number };
  controllers: () => LeaderOnlyController[];
  clock: Clock;
  timeoutMs?: number;
}

type Probe = { ok: true; revision: number; at: number } | { ok: false; reason: string; at: number };

/** A single-flight, briefly reused ReadIndex through the store, bounded by a timeout. */
export class StoreReadiness {
  private last: Probe | undefined;
  private running: Promise<Probe> | undefined;

  constructor(
    private readonly store: Pick<RevisionedStore, 'readIndex'>,
    private readonly clock: Clock,
    private readonly timeoutMs = DEFAULT_READY_TIMEOUT_MS,
  ) {}

  probe(): Promise<Probe> {
    const last = this.last;
    // a failed probe is reused too: the next check of the same /readyz must not wait again
    if (last && this.clock.now() - last.at < REUSE_MS) return Promise.resolve(last);
    this.running ??= this.run().then((p) => {
      this.last = p;
      this.running = undefined;
      return p;
    });
    return this.running;
  }

  private async run(): Promise<Probe> {
    let timer: { cancel(): void } | undefined;
    const timeout = new Promise<Probe>((resolve) => {
      timer = this.clock.setTimeout(() => resolve({ ok: false, reason: `no ReadIndex within ${this.timeoutMs} ms (no leader or no quorum)`, at: this.clock.now() }), this.timeoutMs);
    });
    const read = this.store.readIndex().then(
      (revision): Probe => ({ ok: true, revision, at: this.clock.now() }),
      (e: unknown): Probe => ({ ok: false, reason: (e as Error)?.message ?? String(e), at: this.clock.now() }),
    );
    try {
      return await Promise.race([read, timeout]);
    } finally {
      timer?.cancel();
    }
  }
}

/** adds the readiness-only checks described above to `health` */
export function addReadinessChecks(health: HealthChecks, s: ReadinessSources): StoreReadiness {
  const timeoutMs = s.timeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
  const readiness = new StoreReadiness(s.store, s.clock, timeoutMs);
  health.add(
    {
      name: 'etcd-readiness',
      check: async () => {
        const p = await readiness.probe();
        return p.ok ? undefined : p.reason;
      },
    },
    'ready',
  );
  health.add(
    {
      name: 'watch-cache',
      check: async () => {
        const p = await readiness.probe();
        if (!p.ok) return 'the store is not ready';
        // the fan-out is fed synchronously by the store: anything but a short wait means it is stuck
        return (await s.watch.waitForRevision(p.revision, timeoutMs)) ? undefined : `the watch cache has not reached revision ${p.revision}`;
      },
    },
    'ready',
  );
  const workers = s.tlsWorkers;
  if (workers) {
    health.add(
      {
        name: 'tls-workers',
        check: () => (workers.readyWorkers() > 0 ? undefined : `none of ${workers.configured} TLS worker processes is serving`),
      },
      'ready',
    );
  }
  health.add(
    {
      name: 'informer-sync',
      check: () => {
        // a member that does not lead runs no leader-only controller
        if (!(s.store.isLeader?.() ?? true)) return undefined;
        const behind = s.controllers().filter((c) => !c.running || c.synced?.() === false).map((c) => c.name);
        return behind.length === 0 ? undefined : `not synced: ${behind.join(', ')}`;
      },
    },
    'ready',
  );
  return readiness;
}
