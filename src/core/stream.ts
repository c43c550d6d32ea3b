// The producer's view of a streamed response body (watch events, pods/log):
// shared by the watch fan-out, the endpoints that start streams and the
// transport that writes them, so none of them imports another for it.

export interface StreamSink {
  write(chunk: Uint8Array | string): boolean;
  /** at least the number of bytes queued but not yet written to the socket (an upper bound; see gateway/http-server.ts) */
  backlog(): number;
  end(): void;
}
