// The request a transport (uWS, the multiplexed channel) hands to the chain.
// A class rather than an object literal: a literal with a getter (`signal`)
// is built in V8's dictionary mode, ≈ 1 µs per request against ≈ 50 ns for a
// class instance (docs/architecture.md "Third pass: the request path").

import type { HttpRequest } from '../endpoints/http.js';
import type { RequestInfo } from '../endpoints/request.js';

export class GatewayRequest implements HttpRequest {
  info?: RequestInfo;

  constructor(
    public method: string,
    public path: string,
    public query: URLSearchParams,
    public headers: Map<string, string>,
    public proxiedAddress: string,
    public body: Uint8Array,
    /** made on first use: only handlers that can be cancelled (watches, long reads) ask */
    private readonly signalOf: () => AbortSignal,
    info: RequestInfo | undefined,
  ) {
    this.info = info;
  }

  get signal(): AbortSignal {
    return this.signalOf();
  }
}
