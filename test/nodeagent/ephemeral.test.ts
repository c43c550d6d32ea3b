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

// kube 1.32's two Conformance tests (test/e2e/common/node/ephemeral_containers.go),
// each in its own namespace as the e2e framework gives it. kube 1.32 does not
// yet count pod generations (1.33's PodObservedGenerationTracking), so the
// later versions' generation checks are not part of them.
describe('[sig-node] Ephemeral Containers [NodeConformance]', () => {
  const target = 'ephemeral-containers-target-pod';
  const podsOf = (ns: string) => `/api/v1/namespaces/${ns}/pods`;
  type PodSpecEc = { spec: { ephemeralContainers?: { name: string }[] }; metadata: { resourceVersion: string } };

  /** the framework's CreateSync: a namespace and the busybox target pod, running */
  const targetPod = async (ns: string) => {
    expect((await ts.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } })).status).toBe(201);
    const body = { apiVersion: 'v1', kind: 'Pod', metadata: { name: target }, spec: { nodeName: 'node-e', containers: [{ name: 'test-container-1', image: 'busybox', command: ['/bin/sleep'], args: ['10000'] }] } };
    expect((await ts.request('POST', podsOf(ns), { body })).status).toBe(201);
    await eventually(async () => {
      const p = (await ts.request('GET', `${podsOf(ns)}/${target}`)).json<Pod>();
      return p.status?.phase === 'Running' ? p : undefined;
    }, `${ns}/${target} running`);
  };

  /** the framework's AddEphemeralContainerSync: a strategic merge patch of pods/ephemeralcontainers, then the container running */
  const addDebugger = async (ns: string) => {
    const ec = { name: 'debugger', image: 'busybox', command: ['/bin/sh', '-c', 'while true; do echo polo; sleep 2; done'], stdin: true, tty: true };
    const r = await ts.request('PATCH', `${podsOf(ns)}/${target}/ephemeralcontainers`, { headers: { 'Content-Type': 'application/strategic-merge-patch+json' }, body: JSON.stringify({ spec: { ephemeralContainers: [ec] } }) });
    expect(r.status, r.text).toBe(200);
    await eventually(async () => {
      const p = (await ts.request('GET', `${podsOf(ns)}/${target}`)).json<Pod>();
      return p.status?.ephemeralContainerStatuses?.find((s) => s.name === 'debugger')?.state.running;
    }, `${ns} debugger running`);
  };

  /** the checks of "checking pod container endpoints": exec and logs reach the ephemeral container */
  const checkEndpoints = async (ns: string) => {
    const exec = await kubectl(['exec', '-n', ns, target, '-c', 'debugger', '--', '/bin/echo', 'marco']);
    expect(exec.stdout).toContain('marco');
    const log = await eventually(async () => {
      const l = await kubectl(['logs', '-n', ns, target, '-c', 'debugger']);
      return l.stdout.includes('polo') ? l.stdout : undefined;
    }, `${ns} debugger log`);
    expect(log).toContain('polo');
  };

  const ephemeralContainers = async (ns: string) => {
    const r = await ts.request('GET', `${podsOf(ns)}/${target}/ephemeralcontainers`);
    expect(r.status).toBe(200);
    return r.json<PodSpecEc>();
  };

  it.concurrent('will start an ephemeral container in an existing pod [Conformance]', async () => {
    const ns = 'ephemeral-containers-test-1';
    await targetPod(ns);
    await addDebugger(ns);
    await checkEndpoints(ns);
  });

  it.concurrent('should update the ephemeral containers in an existing pod [Conformance]', async () => {
    const ns = 'ephemeral-containers-test-2';
    await targetPod(ns);
    await addDebugger(ns);
    await checkEndpoints(ns);
    expect((await ephemeralContainers(ns)).spec.ephemeralContainers).toHaveLength(1);
    // kube's RetryOnConflict around a get and an update of the sub-resource
    const pod = (await ts.request('GET', `${podsOf(ns)}/${target}`)).json<PodSpecEc & Record<string, unknown>>();
    pod.spec.ephemeralContainers = [...(pod.spec.ephemeralContainers ?? []), { name: 'debugger2', image: 'registry.k8s.io/e2e-test-images/agnhost:2.53', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File' } as { name: string }];
    const put = await ts.request('PUT', `${podsOf(ns)}/${target}/ephemeralcontainers`, { body: pod });
    expect(put.status, put.text).toBe(200);
    const after = await ephemeralContainers(ns);
    expect(after.spec.ephemeralContainers?.map((c) => c.name)).toEqual(['debugger', 'debugger2']);
  });
});
