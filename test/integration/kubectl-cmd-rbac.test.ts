// Port of kube's kubectl command tests for RBAC objects (kubernetes/kubernetes test/cmd/rbac.sh), run
// with the real kubectl 1.32 against orch with kube's group names. Ported:
//   run_clusterroles_tests — the bootstrap cluster-admin role and binding, create clusterrole (verbs,
//     resources with groups, resource names, non-resource URLs, an aggregation rule), the cluster-scope
//     warning of a namespaced delete, create clusterrolebinding / rolebinding for users, groups and
//     service accounts, set subject (one binding and --all);
//   run_role_tests — create role with resources, groups and sub-resources, resource names, several
//     resources, and the errors for unknown resources and groups (from discovery).

import { describe, expect, it } from 'vitest';
import { type Obj, cmdEnv } from '../helpers/kubectl-cmd.js';

const env = cmdEnv();
const { ok, run, fails, json } = env;
/** kube's `{{range.items}}{{.metadata.name}}:{{end}}` */
const names = async (...args: string[]): Promise<string> => (await env.names(...args)).map((x) => `${x}:`).join('');
const namespace = env.newNs;

/** kube's `{{range.rules}}{{range.<field>}}{{.}}:{{end}}{{end}}` */
const ruleField = (o: Obj, field: string): string => ((o.rules ?? []) as Obj[]).flatMap((r) => ((r[field] ?? []) as string[]).map((v) => `${v}:`)).join('');
const subjectNames = (o: Obj): string => ((o.subjects ?? []) as Obj[]).map((s) => `${s.name}:`).join('');
const subjectNamespaces = (o: Obj): string => ((o.subjects ?? []) as Obj[]).map((s) => `${s.namespace}:`).join('');

describe.concurrent('kubectl rbac (test/cmd/rbac.sh)', () => {
  it('run_clusterroles_tests: cluster roles', async () => {
    const [admin, adminBinding] = await Promise.all([json('clusterroles/cluster-admin'), json('clusterrolebindings/cluster-admin')]);
    expect([admin.metadata.name, adminBinding.metadata.name]).toEqual(['cluster-admin', 'cluster-admin']);

    await ok('create', 'clusterrole', 'pod-admin', '--verb=*', '--resource=pods');
    expect(ruleField(await json('clusterrole/pod-admin'), 'verbs')).toBe('*:');
    const deleted = await run('delete', 'clusterrole', 'pod-admin', '-n', 'test');
    expect(deleted.code).toBe(0);
    expect(deleted.stderr).toContain('Warning: deleting cluster-scoped resources');
    expect(deleted.stdout).toContain('clusterrole.rbac.authorization.k8s.io "pod-admin" deleted');
    await ok('create', 'clusterrole', 'pod-admin', '--verb=*', '--resource=pods');
    await ok('create', 'clusterrole', 'resource-reader', '--verb=get,list', '--resource=pods,deployments.apps');
    await ok('create', 'clusterrole', 'resourcename-reader', '--verb=get,list', '--resource=pods', '--resource-name=foo');
    await ok('create', 'clusterrole', 'url-reader', '--verb=get', '--non-resource-url=/logs/*', '--non-resource-url=/healthz/*');
    await ok('create', 'clusterrole', 'aggregation-reader', '--aggregation-rule=foo1=foo2');
    const [podAdmin, reader, named, urls, aggregation] = await Promise.all(
      ['pod-admin', 'resource-reader', 'resourcename-reader', 'url-reader', 'aggregation-reader'].map((r) => json(`clusterrole/${r}`)),
    );
    expect([ruleField(podAdmin!, 'verbs'), ruleField(podAdmin!, 'resources'), ruleField(podAdmin!, 'apiGroups')]).toEqual(['*:', 'pods:', ':']);
    expect([ruleField(reader!, 'verbs'), ruleField(reader!, 'resources'), ruleField(reader!, 'apiGroups')]).toEqual(['get:list:get:list:', 'pods:deployments:', ':apps:']);
    expect([ruleField(named!, 'verbs'), ruleField(named!, 'resources'), ruleField(named!, 'apiGroups'), ruleField(named!, 'resourceNames')]).toEqual(['get:list:', 'pods:', ':', 'foo:']);
    expect([ruleField(urls!, 'verbs'), ruleField(urls!, 'nonResourceURLs')]).toEqual(['get:', '/logs/*:/healthz/*:']);
    expect(aggregation!.metadata.name).toBe('aggregation-reader');
    expect(aggregation!.aggregationRule).toEqual({ clusterRoleSelectors: [{ matchLabels: { foo1: 'foo2' } }] });
  });

  it('run_clusterroles_tests: cluster role bindings and set subject', async () => {
    await Promise.all([
      ok('create', 'clusterrolebinding', 'super-admin', '--clusterrole=admin', '--user=super-admin'),
      ok('create', 'clusterrolebinding', 'multi-users', '--clusterrole=admin', '--user=user-1', '--user=user-2'),
      ok('create', 'clusterrolebinding', 'super-group', '--clusterrole=admin', '--group=the-group'),
      ok('create', 'clusterrolebinding', 'multi-groups', '--clusterrole=admin', '--group=group-1', '--group=group-2'),
      ok('create', 'clusterrolebinding', 'super-sa', '--clusterrole=admin', '--serviceaccount=otherns:sa-name'),
    ]);
    expect(subjectNames(await json('clusterrolebinding/super-admin'))).toBe('super-admin:');
    expect(subjectNames(await json('clusterrolebinding/multi-users'))).toBe('user-1:user-2:');
    expect(subjectNames(await json('clusterrolebinding/super-group'))).toBe('the-group:');
    expect(subjectNames(await json('clusterrolebinding/multi-groups'))).toBe('group-1:group-2:');
    const sa = await json('clusterrolebinding/super-sa');
    expect([subjectNamespaces(sa), subjectNames(sa)]).toEqual(['otherns:', 'sa-name:']);
    await Promise.all([
      ok('set', 'subject', 'clusterrolebinding', 'super-admin', '--user=foo'),
      ok('set', 'subject', 'clusterrolebinding', 'super-group', '--group=foo'),
      ok('set', 'subject', 'clusterrolebinding', 'super-sa', '--serviceaccount=otherfoo:foo'),
    ]);
    expect(subjectNames(await json('clusterrolebinding/super-admin'))).toBe('super-admin:foo:');
    expect(subjectNames(await json('clusterrolebinding/super-group'))).toBe('the-group:foo:');
    const sa2 = await json('clusterrolebinding/super-sa');
    expect([subjectNamespaces(sa2), subjectNames(sa2)]).toEqual(['otherns:otherfoo:', 'sa-name:foo:']);
    expect((sa2.subjects as Obj[])[1]).toEqual({ kind: 'ServiceAccount', name: 'foo', namespace: 'otherfoo' });
  });

  it('run_clusterroles_tests: role bindings and set subject --all', async () => {
    const n = await namespace('rolebindings');
    await ok('-n', n, 'create', 'rolebinding', 'admin', '--clusterrole=admin', '--user=default-admin');
    await ok('-n', n, 'create', 'rolebinding', 'localrole', '--role=localrole', '--group=the-group');
    await ok('-n', n, 'create', 'rolebinding', 'sarole', '--role=localrole', '--serviceaccount=otherns:sa-name');
    const [admin, local, sa] = await Promise.all(['admin', 'localrole', 'sarole'].map((b) => json('-n', n, `rolebinding/${b}`)));
    expect([admin!.roleRef.kind, subjectNames(admin!)]).toEqual(['ClusterRole', 'default-admin:']);
    expect([local!.roleRef.kind, subjectNames(local!)]).toEqual(['Role', 'the-group:']);
    expect([subjectNamespaces(sa!), subjectNames(sa!)]).toEqual(['otherns:', 'sa-name:']);
    await ok('-n', n, 'set', 'subject', 'rolebinding', 'admin', '--user=foo');
    await ok('-n', n, 'set', 'subject', 'rolebinding', 'localrole', '--group=foo');
    await ok('-n', n, 'set', 'subject', 'rolebinding', 'sarole', '--serviceaccount=otherfoo:foo');
    await ok('-n', n, 'set', 'subject', 'rolebinding', '--all', '--user=test-all-user');
    const [admin2, local2, sa2] = await Promise.all(['admin', 'localrole', 'sarole'].map((b) => json('-n', n, `rolebinding/${b}`)));
    expect(subjectNames(admin2!)).toBe('default-admin:foo:test-all-user:');
    expect(subjectNames(local2!)).toBe('the-group:foo:test-all-user:');
    expect([subjectNamespaces(sa2!), subjectNames(sa2!)]).toEqual(['otherns:otherfoo:undefined:', 'sa-name:foo:test-all-user:']);
  });

  it('run_clusterroles_tests: set subject --all on cluster role bindings', async () => {
    await Promise.all(['all-a', 'all-b'].map((b) => ok('create', 'clusterrolebinding', b, '--clusterrole=view', `--user=${b}`)));
    await ok('set', 'subject', 'clusterrolebinding', '--all', '--user=test-all-user', '--dry-run=server');
    expect(subjectNames(await json('clusterrolebinding/all-a'))).toBe('all-a:');
    await ok('set', 'subject', 'clusterrolebinding', 'all-a', 'all-b', '--user=test-all-user');
    expect(subjectNames(await json('clusterrolebinding/all-a'))).toBe('all-a:test-all-user:');
    expect(subjectNames(await json('clusterrolebinding/all-b'))).toBe('all-b:test-all-user:');
  });

  it('run_role_tests: roles, and unknown resources and groups', async () => {
    const n = await namespace('roles');
    const create = (name: string, ...flags: string[]): Promise<string> => ok('-n', n, 'create', 'role', name, ...flags);
    await create('pod-admin', '--verb=*', '--resource=pods');
    await create('group-reader', '--verb=get,list', '--resource=deployments.apps');
    await create('subresource-reader', '--verb=get,list', '--resource=pods/status');
    await create('group-subresource-reader', '--verb=get,list', '--resource=replicasets.apps/scale');
    await create('resourcename-reader', '--verb=get,list', '--resource=pods', '--resource-name=foo');
    await create('resource-reader', '--verb=get,list', '--resource=pods/status,deployments.apps');
    const [unknown, unknownGroup, unknownShortGroup] = await Promise.all([
      fails('-n', n, 'create', 'role', 'invalid-pod-admin', '--verb=*', '--resource=invalid-resource'),
      fails('-n', n, 'create', 'role', 'invalid-group', '--verb=get,list', '--resource=deployments.invalid-group'),
      fails('-n', n, 'create', 'role', 'invalid-group', '--verb=get,list', '--resource=rs.invalid-group/scale'),
    ]);
    expect(unknown).toContain(`the server doesn't have a resource type "invalid-resource"`);
    expect(unknownGroup).toContain(`the server doesn't have a resource type "deployments" in group "invalid-group"`);
    expect(unknownShortGroup).toContain(`the server doesn't have a resource type "rs" in group "invalid-group"`);
    const roles = new Map(((await json('-n', n, 'roles')).items as Obj[]).map((r) => [r.metadata.name as string, r]));
    const fields = (name: string, ...f: string[]): string[] => f.map((x) => ruleField(roles.get(name)!, x));
    expect(fields('pod-admin', 'verbs', 'resources', 'apiGroups')).toEqual(['*:', 'pods:', ':']);
    expect(fields('group-reader', 'verbs', 'resources', 'apiGroups')).toEqual(['get:list:', 'deployments:', 'apps:']);
    expect(fields('subresource-reader', 'verbs', 'resources', 'apiGroups')).toEqual(['get:list:', 'pods/status:', ':']);
    expect(fields('group-subresource-reader', 'verbs', 'resources', 'apiGroups')).toEqual(['get:list:', 'replicasets/scale:', 'apps:']);
    expect(fields('resourcename-reader', 'verbs', 'resources', 'apiGroups', 'resourceNames')).toEqual(['get:list:', 'pods:', ':', 'foo:']);
    expect(fields('resource-reader', 'verbs', 'resources', 'apiGroups')).toEqual(['get:list:get:list:', 'pods/status:deployments:', ':apps:']);
  });
});
