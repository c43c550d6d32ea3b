// In-memory implementations of the driver's ports (src/raft/node.ts), so a
// whole cluster runs in one process for tests and development: a log storage
// that keeps what a Ready persists in arrays (no durability), and a network
// that delivers messages between members of the same process. Messages are
// encoded and decoded like on the wire (msgpack), so no member shares an
// object with another.

import { decodeMsgpack, encodeMsgpack } from './codec.js';
import type { LogStorage, Transport } from './node.js';
import type { PersistRequest } from './storage.js';
import type { TransportStats } from './transport.js';
import { NONE, type Entry, type HardState, type Message, type NodeId, type PersistentState, type Snapshot } from './types.js';

export class MemoryLogStorage implements LogStorage {
  private hardState: HardState = { term: 0, vote: NONE, commit: 0 };
  private snapshot: Snapshot | undefined;
  private entries: Entry[] = [];
  private written = false;

  async load(): Promise<PersistentState & { empty: boolean }> {
    return { hardState: { ...this.hardState }, snapshot: this.snapshot, entries: [...this.entries], empty: !this.written };
  }

  async save(req: PersistRequest): Promise<boolean> {
    if (!req.hardState && !req.snapshot && req.entries.length === 0) return false;
    this.written = true;
    if (req.snapshot) {
      this.snapshot = req.snapshot;
      this.entries = [];
    }
    const from = req.entries[0]?.index;
    if (from !== undefined) {
      this.entries = this.entries.filter((e) => e.index < from).concat(req.entries);
    }
    if (req.hardState) this.hardState = { ...req.hardState };
    return req.snapshot !== undefined || req.entries.length > 0;
  }

  async saveSnapshot(snap: Snapshot): Promise<void> {
    if (snap.metadata.index <= (this.snapshot?.metadata.index ?? 0)) return;
    this.snapshot = snap;
    this.entries = this.entries.filter((e) => e.index > snap.metadata.index);
  }

  stats(): { lastIndex: number } {
    return { lastIndex: this.entries[this.entries.length - 1]?.index ?? this.snapshot?.metadata.index ?? 0 };
  }

  async close(): Promise<void> {}
}

/** Members of one process reach each other through this; a member that left (closed) receives nothing. */
export class MemoryNetwork {
  private readonly members = new Map<NodeId, (m: Message) => void>();

  /** joins `self` to the network; `onMessage` receives what others send to it */
  join(self: NodeId, onMessage: (m: Message) => void): Transport & { stats(): TransportStats } {
    this.members.set(self, onMessage);
    const counters = { sent: 0, received: 0, droppedDisconnected: 0, frames: 0 };
    let open = true;
    return {
      send: (messages: Message[]): void => {
        if (!open) return;
        for (const m of messages) {
          const bytes = encodeMsgpack(m);
          counters.sent += 1;
          counters.frames += 1;
          // asynchronously, like a socket: a member never re-enters another's Ready loop
          setImmediate(() => {
            const deliver = this.members.get(m.to);
            if (!deliver) {
              counters.droppedDisconnected += 1;
              return;
            }
            counters.received += 1;
            deliver(decodeMsgpack(bytes) as Message);
          });
        }
      },
      stats: (): TransportStats => ({
        ...counters,
        refusedPeers: 0,
        reconnects: 0,
        connected: Object.fromEntries([...this.members.keys()].filter((id) => id !== self).map((id) => [id, true])),
      }),
      close: async (): Promise<void> => {
        open = false;
        if (this.members.get(self) === onMessage) this.members.delete(self);
      },
    };
  }
}
