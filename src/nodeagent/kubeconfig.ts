// Reads the agent's `--kubeconfig` (the current context's cluster and user):
// server URL, CA, and a client certificate or bearer token; and checks the
// kubeconfigs the agent is given before anything starts (checkKubeconfigs).

import { X509Certificate } from 'node:crypto';
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

/** the certificate of a kubeconfig's credentials is usable at `now` */
export function certificateValid(creds: ApiCredentials, now: number): boolean {
  if (creds.token) return true;
  if (!creds.certPem || !creds.keyPem) return false;
  try {
    const c = new X509Certificate(creds.certPem);
    return Date.parse(c.validFrom) <= now + 5 * 60_000 && now < Date.parse(c.validTo);
  } catch {
    return false;
  }
}

/** a kubeconfig the agent cannot start with (the message names the flag and the file) */
export class KubeconfigError extends Error {}

async function readable(flag: string, path: string, note = ''): Promise<ApiCredentials> {
  try {
    return await readKubeconfig(path);
  } catch (e) {
    // one line: `no such file or directory` rather than `ENOENT: no such file or directory, open '<path>'`; a YAML error's first line
    const why = (e as Error).message.replace(`kubeconfig ${path}: `, '').split('\n')[0]!.replace(/^E[A-Z]+: ([^,]+),.*$/, '$1').replace(/:$/, '');
    throw new KubeconfigError(`${flag} ${path} is not usable: ${why}${note}`);
  }
}

/**
 * The agent's kubeconfigs, checked before it starts anything (the lock, the runtime): `--kubeconfig`
 * must be readable and a kubeconfig; with `--bootstrap-kubeconfig` (TLS bootstrapping, tls-bootstrap.ts)
 * `--kubeconfig` is where the bootstrapped one goes, and the bootstrap kubeconfig must be readable when
 * `--kubeconfig` is absent or its certificate not valid (kubelet's LoadClientCert keeps a usable one).
 */
export async function checkKubeconfigs(o: { kubeconfig?: string; bootstrapKubeconfig?: string; now: number }): Promise<void> {
  if (o.bootstrapKubeconfig) {
    if (!o.kubeconfig) throw new KubeconfigError('--bootstrap-kubeconfig needs --kubeconfig (where the bootstrapped kubeconfig is written)');
    const kept = await readKubeconfig(o.kubeconfig).then((c) => certificateValid(c, o.now), () => false);
    if (!kept) await readable('--bootstrap-kubeconfig', o.bootstrapKubeconfig, ` (needed: --kubeconfig ${o.kubeconfig} is absent or has no valid client certificate)`);
  } else if (o.kubeconfig) await readable('--kubeconfig', o.kubeconfig, ' (without --kubeconfig the agent runs standalone)');
}
