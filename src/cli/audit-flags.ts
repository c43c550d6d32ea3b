// Audit flags of `orch server` (issue 16 item 3, docs/audit.md), named and
// defaulted as kube-apiserver's.

import { type Command, InvalidArgumentError, Option } from 'commander';
import { parseGoDuration } from '../core/duration.js';
import type { AuditOptions } from '../server/audit-setup.js';

function nonNegative(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('must be a whole number, 0 or more');
  return n;
}

function positive(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number, 1 or more');
  return n;
}

function goDuration(v: string): number {
  const ms = parseGoDuration(v);
  if (ms === undefined) throw new InvalidArgumentError('must be a duration such as 10s or 1m30s');
  return ms;
}

function format(v: string): string {
  if (v !== 'json') throw new InvalidArgumentError('only json is supported');
  return v;
}

export function addAuditFlags(cmd: Command): Command {
  return cmd
    .option('--audit-policy-file <path>', 'the audit Policy (audit.<domain>/v1); without it nothing is audited')
    .option('--audit-log-path <path>', 'write audit events to this file as JSON lines; - means standard output')
    .option('--audit-log-maxage <days>', 'delete rotated audit logs older than this many days (0: no limit)', nonNegative, 0)
    .option('--audit-log-maxbackup <n>', 'rotated audit logs to keep (0: all)', nonNegative, 0)
    .option('--audit-log-maxsize <MiB>', 'rotate the audit log before it passes this size (0: 100 MiB)', nonNegative, 0)
    .option('--audit-log-format <format>', 'format of the audit log: json', format, 'json')
    .option('--audit-log-batch-buffer-size <n>', 'audit events buffered for the log before new ones are dropped (and counted)', positive, 10_000)
    .option('--audit-webhook-config-file <path>', 'kubeconfig-format file naming the webhook that receives EventList batches')
    .addOption(new Option('--audit-webhook-initial-backoff <duration>', 'wait before the first retry of a failed webhook batch').argParser(goDuration).default(10_000, '10s'))
    .option('--audit-webhook-batch-buffer-size <n>', 'audit events buffered for the webhook before new ones are dropped (and counted)', positive, 10_000)
    .option('--audit-webhook-batch-max-size <n>', 'the most events in one webhook batch', positive, 400)
    .addOption(new Option('--audit-webhook-batch-max-wait <duration>', 'send a batch smaller than the max after this long').argParser(goDuration).default(30_000, '30s'));
}

export function auditOptionsFrom(o: Record<string, unknown>): AuditOptions {
  return {
    policyFile: o['auditPolicyFile'] as string | undefined,
    logPath: o['auditLogPath'] as string | undefined,
    logMaxAge: o['auditLogMaxage'] as number,
    logMaxBackup: o['auditLogMaxbackup'] as number,
    logMaxSize: o['auditLogMaxsize'] as number,
    logFormat: o['auditLogFormat'] as string,
    logBufferSize: o['auditLogBatchBufferSize'] as number,
    webhookConfigFile: o['auditWebhookConfigFile'] as string | undefined,
    webhookInitialBackoffMs: o['auditWebhookInitialBackoff'] as number,
    webhookBufferSize: o['auditWebhookBatchBufferSize'] as number,
    webhookBatchMaxSize: o['auditWebhookBatchMaxSize'] as number,
    webhookBatchMaxWaitMs: o['auditWebhookBatchMaxWait'] as number,
  };
}
