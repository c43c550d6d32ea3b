// Issue #11 items 4 and 5: a directory of typical application manifests
// applies with the real kubectl (client-side validation against /openapi),
// then get all, diff, server-side apply, scale, rollout history and explain
// work, with the default API domain and with k8s.io.

import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKubectl } from '../helpers/kubectl.js';
import { NO_WORKLOAD_CONTROLLERS, type TestServer, startTestServer } from '../helpers/server.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'manifests');

describe.each(['orch.io', 'k8s.io'])('typical manifests with --api-domain %s', (domain) => {
  let t: TestServer;
  let dir: string;
  const kubectl = (...args: string[]) => runKubectl(t.server.kubeconfigPath, args);

  beforeAll(async () => {
    t = await startTestServer({ apiDomain: domain, authn: NO_WORKLOAD_CONTROLLERS });
    dir = mkdtempSync(join(tmpdir(), 'orch-manifests-'));
    cpSync(FIXTURES, dir, { recursive: true });
    for (const f of readdirSync(dir)) writeFileSync(join(dir, f), readFileSync(join(dir, f), 'utf8').replaceAll('DOMAIN', domain));
  });
  afterAll(async () => {
    await t?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('kubectl apply -f <dir> creates every object (client-side validation on)', async () => {
    const r = await kubectl('apply', '-f', dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    for (const line of [
      'configmap/web-config created', 'secret/web-secret created', 'deployment.apps/web created', 'service/web created',
      `ingress.networking.${domain}/web created`, 'horizontalpodautoscaler.autoscaling/web created', 'poddisruptionbudget.policy/web created',
      'cronjob.batch/nightly-report created', 'statefulset.apps/db created', `networkpolicy.networking.${domain}/db-from-web created`,
    ]) expect(r.stdout).toContain(line);
  });

  it('stores the objects with Kubernetes defaults', async () => {
    const r = await kubectl('get', 'deployment', 'web', '-o', 'json');
    expect(r.code).toBe(0);
    const d = JSON.parse(r.stdout);
    expect(d.spec.revisionHistoryLimit).toBe(10);
    expect(d.spec.progressDeadlineSeconds).toBe(600);
    expect(d.spec.template.spec.restartPolicy).toBe('Always');
    expect(d.spec.template.spec.containers[0].imagePullPolicy).toBe('IfNotPresent');
    const sts = JSON.parse((await kubectl('get', 'statefulset', 'db', '-o', 'json')).stdout);
    expect(sts.spec.volumeClaimTemplates[0].spec.resources.requests.storage).toBe('1Gi');
    expect(sts.spec.podManagementPolicy).toBe('OrderedReady');
  });

  it('kubectl get all lists the workloads', async () => {
    const r = await kubectl('get', 'all');
    expect(r.code).toBe(0);
    for (const name of ['service/web', 'deployment.apps/web', 'statefulset.apps/db', 'cronjob.batch/nightly-report', 'horizontalpodautoscaler.autoscaling/web']) {
      expect(r.stdout).toContain(name);
    }
    expect(r.stdout).toMatch(/deployment\.apps\/web\s+0\/2\s+0\s+0/);
  });

  it('kubectl diff -f exits 0 when nothing changed and 1 after a change', async () => {
    const same = await kubectl('diff', '-f', dir);
    expect(same.stderr).toBe('');
    expect(same.code).toBe(0);
    const f = join(dir, '06-pdb.yaml');
    writeFileSync(f, readFileSync(f, 'utf8').replace('minAvailable: 1', 'minAvailable: 2'));
    const changed = await kubectl('diff', '-f', f);
    expect(changed.code).toBe(1);
    expect(changed.stdout).toContain('+  minAvailable: 2');
  });

  it('kubectl apply --server-side takes over the objects', async () => {
    const r = await kubectl('apply', '--server-side', '--force-conflicts', '-f', dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('deployment.apps/web serverside-applied');
    const pdb = JSON.parse((await kubectl('get', 'pdb', 'web', '-o', 'json')).stdout);
    expect(pdb.spec.minAvailable).toBe(2);
  });

  it('kubectl scale changes spec.replicas through the scale sub-resource', async () => {
    const r = await kubectl('scale', 'deployment', 'web', '--replicas=3');
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('deployment.apps/web scaled');
    const d = JSON.parse((await kubectl('get', 'deployment', 'web', '-o', 'json')).stdout);
    expect(d.spec.replicas).toBe(3);
    const s = await t.request('GET', '/apis/apps/v1/namespaces/default/deployments/web/scale');
    expect(s.json()).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 3 }, status: { replicas: 0, selector: 'app=web' } });
    const sts = await kubectl('scale', 'statefulset', 'db', '--replicas=2', '--current-replicas=1');
    expect(sts.code).toBe(0);
    const stale = await kubectl('scale', 'statefulset', 'db', '--replicas=5', '--current-replicas=1');
    expect(stale.code).not.toBe(0);
  });

  it('kubectl autoscale creates an HPA (kubectl 1.32 writes autoscaling/v1); -o wide shows containers, images and selector', async () => {
    const r = await kubectl('autoscale', 'deployment', 'web', '--min=1', '--max=4', '--name=web-auto');
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('horizontalpodautoscaler.autoscaling/web-auto autoscaled');
    // kubectl reads the preferred version (v2) whatever the name says: v1 and v2 are one store, converted
    const hpa = JSON.parse((await kubectl('get', 'hpa.v1.autoscaling', 'web-auto', '-o', 'json')).stdout);
    expect(hpa.apiVersion).toBe('autoscaling/v2');
    expect(hpa.spec).toMatchObject({ minReplicas: 1, maxReplicas: 4, scaleTargetRef: { kind: 'Deployment', name: 'web' } });
    const v1 = JSON.parse((await kubectl('get', '--raw', '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/web-auto')).stdout);
    expect(v1.apiVersion).toBe('autoscaling/v1');
    expect(v1.spec).toMatchObject({ minReplicas: 1, maxReplicas: 4, scaleTargetRef: { kind: 'Deployment', name: 'web' } });
    const wide = await kubectl('get', 'deployment', 'web', '-o', 'wide');
    expect(wide.stdout.split('\n')[0]).toMatch(/NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR/);
    expect(wide.stdout).toMatch(/web\s+nginx:1\.27\s+app=web/);
  });

  it('kubectl rollout history reads the (empty) revision history', async () => {
    const r = await kubectl('rollout', 'history', 'deployment/web');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('deployment.apps/web');
  });

  it('kubectl explain deployment.spec.strategy uses the served OpenAPI', async () => {
    const r = await kubectl('explain', 'deployment.spec.strategy');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('KIND:       Deployment');
    expect(r.stdout).toContain('rollingUpdate');
    const ing = await kubectl('explain', 'ingress.spec.rules');
    expect(ing.code).toBe(0);
    expect(ing.stdout).toContain('host');
  });

  it('kubectl get cm -o yaml | kubectl apply -f - with several objects', async () => {
    await kubectl('create', 'configmap', 'extra-a', '--from-literal=a=1');
    await kubectl('create', 'configmap', 'extra-b', '--from-literal=b=2');
    const list = await kubectl('get', 'cm', '-o', 'yaml');
    expect(list.stdout).toContain('kind: List');
    const f = join(dir, 'list.yaml');
    writeFileSync(f, list.stdout.replace('  a: "1"', '  a: "11"'));
    const r = await kubectl('apply', '-f', f);
    expect(r.stderr).not.toContain('unable to respond');
    // kubectl only warns that `kubectl create`d objects lack the last-applied annotation
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('configmap/extra-a configured');
    expect(JSON.parse((await kubectl('get', 'cm', 'extra-a', '-o', 'json')).stdout).data.a).toBe('11');
    rmSync(f);
  });
});
