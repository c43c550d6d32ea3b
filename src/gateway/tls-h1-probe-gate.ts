// Health probes answered by a TLS worker (issue #15) on one HTTP/1.1 client
// connection (src/gateway/tls-h1-connection.ts): while the connection's
// current backend connection has been sent nothing, every earlier request
// has been answered, so the next complete request head may be answered here
// from the main process's health snapshot (src/gateway/health-probe.ts).
// The first request that is not such a probe, and everything after it, goes
// to the backend until that backend connection is retired idle (reset()).
// So a probe pipelined behind a forwarded request goes to uWS behind it, and
// its answer keeps the order of the requests.
import type { Clock, TimerHandle } from '../core/clock.js';
import { MAX_PROBE_HEAD_BYTES, type ProbeAnswerer, type ProbeReply } from './health-probe.js';

const HEAD_END = Buffer.from('\r\n\r\n');
const GET_ = Buffer.from('GET ');
/** an incomplete head that may be a probe's is held this long, then forwarded (as the head coalescer does) */
const PROBE_HOLD_MS = 50;

/** what the gate needs of its connection */
export interface ProbeGateHost {
  clock: Clock;
  answer: ProbeAnswerer;
  /** the answerer's view of the client (its verified certificate, if any) */
  peer: () => Parameters<ProbeAnswerer>[1];
  /** the connection still reads and answers (not failed, lingering or destroyed) */
  open: () => boolean;
  /** bytes that are not a probe's: to the backend, in order */
  forward: (bytes: Buffer) => void;
  /** a probe's answer, to be written to the client (which may close the connection) */
  answered: (reply: ProbeReply) => void;
}

export class ProbeGate {
  /** complete probe heads at the start of `held` are answered here (see the header) */
  private probing = true;
  /** client bytes read while probing, not yet answered or forwarded */
  private held: Buffer = Buffer.alloc(0);
  private answering = false;
  private holdTimer: TimerHandle | undefined;

  constructor(private readonly host: ProbeGateHost) {}

  /** whether the client's bytes are taken here (take()) rather than sent to the backend */
  get active(): boolean {
    return this.probing;
  }

  /** bytes are held, read while probing and neither answered nor forwarded yet */
  get holding(): boolean {
    return this.held.length > 0;
  }

  take(chunk: Buffer): void {
    this.held = this.held.length === 0 ? chunk : Buffer.concat([this.held, chunk]);
    void this.examine();
  }

  /** from here on (until reset()) the client's bytes go to the backend; what is held goes first */
  stop(): void {
    this.probing = false;
    this.cancel();
    const rest = this.held;
    this.held = Buffer.alloc(0);
    if (rest.length > 0) this.host.forward(rest);
  }

  /** the backend connection was retired: nothing is outstanding, probes may be answered again */
  reset(): void {
    this.probing = true;
  }

  cancel(): void {
    this.holdTimer?.cancel();
    this.holdTimer = undefined;
  }

  /** answers the complete probe heads at the start of `held`; forwards from the first request that is not one */
  private async examine(): Promise<void> {
    if (this.answering) return;
    const { host } = this;
    while (this.probing && this.held.length > 0 && host.open()) {
      const end = this.held.indexOf(HEAD_END);
      if (end < 0) {
        const n = Math.min(this.held.length, GET_.length);
        if (this.held.length > MAX_PROBE_HEAD_BYTES || !this.held.subarray(0, n).equals(GET_.subarray(0, n))) this.stop();
        else this.holdTimer ??= host.clock.setTimeout(() => {
          this.holdTimer = undefined;
          if (this.probing && this.held.length > 0) this.stop();
        }, PROBE_HOLD_MS);
        return;
      }
      this.cancel();
      this.answering = true;
      let reply;
      try {
        reply = await host.answer(this.held.subarray(0, end).toString('latin1'), host.peer());
      } finally {
        this.answering = false;
      }
      if (!this.probing || !host.open()) return;
      if (!reply) {
        this.stop();
        return;
      }
      this.held = this.held.subarray(end + HEAD_END.length);
      host.answered(reply);
    }
  }
}
