// Response header values are byte strings, one char per byte, as requests'
// are read (docs/tls.md): that is how the TLS front's HTTP/1.1 writer and
// Node's http2 put them on the wire. uWS encodes a string it is given as
// UTF-8 instead, so a value holding bytes ≥ 0x80 (a Warning's UTF-8 text) is
// handed to it as those bytes.

import type { HttpResponse } from 'uWebSockets.js';

const NON_ASCII = /[^\u0000-\u007f]/;

/** writes each header; call inside the response's cork */
export function writeHeaders(res: HttpResponse, headers: readonly (readonly [string, string])[]): void {
  for (const [k, v] of headers) res.writeHeader(k, NON_ASCII.test(v) ? Buffer.from(v, 'latin1') : v);
}
