// What the stream tests against a real agent share (test/nodeagent/streams*.test.ts):
// kubectl with stdin and its exit code, a pod's wait for Running, a user of the
// cluster CA, a pod-reader role for that user, and a TCP server the pods'
// port-forwards reach (simulated pods share the host's loopback).
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { expect } from 'vitest';
import { issueClientCertificate, loadPki } from '../../src/server/pki.js';
import { renderKubeconfig } from '../../src/server/kubeconfig.js';
import { type AgentProcess, startAgentProcess } from './nodeagent.js';
import { type TestServer, startTestServer } from './server.js';

export interface KubectlRun {
  stdout: string;
  stderr: string;
  code: number | null;
}

/** a child's stdout and stderr and its exit code; killed after `ms` */
function outputOf(child: ChildProcessWithoutNullStreams, ms: number): Promise<KubectlRun> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const t = setTimeout(() => child.kill('SIGKILL'), ms);
    child.on('close', (code) => {
      clearTimeout(t);
      resolve({ stdout, stderr, code });
    });
  });
}

/** kubectl with stdin (none: closed at once), its output and exit code; `env` is added to the process's */
export function kubectlRun(kubeconfig: string, args: string[], stdin?: string, env: NodeJS.ProcessEnv = {}): Promise<KubectlRun> {
  const child = spawn('kubectl', ['--kubeconfig', kubeconfig, ...args], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const out = outputOf(child, 60_000);
  child.stdin.end(stdin ?? '');
  return out;
}

type Eventually = <T>(f: () => Promise<T>, what: string) => Promise<T>;

/** waits until the pod runs with every container running; gives the pod */
export function podRunning(ts: TestServer, name: string, eventually: Eventually) {
  return eventually(async () => {
    const r = await ts.request('GET', `/api/v1/namespaces/default/pods/${name}`);
    const p = r.json<{ status?: { phase?: string; containerStatuses?: { state?: { running?: unknown } }[] } }>();
    return p.status?.phase === 'Running' && p.status.containerStatuses?.every((c) => c.state?.running) && p;
  }, `pod ${name} running`);
}

/** a kubeconfig in `dir` for `user`, with a client certificate of the cluster CA */
export async function userKubeconfig(ts: TestServer, dir: string, user: string): Promise<string> {
  const pki = await loadPki(join(ts.dataDir, 'pki'));
  const cert = await issueClientCertificate(pki, { commonName: user });
  const path = join(dir, `${user}.kubeconfig`);
  await writeFile(path, renderKubeconfig({ server: ts.server.url, caPem: pki.ca.certPem, clientCertPem: cert.certPem, clientKeyPem: cert.keyPem, user }));
  return path;
}

/** `user` may get and list pods in `default` (kubectl exec reads the pod first), nothing of their sub-resources */
export async function grantPodReader(ts: TestServer, user: string): Promise<void> {
  const group = 'rbac.authorization.orch.io';
  const role = { apiVersion: `${group}/v1`, kind: 'Role', metadata: { name: 'pod-reader', namespace: 'default' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }] };
  const binding = { apiVersion: `${group}/v1`, kind: 'RoleBinding', metadata: { name: `${user}-pod-reader`, namespace: 'default' }, roleRef: { apiGroup: group, kind: 'Role', name: 'pod-reader' }, subjects: [{ kind: 'User', name: user, apiGroup: group }] };
  expect((await ts.request('POST', `/apis/${group}/v1/namespaces/default/roles`, { body: role })).status).toBe(201);
  expect((await ts.request('POST', `/apis/${group}/v1/namespaces/default/rolebindings`, { body: binding })).status).toBe(201);
}

/** a loopback TCP server that answers each read with `pong:<bytes>` */
export async function pongServer(): Promise<{ server: Server; port: number }> {
  const server = createServer((s) => s.on('data', (d) => s.write(`pong:${d}`)));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as { port: number }).port };
}

/** stops what a stream test started, whichever of it did start */
export async function stopStreamsEnv(e: Partial<StreamsEnv>): Promise<void> {
  e.listener?.close();
  await e.agent?.stop();
  await e.ts?.stop();
  if (e.agent) await rm(e.agent.dir, { recursive: true, force: true });
  if (e.dir) await rm(e.dir, { recursive: true, force: true });
}

/**
 * kubectl given a terminal by `script` (so `-it` asks for tty=true; the simulator runs without a pty):
 * what it printed, both streams, and its exit code
 */
export async function kubectlInTerminal(kubeconfig: string, args: string, env: NodeJS.ProcessEnv = {}): Promise<{ out: string; code: number | null }> {
  const child = spawn('script', ['-qec', `kubectl --kubeconfig ${kubeconfig} ${args}`, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const r = await outputOf(child, 30_000);
  return { out: r.stdout + r.stderr, code: r.code };
}

/** a server, its agent `node-a` (webhook authorization, trusting the kubeconfig's CA), admin's and alice's kubeconfigs, a pong server */
export interface StreamsEnv {
  ts: TestServer;
  agent: AgentProcess;
  admin: string;
  alice: string;
  dir: string;
  listener: Server;
  listenPort: number;
}

export async function startStreamsEnv(serverOptions: Parameters<typeof startTestServer>[0] = {}): Promise<StreamsEnv> {
  const dir = await mkdtemp(join(tmpdir(), 'orch-streams-'));
  const started: Partial<StreamsEnv> = { dir };
  try {
    const ts = (started.ts = await startTestServer(serverOptions));
    const agent = (started.agent = await startAgentProcess(ts, { nodeName: 'node-a', clientCaFile: false, config: { authorization: { mode: 'Webhook' } } }));
    const alice = await userKubeconfig(ts, dir, 'alice');
    const { server: listener, port: listenPort } = await pongServer();
    return { ts, agent, admin: join(ts.dataDir, 'admin.kubeconfig'), alice, dir, listener, listenPort };
  } catch (e) {
    // afterAll has nothing to stop when this throws: what did start is stopped here
    await stopStreamsEnv(started);
    throw e;
  }
}
