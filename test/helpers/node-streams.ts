// What the stream tests against a real agent share (test/nodeagent/streams*.test.ts):
// kubectl with stdin and its exit code, a pod's wait for Running, a user of the
// cluster CA, a pod-reader role for that user, and a TCP server the pods'
// port-forwards reach (simulated pods share the host's loopback).
import { spawn } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { expect } from 'vitest';
import { issueClientCertificate, loadPki } from '../../src/server/pki.js';
import { renderKubeconfig } from '../../src/server/kubeconfig.js';
import type { TestServer } from './server.js';

export interface KubectlRun {
  stdout: string;
  stderr: string;
  code: number | null;
}

/** kubectl with stdin (none: closed at once), its output and exit code; `env` is added to the process's */
export function kubectlRun(kubeconfig: string, args: string[], stdin?: string, env: NodeJS.ProcessEnv = {}): Promise<KubectlRun> {
  return new Promise((resolve) => {
    const child = spawn('kubectl', ['--kubeconfig', kubeconfig, ...args], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
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
export async function stopStreamsEnv(e: { listener?: Server; agent?: { stop(): Promise<void>; dir: string }; ts?: TestServer; dir?: string }): Promise<void> {
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
export function kubectlInTerminal(kubeconfig: string, args: string, env: NodeJS.ProcessEnv = {}): Promise<{ out: string; code: number | null }> {
  return new Promise((resolve) => {
    const child = spawn('script', ['-qec', `kubectl --kubeconfig ${kubeconfig} ${args}`, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const t = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('close', (code) => {
      clearTimeout(t);
      resolve({ out, code });
    });
  });
}
