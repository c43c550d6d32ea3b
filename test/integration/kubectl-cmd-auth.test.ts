// Port of kube's kubectl command tests for authentication and authorization (kubernetes/kubernetes
// test/cmd/authorization.sh and testdata/authorization.txtar, the `auth can-i` and `auth reconcile`
// blocks of test/cmd/legacy-script.sh, test/cmd/certificate.sh and testdata/certificate.txtar,
// test/cmd/auth_whoami.sh and testdata/auth_whoami.txtar), run with the real kubectl 1.32 against orch
// with kube's group names. Ported:
//   run_authorization_tests — `create -f` of a SubjectAccessReview, and the review answered over raw
//     HTTPS (kube's test server allows everything; orch runs RBAC, so the review is asked for a member
//     of system:masters, and for a user without bindings, which is denied);
//   run_impersonation_tests — --as-group/--as-uid without --as, and a CSR created while impersonating
//     records the user, groups, uid and extra it was created as;
//   can-i — `*` `*`, sub-resources, unknown resources (the warnings), non-resource URLs, --quiet and
//     exit codes, the cluster-scope warning;
//   reconcile — --dry-run=client creates nothing; a List of roles, bindings and a Pod reconciled; the
//     v1beta1 refusal;
//   run_certificates_tests — certificate approve/deny by name and by file, the conditions recorded;
//   auth whoami — -o json, -o yaml and the table (kube's test user is `system:apiserver`; orch's admin
//     certificate names its own user, so the table's row is checked against the review).

import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { createCertificateRequest } from '../../src/core/x509.js';
import { type Obj, cmdEnv } from '../helpers/kubectl-cmd.js';

const env = cmdEnv();
const { ok, run, fails, json, file } = env;
/** kube's `{{range.items}}{{.metadata.name}}:{{end}}` */
const names = async (...args: string[]): Promise<string> => (await env.names(...args)).map((x) => `${x}:`).join('');
const namespace = env.newNs;

async function csrFile(name: string): Promise<string> {
  const { csrPem } = await createCertificateRequest({ commonName: 'kube-admin' });
  return file(`${name}.json`, {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { request: Buffer.from(csrPem).toString('base64'), signerName: 'example.com/test-cmd', usages: ['digital signature', 'client auth'] },
  });
}
const conditions = async (name: string): Promise<string> =>
  (((await json(`csr/${name}`)).status.conditions ?? []) as Obj[]).map((c) => c.type as string).join('');

describe.concurrent('kubectl auth (authorization.sh, certificate.sh, auth_whoami.sh)', () => {
  it('run_authorization_tests: a SubjectAccessReview through kubectl create and over HTTPS', async () => {
    const review = (user: string, groups: string[]): Obj => ({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { user, groups, resourceAttributes: { namespace: 'ns', verb: 'create', group: 'autoscaling', resource: 'horizontalpodautoscalers' } },
    });
    const f = await file('sar.json', review('bob', ['system:masters']));
    expect(await ok('create', '-f', f, '--validate=false')).toMatch(/^subjectaccessreview\.authorization\.k8s\.io\/\S* created\n$/);
    const post = (body: Obj) =>
      env.ts().request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', { body, headers: { 'Content-Type': '' } });
    const allowed = await post(review('bob', ['system:masters']));
    expect(allowed.status).toBe(201);
    expect(allowed.json()).toMatchObject({ kind: 'SubjectAccessReview', status: { allowed: true } });
    const denied = (await post(review('bob', ['the-group']))).json<Obj>();
    expect(denied.status.allowed).toBe(false);
  });

  it('run_impersonation_tests: --as, --as-group, --as-uid and --as-user-extra reach the CSR', async () => {
    const [noUser, noUser2] = await Promise.all([fails('get', 'pods', '--as-group=foo'), fails('get', 'pods', '--as-uid=abc123')]);
    expect(noUser).toContain('without impersonating a user');
    expect(noUser2).toContain('without impersonating a user');
    // kube's test server allows everything; here user1 is given what creating a CSR needs
    await ok('create', 'clusterrole', 'csr-creator', '--verb=create,get,delete', '--resource=certificatesigningrequests.certificates.k8s.io');
    await ok('create', 'clusterrolebinding', 'csr-creator', '--clusterrole=csr-creator', '--user=user1');
    const f = await csrFile('imp');
    const spec = async (...flags: string[]): Promise<Obj> => {
      await ok('create', '-f', f, ...flags);
      const s = (await json('csr/imp')).spec as Obj;
      await ok('delete', '-f', f);
      return s;
    };
    expect(await spec('--as=user1')).toMatchObject({ username: 'user1', groups: ['system:authenticated'] });
    const grouped = await spec('--as=user1', '--as-group=group2', '--as-group=group1', '--as-group=,,,chameleon');
    expect(grouped.groups).toEqual(['group2', 'group1', ',,,chameleon', 'system:authenticated']);
    expect(await spec('--as=user1', '--as-uid=abc123')).toMatchObject({ username: 'user1', uid: 'abc123' });
    // kubectl 1.32 has no --as-user-extra (1.33 has): its Impersonate-Extra-* headers are sent directly
    const created = await env.ts().request('POST', '/apis/certificates.k8s.io/v1/certificatesigningrequests', {
      body: await readFile(f, 'utf8'),
      headers: {
        'Impersonate-User': 'user1',
        'Impersonate-Uid': 'abc123',
        'Impersonate-Extra-key1': ['hello there', 'one,two', 'pandas are', 'the best'],
        'Impersonate-Extra-key2': 'val3',
      },
    });
    expect(created.status, created.text).toBe(201);
    expect((await json('csr/imp')).spec).toMatchObject({ username: 'user1', uid: 'abc123', extra: { key1: ['hello there', 'one,two', 'pandas are', 'the best'], key2: ['val3'] } });
    await ok('delete', '-f', f);
  });

  it('auth can-i (legacy-script.sh)', async () => {
    const [all, log, invalid, logs, logsSub, quiet, podsQuiet, star, foo, pods, nodes, nodesAll] = await Promise.all([
      run('auth', 'can-i', '*', '*'),
      run('auth', 'can-i', 'get', 'pods', '--subresource=log'),
      run('auth', 'can-i', 'get', 'invalid_resource'),
      run('auth', 'can-i', 'get', '/logs/'),
      run('auth', 'can-i', 'get', '/logs/', '--subresource=log'),
      run('auth', 'can-i', 'list', 'jobs.batch/bar', '-n', 'foo', '--quiet'),
      run('auth', 'can-i', 'get', 'pods', '--subresource=log', '--quiet'),
      run('auth', 'can-i', 'get', '*'),
      run('auth', 'can-i', 'get', 'foo'),
      run('auth', 'can-i', 'get', 'pods'),
      run('auth', 'can-i', 'get', 'nodes'),
      run('auth', 'can-i', 'get', 'nodes', '--all-namespaces'),
    ]);
    for (const r of [all, log, logs, pods]) expect([r.code, r.stdout]).toEqual([0, 'yes\n']);
    expect(invalid.stdout + invalid.stderr).toContain("the server doesn't have a resource type");
    expect(logsSub.code).not.toBe(0);
    expect(logsSub.stderr).toContain('subresource can not be used with NonResourceURL');
    expect([quiet.code, quiet.stdout, quiet.stderr]).toEqual([0, '', '']);
    expect([podsQuiet.code, podsQuiet.stdout]).toEqual([0, '']);
    expect(star.stdout + star.stderr).not.toContain('Warning');
    expect(foo.stderr).toContain("Warning: the server doesn't have a resource type 'foo'");
    expect(foo.stderr).not.toContain("Warning: resource 'foo' is not namespace scoped");
    expect(pods.stderr).not.toContain('Warning');
    expect(nodes.stderr).toContain("Warning: resource 'nodes' is not namespace scoped");
    expect(nodesAll.stderr).not.toContain("Warning: resource 'nodes' is not namespace scoped");
    // a user without bindings is answered no, exit code 1
    const no = await run('auth', 'can-i', 'get', 'pods', '--as=nobody');
    expect([no.code, no.stdout]).toEqual([1, 'no\n']);
  });

  it('auth reconcile (legacy-script.sh)', async () => {
    await ok('create', 'namespace', 'some-other-random');
    const labels = { 'test-cmd': 'auth' };
    const rules = (resource: string, verbs: string[]): Obj[] => [{ apiGroups: [''], resources: [resource], verbs }];
    const subjects = [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:masters' }];
    const roleRef = { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'testing-CR' };
    const rbac = (v: string): Obj => ({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: `rbac.authorization.k8s.io/${v}`, kind: 'ClusterRole', metadata: { name: 'testing-CR', labels }, rules: rules('pods', ['get', 'list', 'watch', 'create']) },
        { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'valid-pod' }, spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause' }] } },
        { apiVersion: `rbac.authorization.k8s.io/${v}`, kind: 'ClusterRoleBinding', metadata: { name: 'testing-CRB', labels }, roleRef, subjects },
        { apiVersion: `rbac.authorization.k8s.io/${v}`, kind: 'RoleBinding', metadata: { name: 'testing-RB', namespace: 'some-other-random', labels }, roleRef, subjects },
        { apiVersion: `rbac.authorization.k8s.io/${v}`, kind: 'Role', metadata: { name: 'testing-R', namespace: 'some-other-random', labels }, rules: rules('configmaps', ['get', 'list', 'watch']) },
      ],
    });
    const f = await file('rbac-plus.json', rbac('v1'));
    const current = async (): Promise<string[]> =>
      Promise.all([
        names('rolebindings', '-n', 'some-other-random', '-l', 'test-cmd=auth'),
        names('roles', '-n', 'some-other-random', '-l', 'test-cmd=auth'),
        names('clusterrolebindings', '-l', 'test-cmd=auth'),
        names('clusterroles', '-l', 'test-cmd=auth'),
      ]);
    await ok('auth', 'reconcile', '--dry-run=client', '-f', f);
    expect(await current()).toEqual(['', '', '', '']);
    const out = await ok('auth', 'reconcile', '-f', f);
    expect(out).toContain('clusterrole.rbac.authorization.k8s.io/testing-CR reconciled');
    expect(out).toContain('role.rbac.authorization.k8s.io/testing-R reconciled');
    expect(await current()).toEqual(['testing-RB:', 'testing-R:', 'testing-CRB:', 'testing-CR:']);
    // a second pass finds everything in place
    expect(await ok('auth', 'reconcile', '-f', f)).not.toContain('reconciliation required');
    expect(await fails('auth', 'reconcile', '-f', await file('rbac-beta.json', rbac('v1beta1')))).toContain('only rbac.authorization.k8s.io/v1 is supported');
    await ok('delete', 'rolebindings,role,clusterroles,clusterrolebindings', '-n', 'some-other-random', '-l', 'test-cmd=auth');
  });

  it('run_certificates_tests: approve and deny, by name and by file', async () => {
    const cases = (['approve', 'deny'] as const).flatMap((verb) => (['name', 'file'] as const).map((how) => [verb, how] as const));
    await Promise.all(
      cases.map(async ([verb, how]) => {
        const condition = verb === 'approve' ? 'Approved' : 'Denied';
        const name = `foo-${verb}-${how}`;
        const f = await csrFile(name);
        expect(await ok('create', '-f', f)).toBe(`certificatesigningrequest.certificates.k8s.io/${name} created\n`);
        expect(await conditions(name)).toBe('');
        const target = how === 'name' ? [name] : ['-f', f];
        expect(await ok('certificate', verb, ...target)).toBe(`certificatesigningrequest.certificates.k8s.io/${name} ${verb === 'approve' ? 'approved' : 'denied'}\n`);
        const [yaml, table] = await Promise.all([ok('get', `csr/${name}`, '-o', 'yaml'), ok('get', 'csr', name)]);
        expect(yaml).toMatch(new RegExp(`conditions:\\n  - lastTransitionTime: \\S+\\n    lastUpdateTime: \\S+\\n    message: This CSR was ${verb === 'approve' ? 'approved' : 'denied'} by kubectl certificate ${verb}\\.\\n    reason: Kubectl${verb === 'approve' ? 'Approve' : 'Deny'}\\n    status: "True"\\n    type: ${condition}\\n`));
        expect(table.split('\n')[1]).toMatch(new RegExp(`^${name}\\s+\\d+s\\s+example.com/test-cmd\\s+\\S+\\s+<none>\\s+${condition}$`));
        expect(await ok('delete', '-f', f)).toBe(`certificatesigningrequest.certificates.k8s.io "${name}" deleted\n`);
      }),
    );
    expect(await ok('get', 'csr', '-o', 'jsonpath={range.items}{.metadata.name}{end}')).not.toContain('foo-');
  });

  it('auth whoami: json, yaml and table', async () => {
    const [asJson, asYaml, table] = await Promise.all([ok('auth', 'whoami', '-o', 'json'), ok('auth', 'whoami', '-o', 'yaml'), ok('auth', 'whoami')]);
    expect(asJson).toContain('"kind": "SelfSubjectReview"');
    expect(asYaml).toContain('kind: SelfSubjectReview');
    const review = JSON.parse(asJson) as Obj;
    expect(review.apiVersion).toBe('authentication.k8s.io/v1');
    const user = review.status.userInfo as Obj;
    expect(user.groups).toContain('system:masters');
    expect(table).toMatch(new RegExp(`^ATTRIBUTE\\s+VALUE\\nUsername\\s+${user.username}\\nGroups\\s+\\[${(user.groups as string[]).join(' ')}\\]\\n`));
  });
});
