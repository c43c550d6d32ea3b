// One HTTP/1.1 client connection of the TLS front served over the
// multiplexed channel (docs/tls.md "HTTP/1.1 over the multiplexed channel"):
// the front parses each request (head, Content-Length or chunked body),
// sends it as one Request frame (src/gateway/h1-mux-channel.ts), and writes
// the answer as HTTP/1.1 (src/gateway/h1-response.ts), responses in the
// order of the requests (pipelining). The main process then pays one frame
// per request instead of a unix connection, uWS's reads, parse and writes.
//
// What is not carried exactly goes to the per-connection uWS path
// (src/gateway/tls-h1-connection.ts) for the rest of the connection, with
// every byte read so far, once the answers already owed are written: an
// upgrade (WebSocket, SPDY), anything `parseRequestHead` refuses, a body
// over the limit, and a first request head that did not arrive whole (so
// slow heads, the 408 and huge heads behave as they always have).
//
// Also here: health probes answered in the worker (while nothing is
// outstanding, as on the uWS path), `Expect: 100-continue`,
// `Connection: close`, the request-body deadline (504, as uWS answers it),
// a later head not complete within the header-read bound (408), the idle
// bound of a keep-alive connection, and Cancel for every outstanding
// request when the client goes away (a watch stops on the server).

import type { TLSSocket } from 'node:tls';
import { type Clock, type TimerHandle } from '../core/clock.js';
import type { PlainResponse } from '../endpoints/http.js';
import type { H1MuxChannel, MuxStreamHandler } from './h1-mux-channel.js';
import { ChunkedBody, type H1RequestHead, MAX_MUX_BODY_BYTES, type Rejection, isRejection, parseRequestHead } from './h1-request-head.js';
import { CONTINUE_100, LAST_CHUNK, chunkParts, rejectionResponse, responseHead, unavailableResponse } from './h1-response.js';
import type { ProbeAnswerer } from './health-probe.js';
import { FrameType, type RequestHead } from './mux-frames.js';
import { headTimeoutResponse } from './request-head-coalescer.js';
import { readResponse } from './head-codec.js';
import type { TlsConnectionInfo } from './tls-connections.js';

const HEAD_END = Buffer.from('\r\n\r\n');
/** a later request head larger than this goes to uWS as it is */
const MAX_HEAD_BYTES = 64 * 1024;
/** requests read ahead of their answers; the client is not read beyond this */
const MAX_PIPELINED = 64;
/** bytes held for the uWS path while earlier answers are still owed */
const HANDOVER_HOLD_BYTES = 64 * 1024;
/** after a closing answer, what the client still sends is read and dropped this long (as tls-h1-connection.ts does) */
const LINGER_MS = 2000;
/** a closing answer the client does not read is dropped after this long (the HTTP/2 side's grace too) */
const END_GRACE_MS = 30_000;
const PROBE_PATH = /^\/(livez|readyz|healthz)(\/|$)/;

export interface H1MuxContext {
  clock: Clock;
  channel: H1MuxChannel;
  /** a later request head not complete this long is answered 408 */
  headHoldMs: number;
  /** a request body not complete this long after its head is answered 504 */
  bodyTimeoutMs: number;
  /** the 504 of a trickled body (src/endpoints/filters/timeout.ts) */
  bodyTimedOut(): PlainResponse;
  /** a client connection idle this long is closed */
  idleMs: number;
  answerProbe: ProbeAnswerer | undefined;
  closing(): boolean;
  /** the rest of the connection goes over the per-connection uWS path, starting with `initial` */
  handOver(initial: Buffer, ended: boolean): void;
  clientClosed(key: string): void;
  /** `endIfIdle` is called when the front closes; the returned function forgets it */
  track(endIfIdle: () => void): () => void;
}

/** one request, from its head to its answer's last byte */
interface Slot {
  /** the channel stream (0: not sent, or answered here) */
  id: number;
  method: string;
  close: boolean;
  /** answer bytes held while an earlier answer is still being written */
  out: Buffer[];
  /** the answer's head was written or held */
  started: boolean;
  /** the body is chunked (a stream) */
  chunked: boolean;
  complete: boolean;
  /** the TLS socket did not take a write of this stream and has not drained since */
  owing?: boolean;
  /** an HTTP/1.0 request: no chunked framing, the connection closes after the answer */
  http10: boolean;
}

export function serveHttp1Mux(ctx: H1MuxContext, tls: TLSSocket, key: string, info: () => TlsConnectionInfo, registered: Promise<void> | undefined): void {
  const { clock, channel } = ctx;
  const slots: Slot[] = [];
  let pending: Buffer = Buffer.alloc(0);
  /** the request whose body is being read */
  let cur: { head: H1RequestHead; slot: Slot; raw: Buffer[]; parts: Buffer[]; have: number; chunked?: ChunkedBody; timer?: TimerHandle; early?: boolean } | undefined;
  let anyRequest = false;
  let isRegistered = registered === undefined;
  const waitingRegistration: (() => void)[] = [];
  /** set once the rest goes to uWS: what was read since */
  let handover: Buffer[] | undefined;
  let handoverBytes = 0;
  let clientEnded = false;
  /** a closing answer was written: nothing more is read or answered */
  let finished = false;
  /** a request asked for `Connection: close`: no request after it is read */
  let noMore = false;
  let gone = false;
  let paused = false;
  let headTimer: TimerHandle | undefined;
  let idleTimer: TimerHandle | undefined;
  let lastActive = clock.now();

  const write = (b: Buffer): boolean => (tls.destroyed ? false : tls.write(b));

  /** the answer bytes of `slot`: on the wire if it is first, else held */
  const emit = (slot: Slot, b: Buffer): void => {
    if (slot === slots[0]) {
      if (!write(b) && slot.chunked && slot.id) {
        slot.owing = true;
        channel.owed(slot.id, tls.writableLength);
      }
    } else slot.out.push(b);
  };

  const complete = (slot: Slot): void => {
    if (slot.complete) return;
    slot.complete = true;
    if (slot.id) channel.forget(slot.id);
    if (slot === slots[0]) advance();
  };

  /** writes what the slots at the front hold, drops the finished ones */
  const advance = (): void => {
    while (slots.length > 0) {
      const s = slots[0]!;
      if (s.out.length > 0) {
        const b = s.out.length === 1 ? s.out[0]! : Buffer.concat(s.out);
        s.out = [];
        if (!write(b) && s.chunked && s.id && !s.complete) {
          s.owing = true;
          channel.owed(s.id, tls.writableLength);
        }
      }
      if (!s.complete) break;
      slots.shift();
      if (s.close) {
        closeAfterAnswer();
        return;
      }
    }
    lastActive = clock.now();
    if (paused && slots.length < MAX_PIPELINED / 2 && !handover) {
      paused = false;
      tls.resume();
    }
    if (slots.length > 0) return;
    if (handover) tryHandover();
    else if (ctx.closing() || (clientEnded && pending.length === 0 && !cur)) closeAfterAnswer();
    // one timer per connection, not one per request: it re-arms itself for what is left of the bound
    else if (!idleTimer) armIdle(ctx.idleMs);
  };

  const closeAfterAnswer = (): void => {
    if (finished) return;
    finished = true;
    stopTimers();
    for (const s of slots) if (s.id && !s.complete) channel.cancel(s.id);
    slots.length = 0;
    // what the client still sends is read and dropped for a moment once the answer is
    // out, so it reads the answer instead of a reset; a client that does not read it
    // is dropped after END_GRACE_MS
    tls.resume();
    const grace = clock.setTimeout(() => tls.destroy(), END_GRACE_MS);
    const linger = (): void => {
      grace.cancel();
      clock.setTimeout(() => tls.destroy(), LINGER_MS);
    };
    if (tls.writableFinished) linger();
    else tls.once('finish', linger);
    if (!tls.writableEnded) tls.end();
  };

  const stopTimers = (): void => {
    headTimer?.cancel();
    headTimer = undefined;
    idleTimer?.cancel();
    idleTimer = undefined;
    cur?.timer?.cancel();
  };

  const armIdle = (ms: number): void => {
    idleTimer?.cancel();
    idleTimer = clock.setTimeout(() => {
      idleTimer = undefined;
      if (finished || slots.length > 0 || handover) return;
      const quiet = clock.now() - lastActive;
      if (quiet >= ctx.idleMs) closeAfterAnswer();
      else armIdle(ctx.idleMs - quiet);
    }, Math.max(1, ms));
  };

  /** the answer to a request the front answers itself (a 504, a 408) */
  const localAnswer = (slot: Slot, out: PlainResponse, close: boolean): void => {
    const body = typeof out.body === 'string' ? Buffer.from(out.body) : Buffer.from(out.body.buffer, out.body.byteOffset, out.body.byteLength);
    slot.started = true;
    slot.close = slot.close || close;
    emit(slot, Buffer.concat([responseHead(out.status, out.headers, body.length, clock.now(), slot.http10), body]));
    complete(slot);
  };

  const handlerFor = (slot: Slot): MuxStreamHandler => ({
    frame(type, payload) {
      if (finished || slot.complete) return;
      switch (type) {
        case FrameType.Response: {
          const { head, body } = readResponse(payload);
          slot.started = true;
          const h = responseHead(head.status, head.headers, body.length, clock.now(), slot.http10);
          emit(slot, body.length > 0 && body.length < 16 * 1024 ? Buffer.concat([h, body]) : h);
          if (body.length >= 16 * 1024) emit(slot, body);
          complete(slot);
          return;
        }
        case FrameType.Head: {
          const { head } = readResponse(payload);
          slot.started = true;
          // a whole body sent in pieces carries its length; a stream has none (and to
          // an HTTP/1.0 client it is not chunked: the connection's close ends it)
          slot.chunked = head.length === undefined && !slot.http10;
          emit(slot, responseHead(head.status, head.headers, head.length, clock.now(), slot.http10));
          if (slot.method === 'HEAD') {
            // no body follows the head of a HEAD answer: the stream is stopped
            channel.cancel(slot.id);
            slot.id = 0;
            complete(slot);
          }
          return;
        }
        case FrameType.Data:
          if (!slot.chunked) emit(slot, payload);
          else if (slot !== slots[0]) for (const p of chunkParts(payload)) emit(slot, p);
          else {
            // one write, so one TLS record (node's TLS writes corked buffers in one SSL_write)
            tls.cork();
            for (const p of chunkParts(payload)) emit(slot, p);
            tls.uncork();
          }
          return;
        case FrameType.End:
          if (slot.chunked) emit(slot, LAST_CHUNK);
          // a stream ended while its client was not reading (a watcher ended with 410 for
          // falling behind): the connection ends after what it holds, as through uWS
          if (slot.owing) slot.close = true;
          complete(slot);
          return;
        default:
          // Reset: the answer broke off; the client must see an error, not a short response
          tls.destroy();
      }
    },
    lost() {
      if (finished || slot.complete) return;
      slot.id = 0;
      if (slot.started) tls.destroy();
      else localAnswer(slot, unavailableResponse(), false);
    },
  });

  /** `early`: the body is still arriving and follows in a Body frame (shedding answers before it) */
  const send = (slot: Slot, head: H1RequestHead, body: Buffer, early = false): void => {
    const go = (): void => {
      if (finished || gone) return;
      const rh: RequestHead = { method: head.method, path: head.path, query: head.query, proxiedAddress: key, headers: head.headers };
      if (early) rh.bodyFollows = true;
      slot.id = channel.request(rh, body, handlerFor(slot));
    };
    if (isRegistered) go();
    else waitingRegistration.push(go);
  };

  /** the body of a request sent early, unless it was answered meanwhile (shed) */
  const sendBody = (slot: Slot, body: Buffer): void => {
    const go = (): void => {
      if (!slot.complete && slot.id) channel.body(slot.id, body);
    };
    if (isRegistered) go();
    else waitingRegistration.push(go);
  };

  /** a whole request was read */
  const dispatch = (head: H1RequestHead, slot: Slot, body: Buffer, headBuf: Buffer): void => {
    if (ctx.answerProbe && slots[0] === slot && head.method === 'GET' && body.length === 0 && PROBE_PATH.test(head.path)) {
      void ctx.answerProbe(headBuf.toString('latin1', 0, headBuf.length - 4), info().peer).then(
        (reply) => {
          if (finished || gone) return;
          if (!reply) return send(slot, head, body);
          slot.started = true;
          slot.close = slot.close || reply.close;
          emit(slot, reply.bytes);
          complete(slot);
        },
        () => send(slot, head, body),
      );
      return;
    }
    send(slot, head, body);
  };

  /** from here on the connection goes to uWS, once the answers owed are written */
  const startHandover = (raw: Buffer[]): void => {
    handover = raw.filter((b) => b.length > 0);
    handoverBytes = handover.reduce((n, b) => n + b.length, 0);
    pending = Buffer.alloc(0);
    stopTimers();
    cur = undefined;
    if (handoverBytes > HANDOVER_HOLD_BYTES) {
      paused = true;
      tls.pause();
    }
    tryHandover();
  };

  const tryHandover = (): void => {
    if (!handover || slots.length > 0 || !isRegistered || finished || gone) return;
    const initial = Buffer.concat(handover);
    handover = undefined;
    finished = true;
    stopTimers();
    untrack();
    tls.off('data', onData);
    tls.off('end', onEnd);
    tls.off('close', onClose);
    tls.off('drain', onDrain);
    tls.off('error', onError);
    tls.resume();
    ctx.handOver(initial, clientEnded);
  };

  /** reads whole requests out of `pending` */
  const parse = (): void => {
    while (!finished && !handover) {
      if (cur) {
        if (!readBody()) return;
        continue;
      }
      if (noMore) pending = Buffer.alloc(0);
      if (pending.length === 0) return;
      const end = pending.indexOf(HEAD_END);
      if (end < 0) {
        // the first head of a connection not whole: uWS's path (slow heads, huge heads, 408)
        if (!anyRequest || pending.length > MAX_HEAD_BYTES) return startHandover([pending]);
        headTimer ??= clock.setTimeout(onHeadTimeout, ctx.headHoldMs);
        return;
      }
      headTimer?.cancel();
      headTimer = undefined;
      const parsed = parseRequestHead(pending, end);
      if (!parsed) return startHandover([pending]);
      if (isRejection(parsed)) return reject(parsed);
      const head = parsed;
      anyRequest = true;
      const headBuf = pending.subarray(0, end + 4);
      pending = pending.subarray(end + 4);
      const slot: Slot = { id: 0, method: head.method, close: head.close, out: [], started: false, chunked: false, complete: false, http10: head.http10 };
      slots.push(slot);
      if (head.close) noMore = true;
      if (head.bodyLength === 0) {
        dispatch(head, slot, EMPTY, headBuf);
      } else {
        cur = { head, slot, raw: [headBuf], parts: [], have: 0 };
        if (head.bodyLength < 0) cur.chunked = new ChunkedBody(MAX_MUX_BODY_BYTES);
        if (head.expectContinue) emit(slot, CONTINUE_100);
      }
      if (slots.length >= MAX_PIPELINED && !paused) {
        paused = true;
        tls.pause();
      }
    }
  };

  /** `cur`'s body from `pending`; true when it is complete (and dispatched) */
  const readBody = (): boolean => {
    const c = cur!;
    if (pending.length > 0) {
      const piece = pending;
      pending = Buffer.alloc(0);
      c.raw.push(piece);
      if (c.chunked) {
        c.chunked.push(piece);
        if (c.chunked.failed) {
          if (c.slot.complete) {
            // answered already (shed before its body): nothing more can be read of this connection
            cur = undefined;
            closeAfterAnswer();
            return false;
          }
          // over the limit or broken framing: uWS answers it as it always has
          if (c.slot.id) channel.cancel(c.slot.id);
          slots.splice(slots.indexOf(c.slot), 1);
          startHandover(c.raw);
          return false;
        }
        if (c.chunked.done) pending = c.chunked.rest;
      } else {
        const need = c.head.bodyLength - c.have;
        const take = piece.length <= need ? piece : piece.subarray(0, need);
        c.parts.push(take);
        c.have += take.length;
        if (piece.length > need) pending = piece.subarray(need);
      }
    }
    const done = c.chunked ? c.chunked.done : c.have === c.head.bodyLength;
    if (!done) {
      if (!c.early) {
        // the head goes ahead, so that overload shedding answers before the body is read (as uWS does)
        c.early = true;
        send(c.slot, c.head, EMPTY, true);
      }
      if (ctx.bodyTimeoutMs > 0) c.timer ??= clock.setTimeout(() => {
        if (cur !== c || finished) return;
        cur = undefined;
        if (c.slot.complete) return closeAfterAnswer();
        if (c.slot.id) channel.cancel(c.slot.id);
        c.slot.id = 0;
        localAnswer(c.slot, ctx.bodyTimedOut(), true);
      }, ctx.bodyTimeoutMs);
      return false;
    }
    c.timer?.cancel();
    cur = undefined;
    const body = c.chunked ? c.chunked.body() : c.parts.length === 1 ? c.parts[0]! : Buffer.concat(c.parts, c.have);
    if (c.early) sendBody(c.slot, body);
    else dispatch(c.head, c.slot, body, c.raw[0]!);
    return true;
  };

  /** a head that is not HTTP: answered here with a Status, nothing after it is read */
  const reject = ({ reject: r }: Rejection): void => {
    const slot: Slot = { id: 0, method: 'GET', close: true, out: [], started: false, chunked: false, complete: false, http10: false };
    slots.push(slot);
    noMore = true;
    pending = Buffer.alloc(0);
    localAnswer(slot, rejectionResponse(r.code, r.message), true);
  };

  const onHeadTimeout = (): void => {
    headTimer = undefined;
    if (finished || handover || cur || pending.length === 0) return;
    const slot: Slot = { id: 0, method: 'GET', close: true, out: [], started: true, chunked: false, complete: false, http10: false };
    slots.push(slot);
    noMore = true;
    pending = Buffer.alloc(0);
    emit(slot, headTimeoutResponse(ctx.headHoldMs, clock.now()));
    complete(slot);
  };

  const onData = (chunk: Buffer): void => {
    lastActive = clock.now();
    if (handover) {
      handover.push(chunk);
      handoverBytes += chunk.length;
      if (handoverBytes > HANDOVER_HOLD_BYTES && !paused) {
        paused = true;
        tls.pause();
      }
      return;
    }
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    parse();
  };
  const onEnd = (): void => {
    clientEnded = true;
    if (handover) return tryHandover();
    if (slots.length === 0 && !cur) closeAfterAnswer();
  };
  const onDrain = (): void => {
    const s = slots[0];
    if (s && s.chunked && s.id && !s.complete) {
      s.owing = false;
      channel.owed(s.id, 0);
    }
  };
  const onError = (): void => {
    tls.destroy();
  };
  const onClose = (): void => {
    gone = true;
    finished = true;
    stopTimers();
    untrack();
    for (const s of slots) if (s.id && !s.complete) channel.cancel(s.id);
    slots.length = 0;
    ctx.clientClosed(key);
  };
  const untrack = ctx.track(() => {
    if (slots.length === 0 && !cur && !handover) closeAfterAnswer();
  });

  tls.on('data', onData);
  tls.on('end', onEnd);
  tls.on('drain', onDrain);
  tls.on('error', onError);
  tls.on('close', onClose);
  armIdle(ctx.idleMs);
  registered?.then(
    () => {
      isRegistered = true;
      for (const go of waitingRegistration.splice(0)) go();
      tryHandover();
    },
    () => tls.destroy(),
  );
}

const EMPTY = Buffer.alloc(0);
