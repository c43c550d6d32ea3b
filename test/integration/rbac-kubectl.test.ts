// RBAC as a new user drives it with unmodified kubectl 1.32 against a server
// named k8s.io (spec 001 §5.14): service-account tokens from TokenRequest,
// static tokens (--token-auth-file), `kubectl create role/clusterrole/
// rolebinding/clusterrolebinding`, `kubectl auth can-i` (also --list and
// --as) and `kubectl auth reconcile` with --remove-extra-permissions and
// --remove-extra-subjects.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubeconfigFor, userCert } from '../helpers/identities.js';
import { runKubectl } from '../helpers/kubectl.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
let dir: string;
const kubectl = (...args: string[]) => runKubectl(t.server.kubeconfigPath, args);
const as = (kubeconfig: string, ...args: string[]) => runKubectl(kubeconfig, args);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-rbac-kubectl-'));
  await writeFile(join(dir, 'tokens.csv'), 'frank-token,frank,uid-frank,devs\n');
  t = await startTestServer({ apiDomain: 'k8s.io', authn: { tokenAuthFile: join(dir, 'tokens.csv') } });
});
afterAll(async () => {
  await t?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('a service account with view, through kubectl', () => {
  let sa: string;
  beforeAll(async () => {
    let r = await kubectl('create', 'serviceaccount', 'app');
    expect(r.code, r.stderr).toBe(0);
    r = await kubectl('create', 'rolebinding', 'app-view', '--clusterrole=view', '--serviceaccount=default:app');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('rolebinding.rbac.authorization.k8s.io/app-view created');
    r = await kubectl('create', 'token', 'app');
    expect(r.code, r.stderr).toBe(0);
    sa = await kubeconfigFor(t, 'app', { token: r.stdout.trim() });
    expect((await kubectl('create', 'configmap', 'x', '--from-literal=a=1')).code).toBe(0);
  });

  it('get pods works, delete configmap is 403 with the kube message', async () => {
    let r = await as(sa, 'get', 'pods');
    expect(r.code, r.stderr).toBe(0);
    r = await as(sa, 'get', 'configmap', 'x', '-o', 'name');
    expect(r.stdout.trim()).toBe('configmap/x');
    r = await as(sa, 'delete', 'configmap', 'x');
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim()).toBe(
      'Error from server (Forbidden): configmaps "x" is forbidden: User "system:serviceaccount:default:app" cannot delete resource "configmaps" in API group "" in the namespace "default"',
    );
    expect((await kubectl('get', 'configmap', 'x')).code).toBe(0);
  });

  it('kubectl auth can-i, as the account and --as', async () => {
    let r = await as(sa, 'auth', 'can-i', 'create', 'pods');
    expect(r.code).toBe(1);
    expect(r.stdout.trim()).toBe('no');
    r = await as(sa, 'auth', 'can-i', 'list', 'pods');
    expect(r.stdout.trim()).toBe('yes');
    r = await kubectl('auth', 'can-i', 'create', 'pods');
    expect(r.stdout.trim()).toBe('yes');
    r = await kubectl('auth', 'can-i', '--list', '--as=system:serviceaccount:default:app');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/configmaps\s+\[\]\s+\[\]\s+\[get list watch\]/);
    expect(r.stdout).toMatch(/selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]/);
    expect(r.stdout).toMatch(/\[\/version\]\s+\[\]\s+\[get\]/);
    expect(r.stdout).not.toMatch(/^secrets\s/m);
    r = await kubectl('auth', 'can-i', 'get', 'secrets', '--as=system:serviceaccount:default:app');
    expect(r.stdout.trim()).toBe('no');
  });
});

describe('a static-token user, and kubectl create role/clusterrole/…binding', () => {
  it('is forbidden until bound, then acts with its roles', async () => {
    const frank = await kubeconfigFor(t, 'frank', { token: 'frank-token' });
    let r = await as(frank, 'get', 'configmaps');
    expect(r.stderr).toContain('User "frank" cannot list resource "configmaps" in API group "" in the namespace "default"');
    r = await kubectl('create', 'role', 'cm-writer', '--verb=get,list,create', '--resource=configmaps,rolebindings.rbac.authorization.k8s.io');
    expect(r.code, r.stderr).toBe(0);
    r = await kubectl('create', 'rolebinding', 'frank-cm', '--role=cm-writer', '--group=devs');
    expect(r.code, r.stderr).toBe(0);
    r = await as(frank, 'create', 'configmap', 'by-frank');
    expect(r.code, r.stderr).toBe(0);
    r = await as(frank, 'get', 'nodes');
    expect(r.code).not.toBe(0);
    r = await kubectl('create', 'clusterrole', 'node-reader', '--verb=get,list,watch', '--resource=nodes');
    expect(r.code, r.stderr).toBe(0);
    r = await kubectl('create', 'clusterrolebinding', 'frank-nodes', '--clusterrole=node-reader', '--user=frank');
    expect(r.code, r.stderr).toBe(0);
    r = await as(frank, 'get', 'nodes');
    expect(r.code, r.stderr).toBe(0);
    // frank may not grant what he does not hold
    r = await as(frank, 'create', 'rolebinding', 'x', '--clusterrole=cluster-admin', '--user=frank');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('rolebindings.rbac.authorization.k8s.io "x" is forbidden: user "frank" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held');
    // kube's ConfirmNoEscalation: the missing rules compacted (one line per resource, its verbs together) and sorted
    r = await kubectl('create', 'clusterrole', 'sec-reader', '--verb=get,list,watch', '--resource=secrets,services');
    expect(r.code, r.stderr).toBe(0);
    r = await as(frank, 'create', 'rolebinding', 'z', '--clusterrole=sec-reader', '--user=frank');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list" "watch"]}\n{APIGroups:[""], Resources:["services"], Verbs:["get" "list" "watch"]}');
    // but may bind the role he holds
    r = await as(frank, 'create', 'rolebinding', 'y', '--role=cm-writer', '--user=gina');
    expect(r.code, r.stderr).toBe(0);
  });
});

describe('kubectl auth reconcile', () => {
  const manifest = (rules: string, subjects: string) => `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: rec
  namespace: default
rules:
${rules}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: rec
  namespace: default
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: rec
subjects:
${subjects}
`;
  const both = `- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get"]
- apiGroups: [""]
  resources: ["services"]
  verbs: ["list"]`;
  const one = `- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get"]`;
  const twoUsers = `- kind: User
  apiGroup: rbac.authorization.k8s.io
  name: u1
- kind: User
  apiGroup: rbac.authorization.k8s.io
  name: u2`;
  const oneUser = `- kind: User
  apiGroup: rbac.authorization.k8s.io
  name: u1`;
  const get = async (kind: string) => JSON.parse((await kubectl('get', kind, 'rec', '-o', 'json')).stdout) as { rules?: unknown[]; subjects?: unknown[] };

  it('creates, keeps extras by default, removes them with the flags', async () => {
    const f = join(dir, 'rec.yaml');
    await writeFile(f, manifest(both, twoUsers));
    let r = await kubectl('auth', 'reconcile', '-f', f);
    expect(r.code, r.stderr).toBe(0);
    expect((await get('role')).rules).toHaveLength(2);
    expect((await get('rolebinding')).subjects).toHaveLength(2);
    await writeFile(f, manifest(one, oneUser));
    r = await kubectl('auth', 'reconcile', '-f', f);
    expect(r.code, r.stderr).toBe(0);
    expect((await get('role')).rules).toHaveLength(2);
    expect((await get('rolebinding')).subjects).toHaveLength(2);
    r = await kubectl('auth', 'reconcile', '-f', f, '--remove-extra-permissions', '--remove-extra-subjects');
    expect(r.code, r.stderr).toBe(0);
    expect((await get('role')).rules).toEqual([{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }]);
    expect((await get('rolebinding')).subjects).toEqual([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'u1' }]);
  });
});

describe('bindings to roles that do not exist (kube\'s RBAC resolution errors, spec 001 §5.14)', () => {
  const errors = ['role.rbac.authorization.k8s.io "doesnotexist" not found', 'clusterrole.rbac.authorization.k8s.io "doesnotexist" not found'];
  beforeAll(async () => {
    for (const args of [
      ['create', 'namespace', 'team'],
      ['create', 'rolebinding', 'to-role', '--role=doesnotexist', '--user=bob', '-n', 'team'],
      ['create', 'rolebinding', 'to-clusterrole', '--clusterrole=doesnotexist', '--user=bob', '-n', 'team'],
    ]) {
      const r = await kubectl(...args);
      expect(r.code, r.stderr).toBe(0);
    }
  });

  it('the 403 and the access review give the reason `RBAC: [a, b]`', async () => {
    let r = await kubectl('get', 'pods', '-n', 'team', '--as=bob');
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim()).toBe(
      `Error from server (Forbidden): pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "team": RBAC: [${errors.join(', ')}]`,
    );
    r = await kubectl('auth', 'can-i', 'list', 'pods', '-n', 'team', '--as=bob');
    expect(r.code).toBe(1);
    expect(r.stdout.trim()).toBe(`no - RBAC: [${errors.join(', ')}]`);
  });

  it('SelfSubjectRulesReview: complete, the resolution errors in evaluationError', async () => {
    const r = await t.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      headers: { 'Impersonate-User': 'bob' },
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: 'team' } },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.json()).toMatchObject({ status: { incomplete: false, evaluationError: `[${errors.join(', ')}]` } });
  });
});

describe('a node identity lists its rules (kube\'s Node authorizer RulesFor, spec 001 §5.15)', () => {
  it('kubectl auth can-i --list warns that the list is incomplete, saying why', async () => {
    const node = await kubeconfigFor(t, 'node-n1', await userCert(t, 'system:node:n1', ['system:nodes']));
    const r = await as(node, 'auth', 'can-i', '--list');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.trim()).toBe('Warning: the list may be incomplete: node authorizer does not support user rule resolution');
    // the RBAC rules of system:authenticated are still listed
    expect(r.stdout).toMatch(/selfsubjectrulesreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]/);
  });
});
