// Port of kube's kubectl command tests over several objects at once and of `kubectl run`
// (kubernetes/kubernetes test/cmd/generic-resources.sh, test/cmd/run.sh), run with the real kubectl
// 1.32 against orch set up as test-cmd sets up kube (test/helpers/kubectl-cmd.ts). Ported:
//   run_multi_resources_tests — a Service and a ReplicationController from YAML with `---`, and two
//     Services from a ServiceList: create, get, describe, replace --force --cascade, edit (an editor
//     script), label and annotate --overwrite, delete (kube's List, concatenated-JSON and RC List files
//     differ only in how kubectl parses them, and are left out to keep the test time down);
//   run_recursive_resources_tests — a directory of pods, controllers and deployments with one malformed
//     file: create, replace, apply, label, annotate, patch, describe, get and delete of the rest, rc
//     autoscale / expose / scale, deployment rollout undo / pause / resume / history and the
//     "not supported" errors for ReplicationControllers;
//   run_kubectl_run_tests — run with client and server dry-run, a valid image name, and the invalid one.
// Skipped: `kubectl convert` (a plugin since 1.21, not in kubectl 1.32) and creating from a URL (no
// network here). run_lists_tests and storage.sh (volumes, claims, storage classes) are ported with the
// core.sh functions that once held them, in kubectl-cmd-core-objects.test.ts.

import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify as stringifyYaml } from 'yaml';
import { type Obj, cmdEnv } from '../helpers/kubectl-cmd.js';

const env = cmdEnv();
const { ok, fails, json, file, until, api } = env;
/** kube's `{{range.items}}{{.metadata.name}}:{{end}}` */
const names = async (...args: string[]): Promise<string> => (await env.names(...args)).map((x) => `${x}:`).join('');
const namespace = env.newNs;

const labels = (o: Obj): Obj => o.metadata.labels ?? {};
function service(name: string, status?: string): Obj {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, labels: { app: name, ...(status ? { status } : {}) } }, spec: { ports: [{ port: 80, targetPort: 80 }], selector: { app: name } } };
}
function rc(name: string, status?: string): Obj {
  const l = { app: name };
  return {
    apiVersion: 'v1', kind: 'ReplicationController', metadata: { name, labels: { ...l, ...(status ? { status } : {}) } },
    spec: { replicas: 1, selector: l, template: { metadata: { labels: l }, spec: { containers: [{ name: 'mock-container', image: 'registry.k8s.io/pause:3.10' }] } } },
  };
}
const yamlOf = (o: Obj): string => stringifyYaml(o);

/** kube's hack/testdata/recursive/<kind>: two objects (one in a nested folder) and a third without its kind */
async function recursiveDir(name: string, objs: Obj[]): Promise<string> {
  const d = join(dirname(await file('marker', '')), name);
  await mkdir(join(d, 'nested'), { recursive: true });
  const broken = { ...objs[2] } as Obj;
  delete broken.kind;
  await Promise.all([
    writeFile(join(d, 'a.json'), JSON.stringify(objs[0])),
    writeFile(join(d, 'nested', 'b.json'), JSON.stringify(objs[1])),
    writeFile(join(d, 'nested', 'c.json'), JSON.stringify(broken)),
  ]);
  return d;
}

// one suite, so that all its tests run concurrently (sibling suites would run one after the other)
describe.concurrent('kubectl generic resources, storage and run (test/cmd/generic-resources.sh, storage.sh, run.sh)', () => {
  describe('kubectl generic resources (test/cmd/generic-resources.sh)', () => {
    const variants: [string, (s?: string) => string, string[], string[]][] = [
      ['yaml', (s) => [service('mock', s), rc('mock', s)].map(yamlOf).join('\n---\n'), ['mock'], ['mock']],
      ['svclist', (s) => JSON.stringify({ apiVersion: 'v1', kind: 'ServiceList', items: [service('mock', s), service('mock2', s)] }), ['mock', 'mock2'], []],
    ];
    for (const [kind, text, svcs, rcs] of variants) {
      it(`run_multi_resources_tests: ${kind}`, async () => {
        const n = await namespace(`multi-${kind}`);
        const f = await file(`multi-${kind}.${kind === 'yaml' ? 'yaml' : 'json'}`, text());
        const replace = await file(`multi-${kind}-modify.json`, text('replaced'));
        await ok('-n', n, 'create', '-f', f);
        expect(await names('-n', n, 'services')).toBe(svcs.map((s) => `${s}:`).join(''));
        expect(await names('-n', n, 'rc')).toBe(rcs.map((s) => `${s}:`).join(''));
        await ok('-n', n, 'get', '-f', f);
        expect(await fails('-n', n, 'get', '-f', f, '--watch')).toContain('watch is only supported on individual resources and resource collections');
        await ok('-n', n, 'describe', '-f', f);
        await ok('-n', n, 'replace', '-f', replace, '--force', '--cascade');
        const each = async (check: (o: Obj) => void): Promise<void> => {
          for (const s of svcs) check(await json('-n', n, 'service', s));
          for (const r of rcs) check(await json('-n', n, 'rc', r));
        };
        await each((o) => expect(labels(o).status).toBe('replaced'));
        // kubectl edit of several objects: the editor gets them all in one file
        const editor = await file(`editor-${kind}.sh`, '#!/usr/bin/env bash\nsed -i "s/status: replaced/status: edited/g" "$@"\n');
        await chmod(editor, 0o755);
        const edited = await env.withEditor(editor, '-n', n, 'edit', '-f', f);
        expect(edited.code, edited.stderr).toBe(0);
        await each((o) => expect(labels(o).status).toBe('edited'));
        await ok('-n', n, 'label', '-f', f, 'labeled=true', '--overwrite');
        await ok('-n', n, 'annotate', '-f', f, 'annotated=true', '--overwrite');
        await each((o) => {
          expect(labels(o).labeled).toBe('true');
          expect(o.metadata.annotations.annotated).toBe('true');
        });
        await ok('-n', n, 'delete', '-f', f);
        expect([await names('-n', n, 'services'), await names('-n', n, 'rc')]).toEqual(['', '']);
      });
    }

    it('run_recursive_resources_tests: pods in a directory with a malformed file', async () => {
      const n = await namespace('recursive-pods');
      const pod = (i: number, status?: string): Obj => ({
        apiVersion: 'v1', kind: 'Pod', metadata: { name: `busybox${i}`, labels: { app: `busybox${i}`, ...(status ? { status } : {}) } },
        spec: { restartPolicy: 'Always', containers: [{ name: 'busybox', image: 'busybox', command: ['sleep', '3600'] }] },
      });
      const tree = (sub: string, objs: Obj[]): Promise<string> => recursiveDir(`${n}-${sub}`, objs);
      const pods = await tree('pod', [pod(0), pod(1), pod(2)]);
      const modified = await tree('pod-modify', [pod(0, 'replaced'), pod(1, 'replaced'), pod(2, 'replaced')]);
      const podField = async (f: (p: Obj) => unknown): Promise<unknown[]> => ((await json('-n', n, 'pods')).items as Obj[]).map(f);
      expect(await fails('-n', n, 'create', '-f', pods, '--recursive')).toContain('error validating data: kind not set');
      expect(await names('-n', n, 'pods')).toBe('busybox0:busybox1:');
      expect(await fails('-n', n, 'replace', '-f', modified, '--recursive')).toContain('error validating data: kind not set');
      expect(await podField((p) => p.metadata.labels.status)).toEqual(['replaced', 'replaced']);
      const described = await fails('-n', n, 'describe', '-f', pods, '--recursive');
      for (const s of ['app=busybox0', 'app=busybox1', "Object 'Kind' is missing"]) expect(described).toContain(s);
      expect(await fails('-n', n, 'annotate', '-f', pods, 'annotatekey=annotatevalue', '--recursive')).toContain("Object 'Kind' is missing");
      expect(await podField((p) => p.metadata.annotations.annotatekey)).toEqual(['annotatevalue', 'annotatevalue']);
      expect(await fails('-n', n, 'apply', '-f', modified, '--recursive')).toContain('error validating data: kind not set');
      const got = await fails('-n', n, 'get', '-f', pods, '--recursive', '-o', 'go-template={{range.items}}{{.metadata.name}}:{{end}}');
      expect(got).toContain('busybox0:busybox1:');
      expect(got).toContain("Object 'Kind' is missing");
      expect(await fails('-n', n, 'label', '-f', pods, 'mylabel=myvalue', '--recursive')).toContain("Object 'Kind' is missing");
      expect(await podField((p) => p.metadata.labels.mylabel)).toEqual(['myvalue', 'myvalue']);
      expect(await fails('-n', n, 'patch', '-f', pods, '-p', '{"spec":{"containers":[{"name":"busybox","image":"prom/busybox"}]}}', '--recursive')).toContain("Object 'Kind' is missing");
      expect(await podField((p) => p.spec.containers[0].image)).toEqual(['prom/busybox', 'prom/busybox']);
      expect(await fails('-n', n, 'delete', '-f', pods, '--recursive', '--grace-period=0', '--force')).toContain("Object 'Kind' is missing");
      expect(await names('-n', n, 'pods')).toBe('');
    });

    it('run_recursive_resources_tests: replication controllers and deployments in a directory', async () => {
      const n = await namespace('recursive-ctrl');
      const tree = (sub: string, objs: Obj[]): Promise<string> => recursiveDir(`${n}-${sub}`, objs);
      const rcs = await tree('rc', [rc('busybox0'), rc('busybox1'), rc('busybox2')]);
      await fails('-n', n, 'create', '-f', rcs, '--recursive');
      expect(await names('-n', n, 'rc')).toBe('busybox0:busybox1:');
      expect(await fails('-n', n, 'autoscale', '--min=1', '--max=2', '-f', rcs, '--recursive')).toContain("Object 'Kind' is missing");
      for (const r of ['busybox0', 'busybox1']) {
        const h = await json('-n', n, 'horizontalpodautoscalers.v1.autoscaling', r);
        expect([h.spec.minReplicas, h.spec.maxReplicas, h.spec.targetCPUUtilizationPercentage]).toEqual([1, 2, 80]);
      }
      await ok('-n', n, 'delete', 'hpa', 'busybox0', 'busybox1');
      expect(await fails('-n', n, 'expose', '-f', rcs, '--recursive', '--port=80')).toContain("Object 'Kind' is missing");
      for (const r of ['busybox0', 'busybox1']) {
        const p = (await json('-n', n, 'service', r)).spec.ports[0];
        expect([p.name, p.port]).toEqual([undefined, 80]);
      }
      expect(await fails('-n', n, 'scale', '--current-replicas=1', '--replicas=2', '-f', rcs, '--recursive')).toContain("Object 'Kind' is missing");
      expect(((await json('-n', n, 'rc')).items as Obj[]).map((r) => r.spec.replicas)).toEqual([2, 2]);
      const undo = await fails('-n', n, 'rollout', 'undo', '-f', rcs, '--recursive', '--to-revision=1');
      expect(undo).toContain('no rollbacker has been implemented for "ReplicationController"');
      const pause = await fails('-n', n, 'rollout', 'pause', '-f', rcs, '--recursive');
      expect(pause).toContain('replicationcontrollers "busybox0" pausing is not supported');
      expect(pause).toContain('replicationcontrollers "busybox1" pausing is not supported');
      expect(await fails('-n', n, 'rollout', 'resume', '-f', rcs, '--recursive')).toContain('replicationcontrollers "busybox0" resuming is not supported');
      expect(await fails('-n', n, 'delete', '-f', rcs, '--recursive', '--grace-period=0', '--force')).toContain("Object 'Kind' is missing");
      expect(await names('-n', n, 'rc')).toBe('');

      const deployment = (i: number): Obj => ({
        apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: `nginx${i}-deployment`, labels: { app: `nginx${i}` } },
        spec: { replicas: 1, selector: { matchLabels: { app: `nginx${i}` } }, template: { metadata: { labels: { app: `nginx${i}` } }, spec: { containers: [{ name: 'nginx', image: 'registry.k8s.io/nginx:1.7.9' }] } } },
      });
      const deps = await tree('deployment', [deployment(0), deployment(1), deployment(2)]);
      await fails('-n', n, 'create', '-f', deps, '--recursive');
      expect(await names('-n', n, 'deployment')).toBe('nginx0-deployment:nginx1-deployment:');
      await until(async () => ((await api(`/apis/apps/v1/namespaces/${n}/replicasets`))!.items as Obj[]).length === 2, 'both ReplicaSets');
      expect(await fails('-n', n, 'rollout', 'undo', '-f', deps, '--recursive', '--to-revision=1')).toContain("Object 'Kind' is missing");
      const paused = async (): Promise<unknown[]> => ((await json('-n', n, 'deployment')).items as Obj[]).map((d) => d.spec.paused);
      expect(await fails('-n', n, 'rollout', 'pause', '-f', deps, '--recursive')).toContain("Object 'Kind' is missing");
      expect(await paused()).toEqual([true, true]);
      expect(await fails('-n', n, 'rollout', 'resume', '-f', deps, '--recursive')).toContain("Object 'Kind' is missing");
      expect(await paused()).toEqual([undefined, undefined]);
      const history = await fails('-n', n, 'rollout', 'history', '-f', deps, '--recursive');
      for (const s of ['nginx0-deployment', 'nginx1-deployment', "Object 'Kind' is missing"]) expect(history).toContain(s);
      await fails('-n', n, 'delete', '-f', deps, '--recursive', '--grace-period=0', '--force');
    });
  });

  describe('kubectl run (test/cmd/run.sh)', () => {
    it('run_kubectl_run_tests', async () => {
      const n = await namespace('run');
      expect(await ok('-n', n, 'run', '--dry-run=client', 'nginx-extensions', '--image=registry.k8s.io/nginx:1.7.9')).toBe('pod/nginx-extensions created (dry run)\n');
      expect(await ok('-n', n, 'run', '--dry-run=server', 'nginx-extensions', '--image=registry.k8s.io/nginx:1.7.9')).toBe('pod/nginx-extensions created (server dry run)\n');
      expect(await names('-n', n, 'pods')).toBe('');
      await ok('-n', n, 'run', 'nginx-extensions', '--image=registry.k8s.io/nginx:1.7.9');
      const pod = await json('-n', n, 'pod', 'nginx-extensions');
      expect(pod.metadata.labels).toEqual({ run: 'nginx-extensions' });
      expect(pod.spec).toMatchObject({ restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', containers: [{ name: 'nginx-extensions', image: 'registry.k8s.io/nginx:1.7.9', resources: {} }] });
      await ok('-n', n, 'delete', 'pod', 'nginx-extensions', '--wait=false');
      expect(await ok('-n', n, 'run', 'test1', '--image=validname')).toBe('pod/test1 created\n');
      await ok('-n', n, 'delete', 'pods', 'test1', '--wait=false');
      expect(await fails('-n', n, 'run', 'test2', '--image=InvalidImageName')).toContain('error: Invalid image name "InvalidImageName": invalid reference format');
    });
  });
});
