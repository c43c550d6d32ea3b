// Every connection to the TLS worker pool gets an answer or a refusal, also
// while the pool starts and while a worker is killed and replaced (issue #15:
// connections accepted in those windows used to hang until the server
// exited). Clients connect in a tight loop from before the port opens until
// well after; a connection that neither answers nor fails within a generous
// bound counts as hung, and none may.
import { mkdtemp, rm } from 'node:fs/promises';
import { freePort } from '../helpers/ports.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import uws from 'uWebSockets.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTlsWorkers, type TlsWorkerPool } from '../../src/gateway/tls-workers.js';
import { ensurePki, type Pki } from '../../src/server/pki.js';

/** far beyond any handshake and answer on a loaded machine; only a leaked connection reaches it */
const HUNG_AFTER_MS = 15_000;

type Outcome = 'answered' | 'refused' | 'hung';

describe('TLS worker pool liveness', () => {
  let dir: string;
  let pki: Pki;
  let socketPath: string;
  let listenSocket: uws.us_listen_socket | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'orch-tls-live-'));
    pki = await ensurePki(join(dir, 'pki'));
    socketPath = join(dir, 'gw.sock');
    const app = uws.App();
    app.any('/*', (res) => void res.end('ok'));
    await new Promise<void>((resolve, reject) =>
      app.listen_unix((s) => {
        listenSocket = s || undefined;
        if (s) resolve();
        else reject(new Error('uWS listen failed'));
      }, socketPath),
    );
  });

  afterAll(async () => {
    if (listenSocket) uws.us_listen_socket_close(listenSocket);
    await rm(dir, { recursive: true, force: true });
  });

  const attempt = (port: number): Promise<Outcome> =>
    new Promise((resolve) => {
      let text = '';
      const s = tlsConnect({ host: '127.0.0.1', port, ca: pki.ca.certPem, servername: 'localhost' });
      const timer = setTimeout(() => {
        s.destroy();
        resolve('hung');
      }, HUNG_AFTER_MS);
      const done = (o: Outcome): void => {
        clearTimeout(timer);
        resolve(o);
      };
      s.on('secureConnect', () => s.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
      s.on('data', (d: Buffer) => (text += d.toString()));
      s.on('error', () => done('refused'));
      s.on('close', () => done(text.endsWith('ok') ? 'answered' : 'refused'));
    });

  /** clients in `parallel` loops until `stop()` says so; returns every outcome */
  const hammer = (port: number, parallel: number, stop: () => boolean): Promise<Outcome[]> => {
    const outcomes: Outcome[] = [];
    const loop = async (): Promise<void> => {
      while (!stop()) outcomes.push(await attempt(port));
    };
    return Promise.all(Array.from({ length: parallel }, loop)).then(() => outcomes);
  };

  const startPool = (port: number): Promise<TlsWorkerPool> =>
    startTlsWorkers({ workers: 2, host: '127.0.0.1', port, key: pki.serving.keyPem, cert: pki.serving.certPem, backendSocketPath: socketPath });

  it('answers or refuses every connection made before, while and after the pool starts', async () => {
    const port = await freePort();
    let pool: TlsWorkerPool | undefined;
    // keep going until 200 connections were answered after the start
    const answeredAfterStart = (outcomes: Outcome[], from: number): number => outcomes.slice(from).filter((o) => o === 'answered').length;
    const outcomes: Outcome[] = [];
    let startedAt = Infinity;
    const loop = async (): Promise<void> => {
      while (answeredAfterStart(outcomes, startedAt) < 200) outcomes.push(await attempt(port));
    };
    const clients = Promise.all(Array.from({ length: 4 }, loop));
    try {
      // let the clients meet a closed port first
      await new Promise((r) => setTimeout(r, 100));
      pool = await startPool(port);
      startedAt = outcomes.length;
      await clients;
    } finally {
      startedAt = 0;
      await clients;
      await pool?.close();
    }
    expect(outcomes.filter((o) => o === 'hung')).toEqual([]);
    expect(outcomes.filter((o) => o === 'refused').length).toBeGreaterThan(0);
    expect(answeredAfterStart(outcomes, 0)).toBeGreaterThanOrEqual(200);
  }, 120_000);

  it('answers or refuses every connection while workers are killed and replaced', async () => {
    const pool = await startPool(0);
    let stopped = false;
    const clients = hammer(pool.port, 4, () => stopped);
    try {
      for (let round = 0; round < 3; round++) {
        const [victim, other] = pool.workerPids();
        process.kill(victim!, 'SIGKILL');
        for (let i = 0; i < 2000; i++) {
          const pids = pool.workerPids();
          if (pids.length === 2 && !pids.includes(victim!)) break;
          await new Promise((r) => setTimeout(r, 10));
        }
        expect(pool.workerPids()).toContain(other);
        expect(pool.workerPids()).not.toContain(victim);
      }
    } finally {
      stopped = true;
    }
    const outcomes = await clients;
    await pool.close();
    expect(outcomes.filter((o) => o === 'hung')).toEqual([]);
    expect(outcomes.filter((o) => o === 'answered').length).toBeGreaterThan(0);
  }, 180_000);
});
