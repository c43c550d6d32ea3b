// `--rotate-certificates` (kubelet's client certificate manager): at a
// jittered 70–90 % of the client certificate's lifetime the agent makes a new
// key, asks for a certificate as itself (the approver's `selfnodeclient`
// rule), stores the pair beside the old one, moves
// `nodeagent-client-current.pem` to it and switches its API client over.
// A failed attempt is retried after a back-off, until the certificate expires.

import { X509Certificate } from 'node:crypto';
import type { ApiClient } from './api-client.js';
import { type Clock, systemRandom } from './clock.js';
import { newKey, requestClientCertificate, storeClientPair } from './tls-bootstrap.js';

export interface RotationOptions {
  api: ApiClient;
  certDir: string;
  nodeName: string;
  domain: string;
  clock: Clock;
  log: (m: string) => void;
  /** [0, 1), for the jitter (default: the agent's randomness port) */
  random?: () => number;
  /** how long one request waits for its certificate */
  timeoutMs?: number;
  pollMs?: number;
  /** told after each rotation (tests) */
  onRotated?: (certPem: string) => void;
}

/** kubelet's nextRotationDeadline: notBefore + (0.7 + 0.2·jitter) × lifetime */
export function rotationDeadline(certPem: string, jitter: number): number {
  const c = new X509Certificate(certPem);
  const from = Date.parse(c.validFrom);
  const total = Date.parse(c.validTo) - from;
  return from + total * (0.7 + 0.2 * jitter);
}

const RETRY_MS = [1_000, 4_000, 16_000, 60_000, 300_000];
/** the longest delay a Node timer takes */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class ClientCertificateRotation {
  private timer: unknown;
  private stopped = false;
  private failures = 0;

  constructor(private readonly o: RotationOptions) {}

  /** schedules the first rotation of the certificate in use */
  start(certPem: string): void {
    this.schedule(rotationDeadline(certPem, (this.o.random ?? systemRandom)()));
  }

  stop(): void {
    this.stopped = true;
    this.o.clock.clearTimeout(this.timer);
  }

  private schedule(at: number): void {
    if (this.stopped) return;
    const wait = Math.max(0, at - this.o.clock.now());
    this.o.log(`certificate rotation: next in ${Math.round(wait / 1000)}s`);
    // a far deadline is reached in steps (timers hold at most ~24.8 days)
    this.timer = this.o.clock.setTimeout(() => (wait > MAX_TIMER_MS ? this.schedule(at) : void this.rotate()), Math.min(wait, MAX_TIMER_MS));
  }

  private async rotate(): Promise<void> {
    if (this.stopped) return;
    try {
      const keyPem = await newKey();
      const certPem = await requestClientCertificate({ api: this.o.api, nodeName: this.o.nodeName, domain: this.o.domain, keyPem, clock: this.o.clock, log: this.o.log, timeoutMs: this.o.timeoutMs, pollMs: this.o.pollMs });
      if (this.stopped) return;
      const current = await storeClientPair(this.o.certDir, certPem, keyPem, this.o.clock.now());
      this.o.api.setClientCertificate(certPem, keyPem);
      this.failures = 0;
      this.o.log(`certificate rotation: rotated the client certificate (${current}), valid until ${new X509Certificate(certPem).validTo}`);
      this.o.onRotated?.(certPem);
      this.start(certPem);
    } catch (e) {
      const delay = RETRY_MS[Math.min(this.failures, RETRY_MS.length - 1)]!;
      this.failures += 1;
      this.o.log(`certificate rotation: ${(e as Error).message}; retrying in ${delay / 1000}s`);
      this.schedule(this.o.clock.now() + delay);
    }
  }
}
