// Writes the server's side of an upgraded WebSocket connection to the TLS
// socket so that no TLS record holds bytes of two frames. Clients that wait
// for the socket to be readable before reading the next frame (the Kubernetes
// Python client's port-forward and exec loops: select() on the raw socket,
// then one frame) never see a second frame that OpenSSL decrypted together
// with the first and holds in its own buffer. kube-apiserver writes each
// message with its own Write, one record each; Node batches writes that wait
// behind an unfinished one into a single record, so here a frame's bytes go
// out only once the write before them has completed.

/** where the bytes go: the TLS socket */
export interface RecordSink {
  write(data: Buffer, cb: (err?: Error | null) => void): boolean;
  end(): void;
}

/** the backend's flow: paused while too much waits here */
export interface BackendFlow {
  pause(): void;
  resume(): void;
}

const DEFAULT_HIGH_WATER = 1024 * 1024;

export class WebSocketRecordWriter {
  private readonly queue: Buffer[] = [];
  private queued = 0;
  private writing = false;
  private paused = false;
  private ending = false;
  private failed = false;
  /** the start of a frame header not complete yet */
  private header: Buffer = Buffer.alloc(0);
  /** payload bytes of the current frame still to come */
  private left = 0;

  constructor(
    private readonly sink: RecordSink,
    private readonly flow: BackendFlow,
    private readonly highWater = DEFAULT_HIGH_WATER,
  ) {}

  /** the backend is paused for what waits here */
  get holding(): boolean {
    return this.paused;
  }

  /** bytes that make a record of their own (the 101 response head) */
  pushRecord(data: Buffer): void {
    if (data.length > 0) this.enqueue(data);
  }

  /** server-to-client WebSocket bytes as the backend sent them */
  push(chunk: Buffer): void {
    let i = 0;
    while (i < chunk.length) {
      if (this.left > 0) {
        const n = Math.min(this.left, chunk.length - i);
        this.enqueue(chunk.subarray(i, i + n));
        this.left -= n;
        i += n;
        continue;
      }
      // a new frame: its header whole first, then header and payload bytes at hand as one piece
      const need = headerLength(this.header, chunk, i);
      const have = this.header.length + (chunk.length - i);
      if (need === undefined || have < need) {
        this.header = Buffer.concat([this.header, chunk.subarray(i)]);
        return;
      }
      const fromChunk = need - this.header.length;
      const head = Buffer.concat([this.header, chunk.subarray(i, i + fromChunk)]);
      this.header = Buffer.alloc(0);
      i += fromChunk;
      const payload = payloadLength(head);
      const n = Math.min(payload, chunk.length - i);
      this.enqueue(n > 0 ? Buffer.concat([head, chunk.subarray(i, i + n)]) : head);
      this.left = payload - n;
      i += n;
    }
  }

  /** ends the sink once everything queued has been written */
  end(): void {
    this.ending = true;
    if (this.header.length > 0) {
      // bytes that never made a frame: passed on as they are
      this.enqueue(this.header);
      this.header = Buffer.alloc(0);
    }
    this.next();
  }

  private enqueue(data: Buffer): void {
    this.queue.push(data);
    this.queued += data.length;
    if (!this.paused && this.queued > this.highWater) {
      this.paused = true;
      this.flow.pause();
    }
    this.next();
  }

  private next(): void {
    if (this.writing || this.failed) return;
    const data = this.queue.shift();
    if (!data) {
      if (this.ending) this.sink.end();
      return;
    }
    this.writing = true;
    this.sink.write(data, (err) => {
      this.writing = false;
      this.queued -= data.length;
      if (err) {
        this.failed = true;
        return;
      }
      if (this.paused && this.queued <= this.highWater / 2) {
        this.paused = false;
        this.flow.resume();
      }
      this.next();
    });
  }
}

/** the writer of a connection that just switched to WebSocket: the 101 `head` as one record, then the frame bytes that came with it */
export function recordWriterAfterHandshake(head: Buffer | undefined, rest: Buffer | undefined, sink: RecordSink, flow: BackendFlow): WebSocketRecordWriter {
  const writer = new WebSocketRecordWriter(sink, flow);
  if (head) writer.pushRecord(head);
  if (rest) writer.push(rest);
  return writer;
}

/** the header's length once its first bytes are known (RFC 6455 §5.2), undefined before */
function headerLength(held: Buffer, chunk: Buffer, i: number): number | undefined {
  const byteAt = (k: number): number | undefined => (k < held.length ? held[k] : chunk[i + k - held.length]);
  const b1 = byteAt(1);
  if (b1 === undefined) return undefined;
  const len = b1 & 0x7f;
  const mask = b1 & 0x80 ? 4 : 0;
  return 2 + (len === 126 ? 2 : len === 127 ? 8 : 0) + mask;
}

function payloadLength(head: Buffer): number {
  const len = head[1]! & 0x7f;
  if (len === 126) return head.readUInt16BE(2);
  if (len === 127) return Number(head.readBigUInt64BE(2));
  return len;
}
