// Remote token methods with real servers on loopback TLS: an OIDC issuer
// (discovery + JWKS, tokens signed with jose) and a TokenReview webhook
// (spec 001 §5.6, §5.7).

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { type Server, createServer } from 'node:https';
import { tmpdir } from 'node:os';
import type { TLSSocket } from 'node:tls';
import { join } from 'node:path';
import { type CryptoKey, type JWK, SignJWT, exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Pki, ensurePki } from '../../src/server/pki.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let dir: string;
let pki: Pki;
let t: TestServer;
let issuer: Server;
let issuerUrl: string;
let keys: { privateKey: CryptoKey; publicKey: CryptoKey };
let jwk: JWK;
let hook: Server;
const hookSeen: { apiVersion: string; spec: { token: string; audiences?: string[] } }[] = [];
const G = 'authentication.orch.io';

function listen(s: Server): Promise<string> {
  return new Promise((res) => s.listen(0, '127.0.0.1', () => res(`https://127.0.0.1:${(s.address() as { port: number }).port}`)));
}

async function idToken(claims: Record<string, unknown>, opts: { exp?: string | number; kid?: string; key?: CryptoKey; iss?: string; aud?: string } = {}): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', kid: opts.kid ?? 'k1' })
    .setIssuer(opts.iss ?? issuerUrl)
    .setAudience(opts.aud ?? 'orch-client')
    .setIssuedAt()
    .setExpirationTime(opts.exp ?? '10m')
    .sign(opts.key ?? keys.privateKey);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-authn-remote-'));
  pki = await ensurePki(join(dir, 'pki'), { hosts: ['127.0.0.1'] });
  keys = await generateKeyPair('RS256');
  jwk = { ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  issuer = createServer({ key: pki.serving.keyPem, cert: pki.serving.certPem }, (req, res) => {
    res.setHeader('Content-Type', 'application/json');
    if (req.url === '/.well-known/openid-configuration') res.end(JSON.stringify({ issuer: issuerUrl, jwks_uri: `${issuerUrl}/keys` }));
    else if (req.url === '/keys') res.end(JSON.stringify({ keys: [jwk] }));
    else {
      res.statusCode = 404;
      res.end('{}');
    }
  });
  issuerUrl = await listen(issuer);
  hook = createServer({ key: pki.serving.keyPem, cert: pki.serving.certPem, ca: pki.ca.certPem, requestCert: true }, (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const review = JSON.parse(body) as (typeof hookSeen)[number];
      hookSeen.push(review);
      const peerCN = (req.socket as TLSSocket).getPeerCertificate().subject?.CN;
      res.setHeader('Content-Type', 'application/json');
      const ok = review.spec.token === 'hook-good' && peerCN === 'apiserver-client';
      res.end(
        JSON.stringify({
          apiVersion: review.apiVersion,
          kind: 'TokenReview',
          status: ok
            ? { authenticated: true, user: { username: 'hook-user', uid: 'h1', groups: ['hooked'], extra: { scope: ['a'] } } }
            : { authenticated: false, error: 'token rejected by the webhook' },
        }),
      );
    });
  });
  const hookUrl = await listen(hook);
  const { issueClientCertificate } = await import('../../src/server/pki.js');
  const client = await issueClientCertificate(pki, { commonName: 'apiserver-client' });
  await writeFile(join(dir, 'client.crt'), client.certPem);
  await writeFile(join(dir, 'client.key'), client.keyPem);
  await writeFile(join(dir, 'ca.crt'), pki.ca.certPem);
  await writeFile(
    join(dir, 'webhook.kubeconfig'),
    `apiVersion: v1\nkind: Config\nclusters:\n- name: hook\n  cluster:\n    server: ${hookUrl}/authenticate\n    certificate-authority: ca.crt\nusers:\n- name: api\n  user:\n    client-certificate: client.crt\n    client-key: client.key\ncontexts:\n- name: c\n  context: {cluster: hook, user: api}\ncurrent-context: c\n`,
  );
  t = await startTestServer({
    authn: {
      oidc: { issuerURL: issuerUrl, clientID: 'orch-client', groupsClaim: 'groups', groupsPrefix: 'oidc:', requiredClaims: { tenant: 'acme' }, caFile: join(dir, 'ca.crt') },
      webhook: { configFile: join(dir, 'webhook.kubeconfig'), version: 'v1' },
    },
  });
});
afterAll(async () => {
  await t?.stop();
  issuer?.close();
  hook?.close();
  await rm(dir, { recursive: true, force: true });
});

const whoami = (token: string) =>
  t.request('POST', `/apis/${G}/v1/selfsubjectreviews`, { anonymous: true, headers: { Authorization: `Bearer ${token}` }, body: { kind: 'SelfSubjectReview' } });

describe('OIDC by flags', () => {
  it('a valid id_token maps username (issuer# prefix for sub), groups with prefix', async () => {
    const r = await whoami(await idToken({ sub: 'u123', groups: ['admins', 'devs'], tenant: 'acme' }));
    expect(r.status).toBe(201);
    expect(r.json()).toMatchObject({
      status: { userInfo: { username: `${issuerUrl}#u123`, groups: ['oidc:admins', 'oidc:devs', 'system:authenticated'] } },
    });
  });

  it('every bad token is a 401: expired, wrong audience, bad signature, missing required claim, wrong algorithm', async () => {
    const other = await generateKeyPair('RS256');
    const cases = [
      await idToken({ sub: 'u', tenant: 'acme' }, { exp: Math.floor(Date.now() / 1000) - 60 }),
      await idToken({ sub: 'u', tenant: 'acme' }, { aud: 'someone-else' }),
      await idToken({ sub: 'u', tenant: 'acme' }, { key: other.privateKey }),
      await idToken({ sub: 'u', tenant: 'other' }),
      await idToken({ sub: 'u' }),
      await idToken({ tenant: 'acme' }),
      await new SignJWT({ sub: 'u', tenant: 'acme' }).setProtectedHeader({ alg: 'HS256' }).setIssuer(issuerUrl).setAudience('orch-client').setExpirationTime('5m').sign(new Uint8Array(32)),
    ];
    for (const tok of cases) expect((await whoami(tok)).status).toBe(401);
  });
});

describe('webhook token authentication', () => {
  it('a token the webhook accepts authenticates; TokenReview v1 with the server client certificate', async () => {
    const r = await whoami('hook-good');
    expect(r.json()).toMatchObject({ status: { userInfo: { username: 'hook-user', uid: 'h1', groups: ['hooked', 'system:authenticated'], extra: { scope: ['a'] } } } });
    expect(hookSeen.at(-1)?.apiVersion).toBe(`${G}/v1`);
  });

  it('authenticated:false is 401; answers are cached', async () => {
    expect((await whoami('hook-bad')).status).toBe(401);
    const before = hookSeen.length;
    expect((await whoami('hook-good')).status).toBe(201);
    expect((await whoami('hook-bad')).status).toBe(401);
    expect(hookSeen.length).toBe(before);
  });

  it('TokenReview on the API server reports the webhook error', async () => {
    const r = await t.request('POST', `/apis/${G}/v1/tokenreviews`, { body: { kind: 'TokenReview', spec: { token: 'hook-bad' } } });
    expect(r.json()).toMatchObject({ status: { error: expect.stringContaining('token rejected by the webhook') } });
  });
});
