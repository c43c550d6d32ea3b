// Long-lived service-account tokens kept in Secrets, as Kubernetes' "Manually
// create a long-lived API token for a ServiceAccount" makes them: the
// serviceaccount-token controller (src/controllers/sa-token-secrets.ts) fills
// the Secret, kubectl acts with its token, and the token stops working when
// its Secret or its account goes or its Secret holds another token
// (src/auth/authn/legacy-sa-token.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { eventually } from '../helpers/eventually.js';
import { runKubectl, runKubectlInput } from '../helpers/kubectl.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

type Obj = Record<string, any>;
let t: TestServer;
const kubectl = (...args: string[]) => runKubectl(t.server.kubeconfigPath, args);

beforeAll(async () => {
  t = await startTestServer({ apiDomain: 'k8s.io' });
});
afterAll(async () => {
  await t?.stop();
});

/** kube's documented manifest */
const tokenSecret = (name: string, account: string): string =>
  `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${name}\n  annotations:\n    kubernetes.io/service-account.name: ${account}\ntype: kubernetes.io/service-account-token\n`;

const secret = async (name: string): Promise<Obj | undefined> => {
  const r = await t.request('GET', `/api/v1/namespaces/default/secrets/${name}`);
  return r.status === 200 ? r.json<Obj>() : undefined;
};
const filled = (name: string) => eventually(async () => ((await secret(name))?.data?.token ? secret(name) : undefined), `${name} filled`);
const tokenOf = (s: Obj): string => Buffer.from(s.data.token as string, 'base64').toString('utf8');

async function whoami(token: string): Promise<{ code: number; user?: Obj; stderr: string }> {
  const r = await kubectl('--token', token, 'auth', 'whoami', '-o', 'json');
  return { code: r.code, stderr: r.stderr, user: r.code === 0 ? (JSON.parse(r.stdout) as Obj).status.userInfo : undefined };
}

describe('service-account token Secrets', () => {
  it('are filled with a token, the CA and the namespace; kubectl acts as the account with the token', async () => {
    expect((await kubectl('create', 'serviceaccount', 'build-robot')).code).toBe(0);
    const created = await runKubectlInput(t.server.kubeconfigPath, tokenSecret('build-robot-secret', 'build-robot'), ['apply', '-f', '-']);
    expect(created.code, created.stderr).toBe(0);
    const s = await filled('build-robot-secret');
    const sa = (await t.request('GET', '/api/v1/namespaces/default/serviceaccounts/build-robot')).json<Obj>();
    expect(s!.metadata.annotations['kubernetes.io/service-account.uid']).toBe(sa.metadata.uid);
    expect(Buffer.from(s!.data.namespace, 'base64').toString()).toBe('default');
    expect(Buffer.from(s!.data['ca.crt'], 'base64').toString()).toBe(t.server.caPem);
    const token = tokenOf(s!);
    // kube's legacy claims: no expiry, no audience
    expect(decodeJwt(token)).toEqual({
      iss: 'kubernetes/serviceaccount',
      sub: 'system:serviceaccount:default:build-robot',
      'kubernetes.io/serviceaccount/namespace': 'default',
      'kubernetes.io/serviceaccount/secret.name': 'build-robot-secret',
      'kubernetes.io/serviceaccount/service-account.name': 'build-robot',
      'kubernetes.io/serviceaccount/service-account.uid': sa.metadata.uid,
    });
    const dayBefore = new Date().toISOString().slice(0, 10);
    const who = await whoami(token);
    expect(who.code, who.stderr).toBe(0);
    expect(who.user).toMatchObject({ username: 'system:serviceaccount:default:build-robot', uid: sa.metadata.uid, groups: ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'] });
    // authorization applies as to any account: nothing is bound to it
    const denied = await kubectl('--token', token, 'get', 'secrets');
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toContain('User "system:serviceaccount:default:build-robot" cannot list resource "secrets"');
    // a TokenReview for another audience refuses it: the token is the API server's only
    const review = (await t.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token, audiences: ['vault'] } } })).json<Obj>();
    expect(review.status.authenticated).toBeFalsy();
    const ok = (await t.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } } })).json<Obj>();
    expect(ok.status).toMatchObject({ authenticated: true, user: { username: 'system:serviceaccount:default:build-robot' } });
    // kube's tracking: the day of last use on the Secret
    const used = await eventually(async () => (await secret('build-robot-secret'))?.metadata.labels?.['kubernetes.io/legacy-token-last-used'], 'the last-used label');
    expect([dayBefore, new Date().toISOString().slice(0, 10)]).toContain(used);
    // a Secret labelled invalid-since refuses its token until the label goes
    expect((await kubectl('label', 'secret', 'build-robot-secret', 'kubernetes.io/legacy-token-invalid-since=2026-01-01')).code).toBe(0);
    expect((await whoami(token)).code).not.toBe(0);
    expect((await kubectl('label', 'secret', 'build-robot-secret', 'kubernetes.io/legacy-token-invalid-since-')).code).toBe(0);
    expect((await whoami(token)).code).toBe(0);
  });

  it('stops working when its Secret holds another token or goes, and the Secret goes with its account', async () => {
    expect((await kubectl('create', 'serviceaccount', 'ci')).code).toBe(0);
    await runKubectlInput(t.server.kubeconfigPath, tokenSecret('ci-token', 'ci'), ['apply', '-f', '-']);
    const token = tokenOf((await filled('ci-token'))!);
    expect((await whoami(token)).code).toBe(0);
    // a second Secret's token for the same account works too, and is another token
    await runKubectlInput(t.server.kubeconfigPath, tokenSecret('ci-token-2', 'ci'), ['apply', '-f', '-']);
    const second = tokenOf((await filled('ci-token-2'))!);
    expect(second).not.toBe(token);
    expect((await whoami(second)).code).toBe(0);
    // the Secret's token replaced by hand: the old one no longer matches the server's copy
    const s = (await secret('ci-token'))!;
    const put = await t.request('PUT', '/api/v1/namespaces/default/secrets/ci-token', { body: { ...s, data: { ...s.data, token: Buffer.from('x').toString('base64') } } });
    expect(put.status, put.text).toBe(200);
    expect((await whoami(token)).code).not.toBe(0);
    // the Secret deleted: its token is refused
    expect((await kubectl('delete', 'secret', 'ci-token-2')).code).toBe(0);
    expect((await whoami(second)).code).not.toBe(0);
    // the account deleted: its token Secrets are deleted
    expect((await kubectl('delete', 'serviceaccount', 'ci')).code).toBe(0);
    await eventually(async () => (await secret('ci-token')) === undefined, 'ci-token deleted with its account');
  });

  it('a Secret made with an empty token gets one', async () => {
    const made = await t.request('POST', '/api/v1/namespaces/default/secrets', {
      body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'empty-token', annotations: { 'kubernetes.io/service-account.name': 'build-robot' } }, type: 'kubernetes.io/service-account-token', data: { token: '' } },
    });
    expect(made.status, made.text).toBe(201);
    const s = await filled('empty-token');
    expect((await whoami(tokenOf(s!))).user?.username).toBe('system:serviceaccount:default:build-robot');
  });

  it('a Secret naming an account that does not exist is deleted; one without the annotation is refused', async () => {
    await runKubectlInput(t.server.kubeconfigPath, tokenSecret('orphan-token', 'nobody'), ['apply', '-f', '-']);
    await eventually(async () => (await secret('orphan-token')) === undefined, 'orphan-token deleted');
    const bad = await runKubectlInput(t.server.kubeconfigPath, 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: bad\ntype: kubernetes.io/service-account-token\n', ['apply', '-f', '-']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('metadata.annotations[kubernetes.io/service-account.name]: Required value');
  });

  it('a token that names its account but was signed by no key of the server is refused', async () => {
    const [h, , sig] = tokenOf((await filled('build-robot-secret'))!).split('.');
    const forged = Buffer.from(JSON.stringify({ iss: 'kubernetes/serviceaccount', sub: 'system:serviceaccount:default:build-robot', 'kubernetes.io/serviceaccount/namespace': 'default', 'kubernetes.io/serviceaccount/secret.name': 'build-robot-secret', 'kubernetes.io/serviceaccount/service-account.name': 'build-robot' })).toString('base64url');
    expect((await whoami(`${h}.${forged}.${sig}`)).code).not.toBe(0);
  });
});
