// Kubernetes' sig-node e2e tests of container runtime behaviour, on orch with
// its controllers and a real node agent (simulated runtime; `sh -c` scripts run
// as real processes, container paths rewritten to the volumes' host paths):
// test/e2e/common/node/runtime.go (the blackbox test: restart policies and exit
// codes → RestartCount, Phase, Ready, State; termination messages from a file,
// as non-root at a custom path, from the log on failure with
// FallbackToLogsOnError), test/e2e/common/node/lifecycle_hook.go (postStart and
// preStop hooks, exec and httpGet), test/e2e/common/node/kubelet.go (a
// command's output in the log; a failing command's terminated reason, and its
// pod deleted), test/e2e/common/node/pods.go
// (activeDeadlineSeconds updated → DeadlineExceeded) and test/e2e/node/pods.go
// (Pod QOS class; a pending container never reports success), and
// test/e2e/common/node/containers.go (the agnhost image's ENTRYPOINT and CMD
// under the pod's command and args; the simulator's image configs,
// sim-images.ts, and its agnhost, sim-agnhost.ts).

import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Obj, condition, e2eEnv, namespace, updateWithRetries } from '../helpers/e2e-apps.js';
import { ensurePki } from '../../src/server/pki.js';
import { freePort } from '../helpers/ports.js';
import { podLog, testContainerOutput, uniqueName } from '../helpers/e2e-node-output.js';

const env = e2eEnv('runtime-node');
const BUSYBOX = 'registry.k8s.io/e2e-test-images/busybox:1.36.1-1';
const PODS = (ns: string) => `/api/v1/namespaces/${ns}/pods`;
let seq = 0;
const ns = (base: string) => namespace(env, `${base}-${++seq}-${Math.random().toString(36).slice(2, 7)}`);

/** the e2e framework's ConformanceContainer: one container in a pod of its own */
async function create(n: string, name: string, container: Obj, extra: Obj = {}): Promise<string> {
  await env.call('POST', PODS(n), { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name, image: BUSYBOX, ...container }], ...extra } });
  return `${PODS(n)}/${name}`;
}
const status = async (path: string): Promise<Obj> => ((await env.get(path)).status?.containerStatuses ?? [])[0] ?? {};
const phaseIs = (path: string, phase: string) => env.eventually(async () => {
  const p = await env.get(path);
  return p.status?.phase === phase && p;
}, `${path} ${phase}`, 60_000);
const events = async (n: string, name: string): Promise<Obj[]> => (await env.get(`/api/v1/namespaces/${n}/events?fieldSelector=${encodeURIComponent(`involvedObject.name=${name}`)}`)).items;
/** ConformanceContainer.Delete, then Present() turning false */
async function deleteAndWait(path: string): Promise<void> {
  await env.call('DELETE', path, { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 1 });
  await env.eventually(async () => (await env.ts().request('GET', path)).status === 404, `${path} gone`, 60_000);
}

describe('[sig-node] Container Runtime blackbox test', () => {
  it('when starting a container that exits: should run with the expected status [NodeConformance] [Conformance]', async () => {
    const n = await ns('container-runtime');
    // fails at its 1st run, succeeds at its 2nd, then runs for ever; the count lives in an emptyDir
    const script = `f=/restart-count/restartCount
count=$(echo 'hello' >> $f ; wc -l $f | awk {'print $1'})
if [ $count -eq 1 ]; then
	exit 1
fi
if [ $count -eq 2 ]; then
	exit 0
fi
while true; do sleep 1; done
`;
    const cases = [
      { name: 'terminate-cmd-rpa', policy: 'Always', phase: 'Running', state: 'running', restarts: 2, ready: true },
      { name: 'terminate-cmd-rpof', policy: 'OnFailure', phase: 'Succeeded', state: 'terminated', restarts: 1, ready: false },
      { name: 'terminate-cmd-rpn', policy: 'Never', phase: 'Failed', state: 'terminated', restarts: 0, ready: false },
    ];
    for (const c of cases) {
      const path = await create(n, c.name, { command: ['sh', '-c', script], volumeMounts: [{ name: 'restart-count', mountPath: '/restart-count' }] }, {
        restartPolicy: c.policy,
        volumes: [{ name: 'restart-count', emptyDir: { medium: 'Memory' } }],
      });
      await env.eventually(async () => (await status(path)).restartCount === c.restarts, `${c.name} RestartCount ${c.restarts}`, 60_000);
      const p = await phaseIs(path, c.phase);
      expect(condition(p, 'Ready')?.status === 'True').toBe(c.ready);
      const s = await status(path);
      expect(Object.keys(s.state)).toEqual([c.state]);
      // beyond kube's checks: the reasons kubelet gives each termination
      if (c.policy === 'Never') expect(s.state.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
      if (c.policy === 'OnFailure') {
        expect(s.state.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
        expect(s.lastState.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
      }
      if (c.policy === 'Always') expect(s.lastState.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
      await deleteAndWait(path);
    }
  });

  /** matchTerminationMessage: restartPolicy Never, wait for the phase, the container terminated with the message */
  async function terminationMessage(container: Obj, phase: string, want: string): Promise<void> {
    const n = await ns('container-runtime');
    const path = await create(n, 'termination-message-container', container, { restartPolicy: 'Never' });
    await phaseIs(path, phase);
    const s = await status(path);
    expect(Object.keys(s.state)).toEqual(['terminated']);
    expect(s.state.terminated.message ?? '').toBe(want);
    await deleteAndWait(path);
  }

  it('on terminated container: should report termination message if TerminationMessagePath is set [NodeConformance]', () =>
    terminationMessage({ command: ['/bin/sh', '-c'], args: ['/bin/echo -n DONE > /dev/termination-log'], terminationMessagePath: '/dev/termination-log', securityContext: { runAsUser: 0 } }, 'Succeeded', 'DONE'));

  // the script runs as uid 10000 when the simulator is root: the message file (0666) is reached through the agent's private root dir
  it('on terminated container: should report termination message if TerminationMessagePath is set as non-root user and at a non-default path [NodeConformance] [Conformance]', () =>
    terminationMessage({ command: ['/bin/sh', '-c'], args: ['/bin/echo -n DONE > /dev/termination-custom-log'], terminationMessagePath: '/dev/termination-custom-log', securityContext: { runAsUser: 10000 } }, 'Succeeded', 'DONE'));

  it('on terminated container: should report termination message from log output if TerminationMessagePolicy FallbackToLogsOnError is set [NodeConformance] [Conformance]', () =>
    terminationMessage({ command: ['/bin/sh', '-c'], args: ['/bin/echo -n DONE; /bin/false'], terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'FallbackToLogsOnError' }, 'Failed', 'DONE'));

  it('on terminated container: should report termination message as empty when pod succeeds and TerminationMessagePolicy FallbackToLogsOnError is set [NodeConformance] [Conformance]', () =>
    terminationMessage({ command: ['/bin/sh', '-c'], args: ['/bin/echo -n DONE; /bin/true'], terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'FallbackToLogsOnError' }, 'Succeeded', ''));

  it('on terminated container: should report termination message from file when pod succeeds and TerminationMessagePolicy FallbackToLogsOnError is set [NodeConformance] [Conformance]', () =>
    terminationMessage({ command: ['/bin/sh', '-c'], args: ['/bin/echo -n OK > /dev/termination-log; /bin/echo DONE; /bin/true'], terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'FallbackToLogsOnError' }, 'Succeeded', 'OK'));

  // not in runtime.go: the default policy File never falls back to the log
  it('on terminated container: a failing container with policy File and no file reports no message', () =>
    terminationMessage({ command: ['/bin/sh', '-c'], args: ['/bin/echo -n DONE; /bin/false'] }, 'Failed', ''));

  // not in runtime.go: kubelet's status manager keeps a pod's messages within 12 KiB (12288 / 4 containers each)
  it('on terminated container: four containers writing 4096 bytes each report 3072 bytes each', async () => {
    const n = await ns('container-runtime');
    const write = (name: string) => ({ name, image: BUSYBOX, command: ['sh', '-c', "head -c 4096 /dev/zero | tr '\\000' x > /dev/termination-log"] });
    await env.call('POST', PODS(n), { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'messages' }, spec: { restartPolicy: 'Never', containers: ['a', 'b', 'c', 'd'].map(write) } });
    const p = await phaseIs(`${PODS(n)}/messages`, 'Succeeded');
    expect((p.status.containerStatuses as Obj[]).map((c) => c.state.terminated.message)).toEqual(Array(4).fill('x'.repeat(3072)));
  });
});

describe('[sig-node] Container Lifecycle Hook when create a pod with lifecycle hook', () => {
  // kube's handler pod (agnhost netexec) logs the requests it gets; here the test's own HTTP server
  // on the host records them, and the hooks reach it at 127.0.0.1 (simulated pods share the host network)
  const got: string[] = [];
  const record = (req: IncomingMessage, res: ServerResponse) => {
    got.push(`${req.method} ${req.url}`);
    res.end('ok');
  };
  // and one over TLS with a certificate of its own CA (hooks do not verify certificates, as kubelet's)
  let handler: Server;
  let tls: Server;
  let port: number;
  let tlsPort: number;
  let pkiDir: string;
  beforeAll(async () => {
    port = await freePort();
    tlsPort = await freePort();
    pkiDir = await mkdtemp(join(tmpdir(), 'orch-hook-pki-'));
    const pki = await ensurePki(pkiDir, { hosts: ['127.0.0.1'] });
    handler = createServer(record);
    tls = createHttpsServer({ key: pki.serving.keyPem, cert: pki.serving.certPem }, record);
    await new Promise<void>((r) => handler.listen(port, '127.0.0.1', r));
    await new Promise<void>((r) => tls.listen(tlsPort, '127.0.0.1', r));
  });
  afterAll(async () => {
    for (const s of [handler, tls]) {
      s.closeAllConnections();
      s.close();
    }
    await rm(pkiDir, { recursive: true, force: true });
  });
  const received = (what: string) => env.eventually(async () => got.includes(what), `the handler got ${what}`, 60_000);

  /** testPodWithHook: create and wait Running; poststart seen; delete with grace 15; prestop seen */
  async function podWithHook(name: string, lifecycle: Obj, image = BUSYBOX, command: string[] | undefined = ['sh', '-c', 'while true; do sleep 1; done']): Promise<void> {
    const n = await ns('container-lifecycle-hook');
    const path = await create(n, name, { name: name, image, ...(command ? { command } : {}), lifecycle });
    await phaseIs(path, 'Running');
    const msg = (h: Obj) => (h.exec?.command?.[2] ?? h.httpGet?.path ?? '').match(/msg=(\w+)/)?.[1];
    if (lifecycle.postStart) await received(`GET /echo?msg=${msg(lifecycle.postStart)}`);
    expect(got).not.toContain('GET /echo?msg=prestop');
    await env.call('DELETE', path, { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 15 });
    await env.eventually(async () => (await env.ts().request('GET', path)).status === 404, `${path} gone`, 60_000);
    if (lifecycle.preStop) await received(`GET /echo?msg=${msg(lifecycle.preStop)}`);
    got.length = 0;
  }

  it('should execute poststart exec hook properly [NodeConformance] [Conformance]', () =>
    podWithHook('pod-with-poststart-exec-hook', { postStart: { exec: { command: ['sh', '-c', `curl -s http://127.0.0.1:${port}/echo?msg=poststart`] } } }));

  it('should execute prestop exec hook properly [NodeConformance] [Conformance]', () =>
    podWithHook('pod-with-prestop-exec-hook', { preStop: { exec: { command: ['sh', '-c', `curl -s http://127.0.0.1:${port}/echo?msg=prestop`] } } }));

  // kube's hook targets the pod's IP and a netexec sidecar relays it; here `host` names the handler directly
  it('should execute poststart http hook properly [NodeConformance] [Conformance]', () =>
    podWithHook('pod-with-poststart-http-hook', { postStart: { httpGet: { host: '127.0.0.1', path: '/echo?msg=poststart', port } } }, 'registry.k8s.io/pause:3.10', undefined));

  it('should execute prestop http hook properly [NodeConformance] [Conformance]', () =>
    podWithHook('pod-with-prestop-http-hook', { preStop: { httpGet: { host: '127.0.0.1', path: '/echo?msg=prestop', port } } }, 'registry.k8s.io/pause:3.10', undefined));

  it('should execute poststart https hook properly [NodeConformance]', () =>
    podWithHook('pod-with-poststart-https-hook', { postStart: { httpGet: { scheme: 'HTTPS', host: '127.0.0.1', path: '/echo?msg=poststart', port: tlsPort } } }, 'registry.k8s.io/pause:3.10', undefined));

  it('should execute prestop https hook properly [NodeConformance]', () =>
    podWithHook('pod-with-prestop-https-hook', { preStop: { httpGet: { scheme: 'HTTPS', host: '127.0.0.1', path: '/echo?msg=prestop', port: tlsPort } } }, 'registry.k8s.io/pause:3.10', undefined));

  // kubelet's handling of a failing postStart hook: FailedPostStartHook, the container killed and restarted
  it('a failing poststart exec hook is a FailedPostStartHook event and the container is restarted', async () => {
    const n = await ns('container-lifecycle-hook');
    const path = await create(n, 'failing-hook', { command: ['sh', '-c', 'while true; do sleep 1; done'], lifecycle: { postStart: { exec: { command: ['sh', '-c', 'echo nope; exit 3'] } } } });
    const ev = await env.eventually(async () => (await events(n, 'failing-hook')).find((e) => e.reason === 'FailedPostStartHook'), 'a FailedPostStartHook event', 60_000);
    // kubelet keeps what the hook printed out of the Event (it may hold secrets) and logs it
    expect(ev).toMatchObject({ type: 'Warning', message: 'PostStartHook failed' });
    expect(env.agent().output()).toMatch(/Exec lifecycle hook \(\[sh -c echo nope; exit 3\]\) for Container "failing-hook" in Pod "failing-hook_[^"]+" failed - error: command 'sh -c echo nope; exit 3' exited with 3: , message: "nope\\n"/);
    await env.eventually(async () => (await status(path)).restartCount >= 1, 'a restart', 60_000);
    await deleteAndWait(path);
  });

  it('a failing prestop exec hook is a FailedPreStopHook event and the pod is still deleted', async () => {
    const n = await ns('container-lifecycle-hook');
    const path = await create(n, 'failing-prestop', { command: ['sh', '-c', 'while true; do sleep 1; done'], lifecycle: { preStop: { exec: { command: ['sh', '-c', 'exit 2'] } } } });
    await phaseIs(path, 'Running');
    await deleteAndWait(path);
    const ev = await env.eventually(async () => (await events(n, 'failing-prestop')).find((e) => e.reason === 'FailedPreStopHook'), 'a FailedPreStopHook event', 30_000);
    expect(ev).toMatchObject({ type: 'Warning', message: 'PreStopHook failed', involvedObject: { fieldPath: 'spec.containers{failing-prestop}' } });
    expect(env.agent().output()).toMatch(/Exec lifecycle hook \(\[sh -c exit 2\]\) for Container "failing-prestop" in Pod "failing-prestop_[^"]+" failed - error: command 'sh -c exit 2' exited with 2: , message: ""/);
  });
});

describe('[sig-node] Kubelet (kubelet.go)', () => {
  it('when scheduling a busybox command in a pod: should print the output to logs [NodeConformance] [Conformance]', async () => {
    const n = await ns('kubelet-test');
    const name = `busybox-scheduling-${crypto.randomUUID()}`;
    const path = await create(n, name, { command: ['sh', '-c', "echo 'Hello World' ; sleep 240"] }, { restartPolicy: 'Never' });
    await phaseIs(path, 'Running');
    // GetLogs with sinceTime an hour back, polled until it is exactly the line
    const since = encodeURIComponent(new Date(Date.now() - 3600_000).toISOString().replace(/\.\d+Z$/, 'Z'));
    await env.eventually(async () => {
      const r = await env.ts().request('GET', `${path}/log?sinceTime=${since}`);
      return r.status === 200 && r.text === 'Hello World\n';
    }, 'the log is "Hello World\\n"');
    await deleteAndWait(path);
  });

  /** the BeforeEach of "when scheduling a busybox command that always fails in a pod" */
  const binFalse = async (): Promise<string> => {
    const n = await ns('kubelet-test');
    return create(n, `bin-false${crypto.randomUUID()}`, { command: ['/bin/false'] }, { restartPolicy: 'Never' });
  };

  it('when scheduling a busybox command that always fails in a pod: should have an terminated reason [NodeConformance] [Conformance]', async () => {
    const path = await binFalse();
    const terminated = await env.eventually(async () => {
      const statuses = (await env.get(path)).status?.containerStatuses ?? [];
      if (statuses.length !== 1) return undefined;
      const t = statuses[0].state?.terminated;
      return t && t.exitCode !== 0 && t.reason ? t : undefined;
    }, 'one container terminated with a non-zero exit code and a reason', 60_000);
    // beyond kube's test: kubelet's reason for a non-zero exit
    expect(terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
  });

  it('when scheduling a busybox command that always fails in a pod: should be possible to delete [NodeConformance] [Conformance]', async () => {
    const path = await binFalse();
    await env.call('DELETE', path, {});
    // beyond kube's test: the agent finishes the graceful deletion
    await env.eventually(async () => (await env.ts().request('GET', path)).status === 404, `${path} gone`, 60_000);
  });
});

describe('[sig-node] Pods status', () => {
  it('should allow activeDeadlineSeconds to be updated [NodeConformance] [Conformance]', async () => {
    const n = await ns('pods');
    const path = await create(n, 'pod-update-activedeadlineseconds', { image: 'registry.k8s.io/pause:3.10' });
    await phaseIs(path, 'Running');
    await updateWithRetries(env, path, (p) => (p.spec.activeDeadlineSeconds = 5));
    // beyond kube's test: the API lets the deadline be lowered only (ValidatePodUpdate)
    for (const [value, why] of [[10, 'Invalid value: 10: must be less than or equal to previous value'], [null, 'Invalid value: null: must not update from a positive integer to nil value']] as const) {
      const cur = await env.get(path);
      cur.spec.activeDeadlineSeconds = value;
      const r = await env.ts().request('PUT', path, { body: cur });
      expect(r.status, r.text).toBe(422);
      expect(r.json<Obj>().message).toBe(`Pod "pod-update-activedeadlineseconds" is invalid: spec.activeDeadlineSeconds: ${why}`);
    }
    // WaitForPodTerminatedInNamespace(…, "DeadlineExceeded")
    const p = await phaseIs(path, 'Failed');
    expect(p.status).toMatchObject({ reason: 'DeadlineExceeded', message: 'Pod was active on the node longer than the specified deadline' });
    expect(Object.keys((await status(path)).state)).toEqual(['terminated']);
    // the recorder sends events asynchronously (as kubelet's broadcaster does): the status may land first
    const ev = await env.eventually(async () => (await events(n, 'pod-update-activedeadlineseconds')).find((e) => e.reason === 'DeadlineExceeded'), 'a DeadlineExceeded event', 30_000);
    expect(ev).toMatchObject({ type: 'Normal', message: 'Pod was active on the node longer than the specified deadline' });
  });

  it('Pods Extended Pod QOS class should be set on Pods with matching resource requests and limits for memory and cpu [Conformance]', async () => {
    const n = await ns('pods');
    const resources = { limits: { cpu: '100m', memory: '100Mi' }, requests: { cpu: '100m', memory: '100Mi' } };
    const path = await create(n, 'pod-qos-class', { name: 'agnhost', image: 'registry.k8s.io/e2e-test-images/agnhost:2.53', args: ['pause'], resources });
    expect((await env.get(path)).status.qosClass).toBe('Guaranteed');
    // and the agent's status writes keep it
    const p = await phaseIs(path, 'Running');
    expect(p.status.qosClass).toBe('Guaranteed');
  });

  // test/e2e/node/pods.go "Pod Container Status should never report success for a pending container", cheaply:
  // a container whose image cannot be pulled stays waiting and never terminated with exit code 0
  it('Pod Container Status should never report success for a pending container', async () => {
    const n = await ns('pods');
    const path = await create(n, 'pending', { image: 'registry.k8s.io/e2e-test-images/never-pulled:1.0', imagePullPolicy: 'Never', command: ['/bin/false'] }, { restartPolicy: 'Never' });
    const s = await env.eventually(async () => {
      const st = await status(path);
      return st.state?.waiting?.reason === 'ErrImageNeverPull' && st;
    }, 'ErrImageNeverPull', 60_000);
    expect(s.state.terminated).toBeUndefined();
    expect((await env.get(path)).status.phase).toBe('Pending');
  });
});

describe('[sig-node] Containers', () => {
  /** kube's entrypointTestPod: NewAgnhostPod with these args, grace 1 s, restartPolicy Never */
  const entrypointTestPod = (args?: string[], command?: string[]): Obj => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: uniqueName('client-containers-') },
    spec: {
      containers: [{ name: 'agnhost-container', image: 'registry.k8s.io/e2e-test-images/agnhost:2.53', ...(args ? { args } : {}), ...(command ? { command } : {}) }],
      terminationGracePeriodSeconds: 1,
      restartPolicy: 'Never',
    },
  });

  it.concurrent('should use the image defaults if command and args are blank [NodeConformance] [Conformance]', async () => {
    const n = await ns('containers');
    const pod = entrypointTestPod();
    await env.call('POST', PODS(n), pod);
    await phaseIs(`${PODS(n)}/${pod.metadata.name}`, 'Running');
    // the image's default entrypoint and args, `/agnhost pause`, print "Paused"
    await env.eventually(async () => (await podLog(env, n, pod.metadata.name, 'agnhost-container')).includes('Paused'), 'Paused in the log');
    await env.call('DELETE', `${PODS(n)}/${pod.metadata.name}`);
    await env.eventually(async () => (await env.ts().request('GET', `${PODS(n)}/${pod.metadata.name}`)).status === 404, `${pod.metadata.name} gone`);
  });

  it.concurrent("should be able to override the image's default arguments (container cmd) [NodeConformance] [Conformance]", async () => {
    const log = await testContainerOutput(env, await ns('containers'), entrypointTestPod(['entrypoint-tester', 'override', 'arguments']), 0, ['[/agnhost entrypoint-tester override arguments]']);
    expect(log).toBe('[/agnhost entrypoint-tester override arguments]\n');
  });

  // when the entrypoint is overridden, the image's arguments (container cmd) are ignored
  it.concurrent("should be able to override the image's default command (container entrypoint) [NodeConformance] [Conformance]", async () => {
    const log = await testContainerOutput(env, await ns('containers'), entrypointTestPod(['entrypoint-tester'], ['/agnhost-2']), 0, ['[/agnhost-2 entrypoint-tester]']);
    expect(log).toBe('[/agnhost-2 entrypoint-tester]\n');
  });

  it.concurrent("should be able to override the image's default command and arguments [NodeConformance] [Conformance]", async () => {
    await testContainerOutput(env, await ns('containers'), entrypointTestPod(['entrypoint-tester', 'override', 'arguments'], ['/agnhost-2']), 0, ['[/agnhost-2 entrypoint-tester override arguments]']);
  });
});
