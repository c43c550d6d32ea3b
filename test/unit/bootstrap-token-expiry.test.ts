// Bootstrap token expiry (spec 001 §3, §5.4) at the authenticator on a
// ManualClock: the token authenticates until its expiration and not from
// then on, without waiting on real time.

import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { BootstrapTokenAuthenticator, bootstrapSecretType } from '../../src/auth/authn/bootstrap-token.js';
import type { ApiObject } from '../../src/registry/types.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

function secret(expiration: string): ApiObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'bootstrap-token-abcdef', namespace: 'orch-system' },
    type: bootstrapSecretType('orch.io'),
    data: { 'token-id': b64('abcdef'), 'token-secret': b64('0123456789abcdef'), expiration: b64(expiration), 'usage-bootstrap-authentication': b64('true') },
  };
}

describe('bootstrap token expiry on a ManualClock', () => {
  it('authenticates until the expiration, not at or after it', () => {
    const expiresAt = Date.parse('2026-11-25T12:00:00Z');
    const clock = new ManualClock(expiresAt - 60_000);
    const s = secret('2026-11-25T12:00:00Z');
    const authn = new BootstrapTokenAuthenticator((_r, ns, name) => (ns === 'orch-system' && name === 'bootstrap-token-abcdef' ? s : undefined), 'orch.io', () => clock.now());
    expect(authn.authenticateToken('abcdef.0123456789abcdef')).toMatchObject({ result: 'ok', user: { username: 'system:bootstrap:abcdef' } });
    clock.advance(59_999);
    expect(authn.authenticateToken('abcdef.0123456789abcdef').result).toBe('ok');
    clock.advance(1);
    expect(authn.authenticateToken('abcdef.0123456789abcdef').result).toBe('none');
  });

  it('with --api-domain k8s.io reads kube-system Secrets of kube\'s type', () => {
    const clock = new ManualClock(Date.parse('2026-11-25T11:00:00Z'));
    const s = { ...secret('2026-11-25T12:00:00Z'), type: bootstrapSecretType('k8s.io') };
    expect(s.type).toBe('bootstrap.kubernetes.io/token');
    const lookups: string[] = [];
    const authn = new BootstrapTokenAuthenticator((_r, ns, name) => (lookups.push(ns), ns === 'kube-system' && name === 'bootstrap-token-abcdef' ? s : undefined), 'k8s.io', () => clock.now());
    expect(authn.authenticateToken('abcdef.0123456789abcdef')).toMatchObject({ result: 'ok', user: { username: 'system:bootstrap:abcdef' } });
    expect(lookups).toEqual(['kube-system']);
  });
});
