// Client configuration files (kubeconfig) for the CLI and for kubectl: the
// cluster CA and the user's credentials (a client certificate as base64 `*-data`
// fields, spec 001_bdb487117be0ea8a.txt §5.3, or a bearer token, §5.3 static
// tokens) embedded, so the file is self-contained. With several cluster members each member
// gets its own cluster entry and context, all sharing one user.
import { chmod, mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { stringify } from 'yaml';

export interface KubeconfigContext {
  /** context name; also the name of its cluster entry */
  name: string;
  /** e.g. https://127.0.0.1:6443 */
  server: string;
  /** overrides the TLS server name checked against the serving certificate */
  tlsServerName?: string;
  /** default namespace for this context */
  namespace?: string;
}

/** a client certificate, or a bearer token (which `kubectl --token` can then replace) */
type KubeconfigCredentials = {
  /** PEM of the CA that signs the serving certificate(s) */
  caPem: string;
  /** user entry name; default `orch-admin` */
  user?: string;
} & ({ clientCertPem: string; clientKeyPem: string; token?: undefined } | { token: string; clientCertPem?: undefined; clientKeyPem?: undefined });

/** One cluster: `server` plus an optional context name (default `orch`). */
export type SingleClusterKubeconfigOptions = KubeconfigCredentials & {
  server: string;
  contextName?: string;
};

/** Several clusters (e.g. one per Raft member); current context defaults to the first. */
export type MultiClusterKubeconfigOptions = KubeconfigCredentials & {
  contexts: KubeconfigContext[];
  currentContext?: string;
};

export type KubeconfigOptions = SingleClusterKubeconfigOptions | MultiClusterKubeconfigOptions;

export const DEFAULT_CONTEXT_NAME = 'orch';
export const DEFAULT_USER_NAME = 'orch-admin';

export function renderKubeconfig(opts: KubeconfigOptions): string {
  const contexts: KubeconfigContext[] =
    'contexts' in opts ? opts.contexts : [{ name: opts.contextName ?? DEFAULT_CONTEXT_NAME, server: opts.server }];
  if (contexts.length === 0) throw new Error('kubeconfig needs at least one context');
  const names = new Set<string>();
  for (const c of contexts) {
    if (c.name === '') throw new Error('kubeconfig context name must not be empty');
    if (names.has(c.name)) throw new Error(`duplicate kubeconfig context name ${c.name}`);
    if (!/^https:\/\//.test(c.server)) throw new Error(`kubeconfig server must be an https URL: ${c.server}`);
    names.add(c.name);
  }
  const current = 'contexts' in opts && opts.currentContext !== undefined ? opts.currentContext : contexts[0]!.name;
  if (opts.token !== undefined && opts.token === '') throw new Error('kubeconfig token must not be empty');
  if (!names.has(current)) throw new Error(`current context ${current} is not among the contexts`);
  const user = opts.user ?? DEFAULT_USER_NAME;
  const caData = b64(opts.caPem);

  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: contexts.map((c) => ({
      name: c.name,
      cluster: {
        server: c.server,
        'certificate-authority-data': caData,
        ...(c.tlsServerName !== undefined ? { 'tls-server-name': c.tlsServerName } : {}),
      },
    })),
    contexts: contexts.map((c) => ({
      name: c.name,
      context: { cluster: c.name, user, ...(c.namespace !== undefined ? { namespace: c.namespace } : {}) },
    })),
    'current-context': current,
    preferences: {},
    users: [
      {
        name: user,
        user:
          opts.token !== undefined
            ? { token: opts.token }
            : { 'client-certificate-data': b64(opts.clientCertPem), 'client-key-data': b64(opts.clientKeyPem) },
      },
    ],
  };
  // lineWidth 0: never fold the long base64 strings.
  return stringify(doc, { lineWidth: 0 });
}

/** Write the kubeconfig atomically with mode 0600 (it holds a private key or a token). */
export async function writeKubeconfig(path: string, opts: KubeconfigOptions): Promise<void> {
  const text = renderKubeconfig(opts);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.tmp-${process.pid}`;
  await writeFile(tmp, text, { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, path);
}

function b64(pem: string): string {
  return Buffer.from(pem, 'utf8').toString('base64');
}
