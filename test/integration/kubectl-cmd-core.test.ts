// kubectl's command tests of pods (kubernetes/kubernetes test/cmd/core.sh
// run_pod_tests), run with the real kubectl 1.32 against orch as
// hack/make-rules/test-cmd.sh runs them against kube-apiserver and
// kube-controller-manager (no scheduler, no kubelet: pods stay Pending).
// Our own manifests stand in for kube's fixtures (valid-pod.yaml, pod.yaml,
// pod-with-precision.json, pod-with-api-env.yaml, multi-pod.yaml).
//
// Ported: create and get by every resource spelling, the kubectl-create
// manager, describe (and its events and --chunk-size list requests), delete by
// name / --now / --grace-period=0 / label / --all, re-create from a YAML dump,
// field selectors, env from secrets, config maps and the downward API in
// describe, pdbs and priority classes with --dry-run=server, label and annotate
// (dry-run, empty values, --record, managers), int precision through patch,
// annotate -f, create --edit, patch (types, no-op, --record, dry-run, -f,
// resourceVersion preconditions, the error of a mistyped patch), replace
// --force, replace of a Node with resourceVersion 0, edit (and its patch
// output), label --overwrite --all, several pods in one file, and the
// last-applied annotation through create / replace / apply.
// The test-cmd server runs without the ServiceAccount admission plugin, so a
// pod's manifest can be sent again whole (test/helpers/kubectl-cmd.ts).
// Skipped (client side only, no server answer involved): `label --local` and
// `patch --local` output, the `replace --timeout` flag check,
// `edit --windows-line-endings`, `create pdb` with both bounds.

import { describe, expect, it } from 'vitest';
import { type Obj, cmdEnv, sedEditor } from '../helpers/kubectl-cmd.js';

const env = cmdEnv();
const { ok, run, fails, names, api, apiNames, file, newNs, withEditor } = env;

const validPod = (name = 'valid-pod'): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { name } },
  spec: { containers: [{ name: 'kubernetes-serve-hostname', image: 'registry.k8s.io/serve_hostname', resources: { limits: { cpu: '1', memory: '512Mi' } } }] },
});
const testPod = (label = 'test-pod-label'): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'test-pod', labels: { name: label } },
  spec: { containers: [{ name: 'kubernetes-pause', image: 'registry.k8s.io/pause:3.10' }] },
});
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
/** what a command did, read without another kubectl */
const podNames = (ns: string): Promise<string[]> => apiNames(`/api/v1/namespaces/${ns}/pods`);
const pod = async (ns: string, name: string): Promise<Obj> => (await api(`/api/v1/namespaces/${ns}/pods/${name}`))!;

describe.concurrent('kubectl(v1:pods)', () => {
  it('creates valid-pod, reads it by every spelling, describes it and lists in chunks', async () => {
    const ns = await newNs('pods-get');
    const f = await file('valid-pod.json', validPod());
    await ok('create', '-n', ns, '-f', f);
    expect(await podNames(ns)).toEqual(['valid-pod']);
    const spellings = await Promise.all(['pod valid-pod', 'pod/valid-pod', 'pods/valid-pod'].map((s) => ok('get', '-n', ns, ...s.split(' '), '-o', 'jsonpath={.metadata.name}')));
    expect(spellings).toEqual(['valid-pod', 'valid-pod', 'valid-pod']);
    expect(await ok('get', '-n', ns, '--show-managed-fields', '-f', f, '-o', 'jsonpath={.metadata.managedFields[*].manager}')).toContain('kubectl-create');

    const [one, all, noEvents] = await Promise.all([ok('describe', '-n', ns, 'pods', 'valid-pod'), ok('describe', '-n', ns, 'pods'), ok('describe', '-n', ns, 'pods', 'valid-pod', '--show-events=false')]);
    for (const out of [one, all]) for (const s of ['Name:', 'Image:', 'Node:', 'Labels:', 'Status:', 'Events:']) expect(out).toContain(s);
    expect(noEvents).not.toContain('Events:');

    // describe_resource_chunk_size_assert: the pods and their events are listed with the chunk size
    const [dflt, custom] = await Promise.all([run('describe', '-n', ns, 'pods', '--show-events=true', '-v=6'), run('describe', '-n', ns, 'pods', '--show-events=false', '--chunk-size=10', '-v=6')]);
    expect(dflt.stderr).toMatch(/pods\?.*limit=500/);
    expect(dflt.stderr).toMatch(/events\?.*limit=500/);
    expect(custom.stderr).toMatch(/pods\?limit=10/);
  });

  it('deletes by name (--force, --now, --grace-period=0) and re-creates from a YAML dump', async () => {
    const ns = await newNs('pods-delete');
    const f = await file('valid-pod.json', validPod());
    await ok('create', '-n', ns, '-f', f);
    const dump = await ok('get', '-n', ns, 'pod', 'valid-pod', '-o', 'yaml');
    await ok('delete', '-n', ns, 'pod', 'valid-pod', '--grace-period=0', '--force');
    expect(await podNames(ns)).toEqual([]);
    await ok('create', '-n', ns, '-f', f);
    await ok('delete', '-n', ns, 'pod', 'valid-pod', '--now');
    expect(await podNames(ns)).toEqual([]);
    await ok('create', '-n', ns, '-f', f);
    // without --force kubectl waits for the pod to go: an unscheduled pod goes at once
    await ok('delete', '-n', ns, 'pod', 'valid-pod', '--grace-period=0');
    expect(await podNames(ns)).toEqual([]);

    // the dump carries uid, creationTimestamp, status: the server makes its own
    const ns2 = await newNs('pods-dump');
    const old = (await pod(ns, 'valid-pod').catch(() => undefined)) as Obj | undefined;
    expect(old).toBeUndefined();
    await ok('create', '-n', ns2, '-f', await file('dump.yaml', dump.replace(/^\s*namespace:.*\n/m, '')));
    expect(await podNames(ns2)).toEqual(['valid-pod']);
    await ok('delete', '-n', ns2, '-f', f, '--grace-period=0', '--force');
    expect(await podNames(ns2)).toEqual([]);
  });

  it('selects pods by label and field, and deletes nothing without names', async () => {
    const ns = await newNs('pods-select');
    await ok('create', '-n', ns, '-f', await file('valid-pod.json', validPod()));
    expect(await names('pods', '-n', ns, "-lname in (valid-pod)")).toEqual(['valid-pod']);
    const phase = await ok('get', '-n', ns, 'pod', 'valid-pod', '-o', 'go-template={{ .status.phase }}');
    expect(phase).toBe('Pending');
    const [byName, byPhase] = await Promise.all([ok('get', '-n', ns, 'pods', '--field-selector', 'metadata.name=valid-pod'), ok('get', '-n', ns, 'pods', '--field-selector', `status.phase=${phase}`)]);
    expect(byName).toContain('valid-pod');
    expect(byPhase).toContain('valid-pod');
    await fails('delete', '-n', ns, 'pods');
    await fails('delete', '-n', ns, '--all', 'pods', "-lname in (valid-pod)");
    expect(await podNames(ns)).toEqual(['valid-pod']);
    await ok('delete', '-n', ns, '--all', 'pods', '--grace-period=0', '--force');
    expect(await podNames(ns)).toEqual([]);
  });

  it('describes env from a secret, a config map and the downward API; pdbs and priority classes', async () => {
    const ns = await newNs('test-kubectl-describe-pod');
    for (const dry of ['client', 'server']) await ok('create', 'secret', 'generic', 'test-secret', `--dry-run=${dry}`, '--from-literal=key-1=value1', '--type=test-type', '-n', ns);
    expect(await names('secrets', '-n', ns)).toEqual([]);
    await ok('create', 'secret', 'generic', 'test-secret', '--from-literal=key-1=value1', '--type=test-type', '-n', ns);
    expect(await ok('get', 'secret/test-secret', '-n', ns, '-o', 'go-template={{.type}}')).toBe('test-type');
    await ok('create', 'configmap', 'test-configmap', '--from-literal=key-2=value2', '-n', ns);

    for (const dry of ['client', 'server']) await ok('create', 'pdb', 'test-pdb-1', `--dry-run=${dry}`, '--selector=app=rails', '--min-available=2', '-n', ns);
    expect(await names('pdb', '-n', ns)).toEqual([]);
    await Promise.all([
      ok('create', 'pdb', 'test-pdb-1', '--selector=app=rails', '--min-available=2', '-n', ns),
      ok('create', 'pdb', 'test-pdb-2', '--selector=app=rails', '--min-available=50%', '-n', ns),
      ok('create', 'pdb', 'test-pdb-3', '--selector=app=rails', '--max-unavailable=2', '-n', ns),
      ok('create', 'pdb', 'test-pdb-4', '--selector=app=rails', '--max-unavailable=50%', '-n', ns),
    ]);
    const pdbs = (await api(`/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`))!.items as Obj[];
    expect(pdbs.map((p) => [p.metadata.name, p.spec.minAvailable ?? p.spec.maxUnavailable])).toEqual([
      ['test-pdb-1', 2],
      ['test-pdb-2', '50%'],
      ['test-pdb-3', 2],
      ['test-pdb-4', '50%'],
    ]);
    const chunked = await run('describe', 'poddisruptionbudgets', '-n', ns, '--show-events=false', '--chunk-size=10', '-v=6');
    expect(chunked.stderr).toMatch(/poddisruptionbudgets\?limit=10/);

    const envPod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'env-test-pod' },
      spec: {
        containers: [
          {
            name: 'test-container',
            image: 'registry.k8s.io/busybox',
            command: ['/bin/sh', '-c', 'env'],
            env: [
              { name: 'TEST_CMD_1', valueFrom: { secretKeyRef: { name: 'test-secret', key: 'key-1' } } },
              { name: 'TEST_CMD_2', valueFrom: { configMapKeyRef: { name: 'test-configmap', key: 'key-2' } } },
              { name: 'TEST_CMD_3', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            ],
          },
        ],
        restartPolicy: 'Never',
      },
    };
    await ok('create', '-n', ns, '-f', await file('env-pod.json', envPod));
    const [one, all] = await Promise.all([ok('describe', 'pods', 'env-test-pod', '-n', ns), ok('describe', 'pods', '-n', ns)]);
    for (const out of [one, all]) {
      expect(out).toContain("TEST_CMD_1:  <set to the key 'key-1' in secret 'test-secret'>");
      expect(out).toContain("TEST_CMD_2:  <set to the key 'key-2' of config map 'test-configmap'>");
      expect(out).toContain('TEST_CMD_3:  env-test-pod (v1:metadata.name)');
    }
  });

  it('creates a priority class only without --dry-run', async () => {
    for (const dry of ['client', 'server']) await ok('create', 'priorityclass', 'test-priorityclass', `--dry-run=${dry}`);
    expect(await names('priorityclasses')).not.toContain('test-priorityclass');
    await ok('create', 'priorityclass', 'test-priorityclass');
    expect(await names('priorityclasses')).toContain('test-priorityclass');
    // kube 1.32's columns, PreemptionPolicy last
    const table = await ok('get', 'priorityclass', 'test-priorityclass');
    expect(table).toMatch(/^NAME\s+VALUE\s+GLOBAL-DEFAULT\s+AGE\s+PREEMPTIONPOLICY\n/);
    expect(table).toMatch(/^test-priorityclass\s+0\s+false\s+\d+s\s+PreemptLowerPriority\n/m);
    const chunked = await run('describe', 'priorityclasses', '--show-events=false', '--chunk-size=10', '-v=6');
    expect(chunked.stderr).toMatch(/priorityclasses\?limit=10/);
    await ok('delete', 'priorityclass', 'test-priorityclass');
  });

  it('deletes several pods at once', async () => {
    const ns = await newNs('pods-multi');
    await Promise.all([ok('create', '-n', ns, '-f', await file('valid-pod.json', validPod())), ok('create', '-n', ns, '-f', await file('agnhost.json', validPod('agnhost-primary')))]);
    expect(await podNames(ns)).toEqual(['agnhost-primary', 'valid-pod']);
    await ok('delete', '-n', ns, 'pods', 'valid-pod', 'agnhost-primary', '--grace-period=0', '--force');
    expect(await podNames(ns)).toEqual([]);
  });

  it('labels and annotates: dry-run, empty values, --record and the field managers', async () => {
    const ns = await newNs('pods-label');
    await ok('create', '-n', ns, '-f', await file('valid-pod.json', validPod()));
    const labels = async (): Promise<Record<string, string>> => (await pod(ns, 'valid-pod')).metadata.labels;
    const annotations = async (): Promise<Record<string, string> | undefined> => (await pod(ns, 'valid-pod')).metadata.annotations;
    for (const dry of ['client', 'server']) await ok('label', '-n', ns, 'pods', 'valid-pod', 'new-name=new-valid-pod', `--dry-run=${dry}`);
    expect(await labels()).toEqual({ name: 'valid-pod' });
    await ok('label', '-n', ns, 'pods', 'valid-pod', 'new-name=new-valid-pod');
    expect(await labels()).toEqual({ name: 'valid-pod', 'new-name': 'new-valid-pod' });
    await ok('label', '-n', ns, 'pods', 'valid-pod', 'emptylabel=');
    expect((await labels()).emptylabel).toBe('');

    for (const dry of ['client', 'server']) await ok('annotate', '-n', ns, 'pods', 'valid-pod', 'emptyannotation=', `--dry-run=${dry}`);
    expect(await annotations()).toBeUndefined();
    await ok('annotate', '-n', ns, 'pods', 'valid-pod', 'emptyannotation=');
    expect(await annotations()).toEqual({ emptyannotation: '' });
    expect(await ok('get', '-n', ns, 'pod', 'valid-pod', '--show-managed-fields', '-o', 'jsonpath={.metadata.managedFields[*].manager}')).toContain('kubectl-annotate');

    await ok('label', '-n', ns, 'pods', 'valid-pod', 'record-change=true', '--record=true');
    expect((await annotations())!['kubernetes.io/change-cause']).toMatch(/--record=true/);
    expect(await ok('get', '-n', ns, 'pod', 'valid-pod', '--show-managed-fields', '-o', 'jsonpath={.metadata.managedFields[*].manager}')).toContain('kubectl-label');
    await ok('label', '-n', ns, 'pods', 'valid-pod', 'no-record-change=true', '--record=false');
    expect((await annotations())!['kubernetes.io/change-cause']).toMatch(/--record=true/);
    await ok('label', '-n', ns, 'pods', 'valid-pod', 'new-record-change=true', '--record=true');
    expect((await annotations())!['kubernetes.io/change-cause']).toMatch(/new-record-change=true/);

    await ok('delete', '-n', ns, 'pods', '-lnew-name=new-valid-pod', '--grace-period=0', '--force');
    expect(await podNames(ns)).toEqual([]);
  });

  it('keeps int64 precision through patch, label and annotate', async () => {
    const ns = await newNs('pods-precision');
    const precise = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'pod-with-precision' },
      spec: {
        activeDeadlineSeconds: 2147483647,
        containers: [{ name: 'kubernetes-pause', image: 'registry.k8s.io/pause:3.10' }],
        restartPolicy: 'Never',
        securityContext: { supplementalGroups: [0, 1000030003, 2147483647] },
      },
    };
    await ok('create', '-n', ns, '-f', await file('precision.json', precise));
    await ok('patch', '-n', ns, 'pod', 'pod-with-precision', '-p={"metadata":{"annotations":{"patchkey": "patchvalue"}}}');
    await ok('label', '-n', ns, 'pods', 'pod-with-precision', 'labelkey=labelvalue');
    await ok('annotate', '-n', ns, 'pods', 'pod-with-precision', 'annotatekey=annotatevalue');
    const got = await pod(ns, 'pod-with-precision');
    expect(got.metadata.annotations).toEqual({ patchkey: 'patchvalue', annotatekey: 'annotatevalue' });
    expect(got.metadata.labels).toEqual({ labelkey: 'labelvalue' });
    expect(got.spec.activeDeadlineSeconds).toBe(2147483647);
    expect(got.spec.securityContext.supplementalGroups).toEqual([0, 1000030003, 2147483647]);
  });

  it('annotates the pod a file names; --local changes only the output', async () => {
    const ns = await newNs('pods-annotate-file');
    const f = await file('pod.json', testPod());
    await ok('create', '-n', ns, '-f', f);
    await ok('annotate', '-n', ns, '-f', f, 'annotatekey=annotatevalue');
    const local = await ok('annotate', '-n', ns, '--local', '-f', f, 'annotatekey=localvalue', '-o', 'yaml');
    expect(local).toContain('localvalue');
    expect((await pod(ns, 'test-pod')).metadata.annotations.annotatekey).toBe('annotatevalue');
  });

  it('create --edit creates what the editor made of a List and of several objects', async () => {
    const ns = await newNs('pods-create-edit');
    const svc = { kind: 'Service', apiVersion: 'v1', metadata: { name: 'mock' }, spec: { ports: [{ port: 80, targetPort: 80 }], selector: { app: 'mock' } } };
    const rc = {
      kind: 'ReplicationController',
      apiVersion: 'v1',
      metadata: { name: 'mock' },
      spec: { replicas: 1, selector: { app: 'mock' }, template: { metadata: { labels: { app: 'mock' } }, spec: { containers: [{ name: 'mock-container', image: 'registry.k8s.io/pause:3.10' }] } } },
    };
    const editor = await sedEditor(env, 'mock', 'modified');
    const multi = await file('multi.json', `${JSON.stringify(svc)}\n${JSON.stringify(rc)}\n`);
    let r = await withEditor(editor, 'create', '--edit', '-n', ns, '-f', multi);
    expect(r.code, r.stderr).toBe(0);
    expect(await names('service', '-n', ns)).toEqual(['modified']);
    expect(await names('rc', '-n', ns)).toEqual(['modified']);
    const managers = await Promise.all(['service/modified', 'rc/modified'].map((o) => ok('get', '-n', ns, o, '--show-managed-fields', '-o', 'jsonpath={.metadata.managedFields[*].manager}')));
    for (const m of managers) expect(m).toContain('kubectl-create');
    await ok('delete', '-n', ns, 'service/modified', 'rc/modified');

    const list = await file('list.json', { kind: 'List', apiVersion: 'v1', items: [svc, rc] });
    r = await withEditor(editor, 'create', '--edit', '-n', ns, '-f', list);
    expect(r.code, r.stderr).toBe(0);
    expect(await names('service', '-n', ns)).toEqual(['modified']);
    expect(await names('rc', '-n', ns)).toEqual(['modified']);

    r = await withEditor('cat', 'create', '--edit', '-n', ns, '-f', await file('valid-pod.json', validPod()), '-o', 'json');
    expect(r.stdout + r.stderr).toContain('Edit cancelled');
  });

  it('patches a pod: errors, no-op, --record, json and yaml patches, dry-run, -f, preconditions', async () => {
    const ns = await newNs('pods-patch');
    const f = await file('valid-pod.json', validPod());
    await ok('create', '-n', ns, '-f', f);
    const image = async (): Promise<string> => (await pod(ns, 'valid-pod')).spec.containers[0].image;

    expect(await fails('patch', '-n', ns, 'pod', 'valid-pod', '-p={"metadata":{"labels":"invalid"}}')).toContain('cannot restore map from string');
    const noop = await run('patch', '-n', ns, 'pod', 'valid-pod', '-p={"metadata":{"labels":{"name":"valid-pod"}}}');
    expect(noop.code, noop.stderr).toBe(0);
    expect(noop.stdout).toContain('patched (no change)');

    await ok('patch', '-n', ns, 'pod', 'valid-pod', '--record', '-p={"spec":{"containers":[{"name": "kubernetes-serve-hostname", "image": "nginx"}]}}');
    expect(await image()).toBe('nginx');
    expect((await pod(ns, 'valid-pod')).metadata.annotations['kubernetes.io/change-cause']).toMatch(/kubectl .*patch/);
    await ok('patch', '-n', ns, 'pod', 'valid-pod', '--type=json', '-p=[{"op": "replace", "path": "/spec/containers/0/image", "value":"nginx2"}]');
    expect(await image()).toBe('nginx2');
    await ok('patch', '-n', ns, 'pod', 'valid-pod', '--type=json', '-p=[{"op": "replace", "path": "/spec/containers/0/image", "value":"nginx"}]');
    for (const dry of ['client', 'server']) await ok('patch', '-n', ns, 'pod', 'valid-pod', '--record', `--dry-run=${dry}`, '-p={"spec":{"containers":[{"name": "kubernetes-serve-hostname", "image": "not-nginx"}]}}');
    expect(await image()).toBe('nginx');
    await ok('patch', '-n', ns, 'pod', 'valid-pod', '-p=spec:\n  containers:\n  - name: kubernetes-serve-hostname\n    image: changed-with-yaml\n');
    expect(await image()).toBe('changed-with-yaml');
    await ok('patch', '-n', ns, '-f', f, '-p={"spec":{"containers":[{"name": "kubernetes-serve-hostname", "image": "registry.k8s.io/pause:3.10"}]}}');
    expect(await image()).toBe('registry.k8s.io/pause:3.10');
    expect(await ok('get', '-n', ns, 'pod', 'valid-pod', '--show-managed-fields', '-o', 'jsonpath={.metadata.managedFields[*].manager}')).toContain('kubectl-patch');

    // a resourceVersion in the patch is a precondition
    const rv = await ok('get', '-n', ns, 'pod', 'valid-pod', '-o', 'go-template={{ .metadata.resourceVersion }}');
    await ok('patch', '-n', ns, 'pod', 'valid-pod', `-p={"spec":{"containers":[{"name": "kubernetes-serve-hostname", "image": "nginx"}]},"metadata":{"resourceVersion":"${rv}"}}`);
    expect(await image()).toBe('nginx');
    const stale = String(Number(rv) + 100);
    expect(await fails('patch', '-n', ns, 'pod', 'valid-pod', `-p={"spec":{"containers":[{"name": "kubernetes-serve-hostname", "image": "nginx"}]},"metadata":{"resourceVersion":"${stale}"}}`)).toContain(
      'please apply your changes to the latest version and try again',
    );
  });

  it('replace --force changes what an update may not; replace and edit keep or add last-applied', async () => {
    const ns = await newNs('pods-replace');
    await ok('create', '-n', ns, '-f', await file('valid-pod.json', validPod()));
    const live = await ok('get', '-n', ns, 'pod', 'valid-pod', '-o', 'json');
    const renamed = await file('renamed.json', live.replaceAll('"kubernetes-serve-hostname"', '"replaced-k8s-serve-hostname"'));
    await ok('replace', '-n', ns, '--force', '-f', renamed);
    const replaced = await pod(ns, 'valid-pod');
    expect(replaced.spec.containers[0].name).toBe('replaced-k8s-serve-hostname');
    expect(replaced.metadata.managedFields.map((m: Obj) => m.manager)).toContain('kubectl-replace');
    expect(await fails('replace', '-n', ns, '--grace-period=1', '-f', renamed)).toContain('--grace-period must have --force specified');

    // kubectl edit sends a patch; --output-patch prints it
    await ok('patch', '-n', ns, 'pod', 'valid-pod', '--type=json', '-p=[{"op": "replace", "path": "/spec/containers/0/image", "value":"nginx"}]');
    const editor = await sedEditor(env, 'nginx', 'registry.k8s.io/serve_hostname');
    const edited = await withEditor(editor, 'edit', '-n', ns, 'pods/valid-pod', '--output-patch=true');
    expect(edited.code, edited.stderr).toBe(0);
    expect(edited.stdout).toContain('Patch:');
    const after = await pod(ns, 'valid-pod');
    expect(after.spec.containers[0].image).toBe('registry.k8s.io/serve_hostname');
    expect(after.metadata.managedFields.map((m: Obj) => m.manager)).toContain('kubectl-edit');
    const cancelled = await withEditor('cat', 'edit', '-n', ns, 'pod/valid-pod');
    expect(cancelled.stdout + cancelled.stderr).toContain('Edit cancelled');
    expect(cancelled.stdout).toContain('name: valid-pod');
    const nsList = await withEditor('cat', 'edit', 'ns');
    expect(nsList.stdout).toContain('kind: List');

    // label: an existing key needs --overwrite
    await fails('label', '-n', ns, 'pods', 'valid-pod', 'name=valid-pod-super-sayan');
    expect((await pod(ns, 'valid-pod')).metadata.labels.name).toBe('valid-pod');
    await ok('label', '-n', ns, '--overwrite', 'pods', '--all', 'name=valid-pod-super-sayan');
    expect((await pod(ns, 'valid-pod')).metadata.labels.name).toBe('valid-pod-super-sayan');
    await ok('delete', '-n', ns, 'pods', '-lname in (valid-pod-super-sayan)', '--grace-period=0', '--force');
    expect(await podNames(ns)).toEqual([]);
  });

  it('replaces a cluster-scoped Node sent with resourceVersion 0 (unconditionally)', async () => {
    await ok('create', '-f', await file('node.json', { kind: 'Node', apiVersion: 'v1', metadata: { name: 'node-v1-test' } }));
    const replacement = await file('node-a.json', { kind: 'Node', apiVersion: 'v1', metadata: { name: 'node-v1-test', annotations: { a: 'b' }, resourceVersion: '0' } });
    for (const dry of ['server', 'client']) await ok('replace', `--dry-run=${dry}`, '-f', replacement);
    expect((await api('/api/v1/nodes/node-v1-test'))!.metadata.annotations?.a).toBeUndefined();
    await ok('replace', '-f', replacement);
    expect((await api('/api/v1/nodes/node-v1-test'))!.metadata.annotations?.a).toBe('b');
    await ok('delete', 'node', 'node-v1-test');
  });

  it('creates and deletes two pods from one file', async () => {
    const ns = await newNs('pods-two');
    const f = await file('multi-pod.yaml', `# two pods\n${JSON.stringify(validPod('redis-master'))}\n---\n${JSON.stringify(validPod())}\n`);
    await ok('create', '-n', ns, '-f', f);
    expect(await podNames(ns)).toEqual(['redis-master', 'valid-pod']);
    await ok('delete', '-n', ns, '-f', f);
    expect(await podNames(ns)).toEqual([]);
  });

  it('keeps the last-applied annotation to apply: create and replace add none, apply does, replace updates it', async () => {
    const ns = await newNs('pods-last-applied');
    await ok('create', '-n', ns, '-f', await file('pod.json', testPod()));
    const live = async (): Promise<Obj> => pod(ns, 'test-pod');
    expect((await live()).metadata.annotations?.[LAST_APPLIED]).toBeUndefined();
    const replaceWith = async (from: string, to: string): Promise<void> => {
      const yaml = await ok('get', '-n', ns, 'pods', 'test-pod', '-o', 'yaml');
      await ok('replace', '-n', ns, '-f', await file('replace.yaml', yaml.replaceAll(from, to)));
    };
    await replaceWith('test-pod-label', 'test-pod-replaced');
    expect((await live()).metadata.labels.name).toBe('test-pod-replaced');
    expect((await live()).metadata.annotations?.[LAST_APPLIED]).toBeUndefined();
    await ok('apply', '-n', ns, '-f', await file('pod-apply.json', testPod('test-pod-applied')));
    const applied = (await live()).metadata.annotations?.[LAST_APPLIED] as string;
    expect(applied).toContain('test-pod-applied');
    await replaceWith('test-pod-applied', 'test-pod-replaced');
    const replaced = await live();
    expect(replaced.metadata.labels.name).toBe('test-pod-replaced');
    expect(replaced.metadata.annotations[LAST_APPLIED]).toContain('test-pod-replaced');
  });
});
