// Reads the agent's `--kubeconfig` (the current context's cluster and user):
// server URL, CA, and a client certificate or bearer token.

import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import { parse as parseYaml } from 'yaml';

export interface ApiCredentials {
  server: string;
  caPem?: string;
  certPem?: string;
  keyPem?: string;
  token?: string;
  tlsServerName?: string;
}

type Named<T> = { name: string } & T;

export async function readKubeconfig(path: string): Promise<ApiCredentials> {
  let doc: Record<string, unknown>;
  try {
    doc = parseYaml(await readFile(path, 'utf8')) as Record<string, unknown>;
  } catch (e) {
    throw new Error(`kubeconfig ${path}: ${(e as Error).message}`);
  }
  const fail = (m: string) => new Error(`kubeconfig ${path}: ${m}`);
  if (!doc || typeof doc !== 'object') throw fail('not a kubeconfig');
  const contexts = (doc.contexts ?? []) as Named<{ context: { cluster: string; user: string } }>[];
  const current = (doc['current-context'] as string | undefined) ?? contexts[0]?.name;
  const ctx = contexts.find((c) => c.name === current)?.context;
  if (!ctx) throw fail(`context "${current ?? ''}" not found`);
  const cluster = ((doc.clusters ?? []) as Named<{ cluster: Record<string, string> }>[]).find((c) => c.name === ctx.cluster)?.cluster;
  if (!cluster?.server) throw fail(`cluster "${ctx.cluster}" has no server`);
  const user = ((doc.users ?? []) as Named<{ user: Record<string, string> }>[]).find((u) => u.name === ctx.user)?.user ?? {};
  const rel = (p: string) => (isAbsolute(p) ? p : join(dirname(path), p));
  const dataOrFile = async (data?: string, file?: string) =>
    data ? Buffer.from(data, 'base64').toString('utf8') : file ? await readFile(rel(file), 'utf8') : undefined;
  const token = user.token ?? (user.tokenFile ? (await readFile(rel(user.tokenFile), 'utf8')).trim() : undefined);
  return {
    server: cluster.server.replace(/\/+$/, ''),
    caPem: await dataOrFile(cluster['certificate-authority-data'], cluster['certificate-authority']),
    certPem: await dataOrFile(user['client-certificate-data'], user['client-certificate']),
    keyPem: await dataOrFile(user['client-key-data'], user['client-key']),
    token,
    tlsServerName: cluster['tls-server-name'],
  };
}
