// The main process's end of a SPDY hand-over (src/gateway/byte-tunnels.ts, docs/tls.md "SPDY
// upgrades"): a connection that brings the token gets the tunnel, with the bytes that came behind
// the token; an unknown or spent token is closed; a token nobody brings expires and closes its tunnel.
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { type ByteTunnelListener, startByteTunnelListener } from '../../src/gateway/byte-tunnels.js';

let dir: string;
let path: string;
let listener: ByteTunnelListener;
const clock = new ManualClock(0);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-tunnels-'));
  path = join(dir, 'gateway.sock.tunnel');
  listener = await startByteTunnelListener(path, clock);
});

afterAll(async () => {
  await listener.close();
  await rm(dir, { recursive: true, force: true });
});

/** connects, writes `bytes`, and resolves with everything read until the listener closes the connection */
function bring(bytes: string): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(path, () => s.write(bytes));
    let got = '';
    s.on('data', (d: Buffer) => (got += d.toString()));
    s.on('close', () => resolve(got));
    s.on('error', () => undefined);
  });
}

describe('byte tunnels', () => {
  it('hands the connection that brings the token to its tunnel, once', async () => {
    let closed = 0;
    const token = listener.offer({
      open(client: Duplex) {
        // an echo of what came behind the token, then the end
        client.once('data', (d: Buffer) => client.end(`got:${d}`));
      },
      close: () => closed++,
    });
    expect(await bring(`${token}\nhello`)).toBe('got:hello');
    // spent: the same token again is closed without a word
    expect(await bring(`${token}\nagain`)).toBe('');
    expect(await bring(`${'0'.repeat(64)}\nx`)).toBe('');
    expect(closed).toBe(0);
  });

  it('closes a tunnel whose token nobody brought in time', async () => {
    let closed = 0;
    const token = listener.offer({ open: () => undefined, close: () => closed++ });
    clock.advance(10_001);
    expect(closed).toBe(1);
    expect(await bring(`${token}\n`)).toBe('');
  });
});
