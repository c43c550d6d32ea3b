// Test servers are disposable resources (issue #9 item 7): `await using`
// stops the server and removes its data directory when the scope ends, also
// when the scope ends by an exception.

import { access } from 'node:fs/promises';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/server.js';

/** whether something accepts TCP connections on the port */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

const exists = (p: string) => access(p).then(() => true, () => false);

describe('startTestServer as a disposable', () => {
  it('stops the server and removes its data when the scope ends, even by a throw', async () => {
    let port = 0;
    let dir = '';
    await expect(
      (async () => {
        await using t = await startTestServer();
        port = t.server.port;
        dir = t.dataDir;
        expect(await listening(port)).toBe(true);
        throw new Error('the test body failed');
      })(),
    ).rejects.toThrow('the test body failed');
    expect(await listening(port)).toBe(false);
    expect(await exists(dir)).toBe(false);
  });

  it('an explicit stop before the scope ends is not repeated', async () => {
    await using t = await startTestServer();
    await t.stop();
    expect(await listening(t.server.port)).toBe(false);
  });
});
