// Bootstrap tokens (spec 001 §5.4, §3): authentication from Secrets, expiry,
// the tokencleaner and bootstrapsigner controllers, and the cluster-info
// signature checked with an independent JWS implementation (jose).

import { compactVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lifecycleState } from '../../src/auth/authn/bootstrap-token.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
const G = 'authentication.orch.io';

beforeAll(async () => {
  t = await startTestServer({ authn: { enableBootstrapTokenAuth: true, controllers: ['tokencleaner', 'bootstrapsigner'] } });
});
afterAll(async () => {
  await t?.stop();
});

async function tokenSecret(id: string, secret: string, extra: Record<string, string> = {}): Promise<void> {
  const r = await t.request('POST', '/api/v1/namespaces/orch-system/secrets', {
    body: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `bootstrap-token-${id}` },
      type: 'bootstrap.orch.io/token',
      stringData: { 'token-id': id, 'token-secret': secret, description: 'test', ...extra },
    },
  });
  expect(r.status, r.text).toBe(201);
}

const whoami = (token: string) =>
  t.request('POST', `/apis/${G}/v1/selfsubjectreviews`, { anonymous: true, headers: { Authorization: `Bearer ${token}` }, body: { kind: 'SelfSubjectReview' } });

async function until<T>(f: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await f();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function clusterInfo(): Promise<Record<string, string>> {
  const r = await t.request('GET', '/api/v1/namespaces/orch-public/configmaps/cluster-info');
  return r.status === 200 ? (r.json<{ data: Record<string, string> }>().data ?? {}) : {};
}

describe('bootstrap tokens', () => {
  it('a valid token authenticates as system:bootstrap:<id> with extra groups', async () => {
    await tokenSecret('abcdef', '0123456789abcdef', {
      'usage-bootstrap-authentication': 'true',
      'usage-bootstrap-signing': 'true',
      'auth-extra-groups': 'system:bootstrappers:worker,system:bootstrappers:ingress',
      expiration: new Date(Date.now() + 3600_000).toISOString().replace(/\.\d+Z$/, 'Z'),
    });
    const r = await whoami('abcdef.0123456789abcdef');
    expect(r.json()).toMatchObject({
      status: {
        userInfo: {
          username: 'system:bootstrap:abcdef',
          groups: ['system:bootstrappers', 'system:bootstrappers:worker', 'system:bootstrappers:ingress', 'system:authenticated'],
        },
      },
    });
  });

  it('wrong secret, no authentication usage, bad extra group, expired: 401', async () => {
    expect((await whoami('abcdef.0123456789abcdee')).status).toBe(401);
    await tokenSecret('noauth', 'aaaaaaaaaaaaaaaa', { 'usage-bootstrap-signing': 'true' });
    expect((await whoami('noauth.aaaaaaaaaaaaaaaa')).status).toBe(401);
    await tokenSecret('badgrp', 'bbbbbbbbbbbbbbbb', { 'usage-bootstrap-authentication': 'true', 'auth-extra-groups': 'system:masters' });
    expect((await whoami('badgrp.bbbbbbbbbbbbbbbb')).status).toBe(401);
    expect((await whoami('zzzzzz.0123456789abcdef')).status).toBe(401);
  });

  it('cluster-info carries a detached HS256 JWS per signing token, verifiable with jose', async () => {
    const data = await until(async () => {
      const d = await clusterInfo();
      return d['jws-kubeconfig-abcdef'] && d['jws-kubeconfig-noauth'] ? d : undefined;
    }, 'signatures');
    expect(data.kubeconfig).toContain(`server: ${t.server.url}`);
    const [h, empty, s] = data['jws-kubeconfig-abcdef']!.split('.');
    expect(empty).toBe('');
    const jws = `${h}.${Buffer.from(data.kubeconfig!).toString('base64url')}.${s}`;
    const v = await compactVerify(jws, new TextEncoder().encode('abcdef.0123456789abcdef'), { algorithms: ['HS256'] });
    expect(new TextDecoder().decode(v.payload)).toBe(data.kubeconfig);
    expect(v.protectedHeader).toMatchObject({ alg: 'HS256', kid: 'abcdef' });
    await expect(compactVerify(jws, new TextEncoder().encode('abcdef.0123456789abcdee'), { algorithms: ['HS256'] })).rejects.toThrow();
    // a token without signing usage gets no signature
    expect(data['jws-kubeconfig-badgrp']).toBeUndefined();
  });

  it('expiry: the token stops authenticating, its signature goes and the cleaner deletes it', async () => {
    await tokenSecret('short1', 'cccccccccccccccc', {
      'usage-bootstrap-authentication': 'true',
      'usage-bootstrap-signing': 'true',
      expiration: new Date(Date.now() + 1500).toISOString(),
    });
    expect((await whoami('short1.cccccccccccccccc')).status).toBe(201);
    await until(async () => ((await clusterInfo())['jws-kubeconfig-short1'] ? true : undefined), 'signature of short1');
    await until(async () => ((await whoami('short1.cccccccccccccccc')).status === 401 ? true : undefined), 'expiry');
    await until(async () => ((await clusterInfo())['jws-kubeconfig-short1'] === undefined ? true : undefined), 'signature removal');
    await until(async () => ((await t.request('GET', '/api/v1/namespaces/orch-system/secrets/bootstrap-token-short1')).status === 404 ? true : undefined), 'deletion');
    // the long-lived token is untouched
    expect((await whoami('abcdef.0123456789abcdef')).status).toBe(201);
  });

  it('the lifecycle machine: valid → expired → deleted', () => {
    expect(lifecycleState({ expiresAt: 1000, deleting: false }, 999)).toBe('valid');
    expect(lifecycleState({ expiresAt: 1000, deleting: false }, 1000)).toBe('expired');
    expect(lifecycleState({ expiresAt: undefined, deleting: false }, 10 ** 15)).toBe('valid');
    expect(lifecycleState({ expiresAt: 1000, deleting: true }, 5)).toBe('deleted');
  });
});
