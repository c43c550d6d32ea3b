// Overload-protection and timeout flags of `orch server` (issue #15), named
// and defaulted as kube-apiserver's.

import { type Command, InvalidArgumentError, Option } from 'commander';
import { parseGoDuration } from '../core/duration.js';
import type { RequestLimitOptions } from '../server/request-limits.js';

function nonNegative(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('must be a whole number, 0 or more');
  return n;
}

function goDuration(v: string): number {
  const ms = /^\d+$/.test(v) ? Number(v) * 1000 : parseGoDuration(v);
  if (ms === undefined) throw new InvalidArgumentError('must be a duration such as 60s, 1m0s or 1h30m');
  return ms;
}

/** bytes: a whole number, optionally with a binary suffix (Ki, Mi, Gi) as in Kubernetes quantities */
function bytes(v: string): number {
  const m = /^(\d+)(Ki|Mi|Gi)?$/.exec(v);
  if (!m) throw new InvalidArgumentError('must be a byte count such as 268435456, 256Mi or 1Gi');
  return Number(m[1]) * ({ Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 }[m[2] as 'Ki' | 'Mi' | 'Gi'] ?? 1);
}

function bool(v: string): boolean {
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw new InvalidArgumentError('must be true or false');
}

export function addLimitFlags(cmd: Command): Command {
  return cmd
    .option('--max-requests-inflight <n>', 'with priority and fairness: added to the mutating limit as the server\'s concurrency; without: the read-only limit (0: none)', nonNegative, 400)
    .option('--max-mutating-requests-inflight <n>', 'mutating requests executing at once (0: none)', nonNegative, 200)
    .option('--enable-priority-and-fairness <bool>', 'per-priority-level concurrency with fair queuing across users (false: the two plain in-flight limits)', bool, true)
    .addOption(new Option('--request-timeout <duration>', 'deadline of requests that are not long-running (e.g. 60s, 1m0s); 0: none').argParser(goDuration).default(60_000, '60s'))
    .option('--disable-http2-serving', 'offer only HTTP/1.1 on the secure port (no ALPN h2)', false)
    .option('--http1-over-mux <bool>', 'carry plain HTTP/1.1 requests from the TLS front to the main process over the multiplexed channel (false: one uWS connection per client connection)', bool, true)
    .option('--max-connections-per-tls-worker <n>', 'client connections one TLS worker process holds at once; more are closed at accept, before the handshake (0: what the open-files limit allows)', nonNegative, 0)
    .option('--http2-max-streams-per-connection <n>', 'concurrent HTTP/2 streams a client may open on one connection (0: the default, 1000)', nonNegative, 1000)
    .addOption(new Option('--tls-handshake-timeout <duration>', 'a client that has not finished its TLS handshake by then is disconnected (e.g. 32s)').argParser(goDuration).default(32_000, '32s'))
    .addOption(
      new Option('--watch-backlog-budget <bytes>', 'the most bytes queued for all watch streams together; beyond it the watchers furthest behind are ended with 410 Expired (e.g. 256Mi; 0: none)').argParser(bytes).default(256 * 1024 * 1024, '256Mi'),
    )
    .addOption(
      new Option('--min-request-timeout <duration>', 'a watch without timeoutSeconds ends after a random time between 1 and 2 times this (e.g. 1800s, 30m)').argParser(goDuration).default(1_800_000, '1800s'),
    );
}

export function limitOptionsFrom(o: Record<string, unknown>): RequestLimitOptions {
  return {
    maxRequestsInflight: o['maxRequestsInflight'] as number,
    maxMutatingRequestsInflight: o['maxMutatingRequestsInflight'] as number,
    enablePriorityAndFairness: o['enablePriorityAndFairness'] as boolean,
    requestTimeoutMs: o['requestTimeout'] as number,
    minRequestTimeoutMs: o['minRequestTimeout'] as number,
    tlsHandshakeTimeoutMs: o['tlsHandshakeTimeout'] as number,
    disableHttp2: o['disableHttp2Serving'] as boolean,
    http1OverMux: o['http1OverMux'] as boolean,
    http2MaxStreamsPerConnection: o['http2MaxStreamsPerConnection'] as number,
    watchBacklogBudgetBytes: o['watchBacklogBudget'] as number,
    maxConnectionsPerTlsWorker: o['maxConnectionsPerTlsWorker'] as number,
  };
}
