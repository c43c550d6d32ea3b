// Kubeconfig rendering and writing (src/server/kubeconfig.ts): embedded CA
// and client certificate (spec 001_bdb487117be0ea8a.txt §5.3), one context
// per cluster member. Parsed back with YAML and with the official Kubernetes
// JavaScript client's loader to check compatibility.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderKubeconfig, writeKubeconfig } from '../../src/server/kubeconfig.js';

const execFileP = promisify(execFile);

const CA = '-----BEGIN CERTIFICATE-----\nQ0E=\n-----END CERTIFICATE-----\n';
const CERT = '-----BEGIN CERTIFICATE-----\nQ0VSVA==\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN PRIVATE KEY-----\nS0VZ\n-----END PRIVATE KEY-----\n';
const creds = { caPem: CA, clientCertPem: CERT, clientKeyPem: KEY };
const b64 = (s: string) => Buffer.from(s).toString('base64');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-kubeconfig-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Doc {
  apiVersion: string;
  kind: string;
  clusters: { name: string; cluster: Record<string, string> }[];
  contexts: { name: string; context: Record<string, string> }[];
  'current-context': string;
  users: { name: string; user: Record<string, string> }[];
}

describe('renderKubeconfig', () => {
  it('renders one cluster with embedded data and a current context', () => {
    const doc = parse(renderKubeconfig({ server: 'https://127.0.0.1:6443', ...creds })) as Doc;
    expect(doc.apiVersion).toBe('v1');
    expect(doc.kind).toBe('Config');
    expect(doc.clusters).toEqual([
      { name: 'orch', cluster: { server: 'https://127.0.0.1:6443', 'certificate-authority-data': b64(CA) } },
    ]);
    expect(doc.contexts).toEqual([{ name: 'orch', context: { cluster: 'orch', user: 'orch-admin' } }]);
    expect(doc['current-context']).toBe('orch');
    expect(doc.users).toEqual([
      { name: 'orch-admin', user: { 'client-certificate-data': b64(CERT), 'client-key-data': b64(KEY) } },
    ]);
  });

  it('renders a bearer token instead of a client certificate when given one', () => {
    const doc = parse(renderKubeconfig({ server: 'https://127.0.0.1:6443', caPem: CA, token: 'tok-123' })) as Doc;
    expect(doc.users).toEqual([{ name: 'orch-admin', user: { token: 'tok-123' } }]);
    expect(() => renderKubeconfig({ server: 'https://127.0.0.1:6443', caPem: CA, token: '' })).toThrow(/token must not be empty/);
  });

  it('honours contextName and user', () => {
    const doc = parse(
      renderKubeconfig({ server: 'https://h:1', contextName: 'prod', user: 'root', ...creds }),
    ) as Doc;
    expect(doc['current-context']).toBe('prod');
    expect(doc.contexts[0]!.context).toEqual({ cluster: 'prod', user: 'root' });
    expect(doc.users[0]!.name).toBe('root');
  });

  it('renders one context per cluster member, sharing the user', () => {
    const text = renderKubeconfig({
      contexts: [
        { name: 'orch-1', server: 'https://10.0.0.1:6443' },
        { name: 'orch-2', server: 'https://10.0.0.2:6443', tlsServerName: 'orch.local', namespace: 'team' },
        { name: 'orch-3', server: 'https://10.0.0.3:6443' },
      ],
      currentContext: 'orch-2',
      ...creds,
    });
    const doc = parse(text) as Doc;
    expect(doc.clusters.map((c) => [c.name, c.cluster['server']])).toEqual([
      ['orch-1', 'https://10.0.0.1:6443'],
      ['orch-2', 'https://10.0.0.2:6443'],
      ['orch-3', 'https://10.0.0.3:6443'],
    ]);
    expect(doc.clusters[1]!.cluster['tls-server-name']).toBe('orch.local');
    expect(doc.contexts[1]!.context).toEqual({ cluster: 'orch-2', user: 'orch-admin', namespace: 'team' });
    expect(doc['current-context']).toBe('orch-2');
    expect(doc.users).toHaveLength(1);

    // The official client reads it the same way.
    const kc = new KubeConfig();
    kc.loadFromString(text);
    expect(kc.getCurrentContext()).toBe('orch-2');
    expect(kc.getCurrentCluster()?.server).toBe('https://10.0.0.2:6443');
    expect(kc.getCurrentCluster()?.caData).toBe(b64(CA));
    expect(kc.getCurrentUser()?.certData).toBe(b64(CERT));
    expect(kc.getCurrentUser()?.keyData).toBe(b64(KEY));
    expect(kc.getContexts().map((c) => c.name)).toEqual(['orch-1', 'orch-2', 'orch-3']);
  });

  it('defaults the current context to the first', () => {
    const doc = parse(
      renderKubeconfig({ contexts: [{ name: 'a', server: 'https://a' }, { name: 'b', server: 'https://b' }], ...creds }),
    ) as Doc;
    expect(doc['current-context']).toBe('a');
  });

  it('rejects empty, duplicate, non-https and unknown-current contexts', () => {
    expect(() => renderKubeconfig({ contexts: [], ...creds })).toThrow(/at least one/);
    expect(() =>
      renderKubeconfig({ contexts: [{ name: 'a', server: 'https://a' }, { name: 'a', server: 'https://b' }], ...creds }),
    ).toThrow(/duplicate/);
    expect(() => renderKubeconfig({ server: 'http://insecure', ...creds })).toThrow(/https/);
    expect(() =>
      renderKubeconfig({ contexts: [{ name: 'a', server: 'https://a' }], currentContext: 'z', ...creds }),
    ).toThrow(/current context/);
  });
});

describe('writeKubeconfig', () => {
  it('writes the rendered text with mode 0600, creating the directory', async () => {
    const path = join(dir, 'nested', 'config');
    const opts = { server: 'https://127.0.0.1:6443', ...creds };
    await writeKubeconfig(path, opts);
    expect(await readFile(path, 'utf8')).toBe(renderKubeconfig(opts));
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('is accepted by kubectl config view', async () => {
    const path = join(dir, 'kubectl-config');
    await writeKubeconfig(path, {
      contexts: [
        { name: 'orch-1', server: 'https://10.0.0.1:6443' },
        { name: 'orch-2', server: 'https://10.0.0.2:6443' },
      ],
      ...creds,
    });
    const { stdout } = await execFileP(
      'kubectl',
      ['--kubeconfig', path, 'config', 'view', '--raw', '-o', 'jsonpath={.current-context} {.clusters[1].cluster.server}'],
      { env: { ...process.env, HOME: dir }, timeout: 30_000 },
    );
    expect(stdout.trim()).toBe('orch-1 https://10.0.0.2:6443');
  });
});
