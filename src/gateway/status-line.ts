// The status lines the gateway writes on HTTP/1.1, shared by uWS
// (src/gateway/http-server.ts) and the TLS front's HTTP/1.1 side of the
// multiplexed channel (src/gateway/h1-response.ts), so both write the same bytes.

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No Content',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  410: 'Gone',
  413: 'Request Entity Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
  505: 'HTTP Version Not Supported',
};

/** `<code> <reason>` as uWS's writeStatus gets it */
export function statusLine(code: number): string {
  return `${code} ${STATUS_TEXT[code] ?? 'Status'}`;
}
