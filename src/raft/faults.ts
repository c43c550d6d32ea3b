// Fault injection for tests and chaos runs, as a decorator over any
// Transport port (gRPC or in-memory) rather than a feature of one: a
// FaultInjector decides per peer name whether a message is dropped or
// delayed, applied to outgoing AND incoming traffic (withFaults wraps both
// send and the receive callback), so isolating one member needs a rule on
// that member only. Rules change at run time programmatically and, when
// enabled, over a loopback HTTP admin endpoint (startFaultAdmin).

import { type Clock, systemClock } from '../core/clock.js';
import { type Random, systemRandom } from '../core/random.js';
import { createServer, type Server as HttpServer } from 'node:http';
import type { Transport } from './node.js';
import type { Message, NodeId } from './types.js';

/** Per-peer fault rules; the key '*' applies to every peer. */
export interface FaultRules {
  /** peers this member cannot exchange messages with (both directions) */
  partitioned?: string[];
  /** probability in [0, 1] that a message to/from the peer is dropped */
  drop?: Record<string, number>;
  /** extra latency in ms for messages to/from the peer */
  delayMs?: Record<string, number>;
}

export interface FaultVerdict {
  drop: boolean;
  delayMs: number;
}

export class FaultInjector {
  private rules: FaultRules = {};
  /** messages dropped / delayed by the rules (diagnostics) */
  readonly counters = { dropped: 0, delayed: 0 };

  constructor(private readonly random: Random = systemRandom) {}

  set(rules: FaultRules): void {
    this.rules = {
      partitioned: [...(rules.partitioned ?? [])],
      drop: { ...(rules.drop ?? {}) },
      delayMs: { ...(rules.delayMs ?? {}) },
    };
  }

  get(): FaultRules {
    return structuredClone(this.rules);
  }

  clear(): void {
    this.rules = {};
  }

  /** partition this member from `peers` (both directions) */
  partition(...peers: string[]): void {
    this.set({ ...this.rules, partitioned: [...new Set([...(this.rules.partitioned ?? []), ...peers])] });
  }

  heal(): void {
    this.clear();
  }

  verdict(peer: string): FaultVerdict {
    const r = this.rules;
    if (r.partitioned && (r.partitioned.includes(peer) || r.partitioned.includes('*'))) {
      this.counters.dropped += 1;
      return { drop: true, delayMs: 0 };
    }
    const p = r.drop?.[peer] ?? r.drop?.['*'] ?? 0;
    if (p > 0 && this.random() < p) {
      this.counters.dropped += 1;
      return { drop: true, delayMs: 0 };
    }
    const d = r.delayMs?.[peer] ?? r.delayMs?.['*'] ?? 0;
    if (d > 0) this.counters.delayed += 1;
    return { drop: false, delayMs: d };
  }
}

function validRules(v: unknown): v is FaultRules {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const r = v as Record<string, unknown>;
  if (r.partitioned !== undefined && !(Array.isArray(r.partitioned) && r.partitioned.every((p) => typeof p === 'string'))) return false;
  for (const k of ['drop', 'delayMs'] as const) {
    const m = r[k];
    if (m === undefined) continue;
    if (typeof m !== 'object' || m === null || Array.isArray(m)) return false;
    if (!Object.values(m).every((n) => typeof n === 'number' && n >= 0)) return false;
  }
  return true;
}

export interface FaultAdmin {
  port: number;
  close(): Promise<void>;
}

/** the process's wall-clock offset, when the chaos tests may jump it (GET/PUT /clock) */
export interface ClockSkewControl {
  get(): number;
  set(offsetMs: number): void;
}

/**
 * Loopback-only HTTP endpoint for the chaos tests: GET /faults shows the
 * rules, PUT /faults replaces them (JSON FaultRules), DELETE /faults heals;
 * with `clock`, GET /clock shows and PUT /clock `{"offsetMs": n}` sets the
 * wall-clock offset (a clock jump). Only started when the operator passes
 * --enable-fault-injection.
 */
export function startFaultAdmin(injector: FaultInjector, port: number, host = '127.0.0.1', clock?: ClockSkewControl): Promise<FaultAdmin> {
  const server: HttpServer = createServer((req, res) => {
    const reply = (status: number, body: unknown): void => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.url === '/clock' && clock) {
      if (req.method === 'GET') return reply(200, { offsetMs: clock.get() });
      if (req.method !== 'PUT') return reply(405, { error: 'method not allowed' });
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        let offsetMs: unknown;
        try {
          offsetMs = (JSON.parse(Buffer.concat(parts).toString('utf8')) as { offsetMs?: unknown }).offsetMs;
        } catch {
          return reply(400, { error: 'body is not JSON' });
        }
        if (typeof offsetMs !== 'number' || !Number.isFinite(offsetMs)) return reply(400, { error: 'expected {offsetMs: number}' });
        clock.set(offsetMs);
        reply(200, { offsetMs: clock.get() });
      });
      return;
    }
    if (req.url !== '/faults') return reply(404, { error: 'not found' });
    if (req.method === 'GET') return reply(200, injector.get());
    if (req.method === 'DELETE') {
      injector.clear();
      return reply(200, injector.get());
    }
    if (req.method !== 'PUT' && req.method !== 'POST') return reply(405, { error: 'method not allowed' });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return reply(400, { error: 'body is not JSON' });
      }
      if (!validRules(body)) return reply(400, { error: 'expected {partitioned?: string[], drop?: {peer: p}, delayMs?: {peer: ms}}' });
      injector.set(body);
      reply(200, injector.get());
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const addr = server.address();
      resolve({
        port: typeof addr === 'object' && addr ? addr.port : port,
        close: () => new Promise<void>((r) => server.close(() => r())),
      });
    });
  });
}

/**
 * Wraps a transport and its receive callback with `faults`: build the inner
 * transport with `receive` as its onMessage and use the returned transport.
 * Delayed messages to one peer travel together (one send per peer), as the
 * gRPC transport would batch them.
 */
export function withFaults(
  faults: FaultInjector,
  onMessage: (m: Message) => void,
  clock: Clock = systemClock,
): { receive: (m: Message) => void; wrap: (inner: Transport) => Transport } {
  let open = true;
  const receive = (m: Message): void => {
    const v = faults.verdict(m.from);
    if (v.drop) return;
    if (v.delayMs > 0) {
      clock.setTimeout(() => {
        if (open) onMessage(m);
      }, v.delayMs);
    } else {
      onMessage(m);
    }
  };
  const wrap = (inner: Transport): Transport => ({
    send: (messages: Message[]): void => {
      if (!open) return;
      const batches = new Map<NodeId, { msgs: Message[]; delayMs: number }>();
      for (const m of messages) {
        const v = faults.verdict(m.to);
        if (v.drop) continue;
        let b = batches.get(m.to);
        if (!b) batches.set(m.to, (b = { msgs: [], delayMs: 0 }));
        b.msgs.push(m);
        b.delayMs = Math.max(b.delayMs, v.delayMs);
      }
      for (const { msgs, delayMs } of batches.values()) {
        if (delayMs > 0) {
          clock.setTimeout(() => {
            if (open) inner.send(msgs);
          }, delayMs);
        } else {
          inner.send(msgs);
        }
      }
    },
    stats: () => inner.stats(),
    close: async (): Promise<void> => {
      open = false;
      await inner.close();
    },
  });
  return { receive, wrap };
}
