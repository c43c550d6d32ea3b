// `orch bootstrap-kubeconfig` (what `kubeadm token create` and kubeadm's
// bootstrap RBAC do for a kubelet; spec 001 §5.4): through the API, with the
// admin kubeconfig of the data dir, creates a bootstrap token Secret (group
// `system:bootstrappers:orch:default-node-token` besides
// `system:bootstrappers`), makes sure that group may create
// CertificateSigningRequests and have node client ones auto-approved and that
// nodes may renew their own, and writes a kubeconfig with the token for
// `nodeagent --bootstrap-kubeconfig`. The server must run with
// `--enable-bootstrap-token-auth`.

import { randomInt } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { systemClock } from '../core/clock.js';
import { parseGoDuration } from '../core/duration.js';
import { systemNamespacesOf } from '../core/product-names.js';
import { ApiClient, ApiError } from '../nodeagent/api-client.js';
import { discoverApiDomain } from '../nodeagent/api-domain.js';
import { readKubeconfig } from '../nodeagent/kubeconfig.js';
import { writeKubeconfig } from '../server/kubeconfig.js';

export const DEFAULT_NODE_TOKEN_GROUP = 'system:bootstrappers:orch:default-node-token';
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const pick = (n: number): string => Array.from({ length: n }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');

function ttl(v: string): number {
  const ms = parseGoDuration(v);
  if (ms === undefined || ms < 0) throw new InvalidArgumentError('must be a duration such as 24h or 0 (never expires)');
  return ms;
}

export interface BootstrapKubeconfigOptions {
  /** the admin kubeconfig that creates the token and bindings */
  adminKubeconfig: string;
  out: string;
  /** the token's lifetime, ms; 0 = no expiration */
  ttlMs: number;
  /** the URL in the written kubeconfig (default the admin kubeconfig's) */
  server?: string;
  description?: string;
}

/** creates the token and bindings and writes the kubeconfig; returns the token */
export async function createBootstrapKubeconfig(o: BootstrapKubeconfigOptions): Promise<string> {
  const admin = await readKubeconfig(o.adminKubeconfig);
  if (!admin.caPem) throw new Error(`${o.adminKubeconfig} names no certificate authority`);
  const domain = await discoverApiDomain(admin);
  const api = new ApiClient(admin);
  try {
    const id = pick(6);
    const secret = pick(16);
    const ns = systemNamespacesOf(domain).system;
    const labelDomain = domain === 'k8s.io' ? 'kubernetes.io' : domain;
    await api.create(`/api/v1/namespaces/${ns}/secrets`, {
      apiVersion: 'v1', kind: 'Secret',
      metadata: { name: `bootstrap-token-${id}`, namespace: ns },
      type: `bootstrap.${labelDomain}/token`,
      stringData: {
        'token-id': id,
        'token-secret': secret,
        description: o.description ?? 'node agent TLS bootstrap token (orch bootstrap-kubeconfig)',
        'usage-bootstrap-authentication': 'true',
        'usage-bootstrap-signing': 'true',
        'auth-extra-groups': DEFAULT_NODE_TOKEN_GROUP,
        ...(o.ttlMs > 0 ? { expiration: new Date(systemClock.now() + o.ttlMs).toISOString().replace(/\.\d+Z$/, 'Z') } : {}),
      },
    });
    const rbac = `rbac.authorization.${domain}`;
    const certs = `certificates.${domain}`;
    const group = (name: string) => ({ kind: 'Group', apiGroup: rbac, name });
    // kubeadm's three bindings, under the product's name
    const bindings: [string, string, string][] = [
      ['orch:nodeagent-bootstrap', 'system:node-bootstrapper', DEFAULT_NODE_TOKEN_GROUP],
      ['orch:node-autoapprove-bootstrap', `system:${certs}:certificatesigningrequests:nodeclient`, DEFAULT_NODE_TOKEN_GROUP],
      ['orch:node-autoapprove-certificate-rotation', `system:${certs}:certificatesigningrequests:selfnodeclient`, 'system:nodes'],
    ];
    for (const [name, role, subject] of bindings) {
      try {
        await api.create(`/apis/${rbac}/v1/clusterrolebindings`, {
          apiVersion: `${rbac}/v1`, kind: 'ClusterRoleBinding', metadata: { name },
          roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: role }, subjects: [group(subject)],
        });
      } catch (e) {
        if (!(e instanceof ApiError && e.code === 409)) throw e;
      }
    }
    const token = `${id}.${secret}`;
    await writeKubeconfig(o.out, { server: o.server ?? admin.server, caPem: admin.caPem, token, user: 'tls-bootstrap-token-user' });
    return token;
  } finally {
    api.close();
  }
}

/** whether the server authenticates the token of `kubeconfig` (the authenticator may see a new token Secret a moment late) */
async function tokenAccepted(kubeconfig: string): Promise<boolean> {
  const creds = await readKubeconfig(kubeconfig);
  for (let attempt = 0; ; attempt++) {
    try {
      await discoverApiDomain(creds);
      return true;
    } catch (e) {
      if (!(e instanceof ApiError && e.code === 401)) return true; // another problem: not this check's to report
      if (attempt >= 10) return false;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

export function addBootstrapKubeconfigCommand(program: Command): void {
  program
    .command('bootstrap-kubeconfig')
    .description('create a bootstrap token and write a kubeconfig with it for `nodeagent --bootstrap-kubeconfig` (the server needs --enable-bootstrap-token-auth)')
    .requiredOption('--out <file>', 'where to write the bootstrap kubeconfig (mode 0600)')
    .option('--data-dir <dir>', 'the server\'s data dir (its admin.kubeconfig creates the token)', './.orch')
    .option('--kubeconfig <file>', 'an administrator kubeconfig to use instead of <data-dir>/admin.kubeconfig')
    .option('--server <url>', 'the control plane URL written into the bootstrap kubeconfig (default: the admin kubeconfig\'s)')
    .addOption(new Option('--ttl <duration>', 'how long the token stays valid (0: no expiration)').argParser(ttl).default(24 * 3600_000, '24h'))
    .option('--description <text>', 'the token Secret\'s description')
    .action(async (f: { out: string; dataDir: string; kubeconfig?: string; server?: string; ttl: number; description?: string }) => {
      try {
        const adminKubeconfig = f.kubeconfig ?? join(f.dataDir, 'admin.kubeconfig');
        if (!existsSync(adminKubeconfig)) throw new Error(`${adminKubeconfig} not found: start the server first or pass --kubeconfig`);
        const token = await createBootstrapKubeconfig({ adminKubeconfig, out: f.out, ttlMs: f.ttl, server: f.server, description: f.description });
        process.stdout.write(`wrote ${f.out} with bootstrap token ${token.slice(0, 6)}.<secret>\n`);
        if (!(await tokenAccepted(f.out))) {
          process.stderr.write(`bootstrap-kubeconfig: warning: the server answers 401 to the new token: it does not authenticate bootstrap tokens; start it with --enable-bootstrap-token-auth, or \`nodeagent --bootstrap-kubeconfig ${f.out}\` will fail with 401 Unauthorized\n`);
        }
      } catch (e) {
        process.stderr.write(`bootstrap-kubeconfig: ${(e as Error).message}\n`);
        process.exit(1);
      }
    });
}
