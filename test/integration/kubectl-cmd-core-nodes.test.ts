// kubectl's command tests of nodes and of --save-config (kubernetes/kubernetes
// test/cmd/node-management.sh run_cluster_management_tests, core.sh
// run_nodes_tests, save-config.sh run_save_config_tests), run with the real
// kubectl 1.32 against orch set up as test-cmd sets up kube: a bare Node
// `127.0.0.1` (no agent, so it never reports Ready) and pods bound to it.
//
// Ported: taint add/remove (`k=v:effect`, `k:effect`, `k-`) with
// --dry-run=client/server and the kubectl-taint manager; cordon and uncordon
// (dry-run, `already uncordoned`, --selector); drain with --dry-run, with
// --pod-selector (only the selected pod is evicted and gets a
// deletionTimestamp), with --chunk-size (limit and continue on the node and pod
// lists); patch of spec.unschedulable to true and back with null; describe of
// a node and its chunked pod and event lists; a TokenReview create; and
// --save-config on create, edit, replace, run, expose and autoscale.
// Differences from the shell test: drain passes --grace-period=1, because
// --skip-wait-for-delete-timeout counts from the deletionTimestamp, which is
// the eviction time plus the grace period (30 s by default), as in kube;
// `kubectl run --generator=run/v1` is gone from kubectl 1.32, so `run` makes a
// pod; HPAs are read through autoscaling/v2, the preferred version in 1.32.
// Skipped (client side only): `cordon` without arguments, `cordon --selector=`,
// `drain` with both a node and --selector.

import { describe, expect, it } from 'vitest';
import { type Obj, cmdEnv, sedEditor } from '../helpers/kubectl-cmd.js';

const env = cmdEnv();
const { ok, run, json, names, file, newNs, withEditor } = env;
const NODE = '127.0.0.1';
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

const testPod = (name: string, labels: Record<string, string>): Obj => ({
  kind: 'Pod',
  apiVersion: 'v1',
  metadata: { name, labels: { ...labels, type: 'test-pod' } },
  spec: { nodeName: NODE, containers: [{ name: 'container-1', resources: {}, image: 'test-image' }] },
});

describe('cluster management (node-management.sh) and nodes (core.sh)', () => {
  let ns: string;
  const dedicated = async (): Promise<string> =>
    ok('get', 'nodes', NODE, '-o', 'go-template={{range .spec.taints}}{{if eq .key "dedicated"}}{{.key}}={{.value}}:{{.effect}}{{end}}{{end}}');
  const unschedulable = async (): Promise<string> => ok('get', 'nodes', NODE, '-o', 'go-template={{.spec.unschedulable}}');
  const createTestPods = async (): Promise<void> => {
    await Promise.all([ok('create', '-n', ns, '-f', await file('p1.json', testPod('test-pod-1', { e: 'f' }))), ok('create', '-n', ns, '-f', await file('p2.json', testPod('test-pod-2', { c: 'd' })))]);
  };

  it('taints and untaints the node, with and without --dry-run', async () => {
    await ok('create', '-f', await file('node.json', { kind: 'Node', apiVersion: 'v1', metadata: { name: NODE }, status: { capacity: { memory: '1Gi' } } }));
    ns = await newNs('cluster-management');
    await createTestPods();
    expect(await dedicated()).toBe('');
    for (const dry of ['client', 'server']) await ok('taint', 'node', NODE, `--dry-run=${dry}`, 'dedicated=foo:PreferNoSchedule');
    expect(await dedicated()).toBe('');
    await ok('taint', 'node', NODE, 'dedicated=foo:PreferNoSchedule');
    expect(await dedicated()).toBe('dedicated=foo:PreferNoSchedule');
    await ok('taint', 'node', NODE, 'dedicated-');
    await ok('taint', 'node', NODE, 'dedicated:PreferNoSchedule');
    expect(await dedicated()).toBe('dedicated=<no value>:PreferNoSchedule');
    expect(await ok('get', 'node', NODE, '--show-managed-fields', '-o=jsonpath={.metadata.managedFields[*].manager}')).toContain('kubectl-taint');
    for (const dry of ['client', 'server']) await ok('taint', 'node', NODE, `--dry-run=${dry}`, 'dedicated-');
    expect(await dedicated()).toBe('dedicated=<no value>:PreferNoSchedule');
    await ok('taint', 'node', NODE, 'dedicated-');
    expect(await dedicated()).toBe('');
  });

  it('cordon and drain with --dry-run leave the node schedulable and the pods alone', async () => {
    expect(await unschedulable()).toBe('<no value>');
    for (const dry of ['client', 'server']) await ok('cordon', NODE, `--dry-run=${dry}`);
    expect(await unschedulable()).toBe('<no value>');
    const drained = await ok('drain', NODE, '--dry-run=server', '--force');
    expect(drained).toContain(`evicting pod ${ns}/test-pod-1 (server dry run)`);
    await ok('drain', NODE, '--dry-run=client', '--force');
    expect(await names('nodes')).toEqual([NODE]);
    expect(await unschedulable()).toBe('<no value>');
    for (const dry of ['client', 'server']) await ok('drain', NODE, '--pod-selector', 'e in (f)', `--dry-run=${dry}`, '--force');
    expect(await names('pods', '-n', ns)).toEqual(['test-pod-1', 'test-pod-2']);
    const pods = (await json('pods', '-n', ns)).items as Obj[];
    expect(pods.map((p) => p.metadata.deletionTimestamp)).toEqual([undefined, undefined]);
  });

  it('drain --pod-selector evicts only the selected pod', async () => {
    const out = await ok('drain', NODE, '--force', '--pod-selector', 'e in (f)', '--grace-period=1', '--skip-wait-for-delete-timeout=1');
    expect(out).toMatch(new RegExp(`evicting pod ${ns}/test-pod-1`));
    const pods = (await json('pods', '-n', ns)).items as Obj[];
    expect(pods.map((p) => [p.metadata.name, p.metadata.deletionTimestamp !== undefined])).toEqual([
      ['test-pod-1', true],
      ['test-pod-2', false],
    ]);
    // the pods stay until a kubelet confirms; force them out and make them again
    await Promise.all(['test-pod-1', 'test-pod-2'].map((p) => ok('delete', '-n', ns, `pod/${p}`, '--force', '--grace-period=0', '--ignore-not-found')));
    await createTestPods();
    expect(await ok('uncordon', NODE)).toContain(`node/${NODE} uncordoned`);
    expect(await unschedulable()).toBe('<no value>');
    for (const dry of ['client', 'server']) expect(await ok('uncordon', NODE, `--dry-run=${dry}`)).toContain('already uncordoned');
    expect(await unschedulable()).toBe('<no value>');
  });

  it('drain lists nodes and pods in chunks (limit, then continue)', async () => {
    await ok('label', 'node', NODE, 'test=label');
    const chunked = await run('-n', ns, '--v=6', 'drain', '--force', '--pod-selector', 'type=test-pod', '--selector', 'test=label', '--chunk-size=1', '--dry-run=client');
    expect(chunked.code, chunked.stderr).toBe(0);
    expect(chunked.stderr).toMatch(/GET https:\/\/\S+\/api\/v1\/nodes\?labelSelector=test%3Dlabel&limit=1 200 OK/);
    expect(chunked.stderr).toMatch(/GET https:\/\/\S+\/api\/v1\/pods\?fieldSelector=spec\.nodeName%3D127\.0\.0\.1&labelSelector=type%3Dtest-pod&limit=1 200 OK/);
    expect(chunked.stderr).toMatch(/GET https:\/\/\S+\/api\/v1\/pods\?continue=\S+&fieldSelector=spec\.nodeName%3D127\.0\.0\.1&labelSelector=type%3Dtest-pod&limit=1 200 OK/);
    expect(chunked.stdout).toContain(`evicting pod ${ns}/test-pod-1`);
    expect(chunked.stdout).toContain(`evicting pod ${ns}/test-pod-2`);
    const dflt = await run('--v=6', 'drain', '--force', '--selector', 'test=label', '--dry-run=client');
    expect(dflt.stderr).toMatch(/\/api\/v1\/nodes\?labelSelector=test%3Dlabel&limit=500 200 OK/);
    expect(dflt.stderr).toMatch(/\/api\/v1\/pods\?fieldSelector=spec\.nodeName%3D127\.0\.0\.1&limit=500 200 OK/);
  });

  it('cordon --selector cordons the nodes it selects only', async () => {
    expect(await ok('cordon', '--selector', 'test=label')).toContain(`node/${NODE} cordoned`);
    expect(await ok('cordon', '--selector', 'invalid=label')).not.toContain('cordoned');
    expect(await unschedulable()).toBe('true');
    await ok('uncordon', NODE);
  });

  it('describes the node with its pods and events in chunks; patch marks it unschedulable and back', async () => {
    const [one, all, noEvents] = await Promise.all([ok('describe', 'nodes', NODE), ok('describe', 'nodes'), ok('describe', 'nodes', NODE, '--show-events=false')]);
    // no `Conditions:` yet: the node lifecycle controller marks a node that never reported Unknown only after
    // the startup grace period (kube's --node-startup-grace-period, 1 min), which kube's suite has spent by then
    for (const out of [one, all]) for (const s of ['Name:', 'Labels:', 'CreationTimestamp:', 'Addresses:', 'Capacity:', 'Pods:', 'Events:']) expect(out).toContain(s);
    expect(noEvents).not.toContain('Events:');
    // a node that never reported: kube's printer shows what it lacks as <unknown>
    expect(await ok('get', 'nodes', NODE, '-o', 'wide')).toMatch(/^127\.0\.0\.1\s+(Unknown|NotReady)\s+<none>\s+\S+\s+<none>\s+<none>\s+<unknown>\s+<unknown>\s+<unknown>\n/m);
    const chunked = await run('describe', 'nodes', '--show-events=true', '--chunk-size=10', '-v=6');
    expect(chunked.stderr).toMatch(/\/api\/v1\/nodes\?limit=10 /);
    expect(chunked.stderr).toMatch(/\/api\/v1\/pods\?.*limit=10 /);
    expect(chunked.stderr).toMatch(/\/api\/v1\/events\?.*limit=10 /);

    await ok('patch', 'nodes', NODE, '-p={"spec":{"unschedulable":true}}');
    expect(await unschedulable()).toBe('true');
    await ok('patch', 'nodes', NODE, '-p={"spec":{"unschedulable":null}}');
    expect(await unschedulable()).toBe('<no value>');

    const review = { kind: 'TokenReview', apiVersion: 'authentication.k8s.io/v1', spec: { token: 'test-token', audiences: ['https://kubernetes.default.svc'] } };
    expect(await ok('create', '-f', await file('tokenreview.json', review), '--validate=false')).toContain('tokenreview.authentication.k8s.io/<unknown> created');
  });
});

describe.concurrent('--save-config (save-config.sh)', () => {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'test-pod', labels: { name: 'test-pod-label' } }, spec: { containers: [{ name: 'kubernetes-pause', image: 'registry.k8s.io/pause:3.10' }] } };
  const lastApplied = async (...what: string[]): Promise<string | undefined> => (await json(...what)).metadata.annotations?.[LAST_APPLIED];

  it('create, edit and replace --save-config record the configuration', async () => {
    const ns = await newNs('save-config');
    const f = await file('pod.json', pod);
    await ok('create', '-n', ns, '-f', f, '--save-config');
    expect(await lastApplied('pod', 'test-pod', '-n', ns)).toContain('test-pod-label');
    await ok('delete', '-n', ns, '-f', f, '--grace-period=0', '--force');

    await ok('create', '-n', ns, '-f', f);
    expect(await lastApplied('pod', 'test-pod', '-n', ns)).toBeUndefined();
    const edited = await withEditor(await sedEditor(env, 'test-pod-label', 'test-pod-label-edited'), 'edit', '-n', ns, 'pod', 'test-pod', '--save-config');
    expect(edited.code, edited.stderr).toBe(0);
    expect(await lastApplied('pod', 'test-pod', '-n', ns)).toContain('test-pod-label-edited');
    await ok('delete', '-n', ns, '-f', f, '--grace-period=0', '--force');

    // the manifest lacks the defaults admission gave the pod (DefaultTolerationSeconds' tolerations): kube adds them again on update
    await ok('create', '-n', ns, '-f', f);
    expect(await lastApplied('pod', 'test-pod', '-n', ns)).toBeUndefined();
    await ok('replace', '-n', ns, '-f', f, '--save-config');
    const replaced = await json('pod', 'test-pod', '-n', ns);
    expect(replaced.metadata.annotations[LAST_APPLIED]).toContain('test-pod-label');
    expect((replaced.spec.tolerations as Obj[]).map((t) => t.key)).toEqual(['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']);
    // …and an update may add tolerations, never drop one
    const dropped = await run('replace', '-n', ns, '-f', await file('tolerating.json', { ...pod, spec: { ...pod.spec, tolerations: [{ key: 'a', operator: 'Exists', effect: 'NoExecute' }] } }));
    expect(dropped.code, dropped.stderr).toBe(0);
    const other = await run('replace', '-n', ns, '-f', await file('other.json', { ...pod, spec: { ...pod.spec, tolerations: [{ key: 'b', operator: 'Exists', effect: 'NoExecute' }] } }));
    expect(other.code).not.toBe(0);
    expect(other.stderr).toContain('The Pod "test-pod" is invalid: spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds');
  });

  it('run, expose and autoscale --save-config record the configuration', async () => {
    const ns = await newNs('save-config-gen');
    await ok('run', '-n', ns, 'nginx', '--image=registry.k8s.io/nginx:1.7.9', '--save-config');
    expect(await lastApplied('pod', 'nginx', '-n', ns)).toContain('"kind":"Pod"');
    await ok('expose', '-n', ns, 'pod', 'nginx', '--save-config', '--port=80', '--target-port=8000');
    expect(await lastApplied('svc', 'nginx', '-n', ns)).toContain('"targetPort":8000');

    const rc = {
      apiVersion: 'v1',
      kind: 'ReplicationController',
      metadata: { name: 'frontend' },
      spec: { replicas: 1, selector: { app: 'guestbook' }, template: { metadata: { labels: { app: 'guestbook' } }, spec: { containers: [{ name: 'php-redis', image: 'gb-frontend:v4' }] } } },
    };
    const f = await file('rc.json', rc);
    await ok('create', '-n', ns, '-f', f);
    expect(await lastApplied('rc', 'frontend', '-n', ns)).toBeUndefined();
    await ok('autoscale', '-n', ns, '-f', f, '--save-config', '--max=2');
    expect(await lastApplied('hpa', 'frontend', '-n', ns)).toContain('"maxReplicas":2');
    const versions = await Promise.all(['hpa', 'hpa.autoscaling', 'hpa.autoscal'].map((r) => ok('get', '-n', ns, r, '-o=jsonpath={.items[0].apiVersion}')));
    expect(versions).toEqual(['autoscaling/v2', 'autoscaling/v2', 'autoscaling/v2']);
  });
});
