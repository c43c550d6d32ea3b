// The gateway's WebSocket side (exec, attach, port-forward): a handshake goes
// through the same handler as any request (authentication, authorization, the
// sub-resource's handler); an UpgradeResponse accepts it, anything else is
// answered as plain HTTP. Behind the TLS front the accepted connection is
// handed over to Node's ws (ws-tunnel.ts); on a plain TCP listener uWS
// upgrades it, and its socket and the session relay messages, back-pressure
// and the close.

import { writeHeaders } from './uws-headers.js';
import uws from 'uWebSockets.js';
import type { WebSocketPeer, UpgradeSession } from '../endpoints/request.js';
import type { HttpRequest as IncomingRequest, HttpResponse as OutgoingResponse, PlainResponse } from '../endpoints/http.js';
import { decodeHeaderName } from './request-head-coalescer.js';
import { statusLine } from './status-line.js';
import { joinHeaderLine } from '../core/header-join.js';
import { type ByteTunnelListener, TUNNEL_HEADER, TUNNEL_KIND_HEADER } from './byte-tunnels.js';
import { webSocketTunnel } from './ws-tunnel.js';
import type { WebSocket } from 'ws';

/** WebSocket messages larger than this close the connection (kube's streams send 32 KiB frames) */
const MAX_WS_MESSAGE_BYTES = 16 * 1024 * 1024;

/**
 * The largest frame sent whole. This uWS build writes a message of 16 KiB or
 * more through a separate header-then-payload path, and under back-pressure
 * that path lost payloads: kubectl exec of a few MB read a header followed by
 * the next header ("continuation after FIN"; a capture at the TLS front showed
 * it). A larger message goes out as fragments below the size, as gorilla's
 * writer in kube-apiserver fragments its large messages too; clients see one
 * message either way (RFC 6455 §5.4).
 */
const WS_FRAGMENT_BYTES = 16 * 1024 - 64;

/** one binary message; true when uWS took it whole (false: it waits in uWS's buffer) */
function sendMessage(ws: uws.WebSocket<WsData>, msg: Uint8Array): boolean {
  if (msg.byteLength <= WS_FRAGMENT_BYTES) return ws.send(msg, true) === 1;
  ws.sendFirstFragment(msg.subarray(0, WS_FRAGMENT_BYTES), true);
  let at = WS_FRAGMENT_BYTES;
  for (; msg.byteLength - at > WS_FRAGMENT_BYTES; at += WS_FRAGMENT_BYTES) ws.sendFragment(msg.subarray(at, at + WS_FRAGMENT_BYTES));
  ws.sendLastFragment(msg.subarray(at));
  return ws.getBufferedAmount() === 0;
}

export interface WsData {
  session: UpgradeSession;
  /** uWS forbids touching a closed socket */
  closed: boolean;
  /** the session's open, scheduled past uWS's open callback (see `open` below) */
  opening?: NodeJS.Immediate;
  /** what the client sent before the session opened */
  early?: Buffer[];
}

export interface WebSocketDeps {
  handle(req: IncomingRequest): Promise<OutgoingResponse>;
  /** the open sockets (the server ends them when it closes) */
  sessions: Set<uws.WebSocket<WsData>>;
  /** a handshake is being handled: the returned function is called once it is answered */
  begin(): () => void;
  /** the server is closing: an answered handshake is not upgraded */
  closing(): boolean;
  /** behind the TLS front (a unix listener): handshakes are handed over to Node's ws instead of uWS's upgrade */
  tunnels?: ByteTunnelListener;
  /** the WebSockets open through those tunnels (the server closes them when it closes) */
  tunneled: Set<WebSocket>;
}

export function webSocketBehavior(deps: WebSocketDeps): uws.WebSocketBehavior<WsData> {
  return {
    maxPayloadLength: MAX_WS_MESSAGE_BYTES,
    // exec sessions may sit idle for long (kube has no idle limit here); clients ping on their own
    idleTimeout: 0,
    maxBackpressure: 64 * 1024 * 1024,
    compression: uws.DISABLED,
    upgrade: (res, req, context) => {
      const path = req.getUrl();
      const query = new URLSearchParams(req.getQuery() ?? '');
      const headers = readHeaders(req);
      const key = headers.get('sec-websocket-key') ?? '';
      const method = req.getMethod().toUpperCase();
      const ctrl = new AbortController();
      let aborted = false;
      res.onAborted(() => {
        aborted = true;
        ctrl.abort();
      });
      const finish = deps.begin();
      const plain = (out: PlainResponse) => {
        res.cork(() => {
          res.writeStatus(statusLine(out.status));
          writeHeaders(res, out.headers);
          res.end(out.body, true);
        });
      };
      deps
        .handle({ method, path, query, headers, proxiedAddress: Buffer.from(res.getProxiedRemoteAddressAsText()).toString(), body: new Uint8Array(0), signal: ctrl.signal })
        .then(
          (out) => {
            finish();
            if (aborted || deps.closing()) {
              if ('upgrade' in out) out.upgrade.close();
              else if ('tunnel' in out) out.tunnel.close();
              else if (out.stream) out.stop();
              return;
            }
            if ('upgrade' in out) {
              if (deps.tunnels) {
                // behind the TLS front: the connection is handed over and Node's ws answers the handshake (ws-tunnel.ts)
                const token = deps.tunnels.offer(webSocketTunnel(out.upgrade, method, headers, MAX_WS_MESSAGE_BYTES, deps.tunneled));
                res.cork(() => {
                  res.writeStatus('101 Switching Protocols');
                  res.writeHeader(TUNNEL_HEADER, token);
                  res.writeHeader(TUNNEL_KIND_HEADER, 'websocket');
                  res.end('', false);
                });
                return;
              }
              res.cork(() => res.upgrade<WsData>({ session: out.upgrade, closed: false }, key, out.upgrade.protocol, '', context));
              return;
            }
            if ('tunnel' in out) {
              out.tunnel.close();
              return plain({ status: 400, headers: [['Content-Type', 'application/json']], body: JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'a WebSocket handshake cannot become a SPDY/3.1 connection', reason: 'BadRequest', code: 400 }) });
            }
            if (out.stream) {
              out.stop();
              return plain({ status: 400, headers: [['Content-Type', 'application/json']], body: JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'this request cannot be served over a WebSocket', reason: 'BadRequest', code: 400 }) });
            }
            plain(out);
          },
          (err: unknown) => {
            finish();
            if (!aborted) plain({ status: 500, headers: [['Content-Type', 'application/json']], body: JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `Internal error occurred: ${(err as Error)?.message ?? String(err)}`, reason: 'InternalError', code: 500 }) });
          },
        );
    },
    open: (ws) => {
      deps.sessions.add(ws);
      const data = ws.getUserData();
      const peer: WebSocketPeer = {
        send: (msg) => !data.closed && sendMessage(ws, msg),
        bufferedAmount: () => (data.closed ? 0 : ws.getBufferedAmount()),
        end: (code = 1000, reason) => {
          if (!data.closed) ws.end(code, reason);
        },
      };
      // The uWS path (a TCP listener, no TLS front: tests): nothing is sent from
      // inside this callback, the session opens on the next turn. After an
      // asynchronous upgrade this uWS build's cork() checks the HTTP response's
      // state in memory the upgrade may have reallocated in place, and can close
      // the new socket (uWebSockets #1929; sends in open make it likelier,
      // uWebSockets.js #1108). Behind the TLS front uWS upgrades nothing (ws-tunnel.ts).
      data.opening = setImmediate(() => {
        data.opening = undefined;
        data.session.open(peer);
        for (const m of data.early?.splice(0) ?? []) data.session.message(m);
        if (data.closed) data.session.close();
      });
    },
    message: (ws, msg) => {
      const data = ws.getUserData();
      // the message's memory is reused after this callback: the session gets a copy
      const copy = Buffer.from(new Uint8Array(msg));
      if (data.opening) (data.early ??= []).push(copy);
      else data.session.message(copy);
    },
    drain: (ws) => {
      const data = ws.getUserData();
      if (!data.opening) data.session.drain();
    },
    close: (ws) => {
      deps.sessions.delete(ws);
      const data = ws.getUserData();
      data.closed = true;
      // a session not opened yet closes right after it opens
      if (!data.opening) data.session.close();
    },
  };
}

/** a request's headers, names lower-cased, a repeated one's lines joined (src/core/header-join.ts) */
export function readHeaders(req: uws.HttpRequest): Map<string, string> {
  const headers = new Map<string, string>();
  req.forEach((raw, v) => {
    const k = decodeHeaderName(raw);
    headers.set(k, joinHeaderLine(k, headers.get(k), v));
  });
  return headers;
}
