// The scraper of the resource metrics pipeline (docs/metrics.md), as
// metrics-server's: every `--metric-resolution` (default 15 s) each node's
// agent is asked for `/metrics/resource` (all at once, each within 90 % of the
// resolution), the answers decoded (decode.ts) and stored as one batch
// (storage.ts). How a node is reached is the composition root's (the API
// server's kubelet client, src/server/metrics-setup.ts). Every member of a
// cluster scrapes for itself: the points are not replicated, and a member
// answers metrics.k8s.io from what it scraped (no leader needed).

import { type Clock, type TimerHandle } from '../../core/clock.js';
import type { ApiObject } from '../../core/object.js';
import { type MetricsPoint, decodeResourceMetrics } from './decode.js';
import type { MetricsBatch, MetricsStorage } from './storage.js';

export const DEFAULT_METRIC_RESOLUTION_MS = 15_000;

export interface MetricsScraperOptions {
  /** the Nodes to scrape */
  listNodes(): Promise<ApiObject[]>;
  /** the node agent's `/metrics/resource`; rejects when it cannot be had */
  scrapeNode(node: ApiObject, signal: AbortSignal): Promise<string>;
  storage: MetricsStorage;
  resolutionMs: number;
  clock: Clock;
  log: (msg: string) => void;
}

export class MetricsScraper {
  private timer: TimerHandle | undefined;
  private running = false;
  private cycle: Promise<void> | undefined;
  /** the last failure logged per node, so a node that stays down is not logged every cycle */
  private failing = new Map<string, string>();

  constructor(private readonly o: MetricsScraperOptions) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.tick();
  }

  stop(): void {
    this.running = false;
    this.timer?.cancel();
    this.timer = undefined;
  }

  private tick(): void {
    if (!this.running) return;
    const started = this.o.clock.now();
    this.cycle = this.scrapeOnce()
      .catch((e: unknown) => this.o.log(`metrics scraper: ${(e as Error).message}`))
      .finally(() => {
        if (!this.running) return;
        // the next cycle a resolution after this one started (metrics-server's ticker)
        const wait = Math.max(0, this.o.resolutionMs - (this.o.clock.now() - started));
        this.timer = this.o.clock.setTimeout(() => this.tick(), wait);
      });
  }

  /** one scrape of every node, stored as one batch */
  async scrapeOnce(): Promise<void> {
    const nodes = await this.o.listNodes();
    const batch: MetricsBatch = { nodes: new Map<string, MetricsPoint>(), pods: new Map() };
    const timeoutMs = Math.max(1000, Math.floor(this.o.resolutionMs * 0.9));
    await Promise.all(
      nodes.map(async (node) => {
        const name = node.metadata?.name ?? '';
        const ac = new AbortController();
        const timer = this.o.clock.setTimeout(() => ac.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        try {
          const b = decodeResourceMetrics(await this.o.scrapeNode(node, ac.signal));
          if (b.node) batch.nodes.set(name, b.node);
          for (const [pod, containers] of b.pods) batch.pods.set(pod, containers);
          if (this.failing.delete(name)) this.o.log(`metrics scraper: node ${name} answers again`);
        } catch (e) {
          const msg = (e as Error).message;
          if (this.failing.get(name) !== msg) this.o.log(`metrics scraper: failed to scrape node ${name}: ${msg}`);
          this.failing.set(name, msg);
        } finally {
          timer.cancel();
        }
      }),
    );
    this.o.storage.store(batch);
  }

  /** the cycle in progress (tests, shutdown) */
  settled(): Promise<void> {
    return this.cycle ?? Promise.resolve();
  }
}
