// Health answers that a saturated main event loop cannot delay (issue #15
// items 2 and 5, docs/reliability.md "Health under overload").
//
// Node has one event loop per process: a /livez queued behind a loop busy
// with thousands of writes waits for them, and a kubelet probe with a 1 s
// timeout then reports a live server dead. So the main process evaluates
// every check on its own loop every ~250 ms and sends the results (a
// snapshot) to the TLS worker processes, which answer /livez, /readyz and
// /healthz from the latest one themselves (src/gateway/health-probe.ts) with
// the same format (`formatHealth`). Only the main loop can say whether it is
// alive, and it does so by publishing: a snapshot older than `maxAgeMs` makes
// the `main-loop` check fail, so /livez turns 500 (`[-]main-loop failed`)
// exactly when the main loop has stopped turning — a truthful liveness signal.
//
// Authorization stays the main process's: health paths are authorized like
// every other path (kube's system:public-info-viewer role lets
// system:authenticated and system:unauthenticated GET /livez, /readyz,
// /healthz). The main process asks its own authorizer, with each snapshot,
// which health paths an anonymous request and which a request by any
// authenticated user may GET, and a worker answers only those; everything
// else (a credential it cannot judge, a path not known to be allowed, an
// authorizer that may deny one user what it allows another) goes to the
// main process as before.

import { type Clock, type TimerHandle } from '../core/clock.js';
import { type HealthAnswer, type HealthChecks, type HealthKind, formatHealth, parseHealthPath, runCheck } from './health.js';

/** the check that says whether the main event loop still publishes (always ok when it answers itself) */
export const MAIN_LOOP_CHECK = 'main-loop';
/** a snapshot older than this fails `main-loop` */
export const DEFAULT_MAX_SNAPSHOT_AGE_MS = 5_000;
const DEFAULT_INTERVAL_MS = 250;
/** a check that has not answered by then counts as failed in this snapshot */
const DEFAULT_CHECK_TIMEOUT_MS = 2_000;
/** authorization answers change only with RBAC objects: asked less often than the checks */
const DEFAULT_AUTHORIZE_EVERY_MS = 2_000;

/** who a worker can tell a health request is from without the main process */
export type ProbeIdentity = 'anonymous' | 'authenticated';

export interface HealthSnapshot {
  /** increases with every snapshot */
  seq: number;
  livez: string[];
  readyz: string[];
  /** failing checks and why; a check not named here is ok */
  failed: Record<string, string>;
  /** the exact paths each kind of requester may GET (asked of the main process's authorizer) */
  allowed: Record<ProbeIdentity, string[]>;
}

/** the health paths whose authorization a snapshot carries: each kind, and each single check */
export function healthPaths(livez: readonly string[], readyz: readonly string[]): string[] {
  const out = ['/livez', '/readyz', '/healthz'];
  for (const n of livez) out.push(`/livez/${n}`);
  for (const n of readyz) out.push(`/readyz/${n}`, `/healthz/${n}`);
  return out;
}

export interface HealthPublisherOptions {
  checks: HealthChecks;
  publish(s: HealthSnapshot): void;
  /**
   * May this kind of requester GET this path (its authentication and
   * authorization, as the main process would decide them)? Undefined: no
   * path is answered by a worker, only liveness data is published.
   */
  mayGet?(who: ProbeIdentity, path: string): Promise<boolean>;
  clock: Clock;
  intervalMs?: number;
  checkTimeoutMs?: number;
  authorizeEveryMs?: number;
  log?: (msg: string) => void;
}

export interface HealthPublisher {
  stop(): void;
  /** evaluate and publish now (tests; start-up) */
  publishNow(): Promise<void>;
}

/** Evaluate the checks on this (the main) event loop and publish them every `intervalMs`. */
export function startHealthPublisher(o: HealthPublisherOptions): HealthPublisher {
  const interval = o.intervalMs ?? DEFAULT_INTERVAL_MS;
  const checkTimeout = o.checkTimeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  const authorizeEvery = o.authorizeEveryMs ?? DEFAULT_AUTHORIZE_EVERY_MS;
  let seq = 0;
  let allowed: Record<ProbeIdentity, string[]> = { anonymous: [], authenticated: [] };
  let authorizedAt = -Infinity;
  let authorizing = false;
  let running: Promise<void> | undefined;
  let timer: TimerHandle | undefined;
  let stopped = false;

  const authorize = async (livez: string[], readyz: string[]): Promise<void> => {
    if (!o.mayGet || authorizing) return;
    authorizing = true;
    try {
      const paths = healthPaths(livez, readyz);
      const next: Record<ProbeIdentity, string[]> = { anonymous: [], authenticated: [] };
      for (const who of ['anonymous', 'authenticated'] as const) {
        const answers = await Promise.all(paths.map((p) => o.mayGet!(who, p).catch(() => false)));
        next[who] = paths.filter((_, i) => answers[i]);
      }
      allowed = next;
      authorizedAt = o.clock.now();
    } finally {
      authorizing = false;
    }
  };

  const withTimeout = (p: Promise<string | undefined>): Promise<string | undefined> =>
    new Promise((resolve) => {
      const t = o.clock.setTimeout(() => resolve(`did not answer within ${checkTimeout} ms`), checkTimeout);
      void p.then((v) => {
        t.cancel();
        resolve(v);
      });
    });

  const evaluate = async (): Promise<void> => {
    const livez = o.checks.names('livez');
    const readyz = o.checks.names('readyz');
    if (o.clock.now() - authorizedAt >= authorizeEvery) await authorize(livez, readyz);
    const all = o.checks.all();
    const results = await Promise.all(all.map((c) => withTimeout(runCheck(c))));
    const failed: Record<string, string> = {};
    all.forEach((c, i) => {
      const r = results[i];
      if (r !== undefined) failed[c.name] = r;
    });
    if (!stopped) o.publish({ seq: ++seq, livez, readyz, failed, allowed });
  };

  const runOnce = (): Promise<void> => {
    // a round still running (a slow check) is not started again; its own timeout bounds it
    running ??= evaluate()
      .catch((e: unknown) => o.log?.(`health snapshot: ${(e as Error).message}`))
      .finally(() => (running = undefined));
    return running;
  };
  const tick = (): void => {
    if (stopped) return;
    void runOnce();
    timer = o.clock.setTimeout(tick, interval);
  };
  tick();
  return {
    stop() {
      stopped = true;
      timer?.cancel();
    },
    publishNow: runOnce,
  };
}

/** the parts of a health request a worker looks at */
export interface ProbeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  who: ProbeIdentity;
}

/**
 * The answer to a health request from the latest snapshot, or undefined when
 * the main process must answer it (no snapshot yet, not a GET of a health
 * path, or a path this requester is not known to be allowed).
 */
export async function answerFromSnapshot(
  snapshot: HealthSnapshot | undefined,
  ageMs: number,
  req: ProbeRequest,
  maxAgeMs = DEFAULT_MAX_SNAPSHOT_AGE_MS,
): Promise<HealthAnswer | undefined> {
  if (!snapshot || req.method !== 'GET') return undefined;
  const p = parseHealthPath(req.path);
  if (!p || !snapshot.allowed[req.who].includes(req.path)) return undefined;
  const stale = ageMs > maxAgeMs ? `the main event loop has published no health for ${Math.round(ageMs)} ms` : undefined;
  const names = namesOf(snapshot, p.kind);
  return formatHealth(p.kind, p.single, names, req.query, (name) => (name === MAIN_LOOP_CHECK ? stale : snapshot.failed[name]));
}

function namesOf(s: HealthSnapshot, kind: HealthKind): string[] {
  return kind === 'livez' ? s.livez : s.readyz;
}

/** The latest snapshot a worker received, and when (its own clock). */
export class SnapshotHolder {
  private latest: HealthSnapshot | undefined;
  private receivedAt = 0;

  constructor(private readonly clock: Clock) {}

  update(s: HealthSnapshot): void {
    if (this.latest && s.seq <= this.latest.seq) return;
    this.latest = s;
    this.receivedAt = this.clock.now();
  }

  current(): { snapshot: HealthSnapshot | undefined; ageMs: number } {
    return { snapshot: this.latest, ageMs: this.latest ? this.clock.now() - this.receivedAt : Infinity };
  }
}
