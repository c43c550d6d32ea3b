// The authenticating proxy (spec 001 §5.8): identity headers are believed
// only with a client certificate signed by the requestheader CA and an
// allowed common name.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Pki, ensurePki, issueClientCertificate } from '../../src/server/pki.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let dir: string;
let proxyPki: Pki;
let t: TestServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-authn-proxy-'));
  proxyPki = await ensurePki(join(dir, 'proxy-pki'));
  await writeFile(join(dir, 'proxy-ca.crt'), proxyPki.ca.certPem);
  t = await startTestServer({
    authn: {
      requestHeader: {
        clientCAFile: join(dir, 'proxy-ca.crt'),
        usernameHeaders: ['X-Remote-User'],
        groupHeaders: ['X-Remote-Group'],
        extraHeaderPrefixes: ['X-Remote-Extra-'],
        allowedNames: ['front-proxy'],
      },
    },
  });
});
afterAll(async () => {
  await t?.stop();
  await rm(dir, { recursive: true, force: true });
});

const whoami = (cert: { certPem: string; keyPem: string } | undefined, headers: Record<string, string>) =>
  t.request('POST', '/apis/authentication.orch.io/v1/selfsubjectreviews', { cert, anonymous: cert === undefined, headers, body: { kind: 'SelfSubjectReview' } });


describe('requestheader authentication', () => {
  it('trusts the headers from the proxy certificate; extra keys lowercased', async () => {
    const proxy = await issueClientCertificate(proxyPki, { commonName: 'front-proxy' });
    const ok = await whoami(proxy, { 'x-remote-user': 'heidi', 'X-Remote-Group': 'g1', 'X-Remote-Extra-Scopes': 'read' });
    expect(ok.json()).toMatchObject({ status: { userInfo: { username: 'heidi', groups: ['g1', 'system:authenticated'], extra: { scopes: ['read'] } } } });
  });

  it('a proxy certificate with a CN not allowed is 401', async () => {
    const other = await issueClientCertificate(proxyPki, { commonName: 'rogue-proxy' });
    expect((await whoami(other, { 'x-remote-user': 'heidi' })).status).toBe(401);
  });

  it('headers without a proxy certificate are ignored', async () => {
    // anonymous may not create a SelfSubjectReview under the default Node,RBAC: the 403 names the user it saw
    const anon = await whoami(undefined, { 'x-remote-user': 'heidi' });
    expect(anon.status, anon.text).toBe(403);
    expect(anon.json<{ message: string }>().message).toContain('User "system:anonymous" cannot create resource "selfsubjectreviews"');
    const admin = { certPem: t.server.adminCertPem, keyPem: t.server.adminKeyPem };
    expect((await whoami(admin, { 'x-remote-user': 'heidi' })).json()).toMatchObject({ status: { userInfo: { username: 'orch-admin' } } });
  });
});
