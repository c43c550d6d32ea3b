// A TLS front's fixture: a cluster PKI in a temporary directory and a plain
// unix-socket backend standing in for uWS (tests of src/gateway/tls-*.ts).

import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createNetServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROXY_V2_TCP6_HEADER_LENGTH } from '../../src/gateway/tls-front.js';
import { ensurePki, type Pki } from '../../src/server/pki.js';

export interface UnixBackendFixture {
  dir: string;
  pki: Pki;
  /** the backend's unix socket, to pass as `backendSocketPath` */
  socketPath: string;
  /** closes the backend and removes the directory */
  close(): Promise<void>;
}

export async function pkiAndUnixBackend(prefix: string, serve: (socket: Socket) => void): Promise<UnixBackendFixture> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const pki = await ensurePki(join(dir, 'pki'), {});
  const socketPath = join(dir, 'backend.sock');
  const backend = createNetServer(serve);
  await new Promise<void>((resolve) => backend.listen(socketPath, resolve));
  return {
    dir,
    pki,
    socketPath,
    close: async () => {
      await new Promise((r) => backend.close(r));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A backend connection's byte consumer: skips the front's PROXY v2 header,
 * then calls `onHead` with the request line of each complete request head
 * (GET only: no bodies are expected).
 */
export function requestHeads(onHead: (requestLine: string) => void): (chunk: Buffer) => void {
  let buf: Buffer = Buffer.alloc(0);
  let headerSeen = false;
  return (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    if (!headerSeen) {
      if (buf.length < PROXY_V2_TCP6_HEADER_LENGTH) return;
      buf = buf.subarray(PROXY_V2_TCP6_HEADER_LENGTH);
      headerSeen = true;
    }
    for (let end = buf.indexOf('\r\n\r\n'); end >= 0; end = buf.indexOf('\r\n\r\n')) {
      const line = buf.subarray(0, buf.indexOf('\r\n')).toString('latin1');
      buf = buf.subarray(end + 4);
      onHead(line);
    }
  };
}
