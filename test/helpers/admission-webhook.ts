// A real admission webhook on loopback over TLS for admission tests: its own
// CA (passed to the server as caBundle), a serving certificate for 127.0.0.1
// and `hook.default.svc`, and per-path behaviour the test sets: allow, deny,
// patch, hang, answer garbage. Every AdmissionReview received is recorded.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Server, createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll } from 'vitest';
import { ensurePki } from '../../src/server/pki.js';
import { type TestServer, startTestServer } from './server.js';

export interface SeenAdmission {
  path: string;
  review: { apiVersion: string; kind: string; request: Record<string, unknown> & { uid: string; operation: string; dryRun: boolean; object?: Record<string, unknown> | null } };
}

/** what to answer one review with: a response body object (the uid is filled in), or a raw function */
export type AdmissionBehaviour =
  | { allowed: boolean; status?: Record<string, unknown>; patch?: unknown[]; warnings?: string[] }
  | ((seen: SeenAdmission, res: ServerResponse) => void);

/** an AdmissionResponse without its uid (filled in when sent) */
export type AdmissionAnswer = Exclude<AdmissionBehaviour, (...args: never[]) => void>;

/** answers `review` with `a` as an AdmissionReview */
export function sendReview(res: ServerResponse, review: SeenAdmission['review'], a: AdmissionAnswer): void {
  const response: Record<string, unknown> = { uid: review.request.uid, allowed: a.allowed };
  if (a.status) response.status = a.status;
  if (a.warnings) response.warnings = a.warnings;
  if (a.patch) {
    response.patchType = 'JSONPatch';
    response.patch = Buffer.from(JSON.stringify(a.patch)).toString('base64');
  }
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'AdmissionReview', response }));
}

export interface AdmissionWebhook {
  port: number;
  url(path: string): string;
  /** base64 of the webhook's CA certificate */
  caBundle: string;
  seen: SeenAdmission[];
  /** behaviour per path; default allow */
  on: Map<string, AdmissionBehaviour>;
  close(): Promise<void>;
}

/** `hosts`: more names the serving certificate carries (a Service reference's `<name>.<namespace>.svc`) */
export async function startAdmissionWebhook(dir: string, hosts: readonly string[] = []): Promise<AdmissionWebhook> {
  const pki = await ensurePki(join(dir, 'hook-pki'), { hosts: ['127.0.0.1', 'hook.default.svc', ...hosts] });
  const seen: SeenAdmission[] = [];
  const on = new Map<string, AdmissionBehaviour>();
  const server: Server = createServer({ key: pki.serving.keyPem, cert: pki.serving.certPem }, (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0]!;
      let review: SeenAdmission['review'];
      try {
        review = JSON.parse(body) as SeenAdmission['review'];
      } catch {
        res.statusCode = 400;
        res.end('bad review');
        return;
      }
      const s = { path, review };
      seen.push(s);
      const b = on.get(path) ?? { allowed: true };
      if (typeof b === 'function') {
        b(s, res);
        return;
      }
      sendReview(res, review, b);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (p) => `https://127.0.0.1:${port}${p}`,
    caBundle: Buffer.from(pki.ca.certPem).toString('base64'),
    seen,
    on,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** one server and one webhook (in a temp dir) for a test file: started before its tests (handed to `set`), stopped after them */
export function useServerWithWebhook(prefix: string, set: (ts: TestServer, hook: AdmissionWebhook) => void): void {
  let ts: TestServer | undefined;
  let hook: AdmissionWebhook | undefined;
  let dir: string | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), prefix));
    ts = await startTestServer();
    hook = await startAdmissionWebhook(dir);
    set(ts, hook);
  });
  afterAll(async () => {
    await hook?.close();
    await ts?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
}
