// A plain response's body as it goes on the wire: gzipped when the handler
// marked it compressible, the client accepts gzip and it is large enough
// (kube compresses from 128 KiB). Shared by the uWS transport and the
// HTTP/2 channel (src/gateway/mux-server.ts).

import { promisify } from 'node:util';
import { gzip as gzipCb } from 'node:zlib';
import type { PlainResponse } from '../endpoints/http.js';

const gzip = promisify(gzipCb);

export const DEFAULT_GZIP_MIN_BYTES = 128 * 1024;

export function wantsGzip(out: PlainResponse, acceptEncoding: string | undefined, minBytes: number): boolean {
  if (!out.compressible || !/\bgzip\b/.test(acceptEncoding ?? '')) return false;
  const body = out.body;
  return (typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength) >= minBytes;
}

/** the gzipped body, or the body as it is when compression fails */
export async function gzipBody(body: Uint8Array | string): Promise<{ body: Uint8Array | string; gzipped: boolean }> {
  try {
    return { body: await gzip(typeof body === 'string' ? Buffer.from(body) : body), gzipped: true };
  } catch {
    return { body, gzipped: false };
  }
}
