// Port of kube's kubectl command tests for workloads (kubernetes/kubernetes test/cmd/apps.sh), run with
// the real kubectl 1.32 against orch with kube's group names and no node agent (as test/cmd runs
// kube-apiserver and kube-controller-manager without a kubelet). Ported, each in its own namespace:
//   run_daemonset_tests, run_daemonset_history_tests — generation after apply / set image|env|resources /
//     rollout restart, the kubectl-set manager, ControllerRevision change-causes, rollout undo (dry-run,
//     --to-revision, an unknown revision);
//   run_kubectl_apply_deployments_tests — null propagation of removed labels, a conflicting
//     resourceVersion (409), apply --force;
//   run_deployment_tests — create deployment defaults (revisionHistoryLimit 10, apps/v1), dry-runs,
//     cascading and orphaning deletion, autoscale, rollback / pause / resume / restart and the
//     revision-history annotation, rollout status of a superseded revision, set image (also --all, -f,
//     --local, `*`), set env (from a ConfigMap / Secret, --keys, removal);
//   run_stateful_set_tests, run_statefulset_history_tests — scale with --current-replicas,
//     observedGeneration, rollout restart, rollout undo;
//   run_rs_tests — deletion with and without orphaning, describe (events shown or not), scale (also
//     --all and -l over Deployments), expose, set image/env/resources/serviceaccount generations and
//     dry-runs, autoscale (from a file, by name, without --max).
// Skipped: `apply view-last-applied` and `set image --local` only read files on the client; the
// "conflicting and invalid" apply --force case needs five consecutive conflicts, which kube's test
// provokes with a stale resourceVersion in the file — kept in its plain form (the 409) only.

import { describe, expect, it } from 'vitest';
import { type Obj, cmdEnv } from '../helpers/kubectl-cmd.js';

const env = cmdEnv();
const { ok, fails, json, file, describeChunks, until, api } = env;
/** kube's `{{range.items}}{{.metadata.name}}:{{end}}` */
const names = async (...args: string[]): Promise<string> => (await env.names(...args)).map((x) => `${x}:`).join('');
const namespace = env.newNs;

const PAUSE = 'registry.k8s.io/pause:2.0';
const PAUSE_LATEST = 'registry.k8s.io/pause:latest';
const NGINX_R1 = 'registry.k8s.io/nginx:test-cmd';
const NGINX_R2 = 'registry.k8s.io/nginx:1.7.9';
const PERL = 'registry.k8s.io/perl';

const images = (o: Obj): string => (o.spec.template.spec.containers as Obj[]).map((c) => c.image).join(',');
/** `rollout history`'s rows: revision and the first word pair of the change-cause */
const historyRows = (out: string): string[] =>
  out.split('\n').filter((l) => /^\d+\s/.test(l)).map((l) => l.replace(/^(\d+)\s+(\S+(?: \S+)?).*$/, '$1 $2'));
const managers = (o: Obj): string[] => ((o.metadata.managedFields ?? []) as Obj[]).map((m) => m.manager as string);

function daemonSet(containers: [string, string][]): Obj {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'bind' },
    spec: {
      selector: { matchLabels: { service: 'bind' } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '10%' } },
      template: {
        metadata: { labels: { service: 'bind' } },
        spec: { containers: containers.map(([name, image]) => ({ name, image })) },
      },
    },
  };
}

function statefulSet(containers: [string, string][]): Obj {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'nginx' },
    spec: {
      serviceName: 'nginx',
      replicas: 0,
      selector: { matchLabels: { app: 'nginx-statefulset' } },
      updateStrategy: { type: 'RollingUpdate' },
      template: {
        metadata: { labels: { app: 'nginx-statefulset' } },
        spec: { terminationGracePeriodSeconds: 5, containers: containers.map(([name, image]) => ({ name, image })) },
      },
    },
  };
}

function deployment(name: string, containers: [string, string][], extra: Obj = {}): Obj {
  const labels = { name: 'nginx-undo' };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: containers.map(([n, image]) => ({ name: n, image })) } },
      ...extra,
    },
  };
}

function frontend(): Obj {
  const labels = { app: 'guestbook', tier: 'frontend' };
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: 'frontend' },
    spec: {
      replicas: 3,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: 'php-redis', image: 'gcr.io/google_samples/gb-frontend:v3' }] } },
    },
  };
}

/**
 * run_daemonset_history_tests and run_statefulset_history_tests, which differ only in the kind: ControllerRevisions
 * carry the change-cause of `apply --record`, `rollout history` lists them (and one in detail), `rollout undo`
 * (dry-run, --to-revision, an unknown revision, the previous one) and the revision rolled back to numbered again
 */
async function rolloutHistory(k: { short: string; resource: string; name: string; v1: Obj; v2: Obj }): Promise<void> {
  const n = await namespace(`${k.short}-history`);
  const [f1, f2] = [await file(`${k.short}-rv1.json`, k.v1), await file(`${k.short}-rv2.json`, k.v2)];
  const [images1, images2] = [images(k.v1), images(k.v2)];
  const image = async (): Promise<string> => images(await json('-n', n, k.resource, k.name));
  const causes = async (): Promise<string> =>
    ((await json('-n', n, 'controllerrevisions')).items as Obj[]).map((r) => r.metadata.annotations?.['kubernetes.io/change-cause'] ?? '').join(':');
  const revisions = (want: string): Promise<unknown> =>
    until(async () => historyRows(await ok('-n', n, 'rollout', 'history', k.resource)).join() === want, `revisions ${want}`);
  const qualified = `${k.resource}.apps/${k.name}`;

  await ok('-n', n, 'apply', '-f', f1, '--record');
  await until(async () => (await causes()).includes(`${k.short}-rv1.json --record`), 'the first revision');
  await ok('-n', n, 'rollout', 'undo', k.resource, '--to-revision=1');
  expect(await image()).toBe(images1);
  await ok('-n', n, 'apply', '-f', f2, '--record');
  expect(await image()).toBe(images2);
  await until(async () => (await causes()).includes(`${k.short}-rv2.json --record`), 'the second revision');
  const [history, rev1, rev2] = await Promise.all([
    ok('-n', n, 'rollout', 'history', k.resource),
    ok('-n', n, 'rollout', 'history', k.resource, '--revision=1'),
    ok('-n', n, 'rollout', 'history', k.resource, '--revision=2'),
  ]);
  expect(history).toContain(`${qualified} \nREVISION  CHANGE-CAUSE\n`);
  expect(historyRows(history)).toEqual(['1 kubectl apply', '2 kubectl apply']);
  expect(rev1).toContain(`${qualified} with revision #1\nPod Template:`);
  for (const i of images1.split(',')) expect(rev1).toContain(i);
  expect(rev2).toContain(`${qualified} with revision #2`);
  for (const i of images2.split(',')) expect(rev2).toContain(i);
  for (const dry of ['--dry-run=client', '--dry-run=server']) await ok('-n', n, 'rollout', 'undo', k.resource, dry);
  expect(await image()).toBe(images2);
  await ok('-n', n, 'rollout', 'undo', k.resource, '--to-revision=1');
  expect(await image()).toBe(images1);
  await revisions('2 kubectl apply,3 kubectl apply');
  expect(await fails('-n', n, 'rollout', 'undo', k.resource, '--to-revision=1000000')).toContain('unable to find specified revision');
  expect(await image()).toBe(images1);
  await ok('-n', n, 'rollout', 'undo', k.resource);
  expect(await image()).toBe(images2);
  await revisions('3 kubectl apply,4 kubectl apply');
  await ok('-n', n, 'delete', '-f', f2);
}

describe.concurrent('kubectl apps (test/cmd/apps.sh)', () => {
  it('run_daemonset_tests: generation follows each template change', async () => {
    const n = await namespace('ds');
    const f = await file('ds.json', daemonSet([['bind', PAUSE]]));
    await ok('-n', n, 'apply', '-f', f);
    expect((await json('-n', n, 'ds', 'bind')).metadata.generation).toBe(1);
    await ok('-n', n, 'apply', '-f', f);
    expect((await json('-n', n, 'ds', 'bind')).metadata.generation).toBe(1);
    await ok('-n', n, 'set', 'image', 'daemonsets/bind', '*=registry.k8s.io/pause:test-cmd');
    expect((await json('-n', n, 'ds', 'bind')).metadata.generation).toBe(2);
    await ok('-n', n, 'set', 'env', 'daemonsets/bind', 'foo=bar');
    expect((await json('-n', n, 'ds', 'bind')).metadata.generation).toBe(3);
    await ok('-n', n, 'set', 'resources', 'daemonsets/bind', '--limits=cpu=200m,memory=512Mi');
    const ds = await json('-n', n, 'ds', 'bind', '--show-managed-fields');
    expect(ds.metadata.generation).toBe(4);
    expect(managers(ds)).toContain('kubectl-set');
    await describeChunks(['-n', n], 'daemonsets', ['pods', 'events']);
    await ok('-n', n, 'rollout', 'restart', 'daemonset/bind');
    expect((await json('-n', n, 'ds', 'bind')).metadata.generation).toBe(5);
    await ok('-n', n, 'delete', '-f', f);
  });

  it('run_daemonset_history_tests: change-causes on revisions, rollout history, rollout undo', () =>
    rolloutHistory({ short: 'ds', resource: 'daemonset', name: 'bind', v1: daemonSet([['bind', PAUSE]]), v2: daemonSet([['bind', PAUSE_LATEST], ['app', NGINX_R1]]) }));

  it('run_kubectl_apply_deployments_tests: null propagation, a conflicting resourceVersion, --force', async () => {
    const n = await namespace('apply-deploy');
    const l1 = deployment('my-depl', [['nginx', NGINX_R1]]);
    l1.metadata.labels = { l1: 'l1' };
    l1.spec.selector.matchLabels = { l1: 'l1' };
    l1.spec.template.metadata.labels = { l1: 'l1' };
    await ok('-n', n, 'apply', '-f', await file('l1.json', l1));
    let d = await json('-n', n, 'deploy', 'my-depl');
    expect([d.spec.template.metadata.labels.l1, d.spec.selector.matchLabels.l1, d.metadata.labels.l1]).toEqual(['l1', 'l1', 'l1']);
    const l2 = structuredClone(l1);
    delete l2.metadata.labels;
    l2.spec.template.metadata.labels = { l1: 'l1', l2: 'l2' };
    await ok('-n', n, 'apply', '-f', await file('l2.json', l2));
    d = await json('-n', n, 'deploy', 'my-depl');
    expect([d.spec.template.metadata.labels.l1, d.spec.selector.matchLabels.l1, d.metadata.labels?.l1]).toEqual(['l1', 'l1', undefined]);
    await ok('-n', n, 'delete', 'deployments,rs,pods', '--all', '--cascade=orphan', '--grace-period=0');
    await until(async () => (await names('-n', n, 'deployments,rs')) === '', 'nothing left');

    const one = deployment('nginx', [['nginx', NGINX_R1]]);
    one.metadata.labels = { name: 'nginx' };
    await ok('-n', n, 'apply', '-f', await file('change1.json', one));
    const two = structuredClone(one);
    two.metadata.labels = { name: 'nginx2' };
    two.metadata.resourceVersion = '99';
    const f2 = await file('change2.json', two);
    expect(await fails('-n', n, 'apply', '-f', f2)).toContain('Error from server (Conflict)');
    await ok('-n', n, 'apply', '-f', f2, '--overwrite=true', '--force=true', '--grace-period=10');
    expect((await json('-n', n, 'deploy', 'nginx')).metadata.labels).toEqual({ name: 'nginx2' });
  });

  it('run_deployment_tests: create deployment defaults, dry-runs, describe', async () => {
    const n = await namespace('deploy');
    await ok('-n', n, 'create', 'deployment', 'test-nginx-apps', `--image=${NGINX_R1}`);
    const d = await json('-n', n, 'deployment.apps/test-nginx-apps');
    expect(d.spec.template.spec.containers[0].name).toBe('nginx');
    expect(d.spec.revisionHistoryLimit).toBe(10);
    expect((await json('-n', n, 'deployment.apps')).items[0].apiVersion).toBe('apps/v1');
    await until(async () => (await names('-n', n, 'pods')) !== '', 'the deployment’s pod');
    const rs = await ok('-n', n, 'describe', 'rs');
    for (const s of ['Name:', 'Pod Template:', 'Labels:', 'Selector:', 'Controlled By', 'Replicas:', 'Pods Status:', 'Volumes:']) expect(rs).toContain(s);
    const pods = await ok('-n', n, 'describe', 'pods');
    for (const s of ['Name:', 'Image:', 'Node:', 'Labels:', 'Status:', 'Controlled By']) expect(pods).toContain(s);
    await describeChunks(['-n', n], 'deployments', ['replicasets', 'events']);
    await ok('-n', n, 'delete', 'deployment', 'test-nginx-apps');

    for (const dry of ['--dry-run=client', '--dry-run=server'])
      await ok('-n', n, 'create', 'deployment', 'nginx-with-command', dry, `--image=${NGINX_R1}`, '--', '/bin/sleep', 'infinity');
    expect(await names('-n', n, 'deployment')).toBe('');
    await ok('-n', n, 'create', 'deployment', 'nginx-with-command', `--image=${NGINX_R1}`, '--', '/bin/sleep', 'infinity');
    expect((await json('-n', n, 'deploy', 'nginx-with-command')).spec.template.spec.containers[0]).toMatchObject({ name: 'nginx', command: ['/bin/sleep', 'infinity'] });

    // deployment-with-UnixUserID: a user id as large as a Unix one validates
    const uid = deployment('deployment-with-unixuserid', [['nginx', NGINX_R1]]);
    uid.spec.template.spec.securityContext = { runAsUser: 65534, fsGroup: 65534 };
    await ok('-n', n, 'create', '-f', await file('uid.json', uid));
    expect(await names('-n', n, 'deployment')).toBe('deployment-with-unixuserid:nginx-with-command:');
  });

  it('run_deployment_tests: cascading and orphaning deletion, autoscale', async () => {
    const n = await namespace('deploy-gc');
    const three = deployment('nginx-deployment', [['nginx', NGINX_R1]], { replicas: 3 });
    three.spec.replicas = 3;
    await ok('-n', n, 'create', '-f', await file('three.json', three));
    await until(async () => ((await api(`/apis/apps/v1/namespaces/${n}/replicasets`))!.items as Obj[])[0]?.spec.replicas === 3, 'a ReplicaSet of 3');
    await ok('-n', n, 'delete', 'deployment', 'nginx-deployment', '--cascade');
    await until(async () => ((await api(`/apis/apps/v1/namespaces/${n}/replicasets`))!.items as Obj[]).length === 0, 'the ReplicaSet deleted with its Deployment');
    expect(await names('-n', n, 'rs')).toBe('');

    await ok('-n', n, 'create', 'deployment', 'nginx-deployment', `--image=${NGINX_R1}`);
    await until(async () => ((await api(`/apis/apps/v1/namespaces/${n}/replicasets`))!.items as Obj[])[0]?.spec.replicas === 1, 'a ReplicaSet of 1');
    await ok('-n', n, 'delete', 'deployment', 'nginx-deployment', '--cascade=orphan');
    await until(async () => (await names('-n', n, 'deployment')) === '', 'the Deployment gone');
    const orphans = (await json('-n', n, 'rs')).items as Obj[];
    expect(orphans.map((r) => r.spec.replicas)).toEqual([1]);
    await ok('-n', n, 'delete', 'rs', orphans[0]!.metadata.name);

    await ok('-n', n, 'create', '-f', await file('three-again.json', three));
    for (const dry of ['--dry-run=client', '--dry-run=server']) await ok('-n', n, 'autoscale', 'deployment', 'nginx-deployment', dry, '--min=2', '--max=3');
    expect(await names('-n', n, 'hpa')).toBe('');
    await ok('-n', n, 'autoscale', 'deployment', 'nginx-deployment', '--min=2', '--max=3');
    const hpa = await json('-n', n, 'horizontalpodautoscalers.v1.autoscaling', 'nginx-deployment');
    expect([hpa.spec.minReplicas, hpa.spec.maxReplicas, hpa.spec.targetCPUUtilizationPercentage]).toEqual([2, 3, 80]);
    await describeChunks(['-n', n], 'horizontalpodautoscalers', ['events']);
    await ok('-n', n, 'delete', 'hpa', 'nginx-deployment');
    await ok('-n', n, 'delete', 'deployment.apps', 'nginx-deployment');
  });

  it('run_deployment_tests: rollback, pause, resume, restart', async () => {
    const n = await namespace('deploy-undo');
    const r1 = await file('revision1.json', deployment('nginx', [['nginx', NGINX_R1]]));
    const r2 = await file('revision2.json', deployment('nginx', [['nginx', NGINX_R2]]));
    const image = async (): Promise<string> => images(await json('-n', n, 'deploy', 'nginx'));
    /** the ReplicaSet the Deployment's describe names as NewReplicaSet */
    const newRs = async (): Promise<Obj> => {
      const name = /NewReplicaSet:\s+(\S+)/.exec(await ok('-n', n, 'describe', 'deployment', 'nginx'))?.[1];
      expect(name).toBeDefined();
      return json('-n', n, 'rs', name!);
    };
    /** the controller has made the ReplicaSet of the current template (rollout undo reads them) */
    const settled = (): Promise<Obj> =>
      until(async () => {
        const d = (await api(`/apis/apps/v1/namespaces/${n}/deployments/nginx`))!;
        return d.status.observedGeneration === d.metadata.generation && d;
      }, 'the Deployment observed');

    await ok('-n', n, 'create', '-f', r1);
    expect(await image()).toBe(NGINX_R1);
    await settled();
    await ok('-n', n, 'rollout', 'undo', 'deployment', 'nginx', '--to-revision=1');
    expect(await image()).toBe(NGINX_R1);
    await ok('-n', n, 'apply', '-f', r2);
    expect(await image()).toBe(NGINX_R2);
    await settled();
    expect(await ok('-n', n, 'rollout', 'undo', 'deployment', 'nginx', '--dry-run=client')).toContain('test-cmd');
    await ok('-n', n, 'rollout', 'undo', 'deployment', 'nginx', '--dry-run=server');
    expect(await image()).toBe(NGINX_R2);
    await ok('-n', n, 'rollout', 'undo', 'deployment', 'nginx', '--to-revision=1');
    expect(await image()).toBe(NGINX_R1);
    await settled();
    await fails('-n', n, 'rollout', 'undo', 'deployment', 'nginx', '--to-revision=1000000');
    expect(await image()).toBe(NGINX_R1);
    await ok('-n', n, 'rollout', 'undo', 'deployment', 'nginx');
    expect(await image()).toBe(NGINX_R2);
    await settled();
    await ok('-n', n, 'rollout', 'pause', 'deployment', 'nginx');
    await fails('-n', n, 'rollout', 'undo', 'deployment', 'nginx');
    await fails('-n', n, 'rollout', 'restart', 'deployment', 'nginx');
    await ok('-n', n, 'rollout', 'resume', 'deployment', 'nginx');
    await settled();
    await ok('-n', n, 'rollout', 'undo', 'deployment', 'nginx');
    await settled();
    expect((await newRs()).metadata.annotations['deployment.kubernetes.io/revision-history']).toBe('1,3');
    await fails('-n', n, 'rollout', 'status', 'deployment/nginx', '--revision=3');
    await ok('-n', n, 'rollout', 'restart', 'deployment/nginx');
    await settled();
    expect((await newRs()).metadata.annotations['deployment.kubernetes.io/revision']).toBe('6');
    expect(managers(await json('-n', n, 'deployment', 'nginx', '--show-managed-fields'))).toContain('kubectl-rollout');
    await ok('-n', n, 'create', '-f', await file('nginx2.json', deployment('nginx2', [['nginx', NGINX_R1]])));
    await ok('-n', n, 'delete', 'deployment', 'nginx2');
    await ok('-n', n, 'delete', 'deployment', 'nginx');
  });

  it('run_deployment_tests: set image', async () => {
    const n = await namespace('deploy-image');
    const f = await file('multi.json', deployment('nginx-deployment', [['nginx', NGINX_R1], ['perl', PERL]]));
    await ok('-n', n, 'create', '-f', f);
    const image = async (): Promise<string> => images(await json('-n', n, 'deploy', 'nginx-deployment'));
    for (const dry of ['--dry-run=client', '--dry-run=server']) await ok('-n', n, 'set', 'image', 'deployment', 'nginx-deployment', `nginx=${NGINX_R2}`, dry);
    expect(await image()).toBe(`${NGINX_R1},${PERL}`);
    await ok('-n', n, 'set', 'image', 'deployment', 'nginx-deployment', `nginx=${NGINX_R2}`);
    expect(await image()).toBe(`${NGINX_R2},${PERL}`);
    // the "Get rollout history" block: one revision per template, read from the ReplicaSets
    await until(async () => historyRows(await ok('-n', n, 'rollout', 'history', 'deployment', 'nginx-deployment')).join() === '1 <none>,2 <none>', 'revisions 1 and 2');
    const [rev1, rev2] = await Promise.all([1, 2].map((r) => ok('-n', n, 'rollout', 'history', 'deployment', 'nginx-deployment', `--revision=${r}`)));
    for (const s of ['deployment.apps/nginx-deployment with revision #1', 'Pod Template:', NGINX_R1, PERL]) expect(rev1).toContain(s);
    for (const s of ['deployment.apps/nginx-deployment with revision #2', 'Pod Template:', NGINX_R2, PERL]) expect(rev2).toContain(s);
    await fails('-n', n, 'set', 'image', 'deployment', 'nginx-deployment', 'redis=redis');
    await ok('-n', n, 'set', 'image', 'deployments', '--all', `nginx=${NGINX_R1}`);
    expect(await image()).toBe(`${NGINX_R1},${PERL}`);
    await ok('-n', n, 'set', 'image', '-f', f, `nginx=${NGINX_R2}`);
    expect(await image()).toBe(`${NGINX_R2},${PERL}`);
    await ok('-n', n, 'set', 'image', 'deployment', 'nginx-deployment', `*=${NGINX_R1}`);
    expect(await image()).toBe(`${NGINX_R1},${NGINX_R1}`);
    await ok('-n', n, 'set', 'image', 'deployment', 'nginx-deployment', `*=${NGINX_R1}`);
    expect(await image()).toBe(`${NGINX_R1},${NGINX_R1}`);
  });

  it('run_deployment_tests: set env from a ConfigMap and a Secret', async () => {
    const n = await namespace('deploy-env');
    await ok('-n', n, 'create', '-f', await file('multi-env.json', deployment('nginx-deployment', [['nginx', NGINX_R1], ['perl', PERL]])));
    await ok('-n', n, 'create', 'configmap', 'test-set-env-config', '--from-literal=key-1=value1', '--from-literal=key-2=value2');
    await ok('-n', n, 'create', 'secret', 'generic', 'test-set-env-secret', '--from-literal=username=admin', '--from-literal=password=secret');
    const env0 = async (): Promise<Obj[]> => ((await json('-n', n, 'deploy', 'nginx-deployment')).spec.template.spec.containers[0].env ?? []) as Obj[];
    await ok('-n', n, 'set', 'env', 'deployment', 'nginx-deployment', '--keys=key-2', '--from=configmap/test-set-env-config');
    expect((await env0()).map((e) => e.name)).toEqual(['KEY_2']);
    for (const dry of ['--dry-run=client', '--dry-run=server']) await ok('-n', n, 'set', 'env', 'deployment', 'nginx-deployment', dry, '--from=configmap/test-set-env-config');
    expect(await env0()).toHaveLength(1);
    await ok('-n', n, 'set', 'env', 'deployment', 'nginx-deployment', '--from=configmap/test-set-env-config');
    expect(await env0()).toHaveLength(2);
    await ok('-n', n, 'set', 'env', 'deployment', 'nginx-deployment', 'env=prod');
    await ok('-n', n, 'set', 'env', 'deployment', 'nginx-deployment', 'superenv=superprod', '-c=nginx');
    await ok('-n', n, 'set', 'env', 'deployment', 'nginx-deployment', '--keys=username', '--from=secret/test-set-env-secret');
    await ok('-n', n, 'set', 'env', 'deployment', 'nginx-deployment', '--from=secret/test-set-env-secret');
    expect((await env0()).map((e) => e.name).sort()).toEqual(['KEY_1', 'KEY_2', 'PASSWORD', 'USERNAME', 'env', 'superenv']);
    expect((await env0()).find((e) => e.name === 'USERNAME')).toEqual({ name: 'USERNAME', valueFrom: { secretKeyRef: { name: 'test-set-env-secret', key: 'username' } } });
    await ok('-n', n, 'set', 'env', 'deployment', 'nginx-deployment', 'env-');
    expect((await env0()).map((e) => e.name)).not.toContain('env');
  });

  it('run_stateful_set_tests: scale with --current-replicas, observedGeneration, rollout restart', async () => {
    const n = await namespace('sts');
    const f = await file('sts.json', statefulSet([['nginx', NGINX_R1]]));
    await ok('-n', n, 'create', '-f', f);
    await describeChunks(['-n', n], 'statefulsets', ['pods', 'events']);
    expect((await json('-n', n, 'statefulset', 'nginx')).spec.replicas).toBe(0);
    const observed = (g: number): Promise<unknown> =>
      until(async () => (await api(`/apis/apps/v1/namespaces/${n}/statefulsets/nginx`))!.status.observedGeneration === g, `observedGeneration ${g}`);
    await observed(1);
    await ok('-n', n, 'scale', '--current-replicas=0', '--replicas=1', 'statefulset', 'nginx');
    expect((await json('-n', n, 'statefulset', 'nginx')).spec.replicas).toBe(1);
    await observed(2);
    await until(async () => (await names('-n', n, 'pods', '-l', 'app=nginx-statefulset')) === 'nginx-0:', 'pod nginx-0');
    await ok('-n', n, 'rollout', 'restart', 'statefulset', 'nginx');
    await observed(3);
    await ok('-n', n, 'delete', '-f', f);
    await until(async () => (await names('-n', n, 'pods', '-l', 'app=nginx-statefulset')) === '', 'no pods left');
  });

  it('run_statefulset_history_tests: change-causes on revisions, rollout history, rollout undo', () =>
    rolloutHistory({ short: 'sts', resource: 'statefulset', name: 'nginx', v1: statefulSet([['nginx', NGINX_R1]]), v2: statefulSet([['nginx', NGINX_R2], ['pause', PAUSE]]) }));

  it('run_rs_tests: deletion, orphaning, describe, scale, expose', async () => {
    const n = await namespace('rs');
    const f = await file('frontend.json', frontend());
    const frontendPods = (): Promise<Obj> => json('-n', n, 'pods', '-l', 'tier=frontend');
    await ok('-n', n, 'create', '-f', f);
    await ok('-n', n, 'delete', 'rs', 'frontend');
    const podCount = async (): Promise<number> => ((await api(`/api/v1/namespaces/${n}/pods?labelSelector=tier%3Dfrontend`))!.items as Obj[]).length;
    await until(async () => (await podCount()) === 0, 'the pods deleted with their ReplicaSet');

    await ok('-n', n, 'create', '-f', f);
    await until(async () => (await podCount()) === 3, '3 pods');
    await ok('-n', n, 'delete', 'rs', 'frontend', '--cascade=orphan');
    await until(async () => (await names('-n', n, 'rs')) === '', 'the ReplicaSet gone');
    expect(((await frontendPods()).items as Obj[]).map((p) => p.spec.containers[0].name)).toEqual(['php-redis', 'php-redis', 'php-redis']);
    await ok('-n', n, 'delete', 'pods', '-l', 'tier=frontend');
    expect(await names('-n', n, 'pods')).toBe('');

    await ok('-n', n, 'create', '-f', f);
    const fields = ['Name:', 'Pod Template:', 'Labels:', 'Selector:', 'Replicas:', 'Pods Status:', 'Volumes:'];
    await until(async () => (await ok('-n', n, 'describe', 'rs', 'frontend')).includes('SuccessfulCreate'), 'the ReplicaSet’s events');
    const [byName, all, noEvents, withEvents] = await Promise.all([
      ok('-n', n, 'describe', 'rs', 'frontend'),
      ok('-n', n, 'describe', 'rs'),
      ok('-n', n, 'describe', 'rs', 'frontend', '--show-events=false'),
      ok('-n', n, 'describe', 'rs', '--show-events=true'),
    ]);
    for (const s of fields) for (const out of [byName, all]) expect(out).toContain(s);
    for (const out of [byName, all, withEvents]) expect(out).toContain('Events:');
    expect(noEvents).not.toContain('Events:');
    expect(await ok('-n', n, 'describe', 'pods')).toContain('Controlled By');
    await describeChunks(['-n', n], 'replicasets', ['pods', 'events']);

    expect((await json('-n', n, 'rs', 'frontend')).spec.replicas).toBe(3);
    for (const dry of ['--dry-run=client', '--dry-run=server']) await ok('-n', n, 'scale', dry, '--current-replicas=3', '--replicas=2', 'replicasets', 'frontend');
    expect((await json('-n', n, 'rs', 'frontend')).spec.replicas).toBe(3);
    await ok('-n', n, 'scale', '--current-replicas=3', '--replicas=2', 'replicasets', 'frontend');
    expect((await json('-n', n, 'rs', 'frontend')).spec.replicas).toBe(2);

    const scaled = ([[1, 'hello'], [2, 'hello'], [3, 'goodbye']] as const).map(([i, label]) => {
      const d = deployment(`scale-${i}`, [['nginx', NGINX_R1]]);
      d.metadata.labels = { run: label };
      d.spec.selector.matchLabels = { run: label };
      d.spec.template.metadata.labels = { run: label };
      return d;
    });
    await ok('-n', n, 'create', '-f', await file('scale-deploys.json', { apiVersion: 'v1', kind: 'List', items: scaled }));
    const replicas = async (): Promise<number[]> => ((await json('-n', n, 'deploy')).items as Obj[]).map((d) => d.spec.replicas as number);
    expect(await replicas()).toEqual([1, 1, 1]);
    for (const dry of ['--dry-run=client', '--dry-run=server']) await ok('-n', n, 'scale', 'deploy', '--replicas=3', '--all', dry);
    expect(await replicas()).toEqual([1, 1, 1]);
    await ok('-n', n, 'scale', 'deploy', '--replicas=2', '-l', 'run=hello');
    expect(await replicas()).toEqual([2, 2, 1]);
    await ok('-n', n, 'scale', 'deploy', '--replicas=3', '--all');
    expect(await replicas()).toEqual([3, 3, 3]);
    await ok('-n', n, 'delete', 'deploy', 'scale-1', 'scale-2', 'scale-3');

    await ok('-n', n, 'expose', 'rs', 'frontend', '--port=80');
    const port = (await json('-n', n, 'service', 'frontend')).spec.ports[0];
    expect([port.name, port.port]).toEqual([undefined, 80]);
    await ok('-n', n, 'delete', 'service', 'frontend');
  });

  it('run_rs_tests: set commands bump the generation, dry-runs do not; autoscale', async () => {
    const n = await namespace('rs-set');
    const f = await file('frontend-set.json', frontend());
    await ok('-n', n, 'create', '-f', f);
    const generation = async (): Promise<number> => (await json('-n', n, 'rs', 'frontend')).metadata.generation as number;
    expect(await generation()).toBe(1);
    await ok('-n', n, 'set', 'image', 'rs/frontend', '*=registry.k8s.io/pause:test-cmd');
    expect(await generation()).toBe(2);
    await ok('-n', n, 'set', 'env', 'rs/frontend', 'foo=bar');
    expect(await generation()).toBe(3);
    for (const dry of ['--dry-run=client', '--dry-run=server']) await ok('-n', n, 'set', 'resources', 'rs/frontend', dry, '--limits=cpu=200m,memory=512Mi');
    expect(await generation()).toBe(3);
    await ok('-n', n, 'set', 'resources', 'rs/frontend', '--limits=cpu=200m,memory=512Mi');
    expect(await generation()).toBe(4);
    for (const dry of ['--dry-run=client', '--dry-run=server']) await ok('-n', n, 'set', 'serviceaccount', 'rs/frontend', dry, 'serviceaccount1');
    expect(await generation()).toBe(4);
    await ok('-n', n, 'set', 'serviceaccount', 'rs/frontend', 'serviceaccount1');
    expect(await generation()).toBe(5);
    expect(managers(await json('-n', n, 'rs', 'frontend', '--show-managed-fields'))).toContain('kubectl-set');
    await ok('-n', n, 'delete', 'rs', 'frontend');
    expect(await names('-n', n, 'rs')).toBe('');

    const redis = frontend();
    redis.metadata.name = 'redis-slave';
    redis.spec.selector.matchLabels = { app: 'redis', tier: 'backend' };
    redis.spec.template.metadata.labels = { app: 'redis', tier: 'backend' };
    await ok('-n', n, 'create', '-f', f);
    await ok('-n', n, 'create', '-f', await file('redis.json', redis));
    expect(await names('-n', n, 'rs')).toBe('frontend:redis-slave:');
    await ok('-n', n, 'delete', 'rs', 'frontend', 'redis-slave');
    expect(await names('-n', n, 'rs')).toBe('');

    await ok('-n', n, 'create', '-f', f);
    const hpa = async (): Promise<unknown[]> => {
      const h = await json('-n', n, 'horizontalpodautoscalers.v1.autoscaling', 'frontend');
      return [h.spec.minReplicas, h.spec.maxReplicas, h.spec.targetCPUUtilizationPercentage];
    };
    await ok('-n', n, 'autoscale', '-f', f, '--max=2', '--cpu-percent=70');
    expect(await hpa()).toEqual([1, 2, 70]);
    await ok('-n', n, 'delete', 'hpa', 'frontend');
    await ok('-n', n, 'autoscale', 'rs', 'frontend', '--min=2', '--max=3');
    expect(await hpa()).toEqual([2, 3, 80]);
    expect(managers(await json('-n', n, 'hpa', 'frontend', '--show-managed-fields'))).toContain('kubectl-autoscale');
    await ok('-n', n, 'delete', 'hpa', 'frontend');
    await fails('-n', n, 'autoscale', 'rs', 'frontend');
    await ok('-n', n, 'delete', 'rs', 'frontend');
  });
});
