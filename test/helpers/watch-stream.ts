// A raw HTTPS watch client for integration tests: opens `?watch=1` streams
// with the admin certificate, parses the JSON-lines events (spec 000 §2.5) and
// lets a test wait for the next events or the end of the stream.

import type { ClientRequest, IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { RunningServer } from '../../src/server/server.js';

export interface WatchEvent {
  type: string;
  object: {
    kind?: string;
    apiVersion?: string;
    code?: number;
    reason?: string;
    message?: string;
    metadata?: { name?: string; namespace?: string; resourceVersion?: string; annotations?: Record<string, string> };
    [k: string]: unknown;
  };
}

export interface WatchStream {
  /**
   * status and headers; they may arrive only with the first event (the
   * gateway flushes the response head with the first chunk), so tests that
   * write after opening must not wait for this first
   */
  response: Promise<{ status: number; headers: IncomingHttpHeaders }>;
  /** every event received so far */
  events: WatchEvent[];
  /** the body, when the response was not a stream (an error Status) */
  body(): Promise<string>;
  /** resolves with the events once `count` of them (in total) have arrived; rejects on timeout or end */
  waitFor(count: number, timeoutMs?: number): Promise<WatchEvent[]>;
  /** resolves once an event satisfying `pred` has arrived */
  waitUntil(pred: (e: WatchEvent) => boolean, timeoutMs?: number): Promise<WatchEvent>;
  /** resolves when the server ends the stream (true = clean end) */
  ended: Promise<boolean>;
  isEnded(): boolean;
  /** the client disconnects */
  close(): void;
}

export function openWatch(server: RunningServer, path: string, headers: Record<string, string> = {}): WatchStream {
  const events: WatchEvent[] = [];
  const listeners = new Set<() => void>();
  let raw = '';
  let ended = false;
  let endResolve!: (clean: boolean) => void;
  const endedP = new Promise<boolean>((r) => (endResolve = r));
  const notify = (): void => {
    for (const l of [...listeners]) l();
  };
  const finish = (clean: boolean): void => {
    if (ended) return;
    ended = true;
    endResolve(clean);
    notify();
  };
  let res: IncomingMessage | undefined;
  let req: ClientRequest | undefined = undefined;
  const response = new Promise<{ status: number; headers: IncomingHttpHeaders }>((resolve, reject) => {
    req = httpsRequest(
      {
        host: '127.0.0.1',
        port: server.port,
        method: 'GET',
        path,
        headers,
        ca: server.caPem,
        cert: server.adminCertPem,
        key: server.adminKeyPem,
        agent: false,
      },
      (r) => {
        res = r;
        let buf = '';
        r.setEncoding('utf8');
        r.on('data', (chunk: string) => {
          raw += chunk;
          if (r.statusCode !== 200) return;
          buf += chunk;
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            if (line) events.push(JSON.parse(line) as WatchEvent);
          }
          notify();
        });
        r.on('end', () => finish(true));
        r.on('error', () => finish(false));
        r.on('aborted', () => finish(false));
        r.on('close', () => finish(r.complete));
        resolve({ status: r.statusCode ?? 0, headers: r.headers });
      },
    );
    req!.on('error', (e) => {
      finish(false);
      reject(e);
    });
    req!.end();
  });
  response.catch(() => undefined);
  const waitUntilCount = (check: () => boolean, what: string, timeoutMs: number): Promise<void> =>
    new Promise((ok, fail) => {
      const l = (): void => {
        if (check()) {
          cleanup();
          ok();
        } else if (ended) {
          cleanup();
          fail(new Error(`watch ended before ${what}; got ${JSON.stringify(events.map((e) => e.type))}`));
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        fail(new Error(`timed out waiting for ${what}; got ${events.length} events: ${JSON.stringify(events.map((e) => e.type))}`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        listeners.delete(l);
      };
      listeners.add(l);
      l();
    });
  return {
    response,
    events,
    body: async () => {
      await endedP;
      return raw;
    },
    async waitFor(count, timeoutMs = 10_000) {
      await waitUntilCount(() => events.length >= count, `${count} events`, timeoutMs);
      return events.slice(0, count);
    },
    async waitUntil(pred, timeoutMs = 10_000) {
      await waitUntilCount(() => events.some(pred), 'a matching event', timeoutMs);
      return events.find(pred)!;
    },
    ended: endedP,
    isEnded: () => ended,
    close: () => {
      (req as ClientRequest | undefined)?.destroy();
      res?.destroy();
    },
  };
}

