// Kubernetes' e2e tests of sidecar containers (restartable init containers, KEP-753), from
// test/e2e_node/container_lifecycle_test.go ("[NodeFeature:SidecarContainers] Containers Lifecycle"),
// on orch with kube's API domain and a real node agent on the simulated runtime. kube's ExecCommand
// containers append `<name> Starting|Started|Exiting` lines to one shared file and the test reads their
// order (containerOutputList); here the file is on a hostPath volume that the test reads directly, and
// the delays are scaled down. Plus the Job a sidecar must not keep from completing, and the API's refusal
// of probes on a regular init container (kube's ValidatePodSpec message); and test/e2e/common/node/
// lifecycle_hook.go's "Restartable Init Container Lifecycle Hook" (exec hooks of a sidecar, reaching a
// recorder on the host as e2e-node-runtime.test.ts's port of the regular-container tests does), and
// container_probe.go's "Probing restartable init container" (delays scaled down as in e2e-node-probes.test.ts).

import { createServer, type Server } from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Obj, e2eEnv, namespace } from '../helpers/e2e-apps.js';
import { BUSYBOX, PODS, uniqueName } from '../helpers/e2e-node-output.js';
import { freePort } from '../helpers/ports.js';

// a short relist: the agent moves from one init container to the next at each relist
const env = e2eEnv('sidecar-node', { runtimeRelistPeriod: '200ms' });
const ns = () => namespace(env, `containers-lifecycle-${Math.random().toString(36).slice(2, 8)}`);
let shared = '';
beforeAll(async () => {
  shared = await mkdtemp(join(tmpdir(), 'orch-sidecar-out-'));
});
afterAll(async () => {
  await rm(shared, { recursive: true, force: true });
});

/**
 * kube's ExecCommand: log Starting and Started, run `delay` seconds, log Exiting and exit with `code`;
 * on SIGTERM log Exiting and exit 0 (its TerminationSeconds 0)
 */
function execCommand(name: string, delay: number, code = 0): string[] {
  const log = (what: string) => `echo "${name} ${what}" >> /persistent/out.log`;
  return ['sh', '-c', `trap '${log('Exiting')}; exit 0' TERM; ${log('Starting')}; ${log('Started')}; sleep ${delay} & wait $!; ${log('Exiting')}; exit ${code}`];
}
const container = (name: string, delay: number, more: Obj = {}): Obj => ({ name, image: BUSYBOX, command: execCommand(name, delay), volumeMounts: [{ name: 'persistent', mountPath: '/persistent' }], ...more });
const sidecar = (name: string, delay: number): Obj => container(name, delay, { restartPolicy: 'Always' });

/** kube's containerOutputList over the shared file's lines */
class Output {
  constructor(private readonly lines: { name: string; what: string }[]) {}
  index(name: string, what: string, from = 0): number {
    const i = this.lines.findIndex((l, j) => j >= from && l.name === name && l.what === what);
    expect(i, `${name} ${what} in ${JSON.stringify(this.lines)}`).toBeGreaterThanOrEqual(0);
    return i;
  }
  startsBefore(a: string, b: string): void {
    expect(this.index(a, 'Starting'), `${a} starts before ${b}`).toBeLessThan(this.index(b, 'Starting'));
  }
  /** a exits before b starts */
  exitsBefore(a: string, b: string): void {
    expect(this.index(a, 'Exiting'), `${a} exits before ${b} starts`).toBeLessThan(this.index(b, 'Starting'));
  }
  /** each started before the other exited */
  runTogether(a: string, b: string): void {
    expect(this.index(a, 'Starting'), `${a} starts before ${b} exits`).toBeLessThan(this.index(b, 'Exiting'));
    expect(this.index(b, 'Starting'), `${b} starts before ${a} exits`).toBeLessThan(this.index(a, 'Exiting'));
  }
  starts(name: string): number {
    return this.lines.filter((l) => l.name === name && l.what === 'Starting').length;
  }
}

async function output(dir: string): Promise<Output> {
  const text = await readFile(join(dir, 'out.log'), 'utf8');
  return new Output(text.trim().split('\n').map((l) => ({ name: l.split(' ')[0]!, what: l.split(' ')[1]! })));
}

/** a pod of these containers on a fresh hostPath directory; the directory */
async function podSpec(restartPolicy: string, initContainers: Obj[], containers: Obj[]): Promise<{ spec: Obj; dir: string }> {
  const dir = await mkdtemp(join(shared, 'pod-'));
  return { dir, spec: { restartPolicy, initContainers, containers, volumes: [{ name: 'persistent', hostPath: { path: dir } }], terminationGracePeriodSeconds: 5 } };
}

/** the pod terminal and none of its containers running any more (a sidecar may be stopped just after the phase is written) */
async function finished(n: string, name: string): Promise<Obj> {
  return env.eventually(async () => {
    const p = await env.get(`${PODS(n)}/${name}`);
    const running = [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])].some((c: Obj) => c.state?.running);
    return (p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') && !running ? p : undefined;
  }, `${name} no longer running`);
}

/** creates the pod in a fresh namespace and waits until it is no longer running: the pod and its containers' output */
async function runToEnd(name: string, restartPolicy: string, initContainers: Obj[], containers: Obj[]): Promise<{ p: Obj; o: Output }> {
  const n = await ns();
  const { spec, dir } = await podSpec(restartPolicy, initContainers, containers);
  await env.call('POST', PODS(n), { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec });
  const p = await finished(n, name);
  return { p, o: await output(dir) };
}
const failing = (name: string, delay: number): Obj => ({ ...container(name, delay), command: execCommand(name, delay, 1) });

describe('[sig-node] [NodeFeature:SidecarContainers] Containers Lifecycle', () => {
  it('using a Pod with restartPolicy=Never, three init container and two restartable init containers: starts them serially, runs them together, and finishes', async () => {
    const { p, o } = await runToEnd(
      'restartable-init-containers-start-serially',
      'Never',
      [container('init-1', 0.2), sidecar('restartable-init-1', 600), container('init-2', 0.2), sidecar('restartable-init-2', 600), container('init-3', 0.2)],
      [container('regular-1', 0.5)],
    );
    // "should finish and produce log": the pod exits successfully
    expect(p.status.phase).toBe('Succeeded');
    // the first init container runs to completion before the first restartable init container starts
    o.startsBefore('init-1', 'restartable-init-1');
    o.exitsBefore('init-1', 'restartable-init-1');
    // the first restartable init container starts before the second init container, and they run together
    o.startsBefore('restartable-init-1', 'init-2');
    o.runTogether('restartable-init-1', 'init-2');
    o.startsBefore('init-2', 'restartable-init-2');
    o.exitsBefore('init-2', 'restartable-init-2');
    o.startsBefore('restartable-init-2', 'init-3');
    o.runTogether('restartable-init-1', 'restartable-init-2');
    o.runTogether('restartable-init-1', 'init-3');
    o.runTogether('restartable-init-2', 'init-3');
    o.startsBefore('init-3', 'regular-1');
    o.exitsBefore('init-3', 'regular-1');
    o.runTogether('restartable-init-1', 'regular-1');
    o.runTogether('restartable-init-2', 'regular-1');
    // "should terminate sidecars in reverse order after all main containers have exited"
    expect(o.index('regular-1', 'Exiting')).toBeLessThan(o.index('restartable-init-2', 'Exiting'));
    expect(o.index('restartable-init-2', 'Exiting')).toBeLessThan(o.index('restartable-init-1', 'Exiting'));
    // "should not restart a restartable init container": each started once
    expect(o.starts('restartable-init-1')).toBe(1);
    expect(o.starts('restartable-init-2')).toBe(1);
    // the sidecars' statuses: started before they were stopped, never restarted, terminated now
    for (const s of p.status.initContainerStatuses.filter((x: Obj) => x.name.startsWith('restartable'))) {
      expect(s).toMatchObject({ restartCount: 0, ready: false, started: false, state: { terminated: {} } });
    }
    expect(p.status.conditions.find((c: Obj) => c.type === 'Initialized')).toMatchObject({ status: 'True', reason: 'PodCompleted' });
  });

  it('using a restartable init container in a Pod with restartPolicy=Never: an Init container before it fails', async () => {
    const { p, o } = await runToEnd('init-container-fails-before-restartable-init-starts', 'Never', [failing('init-1', 0.2), sidecar('restartable-init-1', 600)], [container('regular-1', 600)]);
    // should mark a Pod as failed; should mark an Init container as failed; should not start restartable init container
    expect(p.status.phase).toBe('Failed');
    o.index('init-1', 'Exiting');
    expect(o.starts('restartable-init-1')).toBe(0);
    expect(o.starts('regular-1')).toBe(0);
  });

  it('using a restartable init container in a Pod with restartPolicy=Never: an Init container after it fails', async () => {
    const { p, o } = await runToEnd('restartable-init-container-fails-before-init-container', 'Never', [sidecar('restartable-init-1', 600), failing('init-1', 0.5)], [container('regular-1', 600)]);
    expect(p.status.phase).toBe('Failed');
    // should be running restartable init container and a failed Init container in parallel; the sidecar is then stopped
    o.runTogether('restartable-init-1', 'init-1');
    expect(o.starts('regular-1')).toBe(0);
    expect(p.status.initContainerStatuses[0]).toMatchObject({ name: 'restartable-init-1', state: { terminated: {} } });
  });

  it('should call sidecar container PreStop hook simultaneously (and stop the sidecars in reverse order after the main container)', async () => {
    // kube's makePrestop: an ExecCommand of its own name, run in the sidecar, 1 s long
    const withPrestop = (name: string): Obj => ({ ...sidecar(name, 600), lifecycle: { preStop: { exec: { command: execCommand(`PreStop-${name}`, 1) } } } });
    const { p, o } = await runToEnd('serialize-termination-simul-prestop', 'Never', [withPrestop('restartable-init-1'), withPrestop('restartable-init-2'), withPrestop('restartable-init-3')], [container('regular-1', 0.5)]);
    expect(p.status.phase).toBe('Succeeded');
    o.startsBefore('restartable-init-1', 'restartable-init-2');
    o.startsBefore('restartable-init-2', 'restartable-init-3');
    o.startsBefore('restartable-init-3', 'regular-1');
    // main containers exit first, followed by sidecars in reverse order
    for (const side of ['restartable-init-1', 'restartable-init-2', 'restartable-init-3']) expect(o.index('regular-1', 'Exiting')).toBeLessThan(o.index(side, 'Exiting'));
    expect(o.index('restartable-init-3', 'Exiting')).toBeLessThan(o.index('restartable-init-2', 'Exiting'));
    expect(o.index('restartable-init-2', 'Exiting')).toBeLessThan(o.index('restartable-init-1', 'Exiting'));
    // the pre-stop hooks were called simultaneously: all three started before any of them ended (kube compares times within 500 ms)
    const lastStart = Math.max(...[1, 2, 3].map((i) => o.index(`PreStop-restartable-init-${i}`, 'Starting')));
    const firstExit = Math.min(...[1, 2, 3].map((i) => o.index(`PreStop-restartable-init-${i}`, 'Exiting')));
    expect(lastStart).toBeLessThan(firstExit);
  });

  it('a Job whose pod has a sidecar completes when its main container has finished', async () => {
    const n = await ns();
    const { spec } = await podSpec('Never', [sidecar('proxy', 600)], [container('work', 0.2)]);
    const job = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'with-sidecar' }, spec: { backoffLimit: 0, template: { spec } } };
    await env.call('POST', `/apis/batch/v1/namespaces/${n}/jobs`, job);
    const done = await env.eventually(async () => {
      const j = await env.get(`/apis/batch/v1/namespaces/${n}/jobs/with-sidecar`);
      return (j.status?.conditions ?? []).some((c: Obj) => c.type === 'Complete' && c.status === 'True') ? j : undefined;
    }, 'the Job Complete');
    expect(done.status.succeeded).toBe(1);
    const pods = (await env.list(PODS(n), 'job-name=with-sidecar')).items as Obj[];
    expect(pods.map((p) => p.status.phase)).toEqual(['Succeeded']);
  });

  it('the API refuses probes on a regular init container and a restartPolicy other than Always (422, kube\'s messages)', async () => {
    const n = await ns();
    const init = { name: 'i', image: BUSYBOX, readinessProbe: { exec: { command: ['true'] } } };
    const r = await env.ts().request('POST', PODS(n), { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: uniqueName('p-') }, spec: { initContainers: [init, { name: 'j', image: BUSYBOX, restartPolicy: 'Never' }], containers: [{ name: 'c', image: BUSYBOX }] } } });
    expect(r.status).toBe(422);
    const causes = (r.json<Obj>().details.causes as Obj[]).map((c) => `${c.field}: ${c.message}`);
    expect(causes).toEqual([
      'spec.initContainers[0].readinessProbe: Forbidden: may not be set for init containers without restartPolicy=Always',
      'spec.initContainers[1].restartPolicy: Unsupported value: "Never": supported values: "Always"',
    ]);
  });
});

describe('[sig-node] [NodeFeature:SidecarContainers] Restartable Init Container Lifecycle Hook when create a pod with lifecycle hook', () => {
  // kube's handler pod (agnhost netexec) records the hooks' requests; here an HTTP server on the host does
  const got: string[] = [];
  let handler: Server;
  let port: number;
  beforeAll(async () => {
    port = await freePort();
    handler = createServer((req, res) => {
      got.push(`${req.method} ${req.url}`);
      res.end('ok');
    });
    await new Promise<void>((r) => handler.listen(port, '127.0.0.1', r));
  });
  afterAll(() => {
    handler.closeAllConnections();
    handler.close();
  });
  const hook = (msg: string) => ({ exec: { command: ['sh', '-c', `curl -s http://127.0.0.1:${port}/echo?msg=${msg}`] } });

  /** kube's testPodWithHook for a sidecar: the hook on the restartable init container, a regular container beside it */
  async function podWithHook(name: string, lifecycle: Obj, expected: string): Promise<void> {
    const n = await ns();
    const loop = ['sh', '-c', 'while true; do sleep 1; done'];
    const spec = { initContainers: [{ name: 'restartable-init', image: BUSYBOX, command: loop, restartPolicy: 'Always', lifecycle }], containers: [{ name: 'main', image: BUSYBOX, command: loop }] };
    const path = `${PODS(n)}/${name}`;
    await env.call('POST', PODS(n), { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec });
    await env.eventually(async () => (await env.get(path)).status?.phase === 'Running', `${name} Running`);
    if (lifecycle.postStart) await env.eventually(async () => got.includes(expected), `the handler got ${expected}`);
    expect(got).not.toContain('GET /echo?msg=prestop');
    await env.call('DELETE', path, { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 15 });
    await env.eventually(async () => (await env.ts().request('GET', path)).status === 404, `${name} gone`);
    if (lifecycle.preStop) expect(got).toContain(expected);
    got.length = 0;
  }

  it('should execute poststart exec hook properly', () => podWithHook('pod-with-poststart-exec-hook', { postStart: hook('poststart') }, 'GET /echo?msg=poststart'));
  it('should execute prestop exec hook properly', () => podWithHook('pod-with-prestop-exec-hook', { preStop: hook('prestop') }, 'GET /echo?msg=prestop'));
});

describe('[sig-node] [NodeFeature:SidecarContainers] Probing restartable init container', () => {
  const NGINX = 'registry.k8s.io/e2e-test-images/nginx:1.14-4';
  const loop = ['sh', '-c', 'while true; do sleep 1; done'];
  /** kube's sidecar pod: the probed restartable init container and a regular container; /tmp an emptyDir of the pod */
  async function create(n: string, name: string, sidecarFields: Obj): Promise<string> {
    const tmp = { volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }] };
    const spec = { initContainers: [{ name, image: BUSYBOX, restartPolicy: 'Always', ...tmp, ...sidecarFields }], containers: [{ name: 'main', image: BUSYBOX, command: loop }], volumes: [{ name: 'tmp', emptyDir: {} }] };
    await env.call('POST', PODS(n), { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec });
    return `${PODS(n)}/${name}`;
  }
  const sidecarStatus = async (path: string): Promise<Obj> => (await env.get(path)).status?.initContainerStatuses?.[0] ?? {};

  it('should be restarted with a exec "cat /tmp/health" liveness probe', async () => {
    const n = await ns();
    const path = await create(n, 'busybox', {
      command: ['/bin/sh', '-c', 'echo ok >/tmp/health; sleep 1; rm -rf /tmp/health; sleep 600'],
      livenessProbe: { exec: { command: ['cat', '/tmp/health'] }, initialDelaySeconds: 1, periodSeconds: 1, timeoutSeconds: 5, failureThreshold: 1 },
    });
    await env.eventually(async () => (await env.get(path)).status?.phase === 'Running', 'Running');
    await env.eventually(async () => (await sidecarStatus(path)).restartCount >= 1, 'the sidecar restarted');
    const list = (await env.get(`/api/v1/namespaces/${n}/events?fieldSelector=${encodeURIComponent('involvedObject.name=busybox')}`)).items as Obj[];
    expect(list.find((e) => e.reason === 'Killing' && e.involvedObject.fieldPath === 'spec.initContainers{busybox}')?.message).toBe('Init container busybox failed liveness probe');
    expect(list.find((e) => e.reason === 'Unhealthy')?.message).toMatch(/^Liveness probe failed: cat: .*health: No such file or directory\n?$/);
    // the main container is not restarted with it
    expect((await env.get(path)).status.containerStatuses[0].restartCount).toBe(0);
  });

  it('with readiness probe should not be ready before initial delay and never restart', async () => {
    const n = await ns();
    const path = await create(n, 'test-webserver', { image: NGINX, command: undefined, readinessProbe: { httpGet: { path: '/', port: 80 }, initialDelaySeconds: 2, periodSeconds: 1 } });
    // running and started, but neither it nor the pod ready before the initial delay
    const early = await env.eventually(async () => {
      const p = await env.get(path);
      return p.status?.containerStatuses?.[0]?.state?.running && p;
    }, 'the main container running');
    expect(early.status.initContainerStatuses[0]).toMatchObject({ started: true, ready: false });
    expect(early.status.conditions.find((c: Obj) => c.type === 'Ready')).toMatchObject({ status: 'False', message: 'containers with unready status: [test-webserver]' });
    const p = await env.eventually(async () => {
      const x = await env.get(path);
      return x.status?.conditions?.some((c: Obj) => c.type === 'Ready' && c.status === 'True') && x;
    }, 'Ready');
    expect(p.status.initContainerStatuses[0]).toMatchObject({ ready: true, restartCount: 0 });
  });
});
