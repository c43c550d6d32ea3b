// The README's TLS bootstrap, as a user runs it: `orch server --enable-bootstrap-token-auth`, then
// `orch bootstrap-kubeconfig --out boot.kubeconfig --ttl 1h` (the token and its bindings made through the admin
// kubeconfig of ./.orch), then `orch nodeagent --bootstrap-kubeconfig boot.kubeconfig --kubeconfig
// .nodeagent/node.kubeconfig … --rotate-certificates`: `kubectl get csr` shows the agent's request from
// system:bootstrap:<id> Approved,Issued, and the node is Ready. Without a server's admin kubeconfig the command
// says what is missing. Only the ports differ from the README (a free API port; `port: 0` for the agent).
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { useFreshDirServer } from '../helpers/orch-process.js';

const fresh = useFreshDirServer(['--enable-bootstrap-token-auth']);

describe('README TLS bootstrap', () => {
  it('bootstrap-kubeconfig, then nodeagent --bootstrap-kubeconfig: an auto-approved CSR and a Ready node', async () => {
    const { orch, dir, kubectl } = fresh();
    const started = Date.now();
    const boot = orch(['bootstrap-kubeconfig', '--out', 'boot.kubeconfig', '--ttl', '1h']);
    expect(await boot.exited, boot.output()).toBe(0);
    const id = /^wrote boot\.kubeconfig with bootstrap token ([a-z0-9]{6})\.<secret>\n$/.exec(boot.output())?.[1];
    expect(id, boot.output()).toBeDefined();
    expect((await stat(join(dir, 'boot.kubeconfig'))).mode & 0o777).toBe(0o600);
    // --ttl 1h: the token Secret expires in an hour
    const exp = await kubectl('get', 'secret', '-n', 'orch-system', `bootstrap-token-${id}`, '-o', 'jsonpath={.data.expiration}');
    const expiresIn = Date.parse(Buffer.from(exp.stdout, 'base64').toString()) - started;
    expect(expiresIn).toBeGreaterThan(3600_000 - 60_000);
    expect(expiresIn).toBeLessThan(3600_000 + 60_000);

    const agent = orch(['nodeagent', '--bootstrap-kubeconfig', 'boot.kubeconfig', '--kubeconfig', '.nodeagent/node.kubeconfig',
      '--hostname-override', 'node-1', '--root-dir', '.nodeagent', '--lock-file', '.nodeagent/nodeagent.lock', '--rotate-certificates',
      '--config', await fresh().agentConfigFile()]);
    await agent.waitFor(/tls bootstrap: wrote \.nodeagent\/node\.kubeconfig for system:node:node-1/, 30_000);

    const csr = await kubectl('get', 'csr');
    expect(csr.stdout.split('\n')[0]).toMatch(/^NAME +AGE +SIGNERNAME +REQUESTOR +REQUESTEDDURATION +CONDITION$/);
    expect(csr.stdout).toMatch(new RegExp(`^node-csr-\\S+ +\\S+ +orch\\.io/orch-apiserver-client-kubelet +system:bootstrap:${id} +<none> +Approved,Issued$`, 'm'));
    await eventually(async () => /^node-1 +Ready /m.test((await kubectl('get', 'nodes')).stdout), 'node-1 Ready', { timeoutMs: 30_000, context: () => agent.output() });
  }, 90_000);

  it('without a server\'s admin kubeconfig it says what is missing', async () => {
    const { orch, dir } = fresh();
    const p = orch(['bootstrap-kubeconfig', '--out', 'x.kubeconfig', '--data-dir', join(dir, 'nowhere')]);
    expect(await p.exited).toBe(1);
    expect(p.output()).toBe(`bootstrap-kubeconfig: ${join(dir, 'nowhere', 'admin.kubeconfig')} not found: start the server first or pass --kubeconfig\n`);
  });
});
