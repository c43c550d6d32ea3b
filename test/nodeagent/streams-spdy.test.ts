// exec, attach, cp and port-forward over SPDY/3.1 upgrades (docs/nodeagent.md "Streams"):
// the real kubectl 1.32 forced to SPDY (KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false,
// KUBECTL_PORT_FORWARD_WEBSOCKETS=false), through the API server (authentication,
// authorization, admission) and the TLS front's hand-over (docs/tls.md "SPDY upgrades")
// to the agent's SPDY streams — with the TLS front in the main process (the test
// server's default, `--tls-workers 0`) and in a TLS worker process.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueClientCertificate, loadPki } from '../../src/server/pki.js';
import { renderKubeconfig } from '../../src/server/kubeconfig.js';
import { eventually as waitFor } from '../helpers/eventually.js';
import { type AgentProcess, startAgentProcess } from '../helpers/nodeagent.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

const SPDY_ENV = { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false', KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' };

interface Run {
  stdout: string;
  stderr: string;
  code: number | null;
}

/** kubectl forced to SPDY, with stdin, its output and exit code */
function kubectl(kubeconfig: string, args: string[], stdin?: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn('kubectl', ['--kubeconfig', kubeconfig, ...args], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...SPDY_ENV } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const t = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('close', (code) => {
      clearTimeout(t);
      resolve({ stdout, stderr, code });
    });
    child.stdin.end(stdin ?? '');
  });
}

for (const tlsWorkers of [0, 1]) {
  describe(`over SPDY/3.1 (--tls-workers ${tlsWorkers})`, () => {
    let ts: TestServer;
    let agent: AgentProcess;
    let admin: string;
    let alice: string;
    let dir: string;
    let listener: Server;
    let listenPort: number;
    const eventually = <T>(f: () => Promise<T>, what: string, ms = 45_000) => waitFor(f, what, { timeoutMs: ms, intervalMs: 200, context: () => agent?.output() ?? '' });

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'orch-spdy-'));
      ts = await startTestServer({ tlsWorkers });
      admin = join(ts.dataDir, 'admin.kubeconfig');
      agent = await startAgentProcess(ts, { nodeName: 'node-a', clientCaFile: false, config: { authorization: { mode: 'Webhook' } } });
      const pki = await loadPki(join(ts.dataDir, 'pki'));
      const cert = await issueClientCertificate(pki, { commonName: 'alice' });
      alice = join(dir, 'alice.kubeconfig');
      await writeFile(alice, renderKubeconfig({ server: ts.server.url, caPem: pki.ca.certPem, clientCertPem: cert.certPem, clientKeyPem: cert.keyPem, user: 'alice' }));
      listener = createServer((s) => s.on('data', (d) => s.write(`pong:${d}`)));
      await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
      listenPort = (listener.address() as { port: number }).port;
      const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'talker', namespace: 'default' }, spec: { nodeName: 'node-a', containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', 'i=0; while true; do echo tick $i; i=$((i+1)); sleep 0.3; done'] }] } };
      expect((await ts.request('POST', '/api/v1/namespaces/default/pods', { body: pod })).status).toBe(201);
      await eventually(async () => {
        const r = await ts.request('GET', '/api/v1/namespaces/default/pods/talker');
        const p = r.json<{ status?: { phase?: string; containerStatuses?: { state?: { running?: unknown } }[] } }>();
        return p.status?.phase === 'Running' && p.status.containerStatuses?.every((c) => c.state?.running);
      }, 'pod talker running');
    }, 90_000);

    afterAll(async () => {
      listener?.close();
      await agent?.stop();
      await ts?.stop();
      if (agent) await rm(agent.dir, { recursive: true, force: true });
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it.concurrent('kubectl exec: stdout, stderr and the exit code', async () => {
      const r = await kubectl(admin, ['exec', 'talker', '--', 'sh', '-c', 'echo hi; echo oops >&2; exit 3']);
      expect(r.stdout).toBe('hi\n');
      expect(r.stderr).toContain('oops\n');
      expect(r.stderr).toContain('command terminated with exit code 3');
      expect(r.code).toBe(3);
    });
  });
}
