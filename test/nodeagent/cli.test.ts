// `orch nodeagent` as a process: the lock file, --print-config, bad
// configuration, a kubeconfig it cannot use, standalone mode with static pods, an unreachable control
// plane, and the checkpoint gate turned off.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readKubeconfig } from '../../src/nodeagent/kubeconfig.js';
import { parseNodeIPArgument } from '../../src/nodeagent/node-ip.js';
import { RuntimeClient } from '../../src/nodeagent/runtime/client.js';
import { writeKubeconfig } from '../../src/server/kubeconfig.js';
import { ensurePki } from '../../src/server/pki.js';
import { startRuntimeSim } from '../../src/nodeagent/runtime/sim-server.js';
import { type AgentProcess, agentConfig, spawnAgent, startAgentProcess } from '../helpers/nodeagent.js';

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const f of cleanup.reverse()) await f().catch(() => {});
});

async function standalone(name: string, config: Record<string, unknown> = {}): Promise<AgentProcess> {
  const a = await startAgentProcess(undefined, { nodeName: name, config: { authorization: { mode: 'AlwaysAllow' }, authentication: { anonymous: { enabled: true } }, ...config } });
  cleanup.push(async () => {
    await a.stop();
    await rm(a.dir, { recursive: true, force: true });
  });
  return a;
}

function post(port: number, path: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path, rejectUnauthorized: false }, (res) => {
      let t = '';
      res.on('data', (d: Buffer) => (t += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: t }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('orch node-kubeconfig', () => {
  it('takes the server from the data dir\'s admin kubeconfig (a server on another port), else --server', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'orch-nodekc-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const pki = await ensurePki(join(dir, 'pki'));
    await writeKubeconfig(join(dir, 'admin.kubeconfig'), { server: 'https://127.0.0.1:7443', caPem: pki.ca.certPem, clientCertPem: pki.admin.certPem, clientKeyPem: pki.admin.keyPem, user: 'admin' });
    const run = (...extra: string[]) => promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'node-kubeconfig', '--node-name', 'n1', '--data-dir', dir, ...extra]);
    await run('--out', join(dir, 'a.kubeconfig'));
    const a = await readKubeconfig(join(dir, 'a.kubeconfig'));
    expect(a.server).toBe('https://127.0.0.1:7443');
    expect(a.caPem).toBe(pki.ca.certPem);
    await run('--out', join(dir, 'b.kubeconfig'), '--server', 'https://10.0.0.1:6443');
    expect((await readKubeconfig(join(dir, 'b.kubeconfig'))).server).toBe('https://10.0.0.1:6443');
  });
});

describe('orch nodeagent process', () => {
  it('a second agent on the same lock file exits with a clear message; a stale lock is taken over', async () => {
    const a = await standalone('lock-a');
    const lock = join(a.dir, 'nodeagent.lock');
    expect((await readFile(lock, 'utf8')).trim()).toBe(String(a.child.pid));
    const b = spawnAgent(['--root-dir', join(a.dir, 'root2'), '--lock-file', lock, '--hostname-override', 'lock-b']);
    expect(await b.exited).toBe(1);
    expect(b.output()).toContain(`another node agent (pid ${a.child.pid}) holds the lock file ${lock}`);
    await a.stop();
    // a lock file left by a process that is gone is stale
    await writeFile(lock, '999999\n');
    const c = spawnAgent(['--root-dir', join(a.dir, 'root3'), '--lock-file', lock, '--hostname-override', 'lock-c', '--config', join(a.dir, 'config.yaml')]);
    cleanup.push(async () => {
      c.child.kill('SIGTERM');
      await c.exited;
    });
    await c.waitFor(/HTTPS on port/);
    expect((await readFile(lock, 'utf8')).trim()).toBe(String(c.child.pid));
  });

  it('--print-config prints the merged configuration; bad files stop the start naming file and field', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'orch-cli-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    await mkdir(join(dir, 'd'));
    await writeFile(join(dir, 'c.yaml'), agentConfig({ maxPods: 20, featureGates: { ContainerCheckpoint: true } }));
    await writeFile(join(dir, 'd', '50-x.conf'), agentConfig({ featureGates: { ContainerCheckpoint: false } }));
    const p = spawnAgent(['--config', join(dir, 'c.yaml'), '--config-dir', join(dir, 'd'), '--print-config']);
    expect(await p.exited).toBe(0);
    expect(p.output()).toMatch(/^apiVersion: nodeagent\.config\.orch\.io\/v1beta1\nkind: NodeAgentConfiguration\n/);
    expect(p.output()).toContain('maxPods: 20');
    expect(p.output()).toContain('ContainerCheckpoint: false');
    await writeFile(join(dir, 'd', '60-bad.conf'), agentConfig({ evictionHard: { 'memory.available': 'lots' } }));
    const q = spawnAgent(['--config', join(dir, 'c.yaml'), '--config-dir', join(dir, 'd'), '--print-config']);
    expect(await q.exited).toBe(1);
    expect(q.output()).toContain('invalid configuration: field "evictionHard.memory.available": "lots" is not a quantity');
    await writeFile(join(dir, 'd', '60-bad.conf'), agentConfig({ registerNode: 'yes' }));
    const r = spawnAgent(['--config', join(dir, 'c.yaml'), '--config-dir', join(dir, 'd')]);
    expect(await r.exited).toBe(1);
    expect(r.output()).toContain(`${join(dir, 'd', '60-bad.conf')}: field "registerNode" must be a boolean`);
    const w = spawnAgent(['--config', join(dir, 'c.yaml')], { WATCHDOG_USEC: '500000', NOTIFY_SOCKET: join(dir, 'n.sock') });
    expect(await w.exited).toBe(1);
    expect(w.output()).toContain('minimum supported: 1.0s');
  });

  it('a kubeconfig it cannot use: one message and exit 1, with nothing started (no lock, root dir or runtime)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'orch-badkc-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, 'notyaml.kubeconfig'), 'clusters: [\n');
    await writeFile(join(dir, 'nocontext.kubeconfig'), 'apiVersion: v1\nkind: Config\nclusters: []\n');
    const run = async (name: string, args: string[]) => {
      const rootDir = join(dir, name, 'root');
      const p = spawnAgent([...args, '--root-dir', rootDir, '--lock-file', join(dir, name, 'nodeagent.lock'), '--hostname-override', name]);
      expect(await p.exited).toBe(1);
      // nothing started: no lock file, no root dir, so no simulated runtime's socket in it
      expect(existsSync(join(dir, name))).toBe(false);
      expect(p.output()).not.toContain('simulated runtime');
      return p.output().trim();
    };
    expect(await run('missing', ['--kubeconfig', join(dir, 'missing.kubeconfig')])).toBe(
      `nodeagent: --kubeconfig ${join(dir, 'missing.kubeconfig')} is not usable: no such file or directory (without --kubeconfig the agent runs standalone)`,
    );
    expect(await run('notyaml', ['--kubeconfig', join(dir, 'notyaml.kubeconfig')])).toMatch(new RegExp(`^nodeagent: --kubeconfig ${join(dir, 'notyaml.kubeconfig')} is not usable: [^\n]+ \\(without --kubeconfig the agent runs standalone\\)$`));
    expect(await run('nocontext', ['--kubeconfig', join(dir, 'nocontext.kubeconfig')])).toBe(
      `nodeagent: --kubeconfig ${join(dir, 'nocontext.kubeconfig')} is not usable: context "" not found (without --kubeconfig the agent runs standalone)`,
    );
    // TLS bootstrapping: without a usable --kubeconfig the bootstrap kubeconfig must be readable
    expect(await run('boot', ['--kubeconfig', join(dir, 'node.kubeconfig'), '--bootstrap-kubeconfig', join(dir, 'boot.kubeconfig')])).toBe(
      `nodeagent: --bootstrap-kubeconfig ${join(dir, 'boot.kubeconfig')} is not usable: no such file or directory (needed: --kubeconfig ${join(dir, 'node.kubeconfig')} is absent or has no valid client certificate)`,
    );
    expect(await run('bootonly', ['--bootstrap-kubeconfig', join(dir, 'boot.kubeconfig')])).toBe('nodeagent: --bootstrap-kubeconfig needs --kubeconfig (where the bootstrapped kubeconfig is written)');
  });

  it('standalone: runs static pods without a control plane; the checkpoint endpoint is 404 with the gate off', async () => {
    const a = await standalone('solo', { featureGates: { ContainerCheckpoint: false } });
    await writeFile(join(a.dir, 'manifests', 'web.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: nginx\n    image: nginx\n');
    const rt = new RuntimeClient(`unix://${join(a.rootDir, 'runtime-sim.sock')}`);
    try {
      for (let i = 0; i < 200; i++) {
        const running = await rt.listContainers({ state: 'CONTAINER_RUNNING' });
        if (running.some((c) => c.labels['io.orch.pod.name'] === 'web-solo')) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const running = await rt.listContainers({ state: 'CONTAINER_RUNNING' });
      expect(running.map((c) => [c.labels['io.orch.pod.name'], c.labels['io.orch.pod.namespace'], c.metadata.name])).toEqual([['web-solo', 'default', 'nginx']]);
      const off = await post(a.port, '/checkpoint/default/web-solo/nginx');
      expect(off.status).toBe(404);
      expect(off.text).toContain('feature gate ContainerCheckpoint');
      // the manifest goes away: the pod is stopped and removed
      await rm(join(a.dir, 'manifests', 'web.yaml'));
      for (let i = 0; i < 200 && (await rt.listPodSandbox()).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
      expect(await rt.listPodSandbox()).toEqual([]);
    } finally {
      rt.close();
    }
  });

  it('--node-ip: entries that are no IP are logged and ignored (kubelet\'s ParseNodeIPArgument); two of one family stop the start', async () => {
    const logs: string[] = [];
    expect(parseNodeIPArgument('10.999.1.1', (m) => logs.push(m))).toEqual([]);
    expect(parseNodeIPArgument('not-an-ip, 10.0.0.7', (m) => logs.push(m))).toEqual(['10.0.0.7']);
    expect(parseNodeIPArgument('010.0.0.1,fd00::1', () => {})).toEqual(['10.0.0.1', 'fd00::1']);
    expect(logs).toEqual(['Could not parse node IP. Ignoring IP="10.999.1.1"', 'Could not parse node IP. Ignoring IP="not-an-ip"']);
    expect(() => parseNodeIPArgument('10.0.0.1,10.0.0.2', () => {})).toThrow(/single IP or a dual-stack pair/);
    // the process: the invalid value is ignored (the address auto-detected), not published
    const a = await startAgentProcess(undefined, { nodeName: 'badip', config: { authorization: { mode: 'AlwaysAllow' } }, extraArgs: ['--node-ip', '10.999.1.1'] });
    cleanup.push(async () => {
      await a.stop();
      await rm(a.dir, { recursive: true, force: true });
    });
    expect(a.output()).toContain('Could not parse node IP. Ignoring IP="10.999.1.1"');
    const b = spawnAgent(['--root-dir', join(a.dir, 'root2'), '--lock-file', join(a.dir, 'lock2'), '--node-ip', '10.0.0.1,10.0.0.2']);
    expect(await b.exited).toBe(1);
    expect(b.output()).toContain('must contain either a single IP or a dual-stack pair of IPs');
  });

  it('a runtime socket that is gone: Ready is false and /healthz 500 until a runtime appears; Webhook authorization without a control plane is 403', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'orch-nort-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const sock = join(dir, 'rt.sock');
    const a = await standalone('nort', { containerRuntimeEndpoint: `unix://${sock}`, authorization: { mode: 'Webhook' } });
    await a.waitFor(/ContainerRuntimeNotReady: container runtime is down/);
    const get = () => new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: a.port, path: '/healthz', rejectUnauthorized: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(await get()).toBe(500);
    const denied = await post(a.port, '/checkpoint/default/x/y');
    expect(denied.status).toBe(403);
    expect(denied.text).toContain('needs a control plane');
    const sim = await startRuntimeSim(sock);
    cleanup.push(() => sim.stop());
    await a.waitFor(/container runtime is ready/);
    expect(await get()).toBe(200);
  });

  it('an unreachable control plane: the agent keeps running and retries with back-off', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'orch-unreach-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, 'kc'), 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {token: abc}}]\n');
    const a = await startAgentProcess(undefined, { nodeName: 'lonely', config: { authorization: { mode: 'AlwaysAllow' } }, extraArgs: ['--kubeconfig', join(dir, 'kc')] });
    cleanup.push(async () => {
      await a.stop();
      await rm(a.dir, { recursive: true, force: true });
    });
    await a.waitFor(/node status: .*ECONNREFUSED[\s\S]*node status: .*ECONNREFUSED/);
    await a.waitFor(/lease renewal failed \(attempt 2, next in 400 ms\)/);
    expect(a.child.exitCode).toBeNull();
  });
});
