// Wires the admission chain (src/registry/admission/chain.ts) into the server:
// built when the admissionregistration kinds are served (`--runtime-config`
// may turn them off, and then there is nothing to configure), started at
// once so the configuration in the store is in force before the first request.

import type { Clock } from '../core/clock.js';
import client from 'prom-client';
import { AdmissionChain } from '../registry/admission/chain.js';
import type { ServiceResolver } from '../registry/admission/webhook-client.js';
import type { Registry } from '../registry/registry.js';
import type { RevisionedStore } from '../store/types.js';

export function buildAdmissionChain(
  registry: Registry,
  store: RevisionedStore,
  apiDomain: string,
  log: (msg: string) => void,
  resolver?: ServiceResolver,
  clock?: Clock,
): AdmissionChain | undefined {
  const group = `admissionregistration.${apiDomain}`;
  const needed = ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations', 'validatingadmissionpolicies', 'validatingadmissionpolicybindings'];
  const missing = needed.filter((r) => !registry.lookup(group, 'v1', r));
  if (missing.length === needed.length) {
    log(`admission: ${group}/v1 is not served; webhooks and policies are off`);
    return undefined;
  }
  if (missing.length > 0) throw new Error(`--runtime-config: ${group}/v1 must be served whole for admission (missing: ${missing.join(', ')})`);
  const chain = new AdmissionChain({ apiDomain, store, registry, log, resolver, clock });
  chain.start();
  return chain;
}

/**
 * Webhook call metrics, named as kube-apiserver's: the call duration by
 * webhook, type and whether it refused, and refusals/failures by webhook.
 */
export function registerAdmissionMetrics(chain: AdmissionChain, registry: client.Registry): void {
  const duration = new client.Histogram({
    name: 'apiserver_admission_webhook_admission_duration_seconds',
    help: 'Admission webhook latency in seconds, by webhook name, type (admit or validating) and whether it rejected.',
    labelNames: ['name', 'type', 'rejected'],
    buckets: [0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 25],
    registers: [registry],
  });
  const rejections = new client.Counter({
    name: 'apiserver_admission_webhook_rejection_count',
    help: 'Admission webhook rejections, by webhook name, type and error type (no_error = the webhook refused; calling_webhook_error = the call failed and the failure policy refused).',
    labelNames: ['name', 'type', 'error_type'],
    registers: [registry],
  });
  const failOpen = new client.Counter({
    name: 'apiserver_admission_webhook_fail_open_count',
    help: 'Admission webhook calls that failed and were ignored (failurePolicy Ignore), by webhook name and type.',
    labelNames: ['name', 'type'],
    registers: [registry],
  });
  chain.observer = (w, outcome, seconds) => {
    const type = w.mutating ? 'admit' : 'validating';
    duration.observe({ name: w.name, type, rejected: String(outcome === 'denied' || outcome === 'error') }, seconds);
    if (outcome === 'denied') rejections.inc({ name: w.name, type, error_type: 'no_error' });
    if (outcome === 'error') rejections.inc({ name: w.name, type, error_type: 'calling_webhook_error' });
    if (outcome === 'skipped-error') failOpen.inc({ name: w.name, type });
  };
}
