// The audit webhook backend (`--audit-webhook-config-file`, a kubeconfig-format
// file naming the receiver): batches POSTed as an `EventList` of
// `audit.<domain>/v1`. As in kube, a failed POST is retried with exponential
// backoff (initial `--audit-webhook-initial-backoff`, ×1.5, 5 attempts in all)
// whatever the error; then the batch is dropped and counted. One batch is in
// flight at a time, so a slow receiver makes the buffer fill and drop rather
// than the server queue requests (docs/audit.md).

import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { WebhookTarget } from '../auth/authn/webhook.js';
import type { Clock } from '../core/clock.js';
import type { BatchWriter } from './buffer.js';
import type { AuditEvent } from './types.js';

export interface AuditWebhookOptions {
  target: WebhookTarget;
  /** `audit.<domain>/v1` */
  apiVersion: string;
  initialBackoffMs: number;
  /** attempts in all (kube: 5) */
  attempts?: number;
  timeoutMs?: number;
  clock: Clock;
}

export class WebhookWriter implements BatchWriter {
  /** batches delivered (tests, logs) */
  delivered = 0;
  private closed = false;
  private wake: (() => void) | undefined;

  constructor(private readonly o: AuditWebhookOptions) {}

  async write(_events: AuditEvent[], lines: string[]): Promise<void> {
    // the events are already JSON: splice them into the list rather than serialise twice
    const body = `{"kind":"EventList","apiVersion":${JSON.stringify(this.o.apiVersion)},"metadata":{},"items":[${lines.join(',')}]}`;
    const attempts = this.o.attempts ?? 5;
    let wait = this.o.initialBackoffMs;
    for (let i = 1; ; i++) {
      try {
        await this.post(body);
        this.delivered++;
        return;
      } catch (e) {
        if (i >= attempts || this.closed) throw e;
      }
      await new Promise<void>((resolve) => {
        const timer = this.o.clock.setTimeout(resolve, wait);
        this.wake = () => {
          timer.cancel();
          resolve();
        };
      });
      this.wake = undefined;
      wait *= 1.5;
    }
  }

  private post(body: string): Promise<void> {
    const { server, tls } = this.o.target;
    const timeoutMs = this.o.timeoutMs ?? 30_000;
    return new Promise((resolve, reject) => {
      const u = new URL(server);
      const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json', 'Content-Length': String(Buffer.byteLength(body)) };
      if (tls.token) headers.Authorization = `Bearer ${tls.token}`;
      const fn = u.protocol === 'http:' ? httpRequest : httpsRequest;
      const req = fn(u, { method: 'POST', headers, ca: tls.ca, cert: tls.cert, key: tls.key, agent: false }, (res) => {
        // the answer's body is not read for meaning, only drained
        res.resume();
        res.on('end', () => {
          const code = res.statusCode ?? 0;
          if (code >= 200 && code < 300) resolve();
          else reject(new Error(`audit webhook ${u.origin} answered ${code}`));
        });
        res.on('error', reject);
      });
      const deadline = this.o.clock.setTimeout(() => req.destroy(new Error(`audit webhook ${u.origin}: no answer within ${timeoutMs} ms`)), timeoutMs);
      req.on('close', () => deadline.cancel());
      req.on('error', reject);
      req.end(body);
    });
  }

  closing(): void {
    this.closed = true;
    this.wake?.();
  }

  async close(): Promise<void> {
    this.closing();
  }
}
