// Legacy (Secret-kept) service-account tokens at the unit level
// (src/auth/authn/legacy-sa-token.ts and the authenticator's legacy branch):
// the names under each API domain, and what the authenticator asks of the
// Secret and the account. The flow through kubectl is sa-token-secrets.test.ts.
import { describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { issueLegacyToken, legacyIssuer, tokenSecretAccount, tokenSecretPrefix } from '../../src/auth/authn/legacy-sa-token.js';
import type { ObjectGetter } from '../../src/auth/authn/objects.js';
import { ServiceAccountTokenAuthenticator } from '../../src/auth/authn/serviceaccount.js';
import type { ApiObject } from '../../src/registry/types.js';
import { tempServiceAccountKeys } from '../helpers/sa-keys.js';

const keysOf = tempServiceAccountKeys('orch-legacy-sa-');

const secretOfType = (type: string, annotations: Record<string, string> = {}): ApiObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'ns', annotations }, type }) as ApiObject;

describe('legacy service-account tokens', () => {
  it('name the issuer, the claims and the Secret type by the API domain; kube\'s type is accepted under either', async () => {
    expect(legacyIssuer('k8s.io')).toBe('kubernetes/serviceaccount');
    expect(legacyIssuer('orch.io')).toBe('orch/serviceaccount');
    const token = await issueLegacyToken(keysOf(), 'orch.io', { namespace: 'ns', secretName: 's', serviceAccountName: 'robot', serviceAccountUid: 'u1' });
    expect(decodeJwt(token)).toEqual({ iss: 'orch/serviceaccount', sub: 'system:serviceaccount:ns:robot', 'orch.io/serviceaccount/namespace': 'ns', 'orch.io/serviceaccount/secret.name': 's', 'orch.io/serviceaccount/service-account.name': 'robot', 'orch.io/serviceaccount/service-account.uid': 'u1' });
    for (const [type, prefix] of [['kubernetes.io/service-account-token', 'kubernetes.io'], ['orch.io/service-account-token', 'orch.io'], ['orch/service-account-token', 'orch'], ['example.com/service-account-token', undefined], ['kubernetes.io/tls', undefined], ['Opaque', undefined]] as const) {
      expect(tokenSecretPrefix(secretOfType(type), 'orch.io'), type).toBe(prefix);
    }
    expect(tokenSecretAccount(secretOfType('orch.io/service-account-token', { 'orch.io/service-account.name': 'robot', 'orch.io/service-account.uid': 'u1' }), 'orch.io')).toEqual({ name: 'robot', uid: 'u1' });
    expect(tokenSecretAccount(secretOfType('orch.io/service-account-token', { 'kubernetes.io/service-account.name': 'robot' }), 'orch.io')).toBeUndefined();
  });

  it('are accepted for the API server\'s audiences only, while the Secret holds the token and the account has its uid', async () => {
    const token = await issueLegacyToken(keysOf(), 'k8s.io', { namespace: 'ns', secretName: 's', serviceAccountName: 'robot', serviceAccountUid: 'u1' });
    const objects: Record<string, ApiObject | undefined> = {
      'secrets/ns/s': { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'ns' }, data: { token: Buffer.from(token).toString('base64') } } as ApiObject,
      'serviceaccounts/ns/robot': { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot', namespace: 'ns', uid: 'u1' } } as ApiObject,
    };
    const getter: ObjectGetter = (resource, ns, name) => objects[`${resource}/${ns}/${name}`];
    const marks: string[] = [];
    const auth = new ServiceAccountTokenAuthenticator({
      keys: keysOf(), issuers: ['https://orch.default.svc'], apiDomain: 'k8s.io', lookup: true, objects: getter, apiAudiences: ['https://orch.default.svc'],
      markLegacyTokenUsed: { now: () => Date.parse('2026-11-30T12:00:00Z'), record: (ns, name, label, day) => marks.push(`${ns}/${name} ${label}=${day}`) },
    });
    expect(await auth.authenticateToken(token, ['https://orch.default.svc'])).toEqual({
      result: 'ok',
      user: { username: 'system:serviceaccount:ns:robot', uid: 'u1', groups: ['system:serviceaccounts', 'system:serviceaccounts:ns'] },
      audiences: ['https://orch.default.svc'],
    });
    expect(marks).toEqual(['ns/s kubernetes.io/legacy-token-last-used=2026-11-30']);
    // the label already says today: no write
    const secret = objects['secrets/ns/s']!;
    objects['secrets/ns/s'] = { ...secret, metadata: { ...secret.metadata, labels: { 'kubernetes.io/legacy-token-last-used': '2026-11-30' } } } as ApiObject;
    expect((await auth.authenticateToken(token, ['https://orch.default.svc'])).result).toBe('ok');
    expect(marks).toHaveLength(1);
    objects['secrets/ns/s'] = { ...secret, metadata: { ...secret.metadata, labels: { 'kubernetes.io/legacy-token-invalid-since': '2026-01-01' } } } as ApiObject;
    expect(await auth.authenticateToken(token, ['https://orch.default.svc'])).toMatchObject({ result: 'error', message: expect.stringContaining('has been marked invalid') });
    objects['secrets/ns/s'] = secret;
    expect(await auth.authenticateToken(token, ['vault'])).toMatchObject({ result: 'error', message: expect.stringContaining('invalid for the target audiences') });
    objects['serviceaccounts/ns/robot'] = { ...objects['serviceaccounts/ns/robot']!, metadata: { name: 'robot', namespace: 'ns', uid: 'u2' } } as ApiObject;
    expect(await auth.authenticateToken(token, ['https://orch.default.svc'])).toMatchObject({ result: 'error', message: expect.stringContaining('uid changed') });
    objects['serviceaccounts/ns/robot'] = undefined;
    expect(await auth.authenticateToken(token, ['https://orch.default.svc'])).toMatchObject({ result: 'error', message: expect.stringContaining('serviceaccount ns/robot not found') });
    objects['secrets/ns/s'] = undefined;
    expect(await auth.authenticateToken(token, ['https://orch.default.svc'])).toMatchObject({ result: 'error', message: expect.stringContaining('secret ns/s not found') });
    // the other domain's legacy issuer is another method's token
    const orchToken = await issueLegacyToken(keysOf(), 'orch.io', { namespace: 'ns', secretName: 's', serviceAccountName: 'robot', serviceAccountUid: 'u1' });
    expect(await auth.authenticateToken(orchToken, ['https://orch.default.svc'])).toEqual({ result: 'none' });
  });
});
