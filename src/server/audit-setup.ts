// Builds audit logging from the `--audit-*` flags (issue 16 item 3,
// docs/audit.md): the policy, the log file and/or webhook backends, each
// behind its own bounded buffer, and their metrics. A bad policy file or
// webhook configuration stops the start with an error naming the file and
// field; a log path that cannot be opened does not (it is logged, retried on
// every batch, and the events dropped meanwhile are counted).

import type client from 'prom-client';
import { loadWebhookKubeconfig } from '../auth/authn/webhook.js';
import { Auditor } from '../audit/auditor.js';
import { BufferedSink } from '../audit/buffer.js';
import { LogFileWriter } from '../audit/log-file.js';
import { AuditMetrics } from '../audit/metrics.js';
import { loadPolicyFile } from '../audit/policy.js';
import type { AuditSink } from '../audit/types.js';
import { WebhookWriter } from '../audit/webhook.js';
import type { Clock, TimerHandle } from '../core/clock.js';

export interface AuditOptions {
  /** --audit-policy-file; without it nothing is audited (as kube) */
  policyFile?: string;
  /** --audit-log-path; `-` = standard output */
  logPath?: string;
  /** --audit-log-maxage (days, 0 = no limit) */
  logMaxAge?: number;
  /** --audit-log-maxbackup (0 = keep all) */
  logMaxBackup?: number;
  /** --audit-log-maxsize (MiB, 0 = 100) */
  logMaxSize?: number;
  /** --audit-log-format: json only */
  logFormat?: string;
  /** --audit-log-batch-buffer-size (default 10000) */
  logBufferSize?: number;
  /** --audit-webhook-config-file (kubeconfig format) */
  webhookConfigFile?: string;
  /** --audit-webhook-initial-backoff (default 10 s) */
  webhookInitialBackoffMs?: number;
  /** --audit-webhook-batch-buffer-size (default 10000) */
  webhookBufferSize?: number;
  /** --audit-webhook-batch-max-size (default 400) */
  webhookBatchMaxSize?: number;
  /** --audit-webhook-batch-max-wait (default 30 s) */
  webhookBatchMaxWaitMs?: number;
  /** tests: wall-clock microseconds */
  nowMicros?: () => number;
  /** tests: rotate at this many bytes instead of --audit-log-maxsize MiB */
  logMaxSizeBytes?: number;
}

export interface AuditDeps {
  apiDomain: string;
  registry: client.Registry;
  clock: Clock;
  log: (msg: string) => void;
}

export async function buildAudit(o: AuditOptions, d: AuditDeps): Promise<Auditor | undefined> {
  const backends = o.logPath || o.webhookConfigFile;
  if (!o.policyFile) {
    if (backends) d.log('audit: no --audit-policy-file given, so no audit events are recorded (as kube-apiserver)');
    return undefined;
  }
  const policy = loadPolicyFile(o.policyFile, d.apiDomain);
  if (o.logFormat !== undefined && o.logFormat !== 'json') {
    throw new Error(`--audit-log-format: "${o.logFormat}" is not supported: only json (the legacy one-line text format is not implemented)`);
  }
  const webhookTarget = o.webhookConfigFile ? loadWebhookKubeconfig(o.webhookConfigFile, '--audit-webhook-config-file') : undefined;
  if (!backends) {
    d.log('audit: a policy but neither --audit-log-path nor --audit-webhook-config-file, so no audit events are recorded');
    return undefined;
  }
  const metrics = new AuditMetrics(d.registry);
  const sinks: AuditSink[] = [];
  if (o.logPath) {
    const writer = new LogFileWriter(o.logPath, {
      maxSizeMiB: o.logMaxSize ?? 0,
      maxBackups: o.logMaxBackup ?? 0,
      maxAgeDays: o.logMaxAge ?? 0,
      maxSizeBytes: o.logMaxSizeBytes,
      now: () => d.clock.now(),
    });
    try {
      await writer.open();
    } catch (e) {
      d.log(`audit: cannot open --audit-log-path ${o.logPath}: ${(e as Error).message}; serving anyway, retrying on every batch, and counting the events lost in orch_audit_dropped_events_total`);
    }
    // the file takes whatever is waiting in one write (kube's log backend batches by 1 and blocks; this never blocks)
    sinks.push(new BufferedSink(writer, { name: 'log', plugin: 'log', failureReason: 'write_error', bufferSize: o.logBufferSize ?? 10_000, maxBatchSize: 1000, maxBatchWaitMs: 0, metrics, clock: d.clock, log: d.log }));
  }
  if (webhookTarget) {
    const writer = new WebhookWriter({ target: webhookTarget, apiVersion: `audit.${d.apiDomain}/v1`, initialBackoffMs: o.webhookInitialBackoffMs ?? 10_000, clock: d.clock });
    sinks.push(
      new BufferedSink(writer, {
        name: 'webhook',
        plugin: 'webhook',
        failureReason: 'webhook_error',
        bufferSize: o.webhookBufferSize ?? 10_000,
        maxBatchSize: o.webhookBatchMaxSize ?? 400,
        maxBatchWaitMs: o.webhookBatchMaxWaitMs ?? 30_000,
        metrics,
        clock: d.clock,
        log: d.log,
      }),
    );
  }
  d.log(`audit: ${policy.rules.length} policy rules from ${o.policyFile}; backends: ${sinks.map((s) => s.name).join(', ')}`);
  return new Auditor({ policy, sinks, apiDomain: d.apiDomain, metrics, nowMicros: o.nowMicros });
}

/** flushes what is buffered at shutdown, giving up after `timeoutMs` (a dead webhook must not hold the exit) */
export async function closeAudit(a: Auditor | undefined, timeoutMs: number, clock: Clock): Promise<void> {
  if (!a) return;
  let t: TimerHandle | undefined;
  await Promise.race([a.close().catch(() => {}), new Promise<void>((r) => (t = clock.setTimeout(r, timeoutMs)))]);
  t?.cancel();
}
