// A WebSocket served by Node's `ws` over a connection handed over by the TLS
// front (byte-tunnels.ts), instead of one uWS upgrades: this uWS build's
// upgrade after an asynchronous handler (res.cork(() => res.upgrade(…))) could
// close the new socket right after its 101 (uWebSockets #1929: its cork()
// checks the HTTP response's state in memory the upgrade had reallocated), so
// a port-forward or exec sometimes ended with 1006 before its first message.
// The handshake here answers the client's own request head (key, protocol),
// then the session gets the same peer the uWS path gives it.

import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type RawData, WebSocket, WebSocketServer } from 'ws';
import type { ByteTunnel, UpgradeSession, WebSocketPeer } from '../endpoints/request.js';
import { messageBuffer } from '../core/ws-message.js';

/** the protocol each handshake agreed on, looked up by the server's handleProtocols */
const chosen = new WeakMap<object, string>();

/** one handshake server per message bound (there is one: the gateway's) */
const servers = new Map<number, WebSocketServer>();
function handshakes(maxPayload: number): WebSocketServer {
  let server = servers.get(maxPayload);
  if (!server) {
    server = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload, handleProtocols: (_offered, req) => chosen.get(req) ?? false });
    servers.set(maxPayload, server);
  }
  return server;
}

/** the tunnel that answers the client's handshake (`method`, `headers` with lower-case names) for `session`; `open`: the sockets open, kept for the shutdown */
export function webSocketTunnel(session: UpgradeSession, method: string, headers: Map<string, string>, maxPayload: number, open: Set<WebSocket>): ByteTunnel {
  let closed = false;
  return {
    open(client: Duplex) {
      if (closed) return void client.destroy();
      // what ws reads of a request: the method and the handshake's headers. The subprotocol was chosen
      // already (session.protocol); kubectl's `SPDY/3.1+portforward.k8s.io` is no token to ws's parser
      // (`/`), so ws is shown a stand-in and answers with the chosen one.
      const shown = Object.fromEntries(headers);
      delete shown['sec-websocket-protocol'];
      if (session.protocol) shown['sec-websocket-protocol'] = 'chosen';
      const req = { method, headers: shown, url: '/' } as unknown as IncomingMessage;
      if (session.protocol) chosen.set(req, session.protocol);
      client.on('error', () => client.destroy());
      // a handshake ws refused (it answered 400 and closed) ends the session it was for
      let bridged = false;
      client.once('close', () => {
        if (!bridged) session.close();
      });
      handshakes(maxPayload).handleUpgrade(req, client, Buffer.alloc(0), (ws) => {
        bridged = true;
        // the server's shutdown closes it with 1001, as it does uWS's sessions
        open.add(ws);
        ws.once('close', () => open.delete(ws));
        bridge(ws, client, session);
      });
    },
    close() {
      if (closed) return;
      closed = true;
      session.close();
    },
  };
}

function bridge(ws: WebSocket, socket: Duplex, session: UpgradeSession): void {
  const peer: WebSocketPeer = {
    send: (msg) => {
      if (ws.readyState !== WebSocket.OPEN) return false;
      ws.send(msg, { binary: true });
      return !socket.writableNeedDrain;
    },
    // ws counts what its socket still holds and what waits in its sender
    bufferedAmount: () => (ws.readyState === WebSocket.OPEN ? ws.bufferedAmount : 0),
    end: (code = 1000, reason) => {
      if (ws.readyState === WebSocket.OPEN) ws.close(code, reason);
    },
  };
  socket.on('drain', () => session.drain());
  ws.on('message', (data: RawData) => session.message(messageBuffer(data)));
  ws.on('error', () => ws.terminate());
  ws.once('close', () => session.close());
  session.open(peer);
}
