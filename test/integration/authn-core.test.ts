// Authentication chain, static tokens, service-account tokens (TokenRequest,
// TokenReview, revocation, issuer discovery), SelfSubjectReview and
// impersonation, through the real server and kubectl (spec 001 §5).

import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createLocalJWKSet, decodeJwt, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer } from '../helpers/server.js';

const exec = promisify(execFile);
let t: TestServer;
let dir: string;
const G = 'authentication.k8s.io';

async function kubectl(args: string[]): Promise<string> {
  const { stdout } = await exec('kubectl', ['--kubeconfig', t.server.kubeconfigPath, ...args]);
  return stdout;
}

/** kubectl with only a server, the CA and a bearer token */
async function kubectlToken(token: string, args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  const kc = join(dir, `tok-${Math.random().toString(36).slice(2)}.kubeconfig`);
  await writeFile(kc, `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: ${t.server.url}\n    certificate-authority: ${join(dir, 'ca.crt')}\ncontexts:\n- name: c\n  context: {cluster: c}\ncurrent-context: c\nusers: []\n`);
  try {
    const r = await exec('kubectl', ['--kubeconfig', kc, '--token', token, ...args]);
    return { ...r, code: 0 };
  } catch (e) {
    const x = e as { stdout: string; stderr: string; code: number };
    return { stdout: x.stdout, stderr: x.stderr, code: x.code };
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-authn-'));
  await writeFile(
    join(dir, 'tokens.csv'),
    ['# token,user,uid,groups', 'alice-token,alice,uid-alice,dev,ops', 'bob-token,bob,uid-bob,"team-a,team-b"', 'carol-token,carol,'].join('\n'),
  );
  t = await startTestServer({ apiDomain: 'k8s.io', authn: { tokenAuthFile: join(dir, 'tokens.csv') } });
  await writeFile(join(dir, 'ca.crt'), t.server.caPem);
});
afterAll(async () => {
  await t?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function createSA(name: string): Promise<void> {
  const r = await t.request('POST', '/api/v1/namespaces/default/serviceaccounts', { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } } });
  expect(r.status).toBe(201);
}

/** binds a default ClusterRole to system:unauthenticated (as the admin) */
async function bindToAnonymous(role: string): Promise<void> {
  const r = await t.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: `anonymous-${role.replace(/:/g, '-')}` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:unauthenticated' }],
    },
  });
  expect(r.status, r.text).toBe(201);
}

const whoami = async (headers: Record<string, string | string[]>, anonymous = true) =>
  t.request('POST', `/apis/${G}/v1/selfsubjectreviews`, { anonymous, headers, body: { apiVersion: `${G}/v1`, kind: 'SelfSubjectReview' } });

describe('chain and static tokens', () => {
  it('a static token authenticates with its groups and system:authenticated', async () => {
    const r = await whoami({ Authorization: 'Bearer alice-token' });
    expect(r.status).toBe(201);
    expect(r.json()).toMatchObject({
      kind: 'SelfSubjectReview',
      status: { userInfo: { username: 'alice', uid: 'uid-alice', groups: ['dev', 'ops', 'system:authenticated'] } },
    });
    const b = (await whoami({ Authorization: 'Bearer bob-token' })).json<{ status: { userInfo: { groups: string[] } } }>();
    expect(b.status.userInfo.groups).toEqual(['team-a', 'team-b', 'system:authenticated']);
  });

  it('an unknown bearer token is 401, not anonymous', async () => {
    const r = await whoami({ Authorization: 'Bearer nope' });
    expect(r.status).toBe(401);
    expect(r.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
  });

  it('no credentials is anonymous', async () => {
    // under the default Node,RBAC only system:authenticated holds system:basic-user (spec 001 §5.14)
    const denied = await whoami({});
    expect(denied.status, denied.text).toBe(403);
    expect(denied.json()).toMatchObject({ reason: 'Forbidden', message: `selfsubjectreviews.${G} is forbidden: User "system:anonymous" cannot create resource "selfsubjectreviews" in API group "${G}" at the cluster scope` });
    await bindToAnonymous('system:basic-user');
    const r = await whoami({});
    expect(r.json()).toMatchObject({ status: { userInfo: { username: 'system:anonymous', groups: ['system:unauthenticated'] } } });
  });

  it('the admin certificate maps CN and O', async () => {
    const r = await whoami({}, false);
    expect(r.json()).toMatchObject({ status: { userInfo: { username: 'orch-admin', groups: ['system:masters', 'system:authenticated'] } } });
  });

  it('kubectl auth whoami and kubectl --token', async () => {
    const out = JSON.parse(await kubectl(['auth', 'whoami', '-o', 'json'])) as { status: { userInfo: { username: string } } };
    expect(out.status.userInfo.username).toBe('orch-admin');
    const r = await kubectlToken('alice-token', ['auth', 'whoami']);
    expect(r.stdout).toContain('alice');
    expect(r.stdout).toContain('dev');
    const bad = await kubectlToken('wrong', ['get', 'namespaces']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/Unauthorized|provide credentials/);
  });

  it('oversized and malformed bearer headers are a clear error, never a crash', async () => {
    for (const h of ['Bearer ' + 'x'.repeat(3000), 'Bearer a.b.c', 'Bearer ey.ey.ey', 'Bearer \u00ff', 'Bearer', 'Bearer    ']) {
      const r = await whoami({ Authorization: h });
      expect([400, 401, 431]).toContain(r.status);
    }
    // the server still answers
    expect((await whoami({ Authorization: 'Bearer alice-token' })).status).toBe(201);
  });
});

describe('service-account tokens', () => {
  /** `kubectl auth whoami -o json` with the token */
  const whoamiUser = async (token: string) => {
    const r = await kubectlToken(token, ['auth', 'whoami', '-o', 'json']);
    expect(r.code, r.stderr).toBe(0);
    return (JSON.parse(r.stdout) as { status: { userInfo: { username: string; groups: string[]; extra: Record<string, string[]> } } }).status.userInfo;
  };
  const whoamiExtra = async (token: string) => (await whoamiUser(token)).extra;

  it('kubectl create token issues a token that authenticates as the account', async () => {
    await createSA('builder');
    const token = (await kubectl(['create', 'token', 'builder', '-n', 'default'])).trim();
    const claims = decodeJwt(token);
    expect(claims.sub).toBe('system:serviceaccount:default:builder');
    const u = await whoamiUser(token);
    expect(u.username).toBe('system:serviceaccount:default:builder');
    expect(u.groups).toEqual(['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated']);
    expect(u.extra['authentication.kubernetes.io/credential-id']).toEqual([`JTI=${claims.jti}`]);
  });

  it('TokenRequest honours audiences and expiry; TokenReview checks audiences', async () => {
    await createSA('aud');
    const r = await t.request('POST', '/api/v1/namespaces/default/serviceaccounts/aud/token', {
      body: { apiVersion: `${G}/v1`, kind: 'TokenRequest', spec: { audiences: ['vault'], expirationSeconds: 1200 } },
    });
    expect(r.status).toBe(201);
    const tr = r.json<{ status: { token: string; expirationTimestamp: string }; spec: { audiences: string[] } }>();
    const c = decodeJwt(tr.status.token);
    expect(c.aud).toEqual(['vault']);
    expect(c.exp! - c.iat!).toBe(1200);
    expect(new Date(tr.status.expirationTimestamp).getTime()).toBe(c.exp! * 1000);
    // not valid for the API server itself
    expect((await whoami({ Authorization: `Bearer ${tr.status.token}` })).status).toBe(401);
    const review = async (token: string, audiences?: string[]) =>
      (
        await t.request('POST', `/apis/${G}/v1/tokenreviews`, { body: { apiVersion: `${G}/v1`, kind: 'TokenReview', spec: { token, ...(audiences ? { audiences } : {}) } } })
      ).json<{ status: { authenticated?: boolean; user: { username?: string }; audiences?: string[]; error?: string } }>();
    const ok = await review(tr.status.token, ['vault']);
    expect(ok.status).toMatchObject({ authenticated: true, user: { username: 'system:serviceaccount:default:aud' }, audiences: ['vault'] });
    const wrong = await review(tr.status.token, ['other']);
    expect(wrong.status.authenticated).toBeUndefined();
    expect(wrong.status.error).toMatch(/audience/);
    // v1beta1 too
    const b = await t.request('POST', `/apis/${G}/v1beta1/tokenreviews`, { body: { apiVersion: `${G}/v1beta1`, kind: 'TokenReview', spec: { token: 'alice-token' } } });
    expect(b.json()).toMatchObject({ apiVersion: `${G}/v1beta1`, status: { authenticated: true, user: { username: 'alice' } } });
    // an empty token: kube's tokenreview REST's 400, word for word
    const empty = await t.request('POST', `/apis/${G}/v1/tokenreviews`, { body: { apiVersion: `${G}/v1`, kind: 'TokenReview', spec: { token: '' } } });
    expect(empty.status).toBe(400);
    expect(empty.json()).toMatchObject({ reason: 'BadRequest', message: 'token is required for TokenReview in authentication' });
  });

  it('a token bound to a Node (kubectl --bound-object-kind Node) names it in the extra and dies with it', async () => {
    await createSA('agent');
    const node = await t.request('POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'bound-n1' } } });
    expect(node.status, node.text).toBe(201);
    const nodeUid = node.json<{ metadata: { uid: string } }>().metadata.uid;
    const token = (await kubectl(['create', 'token', 'agent', '--bound-object-kind', 'Node', '--bound-object-name', 'bound-n1', '--bound-object-uid', nodeUid])).trim();
    expect(decodeJwt(token)['kubernetes.io']).toMatchObject({ node: { name: 'bound-n1', uid: nodeUid } });
    const u = await whoamiExtra(token);
    expect(u['authentication.kubernetes.io/node-name']).toEqual(['bound-n1']);
    expect(u['authentication.kubernetes.io/node-uid']).toEqual([nodeUid]);
    await expect(kubectl(['create', 'token', 'agent', '--bound-object-kind', 'Node', '--bound-object-name', 'bound-n1', '--bound-object-uid', 'other'])).rejects.toThrow(/does not match the UID in record/);
    await expect(kubectl(['create', 'token', 'agent', '--bound-object-kind', 'Node', '--bound-object-name', 'ghost'])).rejects.toThrow(/nodes "ghost" not found/);
    expect((await t.request('DELETE', '/api/v1/nodes/bound-n1')).status).toBe(200);
    expect((await kubectlToken(token, ['auth', 'whoami'])).stderr).toMatch(/Unauthorized/);
  });

  it('a token bound to a pod on a node carries the node in its claim and extra', async () => {
    await createSA('runner');
    const node = await t.request('POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'pod-n1' } } });
    const nodeUid = node.json<{ metadata: { uid: string } }>().metadata.uid;
    const podBody = (name: string, nodeName: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { serviceAccountName: 'runner', nodeName, containers: [{ name: 'c', image: 'busybox' }] } });
    const pod = await t.request('POST', '/api/v1/namespaces/default/pods', { body: podBody('on-node', 'pod-n1') });
    expect(pod.status, pod.text).toBe(201);
    const podUid = pod.json<{ metadata: { uid: string } }>().metadata.uid;
    const token = (await kubectl(['create', 'token', 'runner', '--bound-object-kind', 'Pod', '--bound-object-name', 'on-node'])).trim();
    expect(decodeJwt(token)['kubernetes.io']).toMatchObject({ pod: { name: 'on-node', uid: podUid }, node: { name: 'pod-n1', uid: nodeUid } });
    expect(await whoamiExtra(token)).toMatchObject({
      'authentication.kubernetes.io/pod-name': ['on-node'],
      'authentication.kubernetes.io/pod-uid': [podUid],
      'authentication.kubernetes.io/node-name': ['pod-n1'],
      'authentication.kubernetes.io/node-uid': [nodeUid],
    });
    // a pod on a Node that does not exist: the node's name alone (kube's ServiceAccountTokenPodNodeInfo)
    expect((await t.request('POST', '/api/v1/namespaces/default/pods', { body: podBody('on-ghost', 'ghost-node') })).status).toBe(201);
    const ghost = (await kubectl(['create', 'token', 'runner', '--bound-object-kind', 'Pod', '--bound-object-name', 'on-ghost'])).trim();
    expect((decodeJwt(ghost)['kubernetes.io'] as { node: unknown }).node).toEqual({ name: 'ghost-node' });
    const g = await whoamiExtra(ghost);
    expect(g['authentication.kubernetes.io/node-name']).toEqual(['ghost-node']);
    expect(g['authentication.kubernetes.io/node-uid']).toBeUndefined();
  });

  it('TokenRequest validation: too short expiry is 422, unknown account is 404', async () => {
    const short = await t.request('POST', '/api/v1/namespaces/default/serviceaccounts/aud/token', { body: { kind: 'TokenRequest', spec: { expirationSeconds: 60 } } });
    expect(short.status).toBe(422);
    expect(short.text).toContain('spec.expirationSeconds');
    const kind = await t.request('POST', '/api/v1/namespaces/default/serviceaccounts/aud/token', { body: { kind: 'TokenRequest', spec: { boundObjectRef: { apiVersion: 'v1', kind: 'ConfigMap', name: 'x' } } } });
    expect(kind.status).toBe(422);
    expect(kind.json<{ message: string }>().message).toContain('spec.boundObjectRef.kind: Unsupported value: "ConfigMap": supported values: "Node", "Pod", "Secret"');
    const missing = await t.request('POST', '/api/v1/namespaces/default/serviceaccounts/ghost/token', { body: { kind: 'TokenRequest', spec: {} } });
    expect(missing.status).toBe(404);
  });

  it('a deleted account revokes its tokens (--service-account-lookup)', async () => {
    await createSA('temp');
    const token = (await kubectl(['create', 'token', 'temp'])).trim();
    expect((await whoami({ Authorization: `Bearer ${token}` })).status).toBe(201);
    expect((await t.request('DELETE', '/api/v1/namespaces/default/serviceaccounts/temp')).status).toBe(200);
    expect((await whoami({ Authorization: `Bearer ${token}` })).status).toBe(401);
    // recreated with a new uid: still revoked
    await createSA('temp');
    expect((await whoami({ Authorization: `Bearer ${token}` })).status).toBe(401);
  });

  it('a tampered token or one signed by another key is 401', async () => {
    const token = (await kubectl(['create', 'token', 'builder'])).trim();
    const [h, p, s] = token.split('.') as [string, string, string];
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
    payload.sub = 'system:serviceaccount:default:aud';
    const forged = `${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${s}`;
    expect((await whoami({ Authorization: `Bearer ${forged}` })).status).toBe(401);
    expect((await whoami({ Authorization: `Bearer ${h}.${p}.${s.slice(0, -4)}AAAA` })).status).toBe(401);
  });

  it('issuer discovery and JWKS are served anonymously and verify the token (jose)', async () => {
    // kube grants issuer discovery to service accounts only; an operator opens it to anonymous clients with a binding
    expect((await t.request('GET', '/.well-known/openid-configuration', { anonymous: true })).status).toBe(403);
    await bindToAnonymous('system:service-account-issuer-discovery');
    const d = await t.request('GET', '/.well-known/openid-configuration', { anonymous: true });
    expect(d.status).toBe(200);
    const doc = d.json<{ issuer: string; jwks_uri: string }>();
    expect(doc.jwks_uri).toBe(`${t.server.url}/openid/v1/jwks`);
    const j = await t.request('GET', '/openid/v1/jwks', { anonymous: true });
    const jwks = createLocalJWKSet(j.json());
    const token = (await kubectl(['create', 'token', 'builder', '--audience', 'x'])).trim();
    const v = await jwtVerify(token, jwks, { issuer: doc.issuer, audience: 'x' });
    expect(v.payload.sub).toBe('system:serviceaccount:default:builder');
  });
});

describe('impersonation', () => {
  it('kubectl --as / --as-group', async () => {
    const out = JSON.parse(await kubectl(['auth', 'whoami', '-o', 'json', '--as', 'dave', '--as-group', 'g1', '--as-group', 'g2'])) as {
      status: { userInfo: { username: string; groups: string[] } };
    };
    expect(out.status.userInfo).toEqual({ username: 'dave', groups: ['g1', 'g2', 'system:authenticated'] });
  });

  it('a user impersonated with system:unauthenticated is not also authenticated (kube never gives both groups)', async () => {
    const out = JSON.parse(await kubectl(['auth', 'whoami', '-o', 'json', '--as', 'bob', '--as-group', 'system:unauthenticated'])) as {
      status: { userInfo: { username: string; groups: string[] } };
    };
    expect(out.status.userInfo).toEqual({ username: 'bob', groups: ['system:unauthenticated'] });
    // so system:discovery (bound to system:authenticated) does not admit it to /apis: only what anonymous users get
    expect((await t.request('GET', '/apis', { headers: { 'Impersonate-User': 'bob', 'Impersonate-Group': 'system:unauthenticated' } })).status).toBe(403);
    expect((await t.request('GET', '/version', { headers: { 'Impersonate-User': 'bob', 'Impersonate-Group': 'system:unauthenticated' } })).status).toBe(200);
    expect((await t.request('GET', '/apis', { headers: { 'Impersonate-User': 'bob' } })).status).toBe(200);
  });

  it('every Impersonate-Group line is one group, commas and all (kubectl over HTTP/2, and HTTP/1.1)', async () => {
    const out = JSON.parse(await kubectl(['auth', 'whoami', '-o', 'json', '--as', 'dave', '--as-group', 'g2', '--as-group', ',,,chameleon', '--as-group', 'a, b'])) as {
      status: { userInfo: { groups: string[] } };
    };
    expect(out.status.userInfo.groups).toEqual(['g2', ',,,chameleon', 'a, b', 'system:authenticated']);
    const h1 = await whoami({ 'Impersonate-User': 'erin', 'Impersonate-Group': ['x,y', 'z'], 'Impersonate-Extra-Scopes': ['r,w', 'admin'] }, false);
    expect(h1.json()).toMatchObject({ status: { userInfo: { username: 'erin', groups: ['x,y', 'z', 'system:authenticated'], extra: { scopes: ['r,w', 'admin'] } } } });
  });

  it('uid and extra headers; groups without a user is 400', async () => {
    const r = await whoami({ 'Impersonate-User': 'erin', 'Impersonate-Uid': 'u-1', 'Impersonate-Extra-Scopes': 'read' }, false);
    expect(r.json()).toMatchObject({ status: { userInfo: { username: 'erin', uid: 'u-1', extra: { scopes: ['read'] } } } });
    // a percent-encoded key with '.' and '%' (legal header-name characters uWS refuses) reaches the API
    const enc = await whoami({ 'Impersonate-User': 'erin', 'Impersonate-Extra-acme.com%2Fproject': 'p1' }, false);
    expect(enc.json()).toMatchObject({ status: { userInfo: { username: 'erin', extra: { 'acme.com/project': ['p1'] } } } });
    expect((await whoami({ 'Impersonate-Group': 'x' }, false)).status).toBe(400);
    const sa = await whoami({ 'Impersonate-User': 'system:serviceaccount:ns1:robot' }, false);
    expect(sa.json<{ status: { userInfo: { groups: string[] } } }>().status.userInfo.groups).toEqual([
      'system:serviceaccounts',
      'system:serviceaccounts:ns1',
      'system:authenticated',
    ]);
  });
});
