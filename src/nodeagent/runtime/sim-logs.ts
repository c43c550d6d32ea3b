// A simulated container's log (`orch runtime-sim`): the lines its process
// wrote to stdout and stderr, each with the time it was written, as a CRI
// runtime keeps them in the container's log file (timestamp, stream, line).
// Kept in memory up to a byte cap (the oldest lines go first, like the
// kubelet's log rotation at containerLogMaxSize, default 10 MiB). Readers take
// a snapshot (tail / since) and may follow new lines until the log closes,
// which happens when the container's process ends.

export type LogStream = 'stdout' | 'stderr';

export interface LogLine {
  /** nanoseconds since the epoch */
  ts: number;
  stream: LogStream;
  /** the line with its newline (the last, unfinished line of a process has none) */
  data: Buffer;
}

export const DEFAULT_LOG_CAP_BYTES = 10 * 1024 * 1024;

export class ContainerLog {
  private readonly lines: LogLine[] = [];
  private bytes = 0;
  private readonly partial: Record<LogStream, Buffer | undefined> = { stdout: undefined, stderr: undefined };
  private readonly followers = new Set<(line: LogLine | null) => void>();
  private closedFlag = false;

  constructor(
    /** the log lines' times (the simulator's clock, ../clock.ts) */
    private readonly now: () => number,
    private readonly capBytes = DEFAULT_LOG_CAP_BYTES,
  ) {}

  get closed(): boolean {
    return this.closedFlag;
  }

  /** bytes the process wrote: complete lines are logged at once, the rest waits for its newline */
  write(stream: LogStream, chunk: Buffer): void {
    if (this.closedFlag) return;
    let buf = this.partial[stream] ? Buffer.concat([this.partial[stream]!, chunk]) : chunk;
    let nl = buf.indexOf(0x0a);
    while (nl >= 0) {
      this.append(stream, Buffer.from(buf.subarray(0, nl + 1)));
      buf = buf.subarray(nl + 1);
      nl = buf.indexOf(0x0a);
    }
    // a very long line without newline is logged in pieces (as CRI runtimes split at 16 KiB)
    while (buf.length >= 16 * 1024) {
      this.append(stream, Buffer.from(buf.subarray(0, 16 * 1024)));
      buf = buf.subarray(16 * 1024);
    }
    this.partial[stream] = buf.length > 0 ? Buffer.from(buf) : undefined;
  }

  /** the process ended: unfinished lines are logged as they are, followers are told */
  close(): void {
    if (this.closedFlag) return;
    for (const s of ['stdout', 'stderr'] as const) {
      if (this.partial[s]) this.append(s, this.partial[s]!);
      this.partial[s] = undefined;
    }
    this.closedFlag = true;
    for (const f of [...this.followers]) f(null);
    this.followers.clear();
  }

  /** the lines kept, optionally only those at or after `sinceNs`, then only the last `tail` (negative = all) */
  read(opts: { tail?: number; sinceNs?: number } = {}): LogLine[] {
    let out = opts.sinceNs ? this.lines.filter((l) => l.ts >= opts.sinceNs!) : this.lines.slice();
    if (opts.tail !== undefined && opts.tail >= 0) out = opts.tail === 0 ? [] : out.slice(-opts.tail);
    return out;
  }

  /** `fn` gets each new line, then null when the log closes; returns the unsubscribe function */
  follow(fn: (line: LogLine | null) => void): () => void {
    if (this.closedFlag) {
      fn(null);
      return () => undefined;
    }
    this.followers.add(fn);
    return () => this.followers.delete(fn);
  }

  private append(stream: LogStream, data: Buffer): void {
    const line = { ts: this.now() * 1_000_000, stream, data };
    this.lines.push(line);
    this.bytes += data.length;
    while (this.bytes > this.capBytes && this.lines.length > 1) this.bytes -= this.lines.shift()!.data.length;
    for (const f of this.followers) f(line);
  }
}
