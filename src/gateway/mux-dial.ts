// The front's side of a multiplexed-channel connection, shared by the HTTP/2
// (src/gateway/h2-mux-client.ts) and HTTP/1.1 (src/gateway/h1-mux-channel.ts)
// ends: dialling with the frame reader, and batching Owed reports.

import { connect as netConnect, type Socket } from 'node:net';
import { FrameReader, owedFrame } from './mux-frames.js';

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

/** what streams hold that their clients have not taken: one Owed frame per turn for every stream that changed */
export class OwedBatch {
  private readonly changes = new Map<number, number>();
  private scheduled = false;

  constructor(private readonly conn: () => Socket | undefined) {}

  set(id: number, bytes: number): void {
    this.changes.set(id, bytes);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const c = this.conn();
      if (this.changes.size > 0 && c && !c.destroyed) c.write(owedFrame(this.changes));
      this.changes.clear();
    });
  }

  delete(id: number): void {
    this.changes.delete(id);
  }
}
