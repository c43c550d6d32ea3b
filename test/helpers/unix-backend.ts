// A TLS front's fixture: a cluster PKI in a temporary directory and a plain
// unix-socket backend standing in for uWS (tests of src/gateway/tls-*.ts).

import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createNetServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
