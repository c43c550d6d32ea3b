// The front's side of a multiplexed-channel connection, shared by the HTTP/2
// (src/gateway/h2-mux-client.ts) and HTTP/1.1 (src/gateway/h1-mux-channel.ts)
// ends: dialling with the frame reader, and the frames of a turn written at
// its end in one write.

import { connect as netConnect, type Socket } from 'node:net';
import { FrameBatch, FrameReader, type FrameType, owedFrame, type RequestHead } from './mux-frames.js';

/** a channel connection: frames go to `onFrame`; `onClose` once it closes (the main process went, or broke the framing) */
export function dialMux(path: string, onFrame: (type: number, id: number, payload: Buffer) => void, onClose: (s: Socket) => void): Socket {
  const s = netConnect({ path });
  s.setNoDelay?.(true);
  const reader = new FrameReader(onFrame);
  s.on('data', (chunk: Buffer) => {
    if (!reader.push(chunk)) s.destroy();
  });
  s.on('error', () => s.destroy());
  s.once('close', () => onClose(s));
  return s;
}

/**
 * Frames for the main process (Request, Body, Cancel, Owed) wait for the end
 * of the turn and go in one buffer and one write: the requests of one TLS
 * read arrive in separate callbacks, so a flush at the next tick would still
 * be one write per request. What streams hold that their clients have not
 * taken goes as one Owed frame per turn for every stream that changed.
 */
export class ChannelWriter {
  private readonly batch = new FrameBatch();
  private readonly owedChanges = new Map<number, number>();
  private scheduled = false;

  constructor(private readonly conn: () => Socket | undefined) {}

  /** a Request frame */
  request(id: number, head: RequestHead, body?: Uint8Array): void {
    this.batch.request(id, head, body);
    this.schedule();
  }

  /** a frame already encoded, in parts */
  encoded(parts: Buffer[]): void {
    for (const p of parts) this.batch.encoded(p);
    this.schedule();
  }

  /** a frame without payload (Cancel) */
  bare(type: FrameType, id: number): void {
    this.batch.bare(type, id);
    this.schedule();
  }

  owed(id: number, bytes: number): void {
    this.owedChanges.set(id, bytes);
    this.schedule();
  }

  /** the stream is done: a change of its held bytes not sent yet no longer matters */
  forgetOwed(id: number): void {
    this.owedChanges.delete(id);
  }

  /** the connection closed: what is queued was for its streams, not for the next connection's */
  drop(): void {
    this.batch.take();
    this.owedChanges.clear();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    if (this.owedChanges.size > 0) this.batch.encoded(owedFrame(this.owedChanges));
    this.owedChanges.clear();
    const chunks = this.batch.take();
    const c = this.conn();
    if (!c || c.destroyed || chunks.length === 0) return;
    if (chunks.length === 1) {
      c.write(chunks[0]!);
      return;
    }
    c.cork();
    for (const chunk of chunks) c.write(chunk);
    c.uncork();
  }
}
