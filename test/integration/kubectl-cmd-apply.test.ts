// kubectl's command tests of `apply` (kubernetes test/cmd/apply.sh:
// run_kubectl_apply_tests, run_kubectl_server_side_apply_tests; and
// test/cmd/testdata/apply.txtar), run with the real kubectl 1.32 against orch.
//
// Ported: client-side apply (create, the last-applied annotation, the
// `kubectl-client-side-apply` manager), `apply set-last-applied` (client and
// server dry-run, then for real), clearing defaulted fields through retainKeys,
// `-l` filtering, null propagation, `--dry-run=client|server` (messages, the
// resourceVersion unchanged), a custom resource applied with server dry-run,
// `--prune` (with a selector, `--all` required, `--prune-allowlist`, PVCs,
// across namespaces), the `-n` mismatch error, `--force` recreating a Service
// whose clusterIP changed, `-k`, server-side apply (managers, `--subresource
// =status`, dry-run, the client-side ↔ server-side upgrade and downgrade, the
// ConfigMap migration and a custom field manager's), and the multi-resource
// failures (namespace order, an unknown kind, an invalid name, a CRD with its
// custom resource in one file).
// Skipped: applysets (`--applyset`, alpha behind KUBECTL_APPLYSET); the kube
// fixtures are replaced by our own small manifests with the same shape (names,
// labels, fields the assertions read); kube's Service fixture's 10.0.0.x
// clusterIPs become 10.96.0.x (orch's default service range).
// Found in orch: managedFields were recorded after mutating admission, so the
// server-side apply after a client-side one removed the pod's token volume and
// tolerations (422); an all-null quota `hard` was served as `{}`.

import { beforeAll, describe, expect, it } from 'vitest';
import { cmdEnv } from '../helpers/kubectl-cmd.js';
import { crdYaml, deploymentYaml, files, names, podYaml } from '../helpers/kubectl-cmd-files.js';
import { eventually } from '../helpers/eventually.js';

const env = cmdEnv();
let pod: string; // test-pod, label name=test-pod-label
let podApply: string; // the same pod, label name=test-pod-applied
beforeAll(async () => {
  pod = await files(env, { 'pod.yaml': podYaml('test-pod', { name: 'test-pod-label' }) });
  podApply = await files(env, { 'pod-apply.yaml': podYaml('test-pod', { name: 'test-pod-applied' }) });
});

const podNames = async (ns: string): Promise<string> => names(await env.ok('get', 'pods', '-n', ns, '-o', 'json'));
const jsonpath = (ns: string, what: string, path: string): Promise<string> => env.ok('get', '-n', ns, ...what.split(' '), '-o', `jsonpath=${path}`);

describe.concurrent('kubectl apply (client-side)', () => {
  it('creates a missing pod with the last-applied annotation and the client-side apply manager', async () => {
    const ns = await env.newNs('apply-create');
    expect(await env.ok('apply', '-n', ns, '-f', pod)).toContain('pod/test-pod created');
    const [label, yaml, json] = await Promise.all([
      jsonpath(ns, 'pods test-pod', '{.metadata.labels.name}'),
      env.ok('get', '-n', ns, 'pods', 'test-pod', '-o', 'yaml'),
      env.ok('get', '-n', ns, '--show-managed-fields', '-f', pod, '-o', 'json'),
    ]);
    expect(label).toBe('test-pod-label');
    expect(yaml).toContain('kubectl.kubernetes.io/last-applied-configuration');
    const entries = (JSON.parse(json) as { metadata: { managedFields: { manager: string; fieldsV1: { 'f:spec': Record<string, unknown> } }[] } }).metadata.managedFields;
    const csa = entries.find((e) => e.manager === 'kubectl-client-side-apply');
    expect(csa).toBeDefined();
    // kube records managedFields before admission: the defaults are the writer's, what
    // the admission plugins added (token volume, tolerations, account, priority) nobody's
    const spec = Object.keys(csa!.fieldsV1['f:spec']);
    expect(spec).toContain('f:dnsPolicy');
    for (const added of ['f:volumes', 'f:tolerations', 'f:serviceAccountName', 'f:priority']) expect(spec).not.toContain(added);
  });

  it('set-last-applied: dry runs leave the annotation out, the real one adds it', async () => {
    const ns = await env.newNs('apply-sla');
    expect(await env.ok('create', '-n', ns, '-f', pod)).toContain('pod/test-pod created');
    const annotated = async () => (await env.ok('get', '-n', ns, 'pods', 'test-pod', '-o', 'yaml')).includes('kubectl.kubernetes.io/last-applied-configuration');
    expect(await annotated()).toBe(false);
    await env.ok('apply', 'set-last-applied', '-n', ns, '--dry-run=client', '-f', pod, '--create-annotation=true');
    expect(await annotated()).toBe(false);
    await env.ok('apply', 'set-last-applied', '-n', ns, '--dry-run=server', '-f', pod, '--create-annotation=true');
    expect(await annotated()).toBe(false);
    await env.ok('apply', 'set-last-applied', '-n', ns, '-f', pod, '--create-annotation=true');
    expect(await annotated()).toBe(true);
  });

  it('clears defaulted fields (retainKeys): RollingUpdate and emptyDir give way to Recreate and hostPath', async () => {
    const ns = await env.newNs('apply-retain');
    const deploy = (strategy: string, volume: string) => deploymentYaml('test-deployment-retainkeys', 'retain', { strategy, pod: `      volumes:\n      - name: data\n${volume}` });
    const before = await files(env, { 'retain/before.yaml': deploy('', '        emptyDir: {}\n') });
    const after = await files(env, { 'retain/after.yaml': deploy('  strategy:\n    type: Recreate\n', '        hostPath:\n          path: /tmp\n') });
    await env.ok('apply', '-n', ns, '-f', before);
    const y1 = await env.ok('get', '-n', ns, 'deployments', 'test-deployment-retainkeys', '-o', 'yaml');
    for (const s of ['RollingUpdate', 'maxSurge', 'maxUnavailable', 'emptyDir']) expect(y1).toContain(s);
    expect(await env.ok('apply', '-n', ns, '-f', after)).not.toBe('');
    const y2 = await env.ok('get', '-n', ns, 'deployments', 'test-deployment-retainkeys', '-o', 'yaml');
    expect(y2).toContain('Recreate');
    expect(y2).not.toContain('RollingUpdate');
    expect(y2).toContain('hostPath');
    expect(y2).not.toContain('emptyDir');
  });

  it('-l applies only the matching objects of a directory', async () => {
    const ns = await env.newNs('apply-filter');
    const dir = await files(env, {
      'filter/pod1.yaml': podYaml('selector-test-pod', { name: 'selector-test-pod', 'unique-label': 'bingbang' }),
      'filter/pod2.yaml': podYaml('selector-test-pod-dont-apply', { name: 'selector-test-pod-dont-apply', 'unique-label': 'biz' }),
    });
    await env.ok('apply', '-n', ns, '-l', 'unique-label=bingbang', '-f', dir.replace(/\/pod1\.yaml$/, ''));
    expect(await jsonpath(ns, 'pods selector-test-pod', '{.metadata.labels.name}')).toBe('selector-test-pod');
    expect(await env.fails('get', '-n', ns, 'pods', 'selector-test-pod-dont-apply')).toContain('pods "selector-test-pod-dont-apply" not found');
  });

  it('propagates nulls: a null request and a null quota limit are left out, a null defaulted field keeps its default', async () => {
    const ns = await env.newNs('apply-null');
    const dep = await files(env, {
      'null/deployment.yaml': deploymentYaml('my-dep-null', 'null-dep', {
        container: '        terminationMessagePolicy: null\n        resources:\n          requests:\n            cpu: null\n            memory: 64Mi\n',
      }),
    });
    const rq = await files(env, {
      'null/quota.yaml': `apiVersion: v1
kind: ResourceQuota
metadata:
  name: my-rq
spec:
  hard:
    limits.cpu: null
    limits.memory: null
`,
    });
    for (let pass = 0; pass < 2; pass++) {
      await Promise.all([env.ok('apply', '-n', ns, '-f', dep), env.ok('apply', '-n', ns, '-f', rq)]);
      const d = JSON.parse(await env.ok('get', '-n', ns, 'deployment/my-dep-null', '-o', 'json')) as {
        spec: { template: { spec: { containers: { resources: { requests?: Record<string, string> }; terminationMessagePolicy?: string }[] } } };
      };
      const c = d.spec.template.spec.containers[0]!;
      expect(c.resources.requests?.cpu).toBeUndefined();
      expect(c.resources.requests?.memory).toBe('64Mi');
      expect(c.terminationMessagePolicy).toBe('File');
      const q = JSON.parse(await env.ok('get', '-n', ns, 'resourcequota/my-rq', '-o', 'json')) as { spec: Record<string, unknown> };
      // every key was null: the map is empty, and Go's omitempty leaves it out as kube does
      expect(q.spec).toEqual({});
    }
  });

  it('--dry-run=client|server creates and changes nothing', async () => {
    const ns = await env.newNs('apply-dry');
    expect(await env.ok('apply', '-n', ns, '--dry-run=client', '-f', pod)).toContain('pod/test-pod created (dry run)');
    expect(await env.ok('apply', '-n', ns, '--dry-run=server', '-f', pod)).toContain('pod/test-pod created (server dry run)');
    expect(await podNames(ns)).toBe('');
    expect(await env.ok('apply', '-n', ns, '-f', pod)).toContain('pod/test-pod created');
    const rv = await env.ok('get', '-n', ns, '-f', pod, '-o', 'jsonpath={.metadata.resourceVersion}');
    expect(await env.ok('apply', '-n', ns, '--dry-run=client', '-f', podApply)).toContain('pod/test-pod configured (dry run)');
    expect(await env.ok('apply', '-n', ns, '--dry-run=server', '-f', podApply)).toContain('pod/test-pod configured (server dry run)');
    expect(await jsonpath(ns, 'pods test-pod', '{.metadata.labels.name}')).toBe('test-pod-label');
    expect(await env.ok('get', '-n', ns, '-f', pod, '-o', 'jsonpath={.metadata.resourceVersion}')).toBe(rv);
  });

  it('a custom resource applied with --dry-run=server (client- and server-side) is not created', async () => {
    const ns = await env.newNs('apply-crd');
    const crd = await files(env, {
      'crd/resources.yaml': crdYaml('mygroup.example.com', { plural: 'resources', singular: 'resource', kind: 'Kind' }, 'v1alpha1'),
    });
    const cr = await files(env, { 'crd/myobj.yaml': 'apiVersion: mygroup.example.com/v1alpha1\nkind: Kind\nmetadata:\n  name: myobj\nkey: value\n' });
    await env.ok('create', '-f', crd);
    await eventually(
      async () => (await env.ok('get', 'crd', 'resources.mygroup.example.com', '-o', 'jsonpath={.status.conditions[?(@.type=="Established")].status}')) === 'True',
      'CRD established',
    );
    await eventually(async () => (await env.run('apply', '-n', ns, '--dry-run=server', '-f', cr)).code === 0, 'CR API served');
    expect(await env.ok('apply', '-n', ns, '--dry-run=server', '-f', cr)).toContain('kind.mygroup.example.com/myobj created (server dry run)');
    expect(await env.ok('apply', '-n', ns, '--server-side', '--dry-run=server', '-f', cr)).toContain('kind.mygroup.example.com/myobj serverside-applied (server dry run)');
    await env.fails('get', '-n', ns, 'resource/myobj');
    await env.ok('delete', 'customresourcedefinition', 'resources.mygroup.example.com');
  });

  it('-n must match the namespace in the file', async () => {
    const b = await files(env, { 'nsmismatch/b.yaml': podYaml('b', { 'prune-group': 'true' }, { namespace: 'nsb-other' }) });
    expect(await env.fails('apply', '-n', 'foo', '-f', b)).toContain('the namespace from the provided object "nsb-other" does not match the namespace "foo".');
  });

  it('--force recreates a Service whose clusterIP cannot change', async () => {
    const ns = await env.newNs('apply-force');
    const svc = (ip: string) => `apiVersion: v1
kind: Service
metadata:
  name: a
  labels: {name: a}
spec:
  clusterIP: ${ip}
  ports:
  - port: 80
  selector: {name: a}
`;
    const r1 = await files(env, { 'force/service-revision1.yaml': svc('10.96.0.11') });
    const r2 = await files(env, { 'force/service-revision2.yaml': svc('10.96.0.12') });
    await env.ok('apply', '-n', ns, '-f', r1);
    expect(await jsonpath(ns, 'services a', '{.metadata.name}')).toBe('a');
    expect(await env.fails('apply', '-n', ns, '-f', r2)).toContain('may not change once set');
    await env.ok('apply', '-n', ns, '-f', r2, '--force');
    expect(await jsonpath(ns, 'services a', '{.spec.clusterIP}')).toBe('10.96.0.12');
    await env.ok('delete', '-n', ns, '-f', r2);
  });

  it('-k and --kustomize apply and delete a kustomization', async () => {
    const ns = await env.newNs('apply-kustomize');
    const kdir = (await files(env, {
      'kustomize/kustomization.yaml': `namePrefix: test-the-\nnamespace: ${ns}\nresources:\n- configmap.yaml\n- deployment.yaml\n- service.yaml\n`,
      'kustomize/configmap.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: map\ndata:\n  altGreeting: Good Morning!\n',
      'kustomize/deployment.yaml': deploymentYaml('deployment', 'kust'),
      'kustomize/service.yaml': 'apiVersion: v1\nkind: Service\nmetadata:\n  name: service\nspec:\n  selector: {app: kust}\n  ports:\n  - port: 8666\n',
    })).replace(/\/kustomization\.yaml$/, '');
    for (const flag of ['-k', '--kustomize']) {
      await env.ok('apply', flag, kdir);
      const got = await env.ok('get', '-n', ns, 'configmap/test-the-map', 'deployment/test-the-deployment', 'service/test-the-service', '-o', 'name');
      expect(got.trim().split('\n')).toEqual(['configmap/test-the-map', 'deployment.apps/test-the-deployment', 'service/test-the-service']);
      await env.ok('delete', flag, kdir);
    }
  });
});

describe.concurrent('kubectl apply: several objects with one failure', () => {
  it('an unknown kind fails while the ConfigMap next to it is created', async () => {
    const ns = await env.newNs('apply-bogus');
    const f = await files(env, {
      'multi/multi-resource-2.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: foo\ndata:\n  a: b\n---\napiVersion: example.com/v1\nkind: Bogus\nmetadata:\n  name: foo\n',
    });
    expect(await env.fails('apply', '-n', ns, '-f', f)).toContain('no matches for kind "Bogus" in version "example.com/v1"');
    expect(await jsonpath(ns, 'configmaps foo', '{.metadata.name}')).toBe('foo');
  });

  it('an invalid pod name fails while the two valid pods are created', async () => {
    const ns = await env.newNs('apply-invalid');
    const f = await files(env, {
      'multi/multi-resource-3.yaml': [podYaml('pod-a', { n: 'a' }), podYaml('POD-B', { n: 'b' }), podYaml('pod-c', { n: 'c' })].join('---\n'),
    });
    expect(await env.fails('apply', '-n', ns, '-f', f)).toContain('The Pod "POD-B" is invalid');
    expect(await podNames(ns)).toBe('pod-a:pod-c:');
  });

  it('a CRD and its custom resource in one file: the resource waits for a second pass', async () => {
    const ns = await env.newNs('apply-widget');
    const f = await files(env, {
      'multi/multi-resource-4.yaml': `${crdYaml('example.com', { plural: 'widgets', singular: 'widget', kind: 'Widget' }, 'v1')}---
apiVersion: example.com/v1
kind: Widget
metadata:
  name: foo
  namespace: ${ns}
`,
    });
    expect(await env.fails('apply', '-f', f)).toContain('no matches for kind "Widget" in version "example.com/v1"');
    expect(await env.ok('get', 'crds', 'widgets.example.com', '-o', 'jsonpath={.metadata.name}')).toBe('widgets.example.com');
    await eventually(async () => (await env.run('get', 'widgets', '-n', ns)).code === 0, 'widgets served');
    expect(await env.fails('get', 'widgets', 'foo', '-n', ns)).toContain('widgets.example.com "foo" not found');
    await eventually(async () => (await env.run('apply', '-f', f)).code === 0, 'second pass applies the widget');
    expect(await jsonpath(ns, 'widget foo', '{.metadata.name}')).toBe('foo');
    // kube's `delete -f` of the file races the CRD's cleanup of its resources: the widget goes first here
    await env.ok('delete', '-n', ns, 'widget', 'foo');
    await env.ok('delete', 'crd', 'widgets.example.com');
  });
});

describe.concurrent('kubectl apply --server-side', () => {
  it('creates with the kubectl manager, takes a custom manager, and applies a pod condition through status', async () => {
    const ns = await env.newNs('ssa-create');
    expect(await env.ok('apply', '-n', ns, '--server-side', '-f', pod)).toContain('pod/test-pod serverside-applied');
    expect(await jsonpath(ns, 'pods test-pod', '{.metadata.labels.name}')).toBe('test-pod-label');
    expect(await env.ok('get', '-n', ns, '--show-managed-fields', '-f', pod, '-o', 'jsonpath={.metadata.managedFields[*].manager}')).toContain('kubectl');
    await env.ok('apply', '-n', ns, '--server-side', '--field-manager=my-field-manager', '--force-conflicts', '-f', pod);
    expect(await env.ok('get', '-n', ns, '-f', pod, '-o', 'jsonpath={.metadata.managedFields[*].manager}')).toContain('my-field-manager');
    const status = await files(env, {
      'ssa/pod-apply-status.yaml': `apiVersion: v1
kind: Pod
metadata:
  name: test-pod
status:
  conditions:
  - type: example.io/Foo
    status: "True"
`,
    });
    await env.ok('apply', '-n', ns, '--server-side', '--subresource=status', '--field-manager=my-field-manager', '-f', status);
    expect(await env.ok('get', '-n', ns, '-f', pod, '-o', 'jsonpath={.status.conditions[*].type}')).toContain('example.io/Foo');
  });

  it('--dry-run=server creates and changes nothing', async () => {
    const ns = await env.newNs('ssa-dry');
    expect(await env.ok('apply', '-n', ns, '--server-side', '--dry-run=server', '-f', pod)).toContain('pod/test-pod serverside-applied (server dry run)');
    expect(await podNames(ns)).toBe('');
    await env.ok('apply', '-n', ns, '--server-side', '-f', pod);
    const rv = await env.ok('get', '-n', ns, '-f', pod, '-o', 'jsonpath={.metadata.resourceVersion}');
    expect(await env.ok('apply', '-n', ns, '--server-side', '--dry-run=server', '-f', podApply)).toContain('pod/test-pod serverside-applied (server dry run)');
    expect(await jsonpath(ns, 'pods test-pod', '{.metadata.labels.name}')).toBe('test-pod-label');
    expect(await env.ok('get', '-n', ns, '-f', pod, '-o', 'jsonpath={.metadata.resourceVersion}')).toBe(rv);
  });

  it('upgrades a client-side applied pod to server-side (not under another manager) and back', async () => {
    const ns = await env.newNs('ssa-upgrade');
    expect(await env.ok('apply', '-n', ns, '-f', pod)).toContain('pod/test-pod created');
    expect((await env.fails('apply', '-n', ns, '--server-side', '--field-manager=not-kubectl', '-f', podApply)).toLowerCase()).toContain('conflict');
    expect(await env.ok('apply', '-n', ns, '--server-side', '-f', podApply)).toContain('pod/test-pod serverside-applied');
    expect(await env.ok('get', '-n', ns, 'pods', 'test-pod', '-o', 'yaml')).toContain('kubectl.kubernetes.io/last-applied-configuration');
    expect(await env.ok('apply', 'view-last-applied', '-n', ns, 'pod/test-pod', '-o', 'json')).toContain('"name": "test-pod-applied"');
    expect(await env.ok('apply', '-n', ns, '--server-side', '-f', pod)).toContain('pod/test-pod serverside-applied');
    expect(await env.ok('apply', 'view-last-applied', '-n', ns, 'pod/test-pod', '-o', 'json')).toContain('"name": "test-pod-label"');
    expect(await env.ok('apply', '-n', ns, '-f', podApply)).toContain('pod/test-pod configured');
    expect(await jsonpath(ns, 'pods test-pod', '{.metadata.labels.name}')).toBe('test-pod-applied');
  });

  it('migrates a ConfigMap between client- and server-side apply, removing the fields each one dropped', async () => {
    const ns = await env.newNs('ssa-migrate');
    const cm = (data: Record<string, string>, annotations = '') =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: test\n${annotations}data:\n${Object.entries(data).map(([k, v]) => `  ${k}: ${v}\n`).join('')}`;
    const csa1 = await files(env, { 'migrate/csa-1.yaml': cm({ key: 'value', legacy: 'unused' }) });
    const ssa2 = await files(env, { 'migrate/ssa-2.yaml': cm({ key: 'value', ssaKey: 'ssaValue' }) });
    const csa3 = await files(env, { 'migrate/csa-3.yaml': cm({ key: 'value', newKey: 'newValue' }) });
    const diff = await files(env, { 'migrate/diff.yaml': cm({ key: 'value', newKey: 'newValue' }, '  annotations:\n    newAnnotation: newValue\n') });
    const data = async () => (JSON.parse(await env.ok('get', '-n', ns, 'configmap', 'test', '-o', 'json')) as { data: Record<string, string> }).data;
    expect(await env.ok('apply', '-n', ns, '--server-side=false', '-f', csa1)).toContain('configmap/test created');
    expect(await env.ok('apply', '-n', ns, '--server-side', '-f', csa1)).toContain('configmap/test serverside-applied');
    expect(await data()).toEqual({ key: 'value', legacy: 'unused' });
    expect(await env.ok('apply', '-n', ns, '--server-side', '-f', ssa2)).toContain('configmap/test serverside-applied');
    expect(await data()).toEqual({ key: 'value', ssaKey: 'ssaValue' });
    expect(await env.ok('apply', '-n', ns, '--server-side=false', '-f', csa3)).toContain('configmap/test configured');
    expect(await data()).toEqual({ key: 'value', newKey: 'newValue' });
    expect(await env.ok('apply', '-n', ns, '--server-side', '-f', ssa2)).toContain('configmap/test serverside-applied');
    expect(await data()).toEqual({ key: 'value', ssaKey: 'ssaValue' });
    const d = await env.run('apply', '-n', ns, '--server-side', '-f', diff);
    expect(d.code, d.stderr).toBe(0);
    const shown = await env.run('diff', '-n', ns, '--server-side', '-f', csa3);
    expect(shown.code, shown.stderr).toBe(1);
  });

  it('a custom field manager does not stop the migration; the last-applied annotation is dropped', async () => {
    const ns = await env.newNs('ssa-custom-fm');
    const f1 = await files(env, { 'fm/1.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa-test\ndata:\n  key: value1\n  legacy: value2\n' });
    const f2 = await files(env, { 'fm/2.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa-test\ndata:\n  key: value2\n' });
    expect(await env.ok('apply', '-n', ns, '--server-side=false', '--field-manager=myfm', '-f', f1)).toContain('configmap/ssa-test created');
    expect(await env.ok('get', '-n', ns, 'configmap', 'ssa-test', '-o', 'yaml')).toContain('kubectl.kubernetes.io/last-applied-configuration');
    expect(await env.ok('apply', '-n', ns, '--server-side=true', '--field-manager=myfm', '-f', f1)).toContain('configmap/ssa-test serverside-applied');
    const y = await env.ok('get', '-n', ns, 'configmap', 'ssa-test', '-o', 'yaml');
    expect(y).toContain('key: value1');
    expect(y).not.toContain('kubectl.kubernetes.io/last-applied-configuration');
    expect(await env.ok('apply', '-n', ns, '--server-side=true', '--field-manager=myfm', '-f', f2)).toContain('configmap/ssa-test serverside-applied');
    const data = (JSON.parse(await env.ok('get', '-n', ns, 'configmap', 'ssa-test', '-o', 'json')) as { data: Record<string, string> }).data;
    expect(data).toEqual({ key: 'value2' });
  });

  it('the ConfigMap of apply.sh: a server-side apply without a key removes it', async () => {
    const ns = await env.newNs('ssa-legacy');
    const full = await files(env, { 'legacy/full.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: test\ndata:\n  key: value\n  legacy: unused\n' });
    const less = await files(env, { 'legacy/less.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: test\ndata:\n  key: value\n' });
    await env.ok('apply', '-n', ns, '-f', full);
    expect(await env.ok('get', '-n', ns, 'configmap', 'test', '-o', 'yaml')).toContain('legacy: unused');
    await env.ok('apply', '-n', ns, '--server-side', '-f', full);
    expect(await env.ok('get', '-n', ns, 'configmap', 'test', '-o', 'yaml')).toContain('legacy: unused');
    await env.ok('apply', '-n', ns, '--server-side', '-f', less);
    expect(await env.ok('get', '-n', ns, 'configmap', 'test', '-o', 'yaml')).not.toContain('legacy: unused');
  });
});

// prune deletes what carries the last-applied annotation in the namespaces it
// visits, and cluster-scoped kinds such as Namespaces: each test has its own
// namespaces, and the one test that applies a Namespace runs after them.
describe.concurrent('kubectl apply --prune', () => {
  const a = () => files(env, { 'prune/a.yaml': podYaml('a', { 'prune-group': 'true' }) });
  const b = (nsb: string) => files(env, { [`prune-${nsb}/b.yaml`]: podYaml('b', { 'prune-group': 'true' }, { namespace: nsb }) });

  it('prunes the pod of the same label that the new file leaves out', async () => {
    const nsb = await env.newNs('nsb');
    await env.ok('apply', '--namespace', nsb, '-l', 'prune-group=true', '-f', await a());
    expect(await jsonpath(nsb, 'pods a', '{.metadata.name}')).toBe('a');
    const out = await env.ok('apply', '--namespace', nsb, '--prune', '-l', 'prune-group=true', '-f', await b(nsb));
    expect(out).toContain('pod/b created');
    expect(out).toContain('pod/a pruned');
    await eventually(async () => (await podNames(nsb)) === 'b:', 'only b left in nsb');
  });

  it('without --prune both stay; --prune alone asks for --all', async () => {
    const nsb = await env.newNs('nsb');
    const dir = await files(env, { 'prune-all/a.yaml': podYaml('a', { 'prune-group': 'true' }), 'prune-all/b.yaml': podYaml('b', { 'prune-group': 'true' }, { namespace: nsb }) });
    const [fa, fb] = [dir, dir.replace(/a\.yaml$/, 'b.yaml')];
    // the directory mixes a pod without a namespace (default) and one in nsb: no -n
    await env.ok('apply', '-l', 'prune-group=true', '-f', fa);
    await env.ok('apply', '-l', 'prune-group=true', '-f', fb);
    expect(await podNames('default')).toBe('a:');
    expect(await podNames(nsb)).toBe('b:');
    await Promise.all([env.ok('delete', 'pod/a'), env.ok('delete', '-n', nsb, 'pod/b')]);
    const d = dir.replace(/\/a\.yaml$/, '');
    expect(await env.fails('apply', '--prune', '-f', d)).toContain('all resources selected for prune without explicitly passing --all');
    await env.ok('apply', '--all', '--prune', '-f', d);
    expect(await podNames('default')).toBe('a:');
    expect(await podNames(nsb)).toBe('b:');
    await env.ok('delete', 'pod/a');
  });

  it('--prune-allowlist limits what is pruned', async () => {
    const ns = await env.newNs('prune-allow');
    const svc = await files(env, { 'prune-svc/svc.yaml': 'apiVersion: v1\nkind: Service\nmetadata:\n  name: prune-svc\n  labels:\n    prune-group: "true"\nspec:\n  selector: {app: prune}\n  ports:\n  - port: 80\n' });
    await env.ok('apply', '-n', ns, '--prune', '-l', 'prune-group=true', '-f', await a());
    expect(await podNames(ns)).toBe('a:');
    await env.ok('apply', '-n', ns, '--prune', '-l', 'prune-group=true', '-f', svc, '--prune-allowlist', 'core/v1/Service');
    expect(await jsonpath(ns, 'service prune-svc', '{.metadata.name}')).toBe('prune-svc');
    expect(await podNames(ns)).toBe('a:');
    expect(await env.ok('apply', '-n', ns, '--prune', '-l', 'prune-group=true', '-f', svc)).toContain('pod/a pruned');
    await env.fails('get', '-n', ns, 'pods', 'a');
  });

  it('falls back to delete for PVCs', async () => {
    const ns = await env.newNs('prune-pvc');
    const pvc = (name: string) =>
      `apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: ${name}\n  namespace: ${ns}\nspec:\n  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: 1Gi\n`;
    const pa = await files(env, { 'prune-reap/a.yml': pvc('a-pvc') });
    const pb = await files(env, { 'prune-reap/b.yml': pvc('b-pvc') });
    await env.ok('apply', '--all', '--prune', '-f', pa);
    expect(await jsonpath(ns, 'pvc a-pvc', '{.metadata.name}')).toBe('a-pvc');
    const out = await env.ok('apply', '--all', '--prune', '-f', pb);
    expect(out).toContain('persistentvolumeclaim/a-pvc pruned');
    expect(await jsonpath(ns, 'pvc b-pvc', '{.metadata.name}')).toBe('b-pvc');
    expect(await podNames(ns)).toBe('');
  });

  it('prunes in a namespace other than the default one', async () => {
    const nsb = await env.newNs('nsb');
    const fb = await b(nsb);
    await env.ok('apply', '--namespace', nsb, '-f', await a());
    await env.ok('apply', '--namespace', nsb, '-f', fb);
    expect(await podNames(nsb)).toBe('a:b:');
    await env.ok('apply', '--prune', '--all', '-f', fb);
    await eventually(async () => (await podNames(nsb)) === 'b:', 'only b left in nsb');
  });
});

describe('kubectl apply: a Namespace in the file', () => {
  it('a pod before its namespace: the first pass creates the namespace only, the second the pod', async () => {
    const f = await files(env, {
      'multi/multi-resource-1.yaml': `${podYaml('test-pod', { name: 'multi' }, { namespace: 'multi-resource-ns' })}---
apiVersion: v1
kind: Namespace
metadata:
  name: multi-resource-ns
`,
    });
    expect(await env.fails('get', 'namespace', 'multi-resource-ns')).toContain('namespaces "multi-resource-ns" not found');
    expect(await env.fails('apply', '-f', f)).toContain('namespaces "multi-resource-ns" not found');
    expect(await env.fails('get', 'pods', 'test-pod', '-n', 'multi-resource-ns')).toContain('pods "test-pod" not found');
    await env.ok('apply', '-f', f);
    expect(await jsonpath('multi-resource-ns', 'pods test-pod', '{.metadata.name}')).toBe('test-pod');
    await env.ok('delete', '-f', f);
  });

});
