// The HTTP/1.1 connection's probe gate (src/gateway/tls-h1-probe-gate.ts) on
// a simulated clock: which bytes it answers, holds and forwards, and in what
// order. The connection around it is tested in tls-h1-probes.test.ts.
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { ProbeReply } from '../../src/gateway/health-probe.js';
import { ProbeGate } from '../../src/gateway/tls-h1-probe-gate.js';

const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

function gate(o: { open?: () => boolean } = {}) {
  const clock = new ManualClock();
  const forwarded: string[] = [];
  const answers: string[] = [];
  const asked: string[] = [];
  const g = new ProbeGate({
    clock,
    // a probe of /livez is answered; anything else is not one
    answer: async (head) => {
      asked.push(head);
      return head.startsWith('GET /livez ') ? { bytes: Buffer.from(`ok:${head.split(' ')[1]}`), close: head.includes('Connection: close') } : undefined;
    },
    peer: () => undefined,
    open: o.open ?? (() => true),
    forward: (b) => forwarded.push(b.toString('latin1')),
    answered: (r: ProbeReply) => answers.push(r.bytes.toString()),
  });
  return { g, clock, forwarded, answers, asked };
}

const LIVEZ = 'GET /livez HTTP/1.1\r\nHost: x\r\n\r\n';
const POST = 'POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}';

describe('ProbeGate', () => {
  it('answers pipelined probes in order, then forwards from the first request that is not one, probes after it included', async () => {
    const { g, forwarded, answers } = gate();
    g.take(Buffer.from(LIVEZ + LIVEZ + POST + LIVEZ));
    await flush();
    expect(answers).toEqual(['ok:/livez', 'ok:/livez']);
    expect(forwarded).toEqual([POST + LIVEZ]);
    expect(g.active).toBe(false);
    // until the backend connection is retired, everything is the backend's
    g.reset();
    g.take(Buffer.from(LIVEZ));
    await flush();
    expect(answers).toHaveLength(3);
  });

  it('holds a head that may be a probe for 50 ms, then forwards it; a head that cannot be one goes at once', async () => {
    const { g, clock, forwarded } = gate();
    g.take(Buffer.from('GET /liv'));
    await flush();
    expect(forwarded).toEqual([]);
    expect(g.holding).toBe(true);
    clock.advance(49);
    expect(forwarded).toEqual([]);
    clock.advance(1);
    expect(forwarded).toEqual(['GET /liv']);
    expect(g.active).toBe(false);

    const other = gate();
    other.g.take(Buffer.from('PUT /api'));
    await flush();
    expect(other.forwarded).toEqual(['PUT /api']);
  });

  it('a head completed within the hold is answered, and the hold timer is cancelled', async () => {
    const { g, clock, forwarded, answers } = gate();
    g.take(Buffer.from('GET /livez HTTP/1.1\r\n'));
    await flush();
    g.take(Buffer.from('Host: x\r\n\r\n'));
    await flush();
    expect(answers).toEqual(['ok:/livez']);
    clock.advance(100);
    expect(forwarded).toEqual([]);
    expect(g.active).toBe(true);
  });

  it('answers nothing more once the connection is no longer open (a closing answer, a failure)', async () => {
    let open = true;
    const { g, answers, asked } = gate({ open: () => open });
    g.take(Buffer.from(LIVEZ));
    await flush();
    open = false;
    g.take(Buffer.from(LIVEZ));
    await flush();
    expect(answers).toHaveLength(1);
    expect(asked).toHaveLength(1);
  });
});
