// Runs a real `orch nodeagent` process against a test server, authenticated
// as system:node:<name> (group system:nodes) with a certificate signed by the
// server's CA — never with admin credentials.

import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { stringify } from 'yaml';
import { issueClientCertificate, loadPki } from '../../src/server/pki.js';
import { renderKubeconfig } from '../../src/server/kubeconfig.js';
import { eventually } from './eventually.js';
import { type OrchProcess, spawnOrch } from './orch-process.js';
import { type TestServer, startTestServer } from './server.js';

export interface AgentProcess {
  child: ChildProcess;
  dir: string;
  rootDir: string;
  port: number;
  output(): string;
  waitFor(re: RegExp, ms?: number): Promise<RegExpExecArray>;
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

export async function nodeKubeconfig(ts: TestServer, nodeName: string, dir: string): Promise<string> {
  const pki = await loadPki(join(ts.dataDir, 'pki'));
  const cert = await issueClientCertificate(pki, { commonName: `system:node:${nodeName}`, organizations: ['system:nodes'] });
  const path = join(dir, `${nodeName}.kubeconfig`);
  await writeFile(path, renderKubeconfig({ server: ts.server.url, caPem: pki.ca.certPem, clientCertPem: cert.certPem, clientKeyPem: cert.keyPem, user: `system:node:${nodeName}` }), { mode: 0o600 });
  return path;
}

export function agentConfig(fields: Record<string, unknown>): string {
  return stringify({ apiVersion: 'nodeagent.config.orch.io/v1beta1', kind: 'NodeAgentConfiguration', ...fields });
}

export function spawnAgent(args: string[], env: NodeJS.ProcessEnv = {}): OrchProcess {
  return spawnOrch(['nodeagent', ...args], env);
}

export interface StartAgentOptions {
  nodeName: string;
  config?: Record<string, unknown>;
  kubeconfig?: boolean;
  env?: NodeJS.ProcessEnv;
  extraArgs?: string[];
  /** reuse the directory of an earlier agent (its root dir, lock file, manifests) */
  dir?: string;
  /** false: no `authentication.x509.clientCAFile`, so the agent trusts its kubeconfig's cluster CA (the README's start) */
  clientCaFile?: false;
}

/** a temp dir with root dir, lock file, static pod dir and readings file, and a running agent */
export async function startAgentProcess(ts: TestServer | undefined, o: StartAgentOptions): Promise<AgentProcess> {
  const dir = o.dir ?? (await mkdtemp(join(tmpdir(), 'orch-agent-')));
  const rootDir = join(dir, 'root');
  await mkdir(join(dir, 'manifests'), { recursive: true });
  await mkdir(join(rootDir, 'seccomp'), { recursive: true });
  const config = {
    address: '127.0.0.1',
    port: 0,
    staticPodPath: join(dir, 'manifests'),
    hostReadingsFile: join(dir, 'readings.json'),
    nodeStatusUpdateFrequency: '1s',
    nodeLeaseRenewInterval: '1s',
    runtimeRelistPeriod: '300ms',
    evictionPressureTransitionPeriod: '0s',
    ...(ts && o.clientCaFile !== false ? { authentication: { x509: { clientCAFile: join(ts.dataDir, 'pki', 'ca.crt') } } } : {}),
    ...(o.config ?? {}),
  };
  await writeFile(join(dir, 'config.yaml'), agentConfig(config));
  const args = ['--config', join(dir, 'config.yaml'), '--root-dir', rootDir, '--lock-file', join(dir, 'nodeagent.lock'), '--hostname-override', o.nodeName, '--node-ip', '127.0.0.1', ...(o.extraArgs ?? [])];
  if (ts && o.kubeconfig !== false) args.push('--kubeconfig', await nodeKubeconfig(ts, o.nodeName, dir));
  const a = spawnAgent(args, o.env);
  const m = await a.waitFor(/HTTPS on port (\d+)/);
  return {
    ...a,
    dir,
    rootDir,
    port: Number(m[1]),
    async stop() {
      if (a.child.exitCode === null) {
        a.child.kill('SIGTERM');
        await a.exited;
      }
    },
  };
}

/** waits until the agent's Node reports Ready=True (the agent's output tail in the failure message) */
export async function waitNodeReady(ts: TestServer, agent: AgentProcess, nodeName: string): Promise<void> {
  await eventually(async () => {
    const r = await ts.request('GET', `/api/v1/nodes/${nodeName}`);
    return r.status === 200 && (r.json<{ status?: { conditions?: { type: string; status: string }[] } }>().status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  }, `${nodeName} Ready`, { timeoutMs: 60_000, context: () => agent.output().slice(-2000) });
}

/** stops the agent, then the server, and removes the agent's directory */
export async function stopAgentAndServer(agent: AgentProcess | undefined, ts: TestServer | undefined): Promise<void> {
  await agent?.stop();
  await ts?.stop();
  if (agent) await rm(agent.dir, { recursive: true, force: true });
}

/**
 * A test file's server and one Ready agent: started before its tests, stopped after
 * (registers vitest's beforeAll/afterAll; call at the top level of the file).
 */
export function serverWithAgent(nodeName: string): { ts(): TestServer; agent(): AgentProcess } {
  let ts: TestServer | undefined;
  let agent: AgentProcess | undefined;
  beforeAll(async () => {
    ts = await startTestServer();
    agent = await startAgentProcess(ts, { nodeName });
    await waitNodeReady(ts, agent, nodeName);
  });
  afterAll(async () => {
    await stopAgentAndServer(agent, ts);
  });
  return { ts: () => ts!, agent: () => agent! };
}
