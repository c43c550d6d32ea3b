// The README's quick start as a new user runs it, with real processes and the real kubectl: `orch server` prints
// where its kubeconfig is and the printed `try:` command works; `kubectl get/create/apply` with that kubeconfig;
// then `orch node-kubeconfig` and `orch nodeagent` (no runtime configured: the simulated one) register node-1,
// which becomes Ready and runs a Deployment's pods and a Job whose log kubectl reads. Only the ports differ from
// the README (a free API port; `port: 0` for the agent's HTTPS server, whose default 10250 other tests share).
// A second server on the same data dir or port says which; a bootstrap token for this server (started without
// --enable-bootstrap-token-auth) comes with a warning.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { freePort } from '../helpers/ports.js';
import { useFreshDirServer } from '../helpers/orch-process.js';

const fresh = useFreshDirServer();

describe('README quick start', () => {
  it('prints its URL and the kubeconfig path; the printed `try:` command and the README\'s kubectl commands work', async () => {
    const { server, port, dir, kubeconfig, kubectl } = fresh();
    expect(server.output()).toContain(`orch is serving on https://127.0.0.1:${port}\n`);
    expect(kubeconfig).toBe(join(dir, '.orch', 'admin.kubeconfig'));
    const tryLine = /^ {2}try: +kubectl (.*)$/m.exec(server.output())![1]!.split(' ');
    expect(tryLine).toEqual(['--kubeconfig', kubeconfig, 'get', 'namespaces']);

    const ns = await kubectl('get', 'namespaces');
    expect(ns.code, ns.stderr).toBe(0);
    expect(ns.stdout.split('\n')[0]).toMatch(/^NAME +STATUS +AGE$/);
    for (const n of ['default', 'orch-system', 'orch-public', 'orch-node-lease']) expect(ns.stdout).toMatch(new RegExp(`^${n} +Active `, 'm'));

    const cm = await kubectl('create', 'configmap', 'demo', '--from-literal=a=b');
    expect(cm.code, cm.stderr).toBe(0);
    expect(cm.stdout).toBe('configmap/demo created\n');

    const manifest = join(dir, 'my-manifest.yaml');
    await writeFile(manifest, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-manifest\ndata:\n  greeting: hello\n');
    expect((await kubectl('apply', '-f', manifest)).stdout).toBe('configmap/from-manifest created\n');
    expect((await kubectl('apply', '-f', manifest)).stdout).toBe('configmap/from-manifest unchanged\n');
  });

  it('node-kubeconfig + nodeagent: node-1 is Ready and runs a Deployment\'s pods and a Job', async () => {
    const { orch, kubectl } = fresh();
    const nk = orch(['node-kubeconfig', '--node-name', 'node-1', '--out', 'node-1.kubeconfig']);
    expect(await nk.exited, nk.output()).toBe(0);
    expect(nk.output()).toBe('wrote node-1.kubeconfig for system:node:node-1\n');

    const agent = orch(['nodeagent', '--kubeconfig', 'node-1.kubeconfig', '--hostname-override', 'node-1', '--root-dir', '.nodeagent',
      '--lock-file', '.nodeagent/nodeagent.lock', '--config', await fresh().agentConfigFile()]);
    await agent.waitFor(/nodeagent: node node-1 running; HTTPS on port \d+; runtime unix:\/\/.*\/\.nodeagent\/runtime-sim\.sock/);

    const ready = await eventually(async () => {
      const r = await kubectl('get', 'nodes', '-o', 'wide');
      return /^node-1 +Ready +<none> +\S+ +v1\.32\.0-orch\.\S+ +\S+ +<none> +.* orch-runtime-sim:\/\/\S+$/m.test(r.stdout) && r;
    }, 'node-1 Ready in `kubectl get nodes -o wide`', { timeoutMs: 30_000, context: () => agent.output() });
    expect(ready.stdout.split('\n')[0]).toMatch(/^NAME +STATUS +ROLES +AGE +VERSION +INTERNAL-IP +EXTERNAL-IP +OS-IMAGE +KERNEL-VERSION +CONTAINER-RUNTIME$/);

    expect((await kubectl('create', 'deployment', 'web', '--image=nginx', '--replicas=2')).stdout).toBe('deployment.apps/web created\n');
    const rollout = await kubectl('rollout', 'status', 'deployment/web', '--timeout=25s');
    expect(rollout.code, `${rollout.stdout}${rollout.stderr}\n${agent.output()}`).toBe(0);
    expect(rollout.stdout).toContain('deployment "web" successfully rolled out');
    const pods = await kubectl('get', 'pods', '-l', 'app=web', '-o', 'jsonpath={range .items[*]}{.spec.nodeName} {.status.phase}{"\\n"}{end}');
    expect(pods.stdout).toBe('node-1 Running\nnode-1 Running\n');

    expect((await kubectl('create', 'job', 'hello', '--image=busybox', '--', 'echo', 'hi')).stdout).toBe('job.batch/hello created\n');
    const wait = await kubectl('wait', '--for=condition=complete', 'job/hello', '--timeout=25s');
    expect(wait.code, `${wait.stdout}${wait.stderr}`).toBe(0);
    expect(wait.stdout).toBe('job.batch/hello condition met\n');
    const logs = await kubectl('logs', 'job/hello');
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout).toBe('hi\n');
  }, 90_000);

  it('a second `npm start` beside the first says why it cannot start: its data dir, or the port, is taken', async () => {
    const { orch, port, dir, kubectl } = fresh();
    const same = orch(['server', '--secure-port', String(await freePort())]);
    expect(await same.exited).toBe(1);
    expect(same.output()).toContain(`orch: cannot start: ${join(dir, '.orch', 'store')} is in use by another process (another orch server on the same --data-dir?)`);
    const port2 = orch(['server', '--secure-port', String(port), '--data-dir', join(dir, 'other')]);
    expect(await port2.exited).toBe(1);
    expect(port2.output()).toContain(`orch: cannot start: listen EADDRINUSE: address already in use 127.0.0.1:${port}`);
    // the first one serves on, with its kubeconfig unchanged
    expect((await kubectl('get', 'configmap', 'demo', '-o', 'jsonpath={.data.a}')).stdout).toBe('b');
    expect((await kubectl('create', 'configmap', 'after-second-start')).code).toBe(0);
  }, 60_000);

  it('bootstrap-kubeconfig against this server (no --enable-bootstrap-token-auth) warns that the token will be refused', async () => {
    const boot = fresh().orch(['bootstrap-kubeconfig', '--out', 'boot.kubeconfig', '--ttl', '1h']);
    expect(await boot.exited).toBe(0);
    expect(boot.output()).toMatch(/^wrote boot\.kubeconfig with bootstrap token [a-z0-9]{6}\.<secret>\n/);
    expect(boot.output()).toContain('bootstrap-kubeconfig: warning: the server answers 401 to the new token: it does not authenticate bootstrap tokens; start it with --enable-bootstrap-token-auth');
  }, 30_000);
});
