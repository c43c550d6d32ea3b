// Bound service-account tokens at the unit level (src/auth/authn/serviceaccount.ts): the private claim for each
// bound kind, the node of a pod-bound token (kube's ServiceAccountTokenPodNodeInfo) and tokens bound to a Node
// (ServiceAccountTokenNodeBinding, checked as ServiceAccountTokenNodeBindingValidation does), and the user's
// extra under each API domain. The flow through kubectl is in test/integration/authn-core.test.ts.
import { describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import type { ObjectGetter } from '../../src/auth/authn/objects.js';
import { type TokenIssueRequest, ServiceAccountTokenAuthenticator, ServiceAccountTokenIssuer, privateClaim } from '../../src/auth/authn/serviceaccount.js';
import type { ApiObject } from '../../src/registry/types.js';
import { tempServiceAccountKeys } from '../helpers/sa-keys.js';

const ISS = 'https://orch.default.svc';
const keysOf = tempServiceAccountKeys('orch-bound-sa-');

const request = (boundObject?: TokenIssueRequest['boundObject']): TokenIssueRequest => ({ namespace: 'ns', name: 'app', uid: 'sa-1', audiences: [ISS], expirationSeconds: 3600, ...(boundObject ? { boundObject } : {}) });
const meta = (kind: string, name: string, uid: string, namespace?: string): ApiObject => ({ apiVersion: 'v1', kind, metadata: { name, uid, ...(namespace ? { namespace } : {}) } }) as ApiObject;

describe('the private claim of a bound token', () => {
  it('names the account and the bound object; a pod its node, a Node itself', () => {
    const sa = { namespace: 'ns', serviceaccount: { name: 'app', uid: 'sa-1' } };
    expect(privateClaim(request())).toEqual(sa);
    expect(privateClaim(request({ kind: 'Secret', name: 's', uid: 's-1' }))).toEqual({ ...sa, secret: { name: 's', uid: 's-1' } });
    expect(privateClaim(request({ kind: 'Pod', name: 'p', uid: 'p-1' }))).toEqual({ ...sa, pod: { name: 'p', uid: 'p-1' } });
    expect(privateClaim(request({ kind: 'Pod', name: 'p', uid: 'p-1', node: { name: 'n1', uid: 'n-1' } }))).toEqual({ ...sa, pod: { name: 'p', uid: 'p-1' }, node: { name: 'n1', uid: 'n-1' } });
    // the pod's Node does not exist: its name alone, as kube
    expect(privateClaim(request({ kind: 'Pod', name: 'p', uid: 'p-1', node: { name: 'gone', uid: '' } }))).toEqual({ ...sa, pod: { name: 'p', uid: 'p-1' }, node: { name: 'gone' } });
    expect(privateClaim(request({ kind: 'Node', name: 'n1', uid: 'n-1' }))).toEqual({ ...sa, node: { name: 'n1', uid: 'n-1' } });
  });
});

describe('authenticating a token with a node claim', () => {
  for (const [apiDomain, claim, group] of [['k8s.io', 'kubernetes.io', 'authentication.kubernetes.io'], ['orch.io', 'orch.io', 'authentication.orch.io']] as const) {
    it(`reports the pod and the node in the user's extra (${apiDomain}); only a Node-bound token's Node must still exist`, async () => {
      const objects: Record<string, ApiObject | undefined> = {
        'serviceaccounts/ns/app': meta('ServiceAccount', 'app', 'sa-1', 'ns'),
        'pods/ns/p': meta('Pod', 'p', 'p-1', 'ns'),
        'nodes//n1': meta('Node', 'n1', 'n-1'),
      };
      const getter: ObjectGetter = (resource, ns, name) => objects[`${resource}/${ns}/${name}`];
      const issuer = new ServiceAccountTokenIssuer(keysOf(), ISS, apiDomain, Date.now);
      const auth = new ServiceAccountTokenAuthenticator({ keys: keysOf(), issuers: [ISS], apiDomain, lookup: true, objects: getter });
      const extraOf = async (token: string) => {
        const r = await auth.authenticateToken(token, [ISS]);
        if (r.result !== 'ok') throw new Error(`not ok: ${JSON.stringify(r)}`);
        const { [`${group}/credential-id`]: id, ...rest } = r.user.extra ?? {};
        expect(id).toEqual([`JTI=${String(decodeJwt(token).jti)}`]);
        return rest;
      };

      const podToken = (await issuer.issue(request({ kind: 'Pod', name: 'p', uid: 'p-1', node: { name: 'n1', uid: 'n-1' } }))).token;
      expect(decodeJwt(podToken)[claim]).toMatchObject({ pod: { name: 'p', uid: 'p-1' }, node: { name: 'n1', uid: 'n-1' } });
      const podExtra = { [`${group}/pod-name`]: ['p'], [`${group}/pod-uid`]: ['p-1'], [`${group}/node-name`]: ['n1'], [`${group}/node-uid`]: ['n-1'] };
      expect(await extraOf(podToken)).toEqual(podExtra);
      const nodeToken = (await issuer.issue(request({ kind: 'Node', name: 'n1', uid: 'n-1' }))).token;
      expect(await extraOf(nodeToken)).toEqual({ [`${group}/node-name`]: ['n1'], [`${group}/node-uid`]: ['n-1'] });
      // a node claim without a uid gives the name only
      const nameOnly = (await issuer.issue(request({ kind: 'Pod', name: 'p', uid: 'p-1', node: { name: 'gone', uid: '' } }))).token;
      expect(await extraOf(nameOnly)).toEqual({ [`${group}/pod-name`]: ['p'], [`${group}/pod-uid`]: ['p-1'], [`${group}/node-name`]: ['gone'] });

      // the Node recreated with another uid, then deleted: the Node-bound token is refused, the pod-bound one is not
      objects['nodes//n1'] = meta('Node', 'n1', 'n-2');
      expect(await auth.authenticateToken(nodeToken, [ISS])).toMatchObject({ result: 'error', message: expect.stringContaining('bound nodes n1 not found') });
      objects['nodes//n1'] = undefined;
      expect(await auth.authenticateToken(nodeToken, [ISS])).toMatchObject({ result: 'error', message: expect.stringContaining('has been invalidated') });
      expect(await extraOf(podToken)).toEqual(podExtra);
      // being deleted counts as gone
      objects['nodes//n1'] = { ...meta('Node', 'n1', 'n-1'), metadata: { name: 'n1', uid: 'n-1', deletionTimestamp: '2030-01-01T00:00:00Z' } } as ApiObject;
      expect((await auth.authenticateToken(nodeToken, [ISS])).result).toBe('error');
    });
  }
});
