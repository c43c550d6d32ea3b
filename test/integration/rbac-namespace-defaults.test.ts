// kube's namespaced bootstrap policy on a started server (spec 001 §5.14,
// kube's namespace_policy.go): the Roles and RoleBindings of the system and
// public namespaces exist after start, come back (rules and subjects too,
// extra rules kept) on the next start unless annotated autoupdate "false",
// and `extension-apiserver-authentication-reader` lets a bound subject read
// that one ConfigMap name — with the default API domain and with kube's.

import { describe, expect, it } from 'vitest';
import { runKubectl } from '../helpers/kubectl.js';
import { eventually } from '../helpers/eventually.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

type Rule = { verbs: string[]; apiGroups?: string[]; resources?: string[]; resourceNames?: string[] };
type Obj = { metadata: { name: string; namespace: string; labels?: Record<string, string>; annotations?: Record<string, string> }; rules?: Rule[]; subjects?: { kind: string; name: string; namespace?: string }[] };

const DOMAINS = [
  { domain: 'orch.io', system: 'orch-system', pub: 'orch-public', label: 'orch.io/bootstrapping', autoupdate: 'rbac.authorization.orch.io/autoupdate' },
  { domain: 'k8s.io', system: 'kube-system', pub: 'kube-public', label: 'kubernetes.io/bootstrapping', autoupdate: 'rbac.authorization.kubernetes.io/autoupdate' },
];

describe.concurrent('default Roles and RoleBindings of the system and public namespaces', () => {
  it.each(DOMAINS)('--api-domain $domain: present after start, reconciled on the next, the authentication reader reads one ConfigMap', async (d) => {
    const G = `rbac.authorization.${d.domain}`;
    const rbac = (ns: string, res: string, name = '') => `/apis/${G}/v1/namespaces/${ns}/${res}${name ? `/${name}` : ''}`;
    let t: TestServer = await startTestServer({ apiDomain: d.domain });
    const dataDir = t.dataDir;
    const get = async (path: string) => (await t.request('GET', path)).json<Obj>();
    const put = async (path: string, o: Obj) => {
      const r = await t.request('PUT', path, { body: o });
      expect(r.status, r.text).toBe(200);
    };
    const del = async (path: string) => {
      const r = await t.request('DELETE', path);
      expect(r.status, r.text).toBe(200);
    };
    const names = async (ns: string, res: string) => {
      const r = await t.request('GET', `${rbac(ns, res)}?labelSelector=${encodeURIComponent(`${d.label}=rbac-defaults`)}`);
      expect(r.status, r.text).toBe(200);
      return r.json<{ items: Obj[] }>().items.map((o) => o.metadata.name).sort();
    };
    const allowed = async (user: string, namespace: string, verb: string, name?: string) => {
      const r = await t.request('POST', `/apis/authorization.${d.domain}/v1/subjectaccessreviews`, {
        body: { apiVersion: `authorization.${d.domain}/v1`, kind: 'SubjectAccessReview', spec: { user, groups: ['system:authenticated'], resourceAttributes: { namespace, verb, resource: 'configmaps', name } } },
      });
      expect(r.status, r.text).toBe(201);
      return r.json<{ status: { allowed: boolean } }>().status.allowed;
    };
    try {
      expect(await names(d.system, 'roles')).toEqual([
        'extension-apiserver-authentication-reader',
        'system::leader-locking-kube-controller-manager',
        'system::leader-locking-kube-scheduler',
        'system:controller:bootstrap-signer',
        'system:controller:cloud-provider',
        'system:controller:token-cleaner',
      ]);
      expect(await names(d.system, 'rolebindings')).toEqual([
        'system::extension-apiserver-authentication-reader',
        'system::leader-locking-kube-controller-manager',
        'system::leader-locking-kube-scheduler',
        'system:controller:bootstrap-signer',
        'system:controller:cloud-provider',
        'system:controller:token-cleaner',
      ]);
      expect(await names(d.pub, 'roles')).toEqual(['system:controller:bootstrap-signer']);
      expect(await names(d.pub, 'rolebindings')).toEqual(['system:controller:bootstrap-signer']);
      const reader = await get(rbac(d.system, 'roles', 'extension-apiserver-authentication-reader'));
      expect(reader.metadata.annotations?.[d.autoupdate]).toBe('true');

      // metrics-server's binding (its manifest's `metrics-server-auth-reader`): that ConfigMap name, nothing else
      const sa = `system:serviceaccount:${d.system}:metrics-server`;
      const rb = {
        apiVersion: `${G}/v1`,
        kind: 'RoleBinding',
        metadata: { name: 'metrics-server-auth-reader', namespace: d.system },
        roleRef: { apiGroup: G, kind: 'Role', name: 'extension-apiserver-authentication-reader' },
        subjects: [{ kind: 'ServiceAccount', name: 'metrics-server', namespace: d.system }],
      };
      const created = await t.request('POST', rbac(d.system, 'rolebindings'), { body: rb });
      expect(created.status, created.text).toBe(201);
      await eventually(() => allowed(sa, d.system, 'get', 'extension-apiserver-authentication'), 'the reader may get the ConfigMap');
      expect(await allowed(sa, d.system, 'watch', 'extension-apiserver-authentication')).toBe(true);
      expect(await allowed(sa, d.system, 'get', 'cluster-info')).toBe(false);
      expect(await allowed(sa, d.system, 'update', 'extension-apiserver-authentication')).toBe(false);
      expect(await allowed(sa, d.pub, 'get', 'extension-apiserver-authentication')).toBe(false);
      // the default binding's subjects
      expect(await allowed('system:kube-scheduler', d.system, 'list', 'extension-apiserver-authentication')).toBe(true);
      if (d.domain === 'k8s.io') {
        const can = await runKubectl(t.server.kubeconfigPath, ['auth', 'can-i', 'get', 'configmap/extension-apiserver-authentication', '-n', 'kube-system', '--as', sa]);
        expect(can.stdout.trim(), can.stderr).toBe('yes');
        const cannot = await runKubectl(t.server.kubeconfigPath, ['auth', 'can-i', 'get', 'configmap/kube-root-ca.crt', '-n', 'kube-system', '--as', sa]);
        expect(cannot.stdout.trim(), cannot.stderr).toBe('no');
      }

      // gone: a Role, a RoleBinding of the public namespace, a rule (and one extra rule added), a subject
      await del(rbac(d.system, 'roles', 'system:controller:token-cleaner'));
      await del(rbac(d.pub, 'rolebindings', 'system:controller:bootstrap-signer'));
      const sched = await get(rbac(d.system, 'roles', 'system::leader-locking-kube-scheduler'));
      const extra: Rule = { verbs: ['get'], apiGroups: [''], resources: ['endpoints'] };
      await put(rbac(d.system, 'roles', sched.metadata.name), { ...sched, rules: [sched.rules![0]!, extra] });
      const readerBinding = await get(rbac(d.system, 'rolebindings', 'system::extension-apiserver-authentication-reader'));
      await put(rbac(d.system, 'rolebindings', readerBinding.metadata.name), { ...readerBinding, subjects: readerBinding.subjects!.slice(0, 1) });
      // opted out: trimmed and annotated autoupdate "false"
      const cloud = await get(rbac(d.system, 'roles', 'system:controller:cloud-provider'));
      const trimmed: Rule[] = [{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'] }];
      await put(rbac(d.system, 'roles', cloud.metadata.name), { ...cloud, metadata: { ...cloud.metadata, annotations: { [d.autoupdate]: 'false' } }, rules: trimmed });

      await t.stop(true);
      t = await startTestServer({ apiDomain: d.domain, dataDir });

      const cleaner = await get(rbac(d.system, 'roles', 'system:controller:token-cleaner'));
      expect(cleaner.rules!.map((r) => r.resources)).toEqual([['secrets'], ['events']]);
      expect(cleaner.metadata.labels?.[d.label]).toBe('rbac-defaults');
      expect((await get(rbac(d.pub, 'rolebindings', 'system:controller:bootstrap-signer'))).subjects).toEqual([{ kind: 'ServiceAccount', name: 'bootstrap-signer', namespace: d.system }]);
      const schedAfter = (await get(rbac(d.system, 'roles', 'system::leader-locking-kube-scheduler'))).rules!;
      expect(schedAfter).toEqual([sched.rules![0], extra, sched.rules![1]]);
      expect((await get(rbac(d.system, 'rolebindings', 'system::extension-apiserver-authentication-reader'))).subjects!.map((s) => s.name)).toEqual([
        'system:kube-controller-manager',
        'system:kube-scheduler',
      ]);
      expect((await get(rbac(d.system, 'roles', 'system:controller:cloud-provider'))).rules).toEqual(trimmed);
      // an operator's binding is not a default: it stays as it was
      expect((await get(rbac(d.system, 'rolebindings', 'metrics-server-auth-reader'))).subjects).toEqual(rb.subjects);
    } finally {
      await t.stop();
    }
  });
});
