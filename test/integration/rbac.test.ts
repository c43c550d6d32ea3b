// RBAC against a started server with real identities (spec 001 §5.14, §7):
// client certificates for users, the default Node,RBAC chain, the default
// roles, escalation prevention, roleRef immutability, aggregation, anonymous
// access and kube's 403 messages.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CertificateAndKey } from '../../src/server/pki.js';
import { userCert } from '../helpers/identities.js';
import { eventually } from '../helpers/eventually.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const G = 'rbac.authorization.orch.io';
const RBAC = `/apis/${G}/v1`;
let t: TestServer;
let viewer: CertificateAndKey;
let nsAdmin: CertificateAndKey;

const ok = (status: number, text: string, want = 201) => expect(status, text).toBe(want);

async function admin(method: string, path: string, body?: object): Promise<{ status: number; text: string; json: Record<string, unknown> }> {
  const r = await t.request(method, path, { body });
  return { status: r.status, text: r.text, json: r.text ? r.json() : {} };
}

const binding = (kind: 'RoleBinding' | 'ClusterRoleBinding', name: string, roleKind: string, role: string, subjects: object[], namespace?: string) => ({
  apiVersion: `${G}/v1`,
  kind,
  metadata: { name, ...(namespace ? { namespace } : {}) },
  roleRef: { apiGroup: G, kind: roleKind, name: role },
  subjects,
});
const user = (name: string) => ({ kind: 'User', apiGroup: G, name });

beforeAll(async () => {
  t = await startTestServer();
  viewer = await userCert(t, 'vera', ['viewers']);
  nsAdmin = await userCert(t, 'ada');
  for (const ns of ['team-a', 'team-b']) ok((await admin('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status, ns);
  ok((await admin('POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg' }, data: { a: '1' } })).status, 'cm');
  ok((await admin('POST', '/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, stringData: { a: '1' } })).status, 'secret');
  ok((await admin('POST', `${RBAC}/namespaces/default/rolebindings`, binding('RoleBinding', 'viewers', 'ClusterRole', 'view', [{ kind: 'Group', apiGroup: G, name: 'viewers' }], 'default'))).status, 'rb');
  ok((await admin('POST', `${RBAC}/namespaces/team-a/rolebindings`, binding('RoleBinding', 'ada-admin', 'ClusterRole', 'admin', [user('ada')], 'team-a'))).status, 'rb2');
});
afterAll(async () => {
  await t?.stop();
});

describe('default roles', () => {
  it('are created with the bootstrap label and autoupdate annotation; admin/edit/view are aggregated', async () => {
    const list = await admin('GET', `${RBAC}/clusterroles?labelSelector=orch.io/bootstrapping%3Drbac-defaults`);
    const names = (list.json.items as { metadata: { name: string } }[]).map((i) => i.metadata.name);
    for (const n of ['cluster-admin', 'admin', 'edit', 'view', 'system:basic-user', 'system:discovery', 'system:public-info-viewer', 'system:monitoring', 'system:node', 'system:node-proxier']) {
      expect(names).toContain(n);
    }
    const view = (await admin('GET', `${RBAC}/clusterroles/view`)).json as { metadata: { annotations: Record<string, string> }; rules: { resources?: string[] }[] };
    expect(view.metadata.annotations[`${G}/autoupdate`]).toBe('true');
    // filled in by the aggregation controller from system:aggregate-to-view
    expect(view.rules.flatMap((r) => r.resources ?? [])).toContain('configmaps');
    const crbs = (await admin('GET', `${RBAC}/clusterrolebindings/system:public-info-viewer`)).json as { subjects: { name: string }[] };
    expect(crbs.subjects.map((s) => s.name)).toEqual(['system:authenticated', 'system:unauthenticated']);
  });

  it("kube's component roles: system:auth-delegator bound as metrics-server binds it, the scheduler's and controller manager's users", async () => {
    const sar = async (user: string, groups: string[], verb: string, group: string, resource: string, subresource = '') => {
      const r = await admin('POST', '/apis/authorization.orch.io/v1/subjectaccessreviews', {
        apiVersion: 'authorization.orch.io/v1',
        kind: 'SubjectAccessReview',
        spec: { user, groups, resourceAttributes: { verb, group, resource, subresource, namespace: 'default' } },
      });
      ok(r.status, r.text);
      return (r.json.status as { allowed: boolean }).allowed;
    };
    const names = ((await admin('GET', `${RBAC}/clusterroles`)).json.items as { metadata: { name: string } }[]).map((i) => i.metadata.name);
    for (const n of ['system:auth-delegator', 'system:kube-aggregator', 'system:kube-controller-manager', 'system:kube-scheduler', 'system:volume-scheduler', 'system:kube-dns', 'system:kubelet-api-admin', 'system:persistent-volume-provisioner', 'system:node-problem-detector', 'system:heapster']) {
      expect(names).toContain(n);
    }
    const robot = 'system:serviceaccount:default:metrics-server';
    const robotGroups = ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'];
    expect(await sar(robot, robotGroups, 'create', 'authentication.orch.io', 'tokenreviews')).toBe(false);
    ok((await admin('POST', `${RBAC}/clusterrolebindings`, binding('ClusterRoleBinding', 'metrics-server:system:auth-delegator', 'ClusterRole', 'system:auth-delegator', [{ kind: 'ServiceAccount', name: 'metrics-server', namespace: 'default' }]))).status, 'crb');
    await eventually(async () => expect(await sar(robot, robotGroups, 'create', 'authentication.orch.io', 'tokenreviews')).toBe(true), 'auth-delegator grants tokenreviews');
    expect(await sar(robot, robotGroups, 'create', 'authorization.orch.io', 'subjectaccessreviews')).toBe(true);
    expect(await sar(robot, robotGroups, 'create', '', 'configmaps')).toBe(false);
    // bound by default, as kube binds them
    expect(await sar('system:kube-scheduler', ['system:authenticated'], 'create', '', 'pods', 'binding')).toBe(true);
    expect(await sar('system:kube-scheduler', ['system:authenticated'], 'update', '', 'persistentvolumeclaims')).toBe(true);
    expect(await sar('system:kube-controller-manager', ['system:authenticated'], 'watch', 'apps', 'deployments')).toBe(true);
    expect(await sar('system:kube-controller-manager', ['system:authenticated'], 'delete', 'apps', 'deployments')).toBe(false);
  });
});

describe('a user with only view', () => {
  it('reads but does not write nor read secrets, with kube\'s 403 messages', async () => {
    expect((await t.request('GET', '/api/v1/namespaces/default/configmaps/cfg', { cert: viewer })).status).toBe(200);
    expect((await t.request('GET', '/api/v1/namespaces/default/pods', { cert: viewer })).status).toBe(200);
    const w = await t.request('POST', '/api/v1/namespaces/default/configmaps', { cert: viewer, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } } });
    expect(w.status).toBe(403);
    expect(w.json()).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'Forbidden',
      code: 403,
      message: 'configmaps is forbidden: User "vera" cannot create resource "configmaps" in API group "" in the namespace "default"',
      details: { kind: 'configmaps' },
    });
    const s = await t.request('GET', '/api/v1/namespaces/default/secrets/s', { cert: viewer });
    expect(s.status).toBe(403);
    expect(s.json()).toMatchObject({ message: 'secrets "s" is forbidden: User "vera" cannot get resource "secrets" in API group "" in the namespace "default"', details: { name: 's', kind: 'secrets' } });
    // view is bound in default only
    const other = await t.request('GET', '/api/v1/namespaces/team-a/configmaps', { cert: viewer });
    expect(other.status).toBe(403);
    const rbacGet = await t.request('GET', `${RBAC}/clusterroles/view`, { cert: viewer });
    expect(rbacGet.json()).toMatchObject({ message: `clusterroles.${G} "view" is forbidden: User "vera" cannot get resource "clusterroles" in API group "${G}" at the cluster scope`, details: { group: G } });
  });

  it('non-resource paths: discovery yes, /metrics no with the path message', async () => {
    expect((await t.request('GET', '/api', { cert: viewer })).status).toBe(200);
    const m = await t.request('GET', '/metrics', { cert: viewer });
    expect(m.status).toBe(403);
    expect(m.json()).toMatchObject({ reason: 'Forbidden', message: 'forbidden: User "vera" cannot get path "/metrics"' });
  });
});

describe('a namespace admin', () => {
  it('works in its namespace and cannot touch another', async () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mine' } };
    expect((await t.request('POST', '/api/v1/namespaces/team-a/configmaps', { cert: nsAdmin, body: cm })).status).toBe(201);
    expect((await t.request('GET', '/api/v1/namespaces/team-a/secrets', { cert: nsAdmin })).status).toBe(200);
    const b = await t.request('POST', '/api/v1/namespaces/team-b/configmaps', { cert: nsAdmin, body: cm });
    expect(b.status).toBe(403);
    expect(b.json<{ message: string }>().message).toBe('configmaps is forbidden: User "ada" cannot create resource "configmaps" in API group "" in the namespace "team-b"');
    expect((await t.request('DELETE', '/api/v1/namespaces/team-a', { cert: nsAdmin })).status).toBe(403);
    expect((await t.request('GET', '/api/v1/nodes', { cert: nsAdmin })).status).toBe(403);
  });

  it('may grant view/edit in its namespace, but not cluster-admin nor rules it does not hold (escalation prevention)', async () => {
    const ok1 = await t.request('POST', `${RBAC}/namespaces/team-a/rolebindings`, { cert: nsAdmin, body: binding('RoleBinding', 'bob-view', 'ClusterRole', 'view', [user('bob')]) });
    expect(ok1.status, ok1.text).toBe(201);
    const esc = await t.request('POST', `${RBAC}/namespaces/team-a/rolebindings`, { cert: nsAdmin, body: binding('RoleBinding', 'bob-root', 'ClusterRole', 'cluster-admin', [user('bob')]) });
    expect(esc.status, esc.text).toBe(403);
    expect(esc.json()).toMatchObject({ reason: 'Forbidden', details: { name: 'bob-root', group: G, kind: 'rolebindings' } });
    expect(esc.json<{ message: string }>().message).toMatch(
      /^rolebindings\.rbac\.authorization\.orch\.io "bob-root" is forbidden: user "ada" \(groups=\["system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\["\*"\], Resources:\["\*"\], Verbs:\["\*"\]\}/,
    );
    // a Role with what ada holds is fine; one with more is not
    const role = (name: string, rules: object[]) => ({ apiVersion: `${G}/v1`, kind: 'Role', metadata: { name }, rules });
    expect((await t.request('POST', `${RBAC}/namespaces/team-a/roles`, { cert: nsAdmin, body: role('reader', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]) })).status).toBe(201);
    const more = await t.request('POST', `${RBAC}/namespaces/team-a/roles`, { cert: nsAdmin, body: role('nodes', [{ apiGroups: [''], resources: ['nodes'], verbs: ['get'] }]) });
    expect(more.status, more.text).toBe(403);
    expect(more.json<{ message: string }>().message).toContain('is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["nodes"], Verbs:["get"]}');
    // nothing was written
    expect((await admin('GET', `${RBAC}/namespaces/team-a/roles/nodes`)).status).toBe(404);
    // the same role in a namespace where ada holds nothing
    expect((await t.request('POST', `${RBAC}/namespaces/team-b/roles`, { cert: nsAdmin, body: role('reader', []) })).status).toBe(403);
    // binding a Role that does not exist, without bind: kube's binding storage resolves it first (404 from its lister)
    const ghost = await t.request('POST', `${RBAC}/namespaces/team-a/rolebindings`, { cert: nsAdmin, body: binding('RoleBinding', 'to-ghost', 'Role', 'ghost', [user('bob')], 'team-a') });
    expect(ghost.status, ghost.text).toBe(404);
    expect(ghost.json()).toMatchObject({ reason: 'NotFound', message: `role.${G} "ghost" not found`, details: { name: 'ghost', group: G, kind: 'role' } });
  });

  it('the bind verb lets a user bind a role it does not hold; escalate lets it write one', async () => {
    const carol = await userCert(t, 'carol');
    const rules = [
      { apiGroups: [G], resources: ['rolebindings', 'roles'], verbs: ['create'] },
      { apiGroups: [G], resources: ['clusterroles'], verbs: ['bind'], resourceNames: ['edit'] },
      { apiGroups: [G], resources: ['roles'], verbs: ['escalate'] },
    ];
    ok((await admin('POST', `${RBAC}/namespaces/team-b/roles`, { apiVersion: `${G}/v1`, kind: 'Role', metadata: { name: 'granter' }, rules })).status, 'granter');
    ok((await admin('POST', `${RBAC}/namespaces/team-b/rolebindings`, binding('RoleBinding', 'carol', 'Role', 'granter', [user('carol')], 'team-b'))).status, 'carol');
    const edit = await t.request('POST', `${RBAC}/namespaces/team-b/rolebindings`, { cert: carol, body: binding('RoleBinding', 'dan-edit', 'ClusterRole', 'edit', [user('dan')]) });
    expect(edit.status, edit.text).toBe(201);
    const adm = await t.request('POST', `${RBAC}/namespaces/team-b/rolebindings`, { cert: carol, body: binding('RoleBinding', 'dan-admin', 'ClusterRole', 'admin', [user('dan')]) });
    expect(adm.status, adm.text).toBe(403);
    const big = await t.request('POST', `${RBAC}/namespaces/team-b/roles`, { cert: carol, body: { apiVersion: `${G}/v1`, kind: 'Role', metadata: { name: 'big' }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] } });
    expect(big.status, big.text).toBe(201);
  });
});

describe('access reviews answer from the real chain', () => {
  it('SubjectAccessReview gives RBAC\'s decision and reason; SelfSubjectRulesReview lists the RBAC rules', async () => {
    const sar = (resource: string) =>
      admin('POST', '/apis/authorization.orch.io/v1/subjectaccessreviews', {
        apiVersion: 'authorization.orch.io/v1',
        kind: 'SubjectAccessReview',
        spec: { user: 'vera', groups: ['viewers', 'system:authenticated'], resourceAttributes: { namespace: 'default', verb: 'get', resource } },
      });
    expect((await sar('configmaps')).json).toMatchObject({ status: { allowed: true, reason: 'RBAC: allowed by RoleBinding "viewers/default" of ClusterRole "view" to Group "viewers"' } });
    const denied = (await sar('secrets')).json as { status: { allowed: boolean; denied?: boolean } };
    expect(denied.status.allowed).toBe(false);
    expect(denied.status.denied).toBeUndefined();
    const rules = await t.request('POST', '/apis/authorization.orch.io/v1/selfsubjectrulesreviews', {
      cert: viewer,
      body: { apiVersion: 'authorization.orch.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: 'default' } },
    });
    expect(rules.status, rules.text).toBe(201);
    const st = rules.json<{ status: { resourceRules: { resources: string[]; verbs: string[] }[]; incomplete: boolean } }>().status;
    expect(st.incomplete).toBe(false);
    expect(st.resourceRules.some((r) => r.resources.includes('configmaps') && r.verbs.includes('list'))).toBe(true);
    expect(st.resourceRules.some((r) => r.resources.includes('secrets'))).toBe(false);
  });
});

describe('authorization metrics', () => {
  it('/metrics counts decisions by authorizer type, name and decision', async () => {
    // an anonymous /version is allowed by RBAC (system:public-info-viewer); the admin by the privileged group
    expect((await t.request('GET', '/version', { anonymous: true })).status).toBe(200);
    const text = (await t.request('GET', '/metrics')).text;
    expect(text).toMatch(/apiserver_authorization_decisions_total\{[^}]*type="SystemMasters"[^}]*decision="allowed"[^}]*\} [1-9]/);
    expect(text).toMatch(/apiserver_authorization_decisions_total\{[^}]*type="RBAC"[^}]*decision="allowed"[^}]*\} [1-9]/);
  });
});

describe('bindings', () => {
  it('roleRef is immutable (422 Invalid on roleRef)', async () => {
    const cur = (await admin('GET', `${RBAC}/namespaces/default/rolebindings/viewers`)).json as Record<string, unknown>;
    const r = await admin('PUT', `${RBAC}/namespaces/default/rolebindings/viewers`, { ...cur, roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'edit' } });
    expect(r.status, r.text).toBe(422);
    expect(r.json).toMatchObject({ reason: 'Invalid', details: { causes: [{ field: 'roleRef' }] } });
  });

  it('a binding to a missing role grants nothing until the role appears', async () => {
    const ghost = await userCert(t, 'ghost');
    ok((await admin('POST', `${RBAC}/clusterrolebindings`, binding('ClusterRoleBinding', 'ghost', 'ClusterRole', 'later', [user('ghost')]))).status, 'crb');
    expect((await t.request('GET', '/api/v1/nodes', { cert: ghost })).status).toBe(403);
    ok((await admin('POST', `${RBAC}/clusterroles`, { apiVersion: `${G}/v1`, kind: 'ClusterRole', metadata: { name: 'later' }, rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['list'] }] })).status, 'cr');
    expect((await t.request('GET', '/api/v1/nodes', { cert: ghost })).status).toBe(200);
  });
});

describe('aggregation', () => {
  it('a ClusterRole labelled aggregate-to-view extends view, edit and admin; removing the label takes it back', async () => {
    const extra = { apiVersion: `${G}/v1`, kind: 'ClusterRole', metadata: { name: 'widgets-view', labels: { [`${G}/aggregate-to-view`]: 'true' } }, rules: [{ apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get'] }] };
    ok((await admin('POST', `${RBAC}/clusterroles`, extra)).status, 'extra');
    const has = async (role: string) => JSON.stringify((await admin('GET', `${RBAC}/clusterroles/${role}`)).json.rules).includes('widgets');
    await eventually(async () => (await has('view')) && (await has('edit')) && (await has('admin')));
    // the viewer now may read widgets in default (RBAC follows the aggregated rules)
    const sar = await t.request('POST', '/apis/authorization.orch.io/v1/selfsubjectaccessreviews', {
      cert: viewer,
      body: { apiVersion: 'authorization.orch.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { namespace: 'default', verb: 'get', group: 'example.com', resource: 'widgets' } } },
    });
    expect(sar.json()).toMatchObject({ status: { allowed: true } });
    const patched = await t.request('PATCH', `${RBAC}/clusterroles/widgets-view`, { headers: { 'Content-Type': 'application/merge-patch+json' }, body: { metadata: { labels: { [`${G}/aggregate-to-view`]: null } } } });
    expect(patched.status, patched.text).toBe(200);
    await eventually(async () => !(await has('view')) && !(await has('admin')));
  });
});

describe('anonymous', () => {
  it('reaches only what system:public-info-viewer grants', async () => {
    for (const p of ['/version', '/healthz', '/livez', '/readyz']) expect((await t.request('GET', p, { anonymous: true })).status, p).toBe(200);
    // a probe that accepts only text still gets the text answer
    const probe = await t.request('GET', '/readyz', { anonymous: true, headers: { Accept: 'text/plain' } });
    expect([probe.status, probe.text]).toEqual([200, 'ok']);
    // single checks are system:monitoring's, not public (as in kube)
    const check = await t.request('GET', '/livez/ping', { anonymous: true });
    expect(check.status).toBe(403);
    expect(check.json()).toMatchObject({ message: 'forbidden: User "system:anonymous" cannot get path "/livez/ping"' });
    expect((await t.request('GET', '/livez/ping')).status).toBe(200);
    const s = await t.request('GET', '/api/v1/secrets', { anonymous: true });
    expect(s.status).toBe(403);
    expect(s.json()).toMatchObject({ message: 'secrets is forbidden: User "system:anonymous" cannot list resource "secrets" in API group "" at the cluster scope' });
    const api = await t.request('GET', '/api', { anonymous: true });
    expect(api.status).toBe(403);
    expect(api.json()).toMatchObject({ message: 'forbidden: User "system:anonymous" cannot get path "/api"' });
  });
});

describe('AlwaysDeny', () => {
  it('denies everyone but system:masters, health paths included, with the authorizer\'s reason', async () => {
    const d = await startTestServer({ authorization: { mode: 'AlwaysDeny' } });
    try {
      const vera = await userCert(d, 'vera');
      const r = await d.request('GET', '/healthz', { cert: vera });
      expect(r.status).toBe(403);
      expect(r.json()).toMatchObject({ message: 'forbidden: User "vera" cannot get path "/healthz": Everything is forbidden.' });
      expect((await d.request('GET', '/healthz')).status).toBe(200);
      expect((await d.request('GET', '/api/v1/namespaces')).status).toBe(200);
    } finally {
      await d.stop();
    }
  });
});

describe('unsafe deletion of a corrupt object needs its own verb (spec 000 §4.10)', () => {
  it('an editor is refused with kube\'s message; the verb granted through RBAC lets it through', async () => {
    const u = await startTestServer({ featureGates: { AllowUnsafeMalformedObjectDeletion: true } });
    try {
      const ed = await userCert(u, 'ed');
      const rb = binding('RoleBinding', 'ed-edit', 'ClusterRole', 'edit', [user('ed')], 'default');
      expect((await u.request('POST', `${RBAC}/namespaces/default/rolebindings`, { body: rb })).status).toBe(201);
      expect((await u.request('POST', '/api/v1/namespaces/default/configmaps', { cert: ed, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bad' } } })).status).toBe(201);
      const put = await u.server.store.txn({ compare: [], success: [{ type: 'put', key: '/registry/core/configmaps/default/bad', value: new Uint8Array([0xff, 0x00, 0x7b]) }], failure: [] });
      expect(put.succeeded).toBe(true);
      const path = '/api/v1/namespaces/default/configmaps/bad?ignoreStoreReadErrorWithClusterBreakingPotential=true';
      const r = await u.request('DELETE', path, { cert: ed });
      expect(r.status).toBe(403);
      expect(r.json()).toMatchObject({
        message: 'configmaps "bad" is forbidden: User "ed" cannot unsafe-delete-ignore-read-errors resource "configmaps" in API group "" in the namespace "default"',
        details: { name: 'bad', kind: 'configmaps' },
      });
      const role = { apiVersion: `${G}/v1`, kind: 'Role', metadata: { name: 'unsafe' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['unsafe-delete-ignore-read-errors'] }] };
      expect((await u.request('POST', `${RBAC}/namespaces/default/roles`, { body: role })).status).toBe(201);
      expect((await u.request('POST', `${RBAC}/namespaces/default/rolebindings`, { body: binding('RoleBinding', 'ed-unsafe', 'Role', 'unsafe', [user('ed')], 'default') })).status).toBe(201);
      const ok2 = await u.request('DELETE', path, { cert: ed });
      expect(ok2.status, ok2.text).toBe(200);
    } finally {
      await u.stop();
    }
  });
});

describe('impersonation reads the same way', () => {
  it('impersonation without the verb', async () => {
    const r = await t.request('GET', '/api/v1/namespaces/default/configmaps', { cert: viewer, headers: { 'Impersonate-User': 'bob' } });
    expect(r.status).toBe(403);
    expect(r.json()).toMatchObject({ message: 'users "bob" is forbidden: User "vera" cannot impersonate resource "users" in API group "" at the cluster scope', details: { name: 'bob', kind: 'users' } });
  });
});
