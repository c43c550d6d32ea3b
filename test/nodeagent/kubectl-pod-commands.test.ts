// kubectl 1.32's commands that need a running pod, against orch and a real
// node agent with the simulated runtime (docs/testing.md "kubectl command
// audit"): cp both ways, attach, port-forward to svc/ and deploy/ (and logs,
// exec and the API server's proxy by workload or service), run --rm -it, logs -f,
// debug --copy-to and debug node/, and drain's refusals (a budget that allows
// no disruption, a pod with emptyDir data) before --delete-emptydir-data.
// The simulator has no mount namespace: `kubectl cp` out of a pod names the
// file relative to the container's working directory (an emptyDir here),
// since `tar cf - /abs/path` would archive the host path.

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { runKubectl, startKubectl } from '../helpers/kubectl.js';
import { serverWithAgent } from '../helpers/nodeagent.js';
import { freePort } from '../helpers/ports.js';

const NODE = 'node-kc';
const env = serverWithAgent(NODE);
type Obj = Record<string, any>;
let dir: string;
const admin = (): string => join(env.ts().dataDir, 'admin.kubeconfig');
const kubectl = (...args: string[]) => runKubectl(admin(), args);
const ok = async (...args: string[]): Promise<string> => {
  const r = await kubectl(...args);
  expect(r.code, `kubectl ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r.stdout;
};
const api = async (path: string): Promise<Obj | undefined> => {
  const r = await env.ts().request('GET', path);
  return r.status === 200 ? r.json<Obj>() : undefined;
};
const until = <T>(f: () => Promise<T | undefined | false>, what: string): Promise<T> =>
  eventually(f, what, { timeoutMs: 45_000, intervalMs: 200, context: () => env.agent().output().slice(-2000) }) as Promise<T>;
const running = (ns: string, name: string) => until(async () => (await api(`/api/v1/namespaces/${ns}/pods/${name}`))?.status?.phase === 'Running', `${ns}/${name} Running`);
const createPod = async (ns: string, name: string, spec: Obj, labels: Record<string, string> = {}): Promise<void> => {
  const r = await env.ts().request('POST', `/api/v1/namespaces/${ns}/pods`, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels }, spec: { nodeName: NODE, terminationGracePeriodSeconds: 1, ...spec } } });
  expect(r.status, r.text).toBe(201);
};
const httpGet = (port: number): Promise<string> =>
  new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/' }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.end();
  });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-kc-pod-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('kubectl commands on running pods', () => {
  it.concurrent('cp copies a file into a pod and back out (tar over exec)', async () => {
    await ok('create', 'namespace', 'cp');
    await createPod('cp', 'box', {
      containers: [{ name: 'c', image: 'busybox', command: ['sleep', '3600'], workingDir: '/data', volumeMounts: [{ name: 'd', mountPath: '/data' }] }],
      volumes: [{ name: 'd', emptyDir: {} }],
    });
    await running('cp', 'box');
    await writeFile(join(dir, 'in.txt'), 'to the pod\n');
    await ok('cp', join(dir, 'in.txt'), 'cp/box:/data/in.txt');
    expect(await ok('exec', '-n', 'cp', 'box', '--', 'cat', '/data/in.txt')).toBe('to the pod\n');
    await ok('exec', '-n', 'cp', 'box', '--', 'sh', '-c', 'echo from the pod > out.txt');
    await ok('cp', '-n', 'cp', 'box:out.txt', join(dir, 'out.txt'));
    expect(await readFile(join(dir, 'out.txt'), 'utf8')).toBe('from the pod\n');
    const missing = await kubectl('cp', '-n', 'cp', join(dir, 'nope.txt'), 'box:x');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("doesn't exist in local filesystem");
  });

  it.concurrent('attach -i feeds stdin to a running container and prints what it writes', async () => {
    await ok('create', 'namespace', 'attach');
    await createPod('attach', 'cat', { containers: [{ name: 'c', image: 'busybox', command: ['cat'], stdin: true, stdinOnce: false }] });
    await running('attach', 'cat');
    const child = startKubectl(admin(), ['attach', '-i', '-n', 'attach', 'cat', '-c', 'c'], { stdin: true });
    try {
      await until(async () => {
        child.write('hello attach\n');
        return child.out().includes('hello attach');
      }, 'attached echo');
    } finally {
      await child.stop();
    }
    const noStdin = await kubectl('attach', '-i', '-n', 'attach', 'nope');
    expect(noStdin.code).not.toBe(0);
    expect(noStdin.stderr).toContain('pods "nope" not found');
  });

  it.concurrent('port-forward to svc/ and deploy/ reaches a pod of the service and of the deployment', async () => {
    await ok('create', 'namespace', 'pf');
    await ok('create', 'deployment', 'web', '-n', 'pf', '--image=nginx', '--port=80');
    await ok('expose', 'deployment', 'web', '-n', 'pf', '--port=8080', '--target-port=80');
    await until(async () => (await api('/apis/apps/v1/namespaces/pf/deployments/web'))?.status?.readyReplicas === 1, 'web ready');
    for (const target of ['svc/web', 'deploy/web']) {
      const local = await freePort();
      // the service's port 8080 maps to the pod's targetPort 80; the deployment's port is the pod's own
      const pf = startKubectl(admin(), ['--cache-dir', join(env.ts().dataDir, 'kubectl-cache'), 'port-forward', '-n', 'pf', target, `${local}:${target === 'svc/web' ? 8080 : 80}`]);
      try {
        await until(async () => pf.out().includes(`Forwarding from 127.0.0.1:${local} -> 80`), `${target} forwarding`);
        expect(await httpGet(local)).toContain('<h1>Welcome to nginx!</h1>');
      } finally {
        await pf.stop();
      }
    }
    // the other commands that take a workload or a service and pick a pod of it
    const pods = (await ok('get', 'pods', '-n', 'pf', '-l', 'app=web', '-o', 'name')).trim();
    expect(await ok('logs', '-n', 'pf', 'deploy/web', '--all-pods', '--prefix')).toContain(`[${pods}/nginx] nginx/`);
    expect(await ok('exec', '-n', 'pf', 'svc/web', '--', 'echo', 'in a pod of the service')).toBe('in a pod of the service\n');
    // the API server's proxy to the service's port (by name and port) and to the pod's
    expect(await ok('get', '--raw', '/api/v1/namespaces/pf/services/web:8080/proxy/')).toContain('<h1>Welcome to nginx!</h1>');
    expect(await ok('get', '--raw', `/api/v1/namespaces/pf/pods/${pods.slice('pod/'.length)}:80/proxy/`)).toContain('<h1>Welcome to nginx!</h1>');
  });

  it.concurrent('run --rm -it attaches (without a terminal: no TTY), prints the output and deletes the pod', async () => {
    await ok('create', 'namespace', 'run');
    const r = await kubectl('run', 'once', '-n', 'run', '--rm', '-it', '--restart=Never', '--image=busybox', '--', 'sh', '-c', 'echo ran once');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('ran once');
    expect(r.stdout).toContain('pod "once" deleted');
    await until(async () => (await api('/api/v1/namespaces/run/pods/once')) === undefined, 'once gone');
    // logs -f follows a running container to its end
    await ok('run', 'lines', '-n', 'run', '--restart=Never', '--image=busybox', '--', 'sh', '-c', 'for i in 1 2 3; do echo line $i; sleep 0.2; done');
    await until(async () => (await api('/api/v1/namespaces/run/pods/lines'))?.status?.phase !== 'Pending', 'lines started');
    expect(await ok('logs', '-f', '-n', 'run', 'lines')).toBe('line 1\nline 2\nline 3\n');
    const previous = await kubectl('logs', '-n', 'run', 'lines', '--previous');
    expect(previous.stderr).toContain('previous terminated container "lines" in pod "lines" not found');
  });

  it.concurrent('debug --copy-to makes a copy of the pod with the new image and a shared process namespace', async () => {
    await ok('create', 'namespace', 'dbgcopy');
    await createPod('dbgcopy', 'orig', { containers: [{ name: 'app', image: 'busybox', command: ['sleep', '3600'] }] }, { app: 'orig' });
    await running('dbgcopy', 'orig');
    const r = await kubectl('debug', '-n', 'dbgcopy', 'orig', '--copy-to=orig-debug', '--set-image=app=busybox:1.36', '--share-processes', '--attach=false');
    expect(r.code, r.stderr).toBe(0);
    const copy = await until(async () => {
      const p = await api('/api/v1/namespaces/dbgcopy/pods/orig-debug');
      return p?.status?.phase === 'Running' ? p : undefined;
    }, 'the copy running');
    expect(copy.spec).toMatchObject({ shareProcessNamespace: true, containers: [{ name: 'app', image: 'busybox:1.36' }] });
    // kubectl clears the copy's node name (no --same-node): the scheduler placed it
    expect(copy.spec.nodeName).toBe(NODE);
    expect((await api('/api/v1/namespaces/dbgcopy/pods/orig'))?.spec.containers[0].image).toBe('busybox');
  });

  it.concurrent('debug node/<n> makes a pod on the node with the host namespaces and the root file system at /host', async () => {
    await ok('create', 'namespace', 'dbgnode');
    const r = await kubectl('debug', '-n', 'dbgnode', `node/${NODE}`, '--image=busybox', '--profile=legacy', '-i', '--', 'echo', 'on the node');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('on the node');
    const name = /Creating debugging pod (\S+) /.exec(r.stderr + r.stdout)?.[1] ?? '';
    const pod = await api(`/api/v1/namespaces/dbgnode/pods/${name}`);
    expect(pod?.spec).toMatchObject({ nodeName: NODE, hostIPC: true, hostNetwork: true, hostPID: true, restartPolicy: 'Never' });
    expect(pod?.spec.volumes).toContainEqual({ name: 'host-root', hostPath: { path: '/', type: '' } });
    expect(pod?.spec.containers[0].volumeMounts).toContainEqual(expect.objectContaining({ name: 'host-root', mountPath: '/host' }));
  });
});

describe('kubectl drain refusals', () => {
  it('a budget that allows no disruption and a pod with emptyDir data hold the drain back until --delete-emptydir-data and the budget goes', async () => {
    await ok('create', 'namespace', 'drain');
    await createPod('drain', 'guarded', { containers: [{ name: 'c', image: 'busybox', command: ['sleep', '3600'] }] }, { app: 'guarded' });
    await createPod('drain', 'scratch', { containers: [{ name: 'c', image: 'busybox', command: ['sleep', '3600'] }], volumes: [{ name: 's', emptyDir: {} }] });
    await ok('create', 'poddisruptionbudget', 'guard', '-n', 'drain', '--selector=app=guarded', '--min-available=1');
    await Promise.all([running('drain', 'guarded'), running('drain', 'scratch')]);
    await until(async () => (await api('/apis/policy/v1/namespaces/drain/poddisruptionbudgets/guard'))?.status?.currentHealthy === 1, 'budget computed');

    const local = await kubectl('drain', NODE, '--pod-selector=app!=guarded', '--ignore-daemonsets', '--force');
    expect(local.code).not.toBe(0);
    expect(local.stderr).toMatch(/cannot delete Pods with local storage \(use --delete-emptydir-data to override\): (\S+, )*drain\/scratch/);

    const blocked = await kubectl('drain', NODE, '--pod-selector=app=guarded', '--ignore-daemonsets', '--force', '--timeout=2s');
    expect(blocked.code).not.toBe(0);
    expect(blocked.stderr).toContain("Cannot evict pod as it would violate the pod's disruption budget.");
    expect(blocked.stderr).toContain('global timeout reached: 2s');
    expect((await api('/api/v1/namespaces/drain/pods/guarded'))?.metadata.deletionTimestamp).toBeUndefined();

    await ok('delete', 'pdb', 'guard', '-n', 'drain');
    const drained = await kubectl('drain', NODE, '--ignore-daemonsets', '--force', '--delete-emptydir-data', '--grace-period=1', '--timeout=60s');
    expect(drained.code, drained.stderr).toBe(0);
    expect(drained.stdout).toContain('pod/scratch evicted');
    expect(drained.stdout).toContain('pod/guarded evicted');
    expect(drained.stdout).toContain(`node/${NODE} drained`);
    expect((await api(`/api/v1/nodes/${NODE}`))?.spec.unschedulable).toBe(true);
    await ok('uncordon', NODE);
    expect((await api(`/api/v1/nodes/${NODE}`))?.spec.unschedulable).toBeUndefined();
  });
});
