// Relays a client's WebSocket (accepted by the gateway) and the API server's
// WebSocket to a node agent, message by message and unchanged: the channel
// protocols (remote command, port-forward) are spoken end to end by the
// client and the agent. Back-pressure: when the client's queue grows, the
// agent's socket stops being read; the client's messages (stdin, port data)
// are forwarded as they come.

import type { UpgradeSession, WebSocketPeer } from '../request.js';
import type { NodeWebSocket } from './node-transport.js';

const HIGH = 4 * 1024 * 1024;

/** `protocol`: the subprotocol as the client named it */
export function relayWebSocket(agent: NodeWebSocket, protocol: string = agent.protocol): UpgradeSession {
  let peer: WebSocketPeer | undefined;
  /** what the agent sent before the client's socket opened (port-forward's port prefixes) */
  const early: Buffer[] = [];
  let agentClosed = false;
  let clientClosed = false;
  let paused = false;
  const toClient = (d: Buffer) => {
    peer!.send(d);
    if (!paused && peer!.bufferedAmount() > HIGH) {
      paused = true;
      agent.pause();
    }
  };
  agent.onMessage((d) => (peer ? toClient(d) : early.push(d)));
  agent.onClose(() => {
    agentClosed = true;
    // the agent's close ends the client's socket after what was queued for it
    if (peer && !clientClosed) peer.end(1000);
  });
  return {
    protocol,
    open(p) {
      peer = p;
      for (const d of early.splice(0)) toClient(d);
      if (agentClosed) p.end(1000);
    },
    message(data) {
      if (!agentClosed) agent.send(data);
    },
    drain() {
      if (paused && peer && peer.bufferedAmount() < HIGH / 2) {
        paused = false;
        agent.resume();
      }
    },
    close() {
      clientClosed = true;
      if (!agentClosed) agent.close(1000);
    },
  };
}
