// kubectl's command tests of `diff`, `create` and `delete` (kubernetes
// test/cmd/diff.sh: run_kubectl_diff_tests, run_kubectl_diff_same_names;
// create.sh: run_kubectl_create_dry_run_tests, run_kubectl_create_filter_tests,
// run_kubectl_create_error_tests, run_create_job_tests,
// run_kubectl_create_kustomization_directory_tests; delete.sh:
// run_kubectl_delete_allnamespaces_tests; and test/cmd/testdata/diff.txtar,
// create.txtar, delete.txtar), run with the real kubectl 1.32 against orch.
//
// Ported: diff of a missing and of a live object, client- and server-side
// (exit 0 without changes, 1 with, >1 for an invalid object; the live object's
// resourceVersion unchanged), `diff --prune` with a selector, diff of several
// kinds with one name (KUBECTL_EXTERNAL_DIFF); create with --dry-run, with
// `-l`, its errors (`--raw` to the wrong collection), create job (an image, a
// command, `--from=cronjob`), create -k, every `--validate` level against a
// Deployment with an unknown field; delete across namespaces with a label
// selector (client and server dry-run, then for real), `--wait` and `--force`.
// Skipped: delete.txtar's `--interactive` (stdin prompts, kubectl alone),
// create.sh's `--raw` with `--edit` (a client-side flag check).

import { beforeAll, describe, expect, it } from 'vitest';
import { cmdEnv } from '../helpers/kubectl-cmd.js';
import { deploymentYaml, files, names, podYaml } from '../helpers/kubectl-cmd-files.js';

const env = cmdEnv();
let pod: string;
let podChanged: string;
beforeAll(async () => {
  pod = await files(env, { 'pod.yaml': podYaml('test-pod', { name: 'test-pod-label' }) });
  podChanged = await files(env, { 'pod-changed.yaml': podYaml('test-pod', { name: 'test-pod-label' }, { image: 'registry.k8s.io/pause:3.4' }) });
});

const rvOf = (ns: string) => env.ok('get', '-n', ns, '-f', pod, '-o', 'jsonpath={.metadata.resourceVersion}');

describe.concurrent('kubectl diff', () => {
  for (const side of ['client', 'server'] as const) {
    it(`${side}-side: a missing object, no change, a changed image, an invalid object`, async () => {
      const ns = await env.newNs(`diff-${side}`);
      const flags = side === 'server' ? ['--server-side'] : [];
      const missing = await env.run('diff', '-n', ns, ...flags, '-f', pod);
      expect(missing.code, missing.stderr).toBe(1);
      expect(missing.stdout).toContain('test-pod');
      expect(await env.fails('get', '-n', ns, 'pod', 'test-pod')).toContain('not found');
      expect(await env.ok('apply', '-n', ns, ...flags, '-f', pod)).toContain('pod/test-pod');
      const rv = await rvOf(ns);
      const same = await env.run('diff', '-n', ns, ...flags, '-f', pod);
      expect(same.code, same.stdout + same.stderr).toBe(0);
      const changed = await Promise.all([env.run('diff', '-n', ns, ...flags, '-f', podChanged), env.run('diff', '-n', ns, '--server-side', '-f', podChanged)]);
      for (const c of changed) {
        expect(c.code, c.stderr).toBe(1);
        expect(c.stdout).toContain('registry.k8s.io/pause:3.4');
      }
      expect(await env.ok('get', '-n', ns, 'pod', 'test-pod', '-o', 'jsonpath={.spec.containers[0].image}')).toBe('registry.k8s.io/pause:3.10.1');
      expect(await rvOf(ns)).toBe(rv);
      const invalid = await files(env, { 'invalid-pod.yaml': 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: invalid-pod\nspec:\n  containers:\n  - name: c\n' });
      const bad = await env.run('diff', '-n', ns, '-f', invalid);
      expect(bad.code).toBeGreaterThan(1);
      expect(bad.stderr).toContain('invalid');
    });
  }

  it('--prune shows what a selector would prune, and nothing once applied', async () => {
    const ns = await env.newNs('diff-prune');
    const a = await files(env, { [`prune-${ns}/a.yaml`]: podYaml('a', { 'prune-group': 'true' }) });
    const b = await files(env, { [`prune-${ns}/b.yaml`]: podYaml('b', { 'prune-group': 'true' }, { namespace: ns }) });
    await env.ok('apply', '--namespace', ns, '-l', 'prune-group=true', '-f', a);
    const [plain, pruned] = await Promise.all([
      env.run('diff', '--namespace', ns, '-l', 'prune-group=true', '-f', b),
      env.run('diff', '--prune', '--namespace', ns, '-l', 'prune-group=true', '-f', b),
    ]);
    expect(plain.code, plain.stderr).toBe(1);
    expect(plain.stdout).not.toContain('name: a');
    expect(pruned.code, pruned.stderr).toBe(1);
    expect(pruned.stdout).toContain('name: a');
    expect(await env.ok('apply', '--prune', '--namespace', ns, '-l', 'prune-group=true', '-f', b)).toContain('pod/b');
    expect(names(await env.ok('get', 'pods', '-n', ns, '-o', 'json'))).toBe('b:');
    const after = await env.run('diff', '--prune', '--namespace', ns, '-l', 'prune-group=true', '-f', b);
    expect(after.code, after.stdout + after.stderr).toBe(0);
  });

  it('--prune with a selector leaves out the pods it does not select', async () => {
    const ns = await env.newNs('diff-prune-sel');
    const three = await files(env, {
      [`prune3-${ns}/abc.yaml`]: [podYaml('a', { 'prune-group': 'true' }), podYaml('b', { 'prune-group': 'true' }), podYaml('c', { 'prune-group': 'false' })].join('---\n'),
    });
    const ac = await files(env, { [`prune3-${ns}/ac.yaml`]: [podYaml('a', { 'prune-group': 'true' }), podYaml('c', { 'prune-group': 'false' })].join('---\n') });
    await env.ok('apply', '--namespace', ns, '-f', three);
    const [plain, pruned] = await Promise.all([
      env.run('diff', '--namespace', ns, '-l', 'prune-group=true', '-f', ac),
      env.run('diff', '--prune', '--namespace', ns, '-l', 'prune-group=true', '-f', ac),
    ]);
    expect(plain.code, plain.stdout + plain.stderr).toBe(0);
    expect(pruned.code, pruned.stderr).toBe(1);
    expect(pruned.stdout).toContain('name: b');
    expect(pruned.stdout).not.toContain('name: c');
  });

  it('several kinds with the same name get a file each', async () => {
    const ns = await env.newNs('diff-names');
    const dir = (await files(env, {
      [`same-${ns}/pod.yaml`]: podYaml('test', { app: 'test' }),
      [`same-${ns}/deployment.yaml`]: deploymentYaml('test', 'test'),
      [`same-${ns}/configmap.yaml`]: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: test\ndata:\n  a: b\n',
      [`same-${ns}/secret.yaml`]: 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: test\nstringData:\n  a: b\n',
    })).replace(/\/pod\.yaml$/, '');
    const { execFile } = await import('node:child_process');
    const out = await new Promise<string>((resolve) => {
      execFile('kubectl', ['--kubeconfig', env.ts().server.kubeconfigPath, 'diff', '-n', ns, '-Rf', dir], { env: { ...process.env, KUBECTL_EXTERNAL_DIFF: 'find' } }, (_e, stdout) => resolve(stdout));
    });
    for (const re of [/v1\.Pod\..*\.test/, /apps\.v1\.Deployment\..*\.test/, /v1\.ConfigMap\..*\.test/, /v1\.Secret\..*\.test/]) expect(out).toMatch(re);
  });
});

describe.concurrent('kubectl create', () => {
  it('--dry-run=client|server creates nothing', async () => {
    const ns = await env.newNs('create-dry');
    const [client, server] = await Promise.all([env.ok('create', '-n', ns, '--dry-run=client', '-f', pod), env.ok('create', '-n', ns, '--dry-run=server', '-f', pod)]);
    expect(client).toContain('pod/test-pod created (dry run)');
    expect(server).toContain('pod/test-pod created (server dry run)');
    expect(names(await env.ok('get', 'pods', '-n', ns, '-o', 'json'))).toBe('');
  });

  it('-l creates only the matching objects', async () => {
    const ns = await env.newNs('create-filter');
    const dir = (await files(env, {
      [`filter-${ns}/1.yaml`]: podYaml('selector-test-pod', { name: 'selector-test-pod', 'unique-label': 'bingbang' }),
      [`filter-${ns}/2.yaml`]: podYaml('selector-test-pod-dont-apply', { name: 'selector-test-pod-dont-apply', 'unique-label': 'biz' }),
    })).replace(/\/1\.yaml$/, '');
    expect(await env.ok('create', '-n', ns, '-l', 'unique-label=bingbang', '-f', dir)).toContain('created');
    expect(await env.ok('get', '-n', ns, 'pods', 'selector-test-pod', '-o', 'jsonpath={.metadata.labels.name}')).toBe('selector-test-pod');
    expect(await env.fails('get', '-n', ns, 'pods', 'selector-test-pod-dont-apply')).toContain('pods "selector-test-pod-dont-apply" not found');
    expect(await env.ok('delete', '-n', ns, 'pods', 'selector-test-pod')).toContain('pod "selector-test-pod" deleted');
  });

  it('errors: nothing to create; a pod posted to the namespaces collection', async () => {
    const [none, raw] = await Promise.all([env.fails('create'), env.fails('create', '--raw', '/api/v1/namespaces', '-f', pod)]);
    expect(none).toContain('must specify');
    expect(raw).toContain('the object provided is unrecognized (must be of type Namespace)');
  });

  it('create job: an image, a command, from a CronJob', async () => {
    const ns = await env.newNs('create-job');
    const [j1, j2, cj] = await Promise.all([
      env.ok('create', '-n', ns, 'job', 'test-job', '--image=registry.k8s.io/nginx:test-cmd'),
      env.ok('create', '-n', ns, 'job', 'test-job-pi', '--image=registry.k8s.io/perl', '--', 'perl', '-Mbignum=bpi', '-wle', 'print bpi(20)'),
      env.ok('create', '-n', ns, 'cronjob', 'test-pi', '--schedule=* */5 * * *', '--image=registry.k8s.io/perl', '--', 'perl', '-Mbignum=bpi', '-wle', 'print bpi(10)'),
    ]);
    expect(j1).toContain('job.batch/test-job created');
    expect(j2).toContain('job.batch/test-job-pi created');
    expect(cj).toContain('cronjob.batch/test-pi created');
    expect(await env.ok('create', '-n', ns, 'job', 'my-pi', '--from=cronjob/test-pi')).toContain('job.batch/my-pi created');
    const jobs = JSON.parse(await env.ok('get', '-n', ns, 'jobs', '-o', 'json')) as { items: { metadata: { name: string }; spec: { template: { spec: { containers: { image: string; command?: string[] }[] } } } }[] };
    const byName = Object.fromEntries(jobs.items.map((j) => [j.metadata.name, j.spec.template.spec.containers[0]!]));
    expect(byName['test-job']!.image).toBe('registry.k8s.io/nginx:test-cmd');
    expect(byName['test-job-pi']!.image).toBe('registry.k8s.io/perl');
    expect(byName['my-pi']!.command?.join(' ')).toBe('perl -Mbignum=bpi -wle print bpi(10)');
  });

  it('create -k makes every object of the kustomization', async () => {
    const ns = await env.newNs('create-k');
    const kdir = (await files(env, {
      [`kustomize-${ns}/kustomization.yaml`]: `namePrefix: test-the-\nnamespace: ${ns}\nresources:\n- cm.yaml\n- svc.yaml\n`,
      [`kustomize-${ns}/cm.yaml`]: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: map\ndata:\n  a: b\n',
      [`kustomize-${ns}/svc.yaml`]: 'apiVersion: v1\nkind: Service\nmetadata:\n  name: service\nspec:\n  ports:\n  - port: 80\n',
    })).replace(/\/kustomization\.yaml$/, '');
    expect(await env.ok('create', '-k', kdir)).toContain('created');
    expect(await env.ok('get', '-n', ns, 'configmap/test-the-map', 'service/test-the-service', '-o', 'name')).toBe('configmap/test-the-map\nservice/test-the-service\n');
    expect(await env.ok('delete', '-k', kdir)).toContain('deleted');
  });

  it('--validate: strict (the default, true) refuses an unknown field; warn, ignore and false create', async () => {
    const ns = await env.newNs('create-validate');
    const f = await files(env, {
      'invalid-deployment.yaml': deploymentYaml('invalid-nginx-deployment', 'nginx', { container: '        baz: foo\n' }),
    });
    const refused = await Promise.all([[], ['--validate'], ['--validate=true'], ['--validate=strict']].map((v) => env.fails('create', '-n', ns, '-f', f, ...v)));
    for (const o of refused) expect(o).toContain('strict decoding error: unknown field "spec.template.spec.containers[0].baz"');
    for (const v of ['--validate=warn', '--validate=ignore', '--validate=false']) {
      const r = await env.run('create', '-n', ns, '-f', f, v);
      expect(r.code, `${v}: ${r.stderr}`).toBe(0);
      expect(r.stdout).toContain('deployment.apps/invalid-nginx-deployment created');
      if (v === '--validate=warn') expect(r.stderr).toContain('unknown field "spec.template.spec.containers[0].baz"');
      await env.ok('delete', '-n', ns, 'deployment', 'invalid-nginx-deployment');
    }
    expect(await env.fails('create', '-n', ns, '-f', f, '--validate=foo')).toContain('invalid - validate option "foo"');
  });
});

describe.concurrent('kubectl delete', () => {
  it('--all-namespaces with a label selector: client and server dry runs keep, then deletes', async () => {
    const [n1, n2] = await Promise.all([env.newNs('delete-ns'), env.newNs('delete-ns')]);
    await Promise.all([env.ok('create', 'configmap', 'one', '-n', n1), env.ok('create', 'configmap', 'two', '-n', n2)]);
    const labeled = await Promise.all([env.ok('label', 'configmap', 'one', '-n', n1, 'deletetest=true'), env.ok('label', 'configmap', 'two', '-n', n2, 'deletetest=true')]);
    expect(labeled).toEqual(['configmap/one labeled\n', 'configmap/two labeled\n']);
    const left = async () =>
      (await Promise.all([n1, n2].map((n) => env.ok('get', 'configmap', '-l', 'deletetest', '-n', n, '-o', 'json')))).map(names).join('');
    expect(await env.ok('delete', 'configmap', '--dry-run=client', '-l', 'deletetest=true', '--all-namespaces')).toContain('(dry run)');
    expect(await left()).toBe('one:two:');
    const server = await env.ok('delete', 'configmap', '--dry-run=server', '-l', 'deletetest=true', '--all-namespaces');
    expect(server).toContain('configmap "one" deleted (server dry run)');
    expect(server).toContain('configmap "two" deleted (server dry run)');
    expect(await left()).toBe('one:two:');
    const real = await env.ok('delete', 'configmap', '-l', 'deletetest=true', '--all-namespaces');
    expect(real).toContain('configmap "one" deleted');
    expect(real).toContain('configmap "two" deleted');
    expect(await left()).toBe('');
  });

  it('--wait and --force --wait delete by selector', async () => {
    const ns = await env.newNs('delete-wait');
    await Promise.all([env.ok('create', 'configmap', 'cm-three', '-n', ns), env.ok('create', 'configmap', 'cm-four', '-n', ns)]);
    await Promise.all([env.ok('label', 'configmap', 'cm-three', '-n', ns, 'deletetest2=true'), env.ok('label', 'configmap', 'cm-four', '-n', ns, 'deletetest3=true')]);
    expect(await env.ok('delete', 'configmap', '-l', 'deletetest2=true', '-n', ns, '--wait')).toContain('configmap "cm-three" deleted');
    const forced = await env.run('delete', 'configmap', '-l', 'deletetest3=true', '-n', ns, '--force', '--wait');
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain('configmap "cm-four" force deleted');
    expect(names(await env.ok('get', 'configmap', '-n', ns, '-l', 'deletetest2 in (true),deletetest3 in (true)', '-o', 'json'))).toBe('');
    expect(await env.ok('get', 'configmap', '-n', ns, '-o', 'name')).not.toMatch(/cm-(three|four)/);
  });
});
