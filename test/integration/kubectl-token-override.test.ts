// The new-user flow of the authorization issue with the generated admin
// kubeconfig: `kubectl --token=<service-account token>` must act as the service
// account. The kubeconfig therefore carries the admin bearer token, not the admin
// client certificate (a certificate is presented on every handshake and would win,
// spec 001_bdb487117be0ea8a.txt §5.1 order: x509 before tokens).
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runKubectl } from '../helpers/kubectl.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
const kubectl = (...args: string[]) => runKubectl(t.server.kubeconfigPath, args);

beforeAll(async () => {
  t = await startTestServer({ apiDomain: 'k8s.io' });
});
afterAll(async () => {
  await t?.stop();
});

describe('the generated admin kubeconfig', () => {
  it('authenticates with a 0600 bearer token as orch-admin in system:masters', async () => {
    const doc = parse(await readFile(t.server.kubeconfigPath, 'utf8')) as { users: { user: Record<string, string> }[] };
    expect(Object.keys(doc.users[0]!.user)).toEqual(['token']);
    expect((await stat(join(t.dataDir, 'pki', 'admin.token'))).mode & 0o777).toBe(0o600);
    const who = await kubectl('auth', 'whoami', '-o', 'json');
    expect(who.code).toBe(0);
    const status = (JSON.parse(who.stdout) as { status: { userInfo: { username: string; groups: string[] } } }).status.userInfo;
    expect(status.username).toBe('orch-admin');
    expect(status.groups).toContain('system:masters');
  });

  it('lets --token act as a service account bound to view: reads work, writes and secrets are 403', async () => {
    expect((await kubectl('create', 'serviceaccount', 'app')).code).toBe(0);
    expect((await kubectl('create', 'rolebinding', 'app-view', '--clusterrole=view', '--serviceaccount=default:app')).code).toBe(0);
    expect((await kubectl('create', 'configmap', 'x', '--from-literal=a=b')).code).toBe(0);
    const token = (await kubectl('create', 'token', 'app')).stdout.trim();
    expect(token.split('.')).toHaveLength(3);

    const pods = await kubectl('--token', token, 'get', 'pods');
    expect(pods.code).toBe(0);
    const del = await kubectl('--token', token, 'delete', 'configmap', 'x');
    expect(del.code).not.toBe(0);
    expect(del.stderr).toContain('User "system:serviceaccount:default:app" cannot delete resource "configmaps" in API group "" in the namespace "default"');
    const secrets = await kubectl('--token', token, 'get', 'secrets');
    expect(secrets.code).not.toBe(0);
    expect(secrets.stderr).toContain('cannot list resource "secrets"');
    // the configmap is still there
    expect((await kubectl('get', 'configmap', 'x', '-o', 'name')).stdout.trim()).toBe('configmap/x');

    const list = await kubectl('auth', 'can-i', '--list', '--as=system:serviceaccount:default:app');
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^configmaps\s+\[\]\s+\[\]\s+\[get list watch\]$/m);
    expect(list.stdout).not.toMatch(/^secrets\s/m);
  });
});
