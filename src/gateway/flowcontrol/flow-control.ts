// Overload protection (issue #15, in the spirit of kube-apiserver's
// --max-requests-inflight / --max-mutating-requests-inflight and API Priority
// and Fairness): bounded concurrency per priority level, fair queuing across
// users within a level, and a 429 with Retry-After before any work is done on
// what does not fit. Long-running requests (watches) are not admitted here.
// Decisions and defaults: docs/reliability.md.

import { StatusError } from '../../core/errors.js';
import type { Clock } from '../../core/clock.js';
import { type Classification, type FlowRequest, type PriorityLevelName, classifier } from './classify.js';
import { PriorityLevel, type PriorityLevelConfig, type Refusal } from './priority-level.js';

export interface FlowControlOptions {
  /** `--max-requests-inflight` (default 400): with APF, added to the mutating limit as the server's concurrency */
  maxRequestsInflight: number;
  /** `--max-mutating-requests-inflight` (default 200) */
  maxMutatingRequestsInflight: number;
  /** `--enable-priority-and-fairness` (default true); false: the two plain in-flight limits, no queues */
  enablePriorityAndFairness: boolean;
  /** `--request-timeout`: a request waits in a queue at most a quarter of it (as kube) */
  requestTimeoutMs: number;
  systemNamespace: string;
  nodeLeaseNamespace: string;
  clock: Clock;
}

/** Nominal concurrency shares and queues of Kubernetes' default priority levels. */
const LEVELS: Record<Exclude<PriorityLevelName, 'exempt'>, { shares: number; queues: number; handSize: number; queueLength: number }> = {
  system: { shares: 30, queues: 64, handSize: 6, queueLength: 50 },
  'leader-election': { shares: 10, queues: 16, handSize: 4, queueLength: 50 },
  'node-high': { shares: 40, queues: 64, handSize: 6, queueLength: 50 },
  'workload-high': { shares: 40, queues: 128, handSize: 6, queueLength: 50 },
  'workload-low': { shares: 100, queues: 128, handSize: 6, queueLength: 50 },
  'global-default': { shares: 20, queues: 128, handSize: 6, queueLength: 50 },
  // kube's catch-all refuses rather than queues
  'catch-all': { shares: 5, queues: 0, handSize: 1, queueLength: 0 },
};

const MUTATING = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

export interface Admitted {
  classification: Classification;
  /** call exactly once when the request is done */
  release(): void;
}

export interface LevelStats {
  name: string;
  limit: number;
  inFlight: number;
  waiting: number;
  rejected: Record<Refusal, number>;
}

export class FlowControl {
  private readonly levels = new Map<string, PriorityLevel>();
  private readonly classify: (r: FlowRequest) => Classification;
  private exemptInFlight = 0;

  constructor(private readonly opts: FlowControlOptions) {
    this.classify = classifier(opts);
    const maxWaitMs = Math.max(1, opts.requestTimeoutMs / 4);
    if (opts.enablePriorityAndFairness) {
      const total = opts.maxRequestsInflight + opts.maxMutatingRequestsInflight;
      const shares = Object.values(LEVELS).reduce((s, l) => s + l.shares, 0);
      for (const [name, l] of Object.entries(LEVELS)) {
        const config: PriorityLevelConfig = { limit: Math.max(1, Math.ceil((total * l.shares) / shares)), queues: l.queues, handSize: l.handSize, queueLength: l.queueLength, maxWaitMs };
        this.levels.set(name, new PriorityLevel(name, config, opts.clock));
      }
    } else {
      const plain = (limit: number): PriorityLevelConfig => ({ limit: Math.max(1, limit), queues: 0, handSize: 1, queueLength: 0, maxWaitMs });
      this.levels.set('readOnly', new PriorityLevel('readOnly', plain(opts.maxRequestsInflight), opts.clock));
      this.levels.set('mutating', new PriorityLevel('mutating', plain(opts.maxMutatingRequestsInflight), opts.clock));
    }
  }

  /**
   * Admit a request, or throw a 429 StatusError (TooManyRequests with
   * Retry-After) when it does not fit. Synchronous when it runs at once.
   */
  admit(r: FlowRequest): Admitted | Promise<Admitted> {
    const classification = this.classify(r);
    if (classification.level === 'exempt') {
      this.exemptInFlight++;
      return { classification, release: once(() => this.exemptInFlight--) };
    }
    const level = this.levelFor(classification, r);
    const got = level.admit(classification.flow);
    const admitted = (v: true | Refusal): Admitted => {
      if (v !== true) throw tooManyRequests(level.name, v);
      return { classification, release: once(() => level.release()) };
    };
    return typeof got === 'object' ? got.then(admitted) : admitted(got);
  }

  /**
   * The refusal a request would get from `admit` right now, without admitting
   * it: for shedding before the request is read and authenticated
   * (src/gateway/flowcontrol/early-shed.ts). The refusal is counted.
   * Undefined: it would run or queue (and `admit` decides then).
   */
  refusalNow(r: FlowRequest): { level: string; why: Refusal } | undefined {
    const classification = this.classify(r);
    if (classification.level === 'exempt') return undefined;
    const level = this.levelFor(classification, r);
    const why = level.wouldRefuse(classification.flow, true);
    return why ? { level: level.name, why } : undefined;
  }

  stats(): LevelStats[] {
    const out: LevelStats[] = [{ name: 'exempt', limit: Infinity, inFlight: this.exemptInFlight, waiting: 0, rejected: { 'queue-full': 0, 'time-out': 0, 'concurrency-limit': 0 } }];
    for (const l of this.levels.values()) out.push({ name: l.name, limit: l.config.limit, inFlight: l.inFlight, waiting: l.waiting, rejected: { ...l.rejected } });
    return out;
  }

  private levelFor(c: Classification, r: FlowRequest): PriorityLevel {
    if (this.opts.enablePriorityAndFairness) return this.levels.get(c.level)!;
    return this.levels.get(MUTATING.has(r.verb) ? 'mutating' : 'readOnly')!;
  }
}

function once(f: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    f();
  };
}

/** kube's 429: reason TooManyRequests, retry after 1 s */
export function tooManyRequests(level: string, why: Refusal): StatusError {
  const e = new StatusError(429, 'TooManyRequests', 'Too many requests, please try again later.', { retryAfterSeconds: 1 });
  e.headers['Retry-After'] = '1';
  e.headers['X-Orch-Pf-Priority-Level'] = level;
  e.headers['X-Orch-Pf-Rejection'] = why;
  return e;
}
