// The resource metrics pipeline (docs/metrics.md): metrics.<domain>/v1beta1
// served from the scraper's storage, and the scraper, which reaches each
// node agent's `/metrics/resource` with the API server's kubelet client
// (node-transport.ts: the apiserver-kubelet-client certificate, system:masters,
// as pods/log and nodes/proxy do). Every member scrapes and answers for itself.

import type { Clock } from '../core/clock.js';
import { type MetricsScraper as Scraper, DEFAULT_METRIC_RESOLUTION_MS, MetricsScraper } from '../controllers/metrics/scraper.js';
import { MetricsStorage } from '../controllers/metrics/storage.js';
import { type ResourceMetricsClient, storageResourceMetrics } from '../controllers/metrics/resource-client.js';
import { nodeEndpoint } from '../endpoints/handlers/node-streams.js';
import type { NodeTransport } from '../endpoints/handlers/node-transport.js';
import { SchemaNames } from '../machinery/schema/naming.js';
import type { GenericStore } from '../registry/generic-store.js';
import { metricsDefinitions } from '../registry/kinds/metrics.js';
import type { Registry } from '../registry/registry.js';
import type { ResourceDefinition } from '../registry/types.js';

export interface ResourceMetricsDeps {
  registry: Registry;
  storeFor: (def: ResourceDefinition) => GenericStore;
  nodeTransport: NodeTransport;
  /** `--metric-resolution` (default 15 s) */
  resolutionMs: number | undefined;
  clock: Clock;
  log: (msg: string) => void;
}

export interface ResourceMetrics {
  storage: MetricsStorage;
  scraper: Scraper;
  /** the port a HorizontalPodAutoscaler controller reads pod metrics through (resource-client.ts) */
  client: ResourceMetricsClient;
  stop(): void;
}

/** an agent's whole answer as text; a refusal (401, 403, …) rejects with its status */
async function readAnswer(transport: NodeTransport, ep: ReturnType<typeof nodeEndpoint>, signal: AbortSignal): Promise<string> {
  const res = await transport.request(ep, 'GET', '/metrics/resource', { headers: { accept: 'text/plain' }, signal });
  const chunks: Buffer[] = [];
  for await (const c of res.body) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c as string));
  const text = Buffer.concat(chunks).toString('utf8');
  if (res.status !== 200) throw new Error(`the node agent answered ${res.status}: ${text.slice(0, 200)}`);
  return text;
}

export function startResourceMetrics(d: ResourceMetricsDeps): ResourceMetrics {
  const resolutionMs = d.resolutionMs ?? DEFAULT_METRIC_RESOLUTION_MS;
  const storage = new MetricsStorage(resolutionMs);
  for (const def of metricsDefinitions(new SchemaNames(d.registry.apiDomain), storage)) d.registry.add(def);
  const scraper = new MetricsScraper({
    listNodes: async () => {
      const def = d.registry.lookup('', 'v1', 'nodes');
      return def ? d.storeFor(def).list('') : [];
    },
    scrapeNode: (node, signal) => readAnswer(d.nodeTransport, nodeEndpoint(node), signal),
    storage,
    resolutionMs,
    clock: d.clock,
    log: d.log,
  });
  scraper.start();
  const client = storageResourceMetrics(storage, async (namespace) => {
    const def = d.registry.lookup('', 'v1', 'pods');
    return def ? d.storeFor(def).list(namespace) : [];
  });
  return { storage, scraper, client, stop: () => scraper.stop() };
}
