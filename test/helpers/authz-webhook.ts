// A real SubjectAccessReview webhook on loopback over TLS for authorization
// tests: a generated CA, a serving certificate for 127.0.0.1, a client
// certificate the webhook requires, and a kubeconfig-format file pointing at it.

import { writeFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { type Server, createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { join } from 'node:path';
import { ensurePki, issueClientCertificate } from '../../src/server/pki.js';

export interface SeenReview {
  apiVersion: string;
  kind: string;
  spec: Record<string, unknown> & { user?: string };
  /** CN of the client certificate the caller presented */
  peer: string | undefined;
}

/** Answers one review: write to `res` (or never, to hang). */
export type ReviewHandler = (review: SeenReview, res: ServerResponse) => void;

export interface AuthzWebhook {
  kubeconfig: string;
  seen: SeenReview[];
  handler: ReviewHandler;
  close(): Promise<void>;
}

/** the usual answer: status in the version asked */
export function answer(res: ServerResponse, review: SeenReview, status: Record<string, unknown>): void {
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'SubjectAccessReview', status }));
}

export async function startAuthzWebhook(dir: string, handler: ReviewHandler): Promise<AuthzWebhook> {
  const pki = await ensurePki(join(dir, 'pki'), { hosts: ['127.0.0.1'] });
  const hook: AuthzWebhook = { kubeconfig: join(dir, 'authz-webhook.kubeconfig'), seen: [], handler, close: async () => {} };
  const server: Server = createServer({ key: pki.serving.keyPem, cert: pki.serving.certPem, ca: pki.ca.certPem, requestCert: true }, (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const review = { ...(JSON.parse(body) as Omit<SeenReview, 'peer'>), peer: String((req.socket as TLSSocket).getPeerCertificate().subject?.CN) };
      hook.seen.push(review);
      hook.handler(review, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/authorize`;
  const client = await issueClientCertificate(pki, { commonName: 'apiserver-client' });
  await writeFile(join(dir, 'hook-client.crt'), client.certPem);
  await writeFile(join(dir, 'hook-client.key'), client.keyPem);
  await writeFile(join(dir, 'hook-ca.crt'), pki.ca.certPem);
  await writeFile(
    hook.kubeconfig,
    `apiVersion: v1\nkind: Config\nclusters:\n- name: hook\n  cluster:\n    server: ${url}\n    certificate-authority: hook-ca.crt\nusers:\n- name: api\n  user:\n    client-certificate: hook-client.crt\n    client-key: hook-client.key\ncontexts:\n- name: c\n  context: {cluster: hook, user: api}\ncurrent-context: c\n`,
  );
  hook.close = () =>
    new Promise((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return hook;
}
