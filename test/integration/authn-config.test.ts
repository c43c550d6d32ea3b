// AuthenticationConfiguration (spec 001 §5.6, §5.9): JWT authenticators with
// CEL claim mappings and rules against a real loopback OIDC issuer, anonymous
// path conditions, load-time errors naming the field, and reload while the
// server runs (a bad reload keeps the previous configuration).

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { type Server, createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CryptoKey, SignJWT, exportJWK, generateKeyPair } from 'jose';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensurePki } from '../../src/server/pki.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let dir: string;
let t: TestServer;
let issuer: Server;
let issuerUrl: string;
let caPem: string;
let key: CryptoKey;
const G = 'authentication.orch.io';

function config(usernameExpr: string, extraRules: object[] = []): string {
  return stringify({
    apiVersion: 'apiserver.config.orch.io/v1beta1',
    kind: 'AuthenticationConfiguration',
    jwt: [
      {
        issuer: { url: issuerUrl, certificateAuthority: caPem, audiences: ['app', 'cli'], audienceMatchPolicy: 'MatchAny' },
        claimValidationRules: [{ expression: "claims.tenant == 'acme'", message: 'wrong tenant' }, ...extraRules],
        claimMappings: {
          username: { expression: usernameExpr },
          groups: { expression: "claims.roles.map(r, 'role:' + r)" },
          uid: { claim: 'sub' },
          extra: [{ key: 'example.com/tenant', valueExpression: 'claims.tenant' }],
        },
        userValidationRules: [{ expression: "!user.username.startsWith('system:')", message: 'system names are reserved' }],
      },
    ],
    anonymous: { enabled: true, conditions: [{ path: '/livez' }, { path: '/version' }] },
  });
}

async function token(claims: Record<string, unknown>, aud = 'cli'): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k' }).setIssuer(issuerUrl).setAudience(aud).setIssuedAt().setExpirationTime('5m').sign(key);
}

const whoami = (tok: string) =>
  t.request('POST', `/apis/${G}/v1/selfsubjectreviews`, { anonymous: true, headers: { Authorization: `Bearer ${tok}` }, body: { kind: 'SelfSubjectReview' } });

async function until(f: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await f()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-authn-config-'));
  const pki = await ensurePki(join(dir, 'pki'), { hosts: ['127.0.0.1'] });
  caPem = pki.ca.certPem;
  const kp = await generateKeyPair('RS256');
  key = kp.privateKey;
  const jwk = { ...(await exportJWK(kp.publicKey)), kid: 'k', alg: 'RS256' };
  issuer = createServer({ key: pki.serving.keyPem, cert: pki.serving.certPem }, (req, res) => {
    res.setHeader('Content-Type', 'application/json');
    if (req.url === '/.well-known/openid-configuration') res.end(JSON.stringify({ issuer: issuerUrl, jwks_uri: `${issuerUrl}/jwks` }));
    else res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((r) => issuer.listen(0, '127.0.0.1', () => r()));
  issuerUrl = `https://127.0.0.1:${(issuer.address() as { port: number }).port}`;
  await writeFile(join(dir, 'auth.yaml'), config("'oidc:' + claims.sub"));
  t = await startTestServer({ authn: { authenticationConfigFile: join(dir, 'auth.yaml'), authenticationConfigPollMs: 100 } });
});
afterAll(async () => {
  await t?.stop();
  issuer?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('AuthenticationConfiguration', () => {
  it('maps claims with CEL: username, groups, uid, extra', async () => {
    const r = await whoami(await token({ sub: 'ann', tenant: 'acme', roles: ['admin', 'dev'] }));
    expect(r.status, r.text).toBe(201);
    expect(r.json()).toMatchObject({
      status: { userInfo: { username: 'oidc:ann', uid: 'ann', groups: ['role:admin', 'role:dev', 'system:authenticated'], extra: { 'example.com/tenant': ['acme'] } } },
    });
  });

  it('failed claim validation, user validation, wrong audience: 401', async () => {
    expect((await whoami(await token({ sub: 'ann', tenant: 'other', roles: [] }))).status).toBe(401);
    expect((await whoami(await token({ sub: 'ann', tenant: 'acme', roles: [] }, 'nobody'))).status).toBe(401);
    expect((await whoami(await token({ sub: 'x', tenant: 'acme' }))).status).toBe(401); // roles missing: groups expression fails
  });

  it('anonymous is allowed only on the configured paths', async () => {
    expect((await t.request('GET', '/version', { anonymous: true })).status).toBe(200);
    expect((await t.request('GET', '/api', { anonymous: true })).status).toBe(401);
  });

  it('reloads when the file changes; a bad reload keeps the previous configuration and reports it', async () => {
    await writeFile(join(dir, 'auth.yaml'), config("'v2:' + claims.sub"));
    const tok = await token({ sub: 'ann', tenant: 'acme', roles: [] });
    await until(async () => (await whoami(tok)).json<{ status?: { userInfo?: { username?: string } } }>().status?.userInfo?.username === 'v2:ann', 'reload');
    await writeFile(join(dir, 'auth.yaml'), config("'v3:' + claims.sub +"));
    await until(async () => (await t.request('GET', '/metrics')).text.includes('apiserver_authentication_config_controller_automatic_reload_last_success 0'), 'failed reload');
    expect((await whoami(tok)).json()).toMatchObject({ status: { userInfo: { username: 'v2:ann' } } });
  });
});

describe('configuration errors refuse the start and name the field', () => {
  const bad: [string, object, RegExp][] = [
    ['CEL syntax', { claimMappings: { username: { expression: 'claims.sub +' } } }, /jwt\[0\]\.claimMappings\.username\.expression/],
    ['prefix missing', { claimMappings: { username: { claim: 'sub' } } }, /jwt\[0\]\.claimMappings\.username\.prefix/],
    ['undeclared variable', { claimMappings: { username: { expression: 'user.name' } } }, /undeclared reference to 'user'/],
    ['email without email_verified', { claimMappings: { username: { expression: 'claims.email' } } }, /email_verified/],
    ['reserved extra key', { claimMappings: { username: { claim: 'sub', prefix: '' }, extra: [{ key: 'orch.io/x', valueExpression: "'a'" }] } }, /extra\[0\]\.key.*reserved/],
    ['nested comprehension', { claimMappings: { username: { expression: "claims.a.map(x, claims.b.map(y, y))[0][0]" } } }, /nested comprehensions/],
  ];
  for (const [name, jwtPatch, re] of bad) {
    it(name, async () => {
      const file = join(dir, `bad-${name.replace(/\W/g, '')}.yaml`);
      await writeFile(
        file,
        stringify({
          apiVersion: 'apiserver.config.orch.io/v1beta1',
          kind: 'AuthenticationConfiguration',
          jwt: [{ issuer: { url: 'https://issuer.example', audiences: ['a'] }, ...jwtPatch }],
        }),
      );
      await expect(startTestServer({ authn: { authenticationConfigFile: file } })).rejects.toThrow(re);
    });
  }

  it('too many authenticators, mixing with --oidc-* or --anonymous-auth', async () => {
    const many = join(dir, 'many.yaml');
    const jwt = Array.from({ length: 65 }, (_, i) => ({ issuer: { url: `https://i${i}.example`, audiences: ['a'] }, claimMappings: { username: { claim: 'sub', prefix: '' } } }));
    await writeFile(many, stringify({ apiVersion: 'apiserver.config.orch.io/v1beta1', kind: 'AuthenticationConfiguration', jwt }));
    await expect(startTestServer({ authn: { authenticationConfigFile: many } })).rejects.toThrow(/jwt: Too many: 65/);
    const good = join(dir, 'good.yaml');
    await writeFile(good, config("'oidc:' + claims.sub"));
    await expect(startTestServer({ authn: { authenticationConfigFile: good, oidc: { issuerURL: 'https://x.example', clientID: 'c' } } })).rejects.toThrow(/cannot be combined/);
    await expect(startTestServer({ authn: { authenticationConfigFile: good, anonymousAuth: false } })).rejects.toThrow(/--anonymous-auth cannot be combined/);
  });
});
