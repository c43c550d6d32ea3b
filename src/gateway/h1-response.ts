// HTTP/1.1 responses written by the TLS front for requests carried over the
// multiplexed channel, byte for byte what uWS writes for the same response
// (after the TLS front's chunk re-framing, src/gateway/response-chunk-framer.ts):
//
//   HTTP/1.1 <code> <reason>\r\n <handler's headers> Date: …\r\n
//   uWebSockets: 20\r\n Content-Length: n\r\n\r\n <body>
//
// and for streams `Transfer-Encoding: chunked` with each write one complete
// chunk `<hex>\r\n<data>\r\n`, ended by `0\r\n\r\n`. The `uWebSockets: 20`
// field is kept so that clients and tests see no difference between the two
// paths (test/integration/h1-mux.test.ts compares them).

import type { PlainResponse } from '../endpoints/http.js';
import { statusLine } from './status-line.js';

const CRLF = Buffer.from('\r\n');
export const LAST_CHUNK = Buffer.from('0\r\n\r\n');
export const CONTINUE_100 = Buffer.from('HTTP/1.1 100 Continue\r\n\r\n');

let dateSecond = -1;
let dateText = '';

/** the Date field value, made once a second (uWS updates its own once a second too) */
function httpDate(now: number): string {
  const s = Math.floor(now / 1000);
  if (s !== dateSecond) {
    dateSecond = s;
    dateText = new Date(s * 1000).toUTCString();
  }
  return dateText;
}

/**
 * A response head; `length` undefined: a stream, chunked, or for an HTTP/1.0
 * client (`http10`) delimited by the connection's close, since chunked
 * framing must not be sent to it (RFC 9112 §6.1). The status line says
 * HTTP/1.1 either way, the highest version the server conforms to (RFC 9110 §6.2).
 */
export function responseHead(status: number, headers: readonly [string, string][], length: number | undefined, now: number, http10 = false): Buffer {
  let s = `HTTP/1.1 ${statusLine(status)}\r\n`;
  for (const [k, v] of headers) s += `${k}: ${v}\r\n`;
  s += `Date: ${httpDate(now)}\r\nuWebSockets: 20\r\n`;
  if (http10) s += length === undefined ? 'Connection: close\r\n\r\n' : `Content-Length: ${length}\r\nConnection: close\r\n\r\n`;
  else s += length === undefined ? 'Transfer-Encoding: chunked\r\n\r\n' : `Content-Length: ${length}\r\n\r\n`;
  return Buffer.from(s, 'latin1');
}

/** one chunk of a chunked response, as the parts of one write */
export function chunkParts(data: Buffer): Buffer[] {
  return [Buffer.from(`${data.length.toString(16)}\r\n`, 'latin1'), data, CRLF];
}

/** the main process cannot be reached over the channel */
export const unavailableResponse = (): PlainResponse => status(503, 'ServiceUnavailable', 'the API server is not reachable');

const REJECTION_REASONS: Record<number, string> = { 400: 'BadRequest', 405: 'MethodNotAllowed' };

/** the answer to a head that is not HTTP; the connection closes after it */
export const rejectionResponse = (code: number, message: string): PlainResponse =>
  code < 300 ? { status: code, headers: [['Connection', 'close']], body: '' } : status(code, REJECTION_REASONS[code], message, [['Connection', 'close']]);

/** a Status answer; no `reason` for codes Kubernetes has none for (501, 505) */
function status(code: number, reason: string | undefined, message: string, extra: [string, string][] = []): PlainResponse {
  return {
    status: code,
    headers: [['Content-Type', 'application/json'], ...extra],
    body: JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, ...(reason ? { reason } : {}), code }),
  };
}
