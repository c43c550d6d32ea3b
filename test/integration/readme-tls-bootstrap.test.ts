// The README's TLS bootstrap, as a user runs it: `orch server --enable-bootstrap-token-auth`, then
// `orch bootstrap-kubeconfig --out boot.kubeconfig --ttl 1h` (the token and its bindings made through the admin
// kubeconfig of ./.orch), then `orch nodeagent --bootstrap-kubeconfig boot.kubeconfig --kubeconfig
// .nodeagent/node.kubeconfig … --rotate-certificates`: `kubectl get csr` shows the agent's request from
// system:bootstrap:<id> Approved,Issued, and the node is Ready. Without a server's admin kubeconfig the command
// says what is missing. Only the ports differ from the README (a free API port; `port: 0` for the agent).
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { runKubectl } from '../helpers/kubectl.js';
import { agentConfig } from '../helpers/nodeagent.js';
import { type OrchProcess, spawnOrch, stopOrch } from '../helpers/orch-process.js';
import { freePort } from '../helpers/ports.js';

let dir = '';
let server: OrchProcess | undefined;
let agent: OrchProcess | undefined;
let kubeconfig = '';
const kubectl = (...args: string[]) => runKubectl(kubeconfig, args);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-readme-boot-'));
  server = spawnOrch(['server', '--secure-port', String(await freePort()), '--enable-bootstrap-token-auth'], {}, dir);
  kubeconfig = (await server.waitFor(/^ {2}kubeconfig: (\S+)$/m, 60_000))[1]!;
}, 90_000);

afterAll(async () => {
  await stopOrch(agent);
  await stopOrch(server);
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('README TLS bootstrap', () => {
  it('bootstrap-kubeconfig, then nodeagent --bootstrap-kubeconfig: an auto-approved CSR and a Ready node', async () => {
    const started = Date.now();
    const boot = spawnOrch(['bootstrap-kubeconfig', '--out', 'boot.kubeconfig', '--ttl', '1h'], {}, dir);
    expect(await boot.exited, boot.output()).toBe(0);
    const id = /^wrote boot\.kubeconfig with bootstrap token ([a-z0-9]{6})\.<secret>\n$/.exec(boot.output())?.[1];
    expect(id, boot.output()).toBeDefined();
    expect((await stat(join(dir, 'boot.kubeconfig'))).mode & 0o777).toBe(0o600);
    // --ttl 1h: the token Secret expires in an hour
    const exp = await kubectl('get', 'secret', '-n', 'orch-system', `bootstrap-token-${id}`, '-o', 'jsonpath={.data.expiration}');
    const expiresIn = Date.parse(Buffer.from(exp.stdout, 'base64').toString()) - started;
    expect(expiresIn).toBeGreaterThan(3600_000 - 60_000);
    expect(expiresIn).toBeLessThan(3600_000 + 60_000);

    await writeFile(join(dir, 'agent.yaml'), agentConfig({ port: 0, staticPodPath: join(dir, 'manifests') }));
    agent = spawnOrch(['nodeagent', '--bootstrap-kubeconfig', 'boot.kubeconfig', '--kubeconfig', '.nodeagent/node.kubeconfig',
      '--hostname-override', 'node-1', '--root-dir', '.nodeagent', '--lock-file', '.nodeagent/nodeagent.lock', '--rotate-certificates',
      '--config', join(dir, 'agent.yaml')], {}, dir);
    await agent.waitFor(/tls bootstrap: wrote \.nodeagent\/node\.kubeconfig for system:node:node-1/, 30_000);

    const csr = await kubectl('get', 'csr');
    expect(csr.stdout.split('\n')[0]).toMatch(/^NAME +AGE +SIGNERNAME +REQUESTOR +REQUESTEDDURATION +CONDITION$/);
    expect(csr.stdout).toMatch(new RegExp(`^node-csr-\\S+ +\\S+ +orch\\.io/orch-apiserver-client-kubelet +system:bootstrap:${id} +<none> +Approved,Issued$`, 'm'));
    await eventually(async () => /^node-1 +Ready /m.test((await kubectl('get', 'nodes')).stdout), 'node-1 Ready', { timeoutMs: 30_000, context: () => agent!.output() });
  }, 90_000);

  it('without a server\'s admin kubeconfig it says what is missing', async () => {
    const p = spawnOrch(['bootstrap-kubeconfig', '--out', 'x.kubeconfig', '--data-dir', join(dir, 'nowhere')], {}, dir);
    expect(await p.exited).toBe(1);
    expect(p.output()).toBe(`bootstrap-kubeconfig: ${join(dir, 'nowhere', 'admin.kubeconfig')} not found: start the server first or pass --kubeconfig\n`);
  });
});
