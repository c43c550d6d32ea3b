// What the TLS front carries over the multiplexed channel and what it leaves
// to uWS (src/gateway/h1-request-head.ts), and the chunked body decoder under
// every split of its input.

import { describe, expect, it } from 'vitest';
import { ChunkedBody, parseRequestHead } from '../../src/gateway/h1-request-head.js';

const parse = (head: string) => {
  const b = Buffer.from(head + '\r\n\r\n', 'latin1');
  return parseRequestHead(b, b.indexOf('\r\n\r\n'));
};

describe('parseRequestHead', () => {
  it('reads method, path, query, headers (lower-case, repeated joined) and the framing', () => {
    expect(parse('POST /api/v1/namespaces/a/configmaps?dryRun=All&x=1 HTTP/1.1\r\nHost: x\r\nAccept: a\r\naccept: b\r\nContent-Length: 12\r\nConnection: keep-alive, close\r\nImpersonate-Extra-acme.com%2Fproject: p')).toEqual({
      method: 'POST',
      path: '/api/v1/namespaces/a/configmaps',
      query: 'dryRun=All&x=1',
      headers: [['host', 'x'], ['accept', 'a, b'], ['content-length', '12'], ['connection', 'keep-alive, close'], ['impersonate-extra-acme.com%2fproject', 'p']],
      bodyLength: 12,
      expectContinue: false,
      close: true,
      http10: false,
    });
    expect(parse('PUT /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue')).toMatchObject({ bodyLength: -1, expectContinue: true, close: false });
  });

  it.each([
    ['an upgrade', 'GET /x HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket'],
    ['a SPDY upgrade', 'POST /exec HTTP/1.1\r\nUpgrade: SPDY/3.1'],
    ['CONNECT', 'CONNECT x:443 HTTP/1.1'],
    ['a body over 4 MiB', `POST /x HTTP/1.1\r\nContent-Length: ${4 * 1024 * 1024 + 1}`],
    ['a name uWS would have escaped for the gateway', 'GET /x HTTP/1.1\r\nX-Orch-Hn-41: 1'],
    ['bytes outside ASCII', 'GET /x HTTP/1.1\r\nX-A: caf\u00e9'],
    ['another expectation', 'POST /x HTTP/1.1\r\nExpect: something'],
  ])('leaves %s to uWS', (_what, head) => {
    expect(parse(head)).toBeUndefined();
  });

  it('carries HTTP/1.0: the connection closes after the answer, no 100 Continue', () => {
    expect(parse('GET /livez HTTP/1.0')).toMatchObject({ method: 'GET', path: '/livez', http10: true, close: true, bodyLength: 0 });
    expect(parse('POST /x HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 2\r\nExpect: 100-continue')).toMatchObject({ http10: true, close: true, bodyLength: 2, expectContinue: false });
    expect(parse('GET /x HTTP/1.1\r\nHost: x')).toMatchObject({ http10: false, close: false });
  });

  // uWS closes the connection without an answer for each of these; the front answers them
  it.each([
    ['a broken request line', 'GET /x', 400],
    ['a target with a space', 'GET /a b HTTP/1.1', 400],
    ['a method that is not a token', 'G(T /x HTTP/1.1', 400],
    ['HTTP/2.0 in an HTTP/1 request line', 'GET /x HTTP/2.0', 505],
    ['HTTP/1.2', 'GET /x HTTP/1.2', 505],
    ['an unknown method', 'BREW /x HTTP/1.1', 405],
    ['Content-Length with Transfer-Encoding', 'POST /x HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked', 400],
    ['chunked in HTTP/1.0', 'POST /x HTTP/1.0\r\nTransfer-Encoding: chunked', 400],
    ['another transfer coding', 'POST /x HTTP/1.1\r\nTransfer-Encoding: gzip, chunked', 501],
    ['a bad Content-Length', 'POST /x HTTP/1.1\r\nContent-Length: 3, 3', 400],
    ['a negative Content-Length', 'POST /x HTTP/1.1\r\nContent-Length: -1', 400],
    ['an obs-fold', 'GET /x HTTP/1.1\r\nX-A: 1\r\n 2', 400],
    ['space before the colon', 'GET /x HTTP/1.1\r\nX-A : 1', 400],
    ['a header line without a colon', 'GET /x HTTP/1.1\r\nX-A', 400],
  ])('rejects %s with %s', (_what, head, code) => {
    expect(parse(head)).toMatchObject({ reject: { code } });
  });
});

describe('ChunkedBody', () => {
  const wire = Buffer.from('5;ext=1\r\nhello\r\n1\r\n \r\n6\r\nworld!\r\n0\r\nTrailer: t\r\n\r\nGET /next');

  it('decodes under every split of its input, and leaves what follows', () => {
    for (let cut = 1; cut < wire.length; cut++) {
      const c = new ChunkedBody(1024);
      c.push(wire.subarray(0, cut));
      // bytes after the end are the next request's: the caller stops pushing once done
      let rest: Buffer;
      if (c.done) rest = Buffer.concat([c.rest, wire.subarray(cut)]);
      else {
        c.push(wire.subarray(cut));
        rest = c.rest;
      }
      expect(c.done, `cut at ${cut}`).toBe(true);
      expect(c.body().toString()).toBe('hello world!');
      expect(rest.toString(), `cut at ${cut}`).toBe('GET /next');
    }
    const bytewise = new ChunkedBody(1024);
    for (let i = 0; i < wire.length; i++) bytewise.push(wire.subarray(i, i + 1));
    expect(bytewise.body().toString()).toBe('hello world!');
  });

  it('fails on broken framing and over the limit', () => {
    const broken = new ChunkedBody(1024);
    broken.push(Buffer.from('5\r\nhelloXX'));
    expect(broken.failed).toBe(true);
    const big = new ChunkedBody(8);
    big.push(Buffer.from('9\r\n'));
    expect(big.failed).toBe(true);
  });
});
