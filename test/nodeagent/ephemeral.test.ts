// Ephemeral containers end to end (docs/nodeagent.md "Ephemeral containers"):
// kubectl 1.32 `debug` → pods/ephemeralcontainers on the API server → the
// real `orch nodeagent` process, which starts the container in the pod's
// sandbox of the simulated runtime and reports ephemeralContainerStatuses;
// exec, logs and attach reach it.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually as waitFor } from '../helpers/eventually.js';
import { runKubectl } from '../helpers/kubectl.js';
import { type AgentProcess, startAgentProcess } from '../helpers/nodeagent.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let ts: TestServer;
let agent: AgentProcess;
let admin: string;

const kubectl = (args: string[]) => runKubectl(admin, args);

type EphemeralStatus = { name: string; image: string; imageID: string; containerID?: string; ready: boolean; state: { running?: unknown; terminated?: { exitCode: number } } };
type Pod = { status?: { phase?: string; containerStatuses?: { state?: { running?: unknown } }[]; ephemeralContainerStatuses?: EphemeralStatus[] } };
const eventually = <T>(f: () => Promise<T>, what: string) => waitFor(f, what, { timeoutMs: 45_000, intervalMs: 200, context: () => agent?.output() ?? '' });
const getPod = async (name: string) => (await ts.request('GET', `/api/v1/namespaces/default/pods/${name}`)).json<Pod>();
const ephemeral = (name: string, container: string) =>
  eventually(async () => (await getPod(name)).status?.ephemeralContainerStatuses?.find((s) => s.name === container), `${name}/${container} status`);

beforeAll(async () => {
  ts = await startTestServer();
  admin = join(ts.dataDir, 'admin.kubeconfig');
  agent = await startAgentProcess(ts, { nodeName: 'node-e', clientCaFile: false, config: { authorization: { mode: 'Webhook' } } });
  const body = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'app', namespace: 'default' }, spec: { nodeName: 'node-e', containers: [{ name: 'main', image: 'busybox', command: ['sleep', '3600'] }] } };
  expect((await ts.request('POST', '/api/v1/namespaces/default/pods', { body })).status).toBe(201);
  await eventually(async () => {
    const p = await getPod('app');
    return p.status?.phase === 'Running' && p.status.containerStatuses?.every((c) => c.state?.running);
  }, 'pod app running');
}, 90_000);

afterAll(async () => {
  await agent?.stop();
  await ts?.stop();
  if (agent) await rm(agent.dir, { recursive: true, force: true });
});

describe('ephemeral containers on a node', () => {
  it('kubectl debug adds one; the agent runs it, reports it running, and exec and logs reach it', async () => {
    const r = await kubectl(['debug', 'app', '--profile=general', '--image=busybox:1.36', '--container=dbg', '--target=main', '--', 'sh', '-c', 'echo debugging; sleep 3600']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const s = await eventually(async () => {
      const st = await ephemeral('app', 'dbg');
      return st.state.running ? st : undefined;
    }, 'dbg running');
    expect(s).toMatchObject({ name: 'dbg', image: 'busybox:1.36', ready: false });
    expect(s.imageID).not.toBe('');
    expect(s.containerID).toMatch(/^[a-z-]+:\/\/./);
    // the pod stays as it was: still Running and ready with its own container
    expect((await getPod('app')).status?.phase).toBe('Running');
    const exec = await kubectl(['exec', 'app', '-c', 'dbg', '--', 'sh', '-c', 'echo in-dbg']);
    expect(exec.stdout).toBe('in-dbg\n');
    const logs = await eventually(async () => {
      const l = await kubectl(['logs', 'app', '-c', 'dbg']);
      return l.stdout.includes('debugging') ? l : undefined;
    }, 'dbg log');
    expect(logs.stdout).toBe('debugging\n');
  });

  it('kubectl debug -it runs the command and shows its output; the exited container is not restarted', async () => {
    const r = await kubectl(['debug', 'app', '-it', '--image=busybox', '--container=once', '--target=main', '--', 'echo', 'dbg']);
    expect(r.stdout).toContain('dbg');
    const s = await eventually(async () => {
      const st = await ephemeral('app', 'once');
      return st.state.terminated ? st : undefined;
    }, 'once terminated');
    expect(s.state.terminated?.exitCode).toBe(0);
    // another sync of the pod (a label) leaves it terminated: no restart
    expect((await ts.request('PATCH', '/api/v1/namespaces/default/pods/app', { headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ metadata: { labels: { poke: '1' } } }) })).status).toBe(200);
    await eventually(async () => {
      const l = await kubectl(['get', 'pod', 'app', '-o', 'jsonpath={.metadata.labels.poke}']);
      return l.stdout === '1';
    }, 'label seen');
    const again = await ephemeral('app', 'once');
    expect(again.state.terminated?.exitCode).toBe(0);
    expect(again.containerID).toBe(s.containerID);
  });
});
