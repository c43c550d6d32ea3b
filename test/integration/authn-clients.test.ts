// Client-side credentials as a new user meets them: a certificate from an
// extra `--client-ca-file` CA, and kubectl with an exec credential plugin
// returning an ExecCredential (spec 001 §5.3, §5.11).

import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensurePki, issueClientCertificate, type Pki } from '../../src/server/pki.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const exec = promisify(execFile);
let dir: string;
let other: Pki;
let t: TestServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-authn-clients-'));
  other = await ensurePki(join(dir, 'other-pki'));
  await writeFile(join(dir, 'users-ca.crt'), other.ca.certPem);
  await writeFile(join(dir, 'tokens.csv'), 'plugin-token,frank,uid-frank,plugins\n');
  t = await startTestServer({ apiDomain: 'k8s.io', authn: { clientCAFile: join(dir, 'users-ca.crt'), tokenAuthFile: join(dir, 'tokens.csv') } });
  await writeFile(join(dir, 'ca.crt'), t.server.caPem);
});
afterAll(async () => {
  await t?.stop();
  await rm(dir, { recursive: true, force: true });
});

const whoami = (cert?: { certPem: string; keyPem: string }) =>
  t.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { cert, body: { kind: 'SelfSubjectReview' } });

describe('client credentials', () => {
  it('a certificate signed by the --client-ca-file CA: CN = user, O = groups', async () => {
    const c = await issueClientCertificate(other, { commonName: 'grace', organizations: ['qa', 'ops'] });
    expect((await whoami(c)).json()).toMatchObject({ status: { userInfo: { username: 'grace', groups: ['qa', 'ops', 'system:authenticated'] } } });
  });

  it('a certificate from an unknown CA is 401', async () => {
    const stranger = await ensurePki(join(dir, 'stranger-pki'));
    const c = await issueClientCertificate(stranger, { commonName: 'mallory' });
    expect((await whoami(c)).status).toBe(401);
  });

  it('kubectl with an exec credential plugin (ExecCredential v1)', async () => {
    const plugin = join(dir, 'plugin.sh');
    await writeFile(
      plugin,
      `#!/bin/sh\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"plugin-token","expirationTimestamp":"2099-01-01T00:00:00Z"}}'\n`,
    );
    await chmod(plugin, 0o755);
    const kc = join(dir, 'exec.kubeconfig');
    await writeFile(
      kc,
      `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: ${t.server.url}\n    certificate-authority: ${join(dir, 'ca.crt')}\nusers:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: ${plugin}\n      interactiveMode: Never\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n`,
    );
    const { stdout } = await exec('kubectl', ['--kubeconfig', kc, 'auth', 'whoami', '-o', 'json']);
    expect(JSON.parse(stdout)).toMatchObject({ status: { userInfo: { username: 'frank', uid: 'uid-frank', groups: ['plugins', 'system:authenticated'] } } });
  });
});
