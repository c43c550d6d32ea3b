// `GET /containerLogs/{namespace}/{pod}/{container}` of the agent (the
// kubelet's path, which the API server's `pods/log` proxies to): the
// container's log from the runtime's ContainerLog stream, as plain text.
// Query (kube's PodLogOptions): follow, previous, sinceSeconds, sinceTime
// (RFC 3339), timestamps, tailLines, limitBytes.

import type { ServerResponse } from 'node:http';
import type { RuntimeClient } from '../runtime/client.js';
import type { ContainerLogChunk } from '../runtime/types.js';
import { HttpError } from './target.js';

export interface LogOptions {
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  /** negative = all */
  tailLines: number;
  /** ns since the epoch; 0 = all */
  sinceNs: number;
  /** 0 = no limit */
  limitBytes: number;
}

const bool = (q: URLSearchParams, k: string) => {
  const v = q.get(k);
  if (v === null || v === '' || v === 'false' || v === '0') return false;
  if (v === 'true' || v === '1') return true;
  throw new HttpError(400, `${k} must be true or false, got "${v}"`);
};
const int = (q: URLSearchParams, k: string, min: number): number | undefined => {
  const v = q.get(k);
  if (v === null || v === '') return undefined;
  if (!/^-?\d+$/.test(v) || Number(v) < min) throw new HttpError(400, `${k} must be an integer of at least ${min}, got "${v}"`);
  return Number(v);
};

/** parses and checks the log options (kube's validation: sinceSeconds ≥ 1, tailLines ≥ 0, limitBytes ≥ 1, not both since forms) */
export function parseLogOptions(q: URLSearchParams, now: number): LogOptions {
  const sinceSeconds = int(q, 'sinceSeconds', 1);
  const sinceTime = q.get('sinceTime');
  if (sinceSeconds !== undefined && sinceTime) throw new HttpError(400, 'at most one of sinceTime or sinceSeconds may be specified');
  let sinceNs = 0;
  if (sinceSeconds !== undefined) sinceNs = (now - sinceSeconds * 1000) * 1_000_000;
  else if (sinceTime) {
    const t = Date.parse(sinceTime);
    if (Number.isNaN(t)) throw new HttpError(400, `sinceTime must be an RFC 3339 time, got "${sinceTime}"`);
    sinceNs = t * 1_000_000;
  }
  return {
    follow: bool(q, 'follow'),
    previous: bool(q, 'previous'),
    timestamps: bool(q, 'timestamps'),
    tailLines: int(q, 'tailLines', 0) ?? -1,
    sinceNs,
    limitBytes: int(q, 'limitBytes', 1) ?? 0,
  };
}

/**
 * RFC 3339 with nine fraction digits, as the kubelet prints log timestamps (RFC3339NanoFixed). A
 * Number of nanoseconds since 1970 is only good to 256 ns (2^53 < 1.8e18), so `ns % 1e9` printed
 * noise (`.655000064`): the fraction is kept to the microsecond, which the Number does hold.
 */
export function rfc3339Nano(ns: number): string {
  const us = Math.round(ns / 1000);
  const frac = `${String(us % 1_000_000).padStart(6, '0')}000`;
  return new Date(Math.floor(us / 1000)).toISOString().replace(/\.\d{3}Z$/, `.${frac}Z`);
}

/** streams the log of `containerId` to `res` */
export async function serveLogs(runtime: RuntimeClient, containerId: string, opts: LogOptions, res: ServerResponse): Promise<void> {
  const call = runtime.containerLog({ containerId, follow: opts.follow, tailLines: opts.tailLines, sinceTime: opts.sinceNs });
  let sent = 0;
  let started = false;
  const start = () => {
    if (started) return;
    started = true;
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' });
    // the head goes out now, so a follower sees the stream open before the first line
    res.flushHeaders();
  };
  // the client left: stop reading the runtime
  const onClose = () => call.cancel();
  res.on('close', onClose);
  await new Promise<void>((resolve, reject) => {
    call.on('metadata', start);
    call.on('data', (c: ContainerLogChunk) => {
      start();
      let data = opts.timestamps ? Buffer.concat([Buffer.from(`${rfc3339Nano(c.timestamp)} `), c.data]) : c.data;
      if (opts.limitBytes > 0) {
        data = data.subarray(0, opts.limitBytes - sent);
        sent += data.length;
      }
      if (data.length > 0 && !res.write(data)) {
        call.pause();
        res.once('drain', () => call.resume());
      }
      if (opts.limitBytes > 0 && sent >= opts.limitBytes) {
        call.cancel();
        resolve();
      }
    });
    call.on('end', resolve);
    call.on('error', (e: Error & { code?: number; details?: string }) => {
      // CANCELLED is ours (client gone or limit reached)
      if (e.code === 1) resolve();
      else if (!started) reject(new HttpError(e.code === 5 ? 404 : 500, `reading the log of container ${containerId}: ${e.details ?? e.message}`));
      else resolve();
    });
  });
  res.off('close', onClose);
  start();
  res.end();
}
