// Kubernetes' sig-node e2e tests "Probing container"
// (test/e2e/common/node/container_probe.go) on orch with its controllers and a
// real node agent (simulated runtime). The agent runs as its own process on
// the real clock, so kube's delays are scaled down: initial delays of 15 s
// become 1–2 s and the 4-minute observation of "should *not* be restarted"
// becomes a fixed number of probe periods, judged by the probe's own Events
// (how many runs happened) rather than by elapsed time. `sh -c` scripts run
// as real processes; /tmp is an emptyDir (container paths are rewritten to
// the volume's host path) so pods do not share the host's /tmp. kube's
// webserver/agnhost images are served here by the simulator's nginx emulation
// (`/` on the container's ports) or by the test's own HTTP server.

import { createServer, type Server } from 'node:http';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Obj, condition, e2eEnv, namespace } from '../helpers/e2e-apps.js';
import { protoService } from '../../src/nodeagent/runtime/proto.js';
import { freePort } from '../helpers/ports.js';

// kube 1.32's KubeletCrashLoopBackOffMax caps the restart back-off at 2 s (instead of 10 s, 20 s, 40 s, …), so
// the restart counts kube's tests wait for come in seconds; the cap itself is checked below
const env = e2eEnv('probe-node', { featureGates: { KubeletCrashLoopBackOffMax: true }, crashLoopBackOff: { maxContainerRestartPeriod: '2s' } });
const BUSYBOX = 'registry.k8s.io/e2e-test-images/busybox:1.36.1-1';
const NGINX = 'registry.k8s.io/e2e-test-images/nginx:1.14-4';
const PODS = (ns: string) => `/api/v1/namespaces/${ns}/pods`;
let seq = 0;
const ns = () => namespace(env, `container-probe-${++seq}-${Math.random().toString(36).slice(2, 7)}`);

/** /healthz of the test's server: 200 until `failing` is set for a pod (kube's agnhost liveness server fails after 10 s) */
const failing = new Set<string>();
const hits = new Map<string, number>();
let http: Server;
let port: number;
beforeAll(async () => {
  port = await freePort();
  http = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const who = u.searchParams.get('pod') ?? '';
    hits.set(who, (hits.get(who) ?? 0) + 1);
    if (u.pathname === '/redirect') return void res.writeHead(302, { location: u.searchParams.get('loc')! }).end(`<a href="${u.searchParams.get('loc')}">Found</a>.\n`);
    res.writeHead(failing.has(who) ? 500 : 200).end('ok');
  });
  await new Promise<void>((r) => http.listen(port, '127.0.0.1', r));
});
afterAll(() => {
  http.closeAllConnections();
  http.close();
});

const TMP = { volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }] };
async function create(n: string, name: string, container: Obj, extra: Obj = {}): Promise<string> {
  await env.call('POST', PODS(n), {
    apiVersion: 'v1', kind: 'Pod', metadata: { name },
    spec: { containers: [{ name, image: BUSYBOX, ...TMP, ...container }], volumes: [{ name: 'tmp', emptyDir: {} }], ...extra },
  });
  return `${PODS(n)}/${name}`;
}
const pod = (path: string) => env.get(path);
const cs = async (path: string): Promise<Obj> => (await pod(path)).status?.containerStatuses?.[0] ?? {};
const events = async (n: string, name: string): Promise<Obj[]> => (await env.get(`/api/v1/namespaces/${n}/events?fieldSelector=${encodeURIComponent(`involvedObject.name=${name}`)}`)).items;
/** The first event of a reason, waited for: the agent's recorder sends events asynchronously, so a restart may be seen first. */
const eventOf = (n: string, name: string, reason: string): Promise<Obj> =>
  env.eventually(async () => (await events(n, name)).find((e) => e.reason === reason), `a ${reason} event of ${name}`, 30_000);
const count = (list: Obj[], reason: string, text = '') => list.filter((e) => e.reason === reason && String(e.message).includes(text)).reduce((k, e) => k + (e.count ?? 1), 0);

/**
 * RunLivenessTest: the pod leaves Pending with restartCount 0, then its restart count reaches `want`
 * and never goes down; for `want` 0 it stays 0 while `observe` says the probe kept running
 */
async function livenessTest(path: string, want: number, observe?: () => Promise<boolean>): Promise<Obj> {
  await env.eventually(async () => (await pod(path)).status?.phase !== 'Pending' && (await pod(path)), 'not Pending', 60_000);
  let last = 0;
  const check = async () => {
    const r = (await cs(path)).restartCount ?? 0;
    expect(r, 'restart count must increase monotonically').toBeGreaterThanOrEqual(last);
    last = r;
    return r;
  };
  if (want > 0) await env.eventually(async () => (await check()) >= want, `restartCount ${want}`, 120_000);
  else await env.eventually(async () => (await check()) === 0 && observe && (await observe()), 'the probe observed', 60_000);
  expect(await check()).toBe(want);
  return pod(path);
}

// the tests run at once (each in its own namespace, on the one agent): most of their time is waiting for probe
// periods and restarts, so one after another the file took nearly 3 minutes of the suite
describe.concurrent('[sig-node] Probing container', () => {
  it('with readiness probe should not be ready before initial delay and never restart [NodeConformance] [Conformance]', async () => {
    const n = await ns();
    const path = await create(n, 'test-webserver', { image: NGINX, readinessProbe: { httpGet: { path: '/', port: 80 }, initialDelaySeconds: 2, periodSeconds: 1 } });
    // before the initial delay the container runs but is not ready
    const early = await env.eventually(async () => {
      const p = await pod(path);
      return p.status?.containerStatuses?.[0]?.state?.running && p;
    }, 'running', 60_000);
    expect(early.status.containerStatuses[0].ready).toBe(false);
    const p = await env.eventually(async () => {
      const x = await pod(path);
      return condition(x, 'Ready')?.status === 'True' && x;
    }, 'Ready', 60_000);
    expect(p.status.phase).toBe('Running');
    // kube compares the Ready transition time with the start plus the delay; no elapsed time is asserted here: not ready while running, above
    expect(p.status.containerStatuses[0].restartCount).toBe(0);
  });

  it('with readiness probe that fails should never be ready and never restart [NodeConformance] [Conformance]', async () => {
    const n = await ns();
    // port 81: nothing listens there (kube's failing builder)
    const path = await create(n, 'test-webserver', { image: NGINX, readinessProbe: { httpGet: { path: '/', port: 81 }, periodSeconds: 1 } });
    // Consistently not ready: judged over several failed probe runs
    await env.eventually(async () => {
      expect(condition(await pod(path), 'Ready')?.status).not.toBe('True');
      return count(await events(n, 'test-webserver'), 'Unhealthy', 'Readiness probe failed') >= 5;
    }, 'five failed readiness probes', 60_000);
    const p = await pod(path);
    expect(condition(p, 'Ready')).toMatchObject({ status: 'False', reason: 'ContainersNotReady' });
    expect(p.status.containerStatuses[0]).toMatchObject({ ready: false, restartCount: 0 });
    const ev = await eventOf(n, 'test-webserver', 'Unhealthy');
    expect(ev?.message).toMatch(/^Readiness probe failed: Get "http:\/\/127\.[\d.]+:81\/": dial tcp 127\.[\d.]+:81: connect: connection refused$/);
  });

  it('should be restarted with a exec "cat /tmp/health" liveness probe [NodeConformance] [Conformance]', async () => {
    const n = await ns();
    const path = await create(n, 'busybox', {
      command: ['/bin/sh', '-c', 'echo ok >/tmp/health; sleep 3; rm -rf /tmp/health; sleep 600'],
      livenessProbe: { exec: { command: ['cat', '/tmp/health'] }, initialDelaySeconds: 1, periodSeconds: 1, timeoutSeconds: 5, failureThreshold: 1 },
    });
    await livenessTest(path, 1);
    const list = await events(n, 'busybox');
    expect(list.find((e) => e.reason === 'Unhealthy')).toMatchObject({ type: 'Warning', message: expect.stringMatching(/^Liveness probe failed: cat: .*health: No such file or directory\n?$/) });
    expect(list.find((e) => e.reason === 'Killing')?.message).toBe('Container busybox failed liveness probe, will be restarted');
  });

  it('should *not* be restarted with a exec "cat /tmp/health" liveness probe [NodeConformance] [Conformance]', async () => {
    const n = await ns();
    const path = await create(n, 'busybox', {
      command: ['/bin/sh', '-c', 'echo ok >/tmp/health; sleep 600'],
      livenessProbe: { exec: { command: ['cat', '/tmp/health'] }, initialDelaySeconds: 1, periodSeconds: 1, timeoutSeconds: 5, failureThreshold: 1 },
    });
    // the probe runs through ExecSync: an exec log line per run is not kept, so the observation is the
    // container's start plus enough periods, as the restart count is read ten times a second apart
    let reads = 0;
    await livenessTest(path, 0, async () => ++reads >= 50);
    expect(count(await events(n, 'busybox'), 'Unhealthy')).toBe(0);
  });

  it('should be restarted with a /healthz http liveness probe [NodeConformance] [Conformance]', async () => {
    const n = await ns();
    const path = await create(n, 'agnhost-liveness', { command: ['sleep', '600'], livenessProbe: { httpGet: { host: '127.0.0.1', path: '/healthz?pod=h1', port }, initialDelaySeconds: 1, periodSeconds: 1, failureThreshold: 1 } });
    await env.eventually(async () => (hits.get('h1') ?? 0) >= 2, 'probed', 60_000);
    failing.add('h1');
    await livenessTest(path, 1);
    failing.delete('h1');
    expect((await eventOf(n, 'agnhost-liveness', 'Unhealthy')).message).toBe('Liveness probe failed: HTTP probe failed with statuscode: 500');
  });

  it('should *not* be restarted with a tcp:8080 liveness probe [NodeConformance] [Conformance]', async () => {
    const n = await ns();
    failing.add('tcp');
    const path = await create(n, 'agnhost-liveness', { command: ['sleep', '600'], livenessProbe: { tcpSocket: { host: '127.0.0.1', port }, initialDelaySeconds: 1, periodSeconds: 1, failureThreshold: 1 } });
    // the server answers 500 to HTTP, but its socket accepts: a tcp probe passes
    const before = hits.get('') ?? 0;
    let reads = 0;
    await livenessTest(path, 0, async () => ++reads >= 50);
    expect(hits.get('') ?? 0).toBe(before);
    expect(count(await events(n, 'agnhost-liveness'), 'Unhealthy')).toBe(0);
    failing.delete('tcp');
  });

  it('should have monotonically increasing restart count [NodeConformance] [Conformance]', async () => {
    const n = await ns();
    failing.add('mono');
    const path = await create(n, 'agnhost-liveness', { command: ['sleep', '600'], livenessProbe: { httpGet: { host: '127.0.0.1', path: '/healthz?pod=mono', port }, initialDelaySeconds: 1, periodSeconds: 1, failureThreshold: 1 } });
    // kube measures 5 restarts (affordable here with the back-off capped at 2 s)
    const p = await livenessTest(path, 5);
    failing.delete('mono');
    expect(p.status.containerStatuses[0].lastState.terminated).toBeDefined();
  }, 120_000);

  it('a crash-looping container backs off no longer than crashLoopBackOff.maxContainerRestartPeriod (2 s here)', async () => {
    const n = await ns();
    const path = await create(n, 'crasher', { command: ['sh', '-c', 'exit 1'] });
    const seen = new Set<string>();
    await env.eventually(async () => {
      const s = await cs(path);
      if (s.state?.waiting?.reason === 'CrashLoopBackOff') seen.add(String(s.state.waiting.message));
      return (s.restartCount ?? 0) >= 3 && seen.size > 0;
    }, 'three restarts, seen backing off', 60_000);
    // kubelet's message names the back-off in force: the cap, never the default 10 s or more
    for (const m of seen) expect(m).toMatch(/^back-off 2s restarting failed container=crasher pod=crasher_/);
  }, 90_000);

  it('should *not* be restarted with a /healthz http liveness probe [NodeConformance] [Conformance]', async () => {
    const n = await ns();
    const path = await create(n, 'test-webserver', { image: NGINX, livenessProbe: { httpGet: { path: '/', port: 80 }, initialDelaySeconds: 1, periodSeconds: 1, timeoutSeconds: 5, failureThreshold: 5 } });
    let reads = 0;
    await livenessTest(path, 0, async () => ++reads >= 50);
    expect(count(await events(n, 'test-webserver'), 'Unhealthy')).toBe(0);
  });

  it('should be restarted with an exec liveness probe with timeout [MinimumKubeletVersion:1.20] [NodeConformance]', async () => {
    const n = await ns();
    const path = await create(n, 'busybox', { command: ['/bin/sh', '-c', 'sleep 600'], livenessProbe: { exec: { command: ['/bin/sh', '-c', 'sleep 10'] }, initialDelaySeconds: 1, timeoutSeconds: 1, failureThreshold: 1 } });
    await livenessTest(path, 1);
    expect((await eventOf(n, 'busybox', 'Unhealthy')).message).toBe('Liveness probe failed: command "/bin/sh -c sleep 10" timed out');
  });

  it('should not be ready with an exec readiness probe timeout [MinimumKubeletVersion:1.20] [NodeConformance]', async () => {
    const n = await ns();
    const path = await create(n, 'busybox', { command: ['/bin/sh', '-c', 'sleep 600'], readinessProbe: { exec: { command: ['/bin/sh', '-c', 'sleep 10'] }, initialDelaySeconds: 1, timeoutSeconds: 1, failureThreshold: 1 } });
    await env.eventually(async () => count(await events(n, 'busybox'), 'Unhealthy', 'timed out') >= 1, 'a timed-out readiness probe', 60_000);
    const p = await pod(path);
    expect(condition(p, 'Ready')?.status).toBe('False');
    expect(p.status.containerStatuses[0]).toMatchObject({ ready: false, restartCount: 0 });
  });

  it('should be restarted with a failing exec liveness probe that took longer than the timeout', async () => {
    const n = await ns();
    const path = await create(n, 'busybox', { command: ['/bin/sh', '-c', 'sleep 600'], livenessProbe: { exec: { command: ['/bin/sh', '-c', 'sleep 10 & exit 1'] }, initialDelaySeconds: 1, timeoutSeconds: 1, failureThreshold: 1 } });
    await livenessTest(path, 1);
  });

  it('should be restarted with a local redirect http liveness probe', async () => {
    const n = await ns();
    failing.add('redir');
    const path = await create(n, 'agnhost-liveness', { command: ['sleep', '600'], livenessProbe: { httpGet: { host: '127.0.0.1', path: `/redirect?loc=${encodeURIComponent('/healthz?pod=redir')}`, port }, initialDelaySeconds: 1, periodSeconds: 1, failureThreshold: 1 } });
    await livenessTest(path, 1);
    failing.delete('redir');
  });

  it('should *not* be restarted with a non-local redirect http liveness probe', async () => {
    const n = await ns();
    const path = await create(n, 'agnhost-liveness', { command: ['sleep', '600'], livenessProbe: { httpGet: { host: '127.0.0.1', path: `/redirect?loc=${encodeURIComponent('http://0.0.0.0/')}`, port }, initialDelaySeconds: 1, periodSeconds: 1, failureThreshold: 1 } });
    let reads = 0;
    await livenessTest(path, 0, async () => ++reads >= 30);
    const ev = await env.eventually(async () => (await events(n, 'agnhost-liveness')).find((e) => e.reason === 'ProbeWarning'), 'a ProbeWarning event', 30_000);
    expect(ev.message).toBe('Liveness probe warning: Probe terminated redirects, Response body: <a href="http://0.0.0.0/">Found</a>.\n');
  });

  it('should be restarted startup probe fails', async () => {
    const n = await ns();
    const path = await create(n, 'busybox', {
      command: ['/bin/sh', '-c', 'sleep 600'],
      livenessProbe: { exec: { command: ['/bin/true'] }, initialDelaySeconds: 1, failureThreshold: 1 },
      startupProbe: { exec: { command: ['/bin/false'] }, initialDelaySeconds: 1, periodSeconds: 1, failureThreshold: 3 },
    });
    await livenessTest(path, 1);
    expect((await eventOf(n, 'busybox', 'Killing')).message).toBe('Container busybox failed startup probe, will be restarted');
  });

  it('should *not* be restarted by liveness probe because startup probe delays it', async () => {
    const n = await ns();
    const path = await create(n, 'busybox', {
      command: ['/bin/sh', '-c', 'sleep 600'],
      livenessProbe: { exec: { command: ['/bin/false'] }, initialDelaySeconds: 1, periodSeconds: 1, failureThreshold: 1 },
      startupProbe: { exec: { command: ['/bin/false'] }, initialDelaySeconds: 1, periodSeconds: 1, failureThreshold: 60 },
    });
    // observed over ten failed startup probes: liveness never ran, so nothing restarted
    await livenessTest(path, 0, async () => count(await events(n, 'busybox'), 'Unhealthy', 'Startup probe failed') >= 10);
    expect(count(await events(n, 'busybox'), 'Unhealthy', 'Liveness')).toBe(0);
    expect((await cs(path)).started).toBe(false);
  });

  it('should be restarted by liveness probe after startup probe enables it', async () => {
    const n = await ns();
    const path = await create(n, 'busybox', {
      command: ['/bin/sh', '-c', 'sleep 2; echo ok >/tmp/startup; sleep 600'],
      livenessProbe: { exec: { command: ['/bin/false'] }, initialDelaySeconds: 1, periodSeconds: 1, failureThreshold: 1 },
      startupProbe: { exec: { command: ['cat', '/tmp/startup'] }, initialDelaySeconds: 1, periodSeconds: 1, failureThreshold: 60 },
    });
    await livenessTest(path, 1);
    expect((await eventOf(n, 'busybox', 'Killing')).message).toBe('Container busybox failed liveness probe, will be restarted');
  });

  it('should be ready immediately after startupProbe succeeds', async () => {
    const n = await ns();
    // a readiness period far longer than the test: ready at all means it ran at once after startup
    const path = await create(n, 'busybox', {
      command: ['/bin/sh', '-c', 'echo ok >/tmp/health; sleep 2; echo ok >/tmp/startup; sleep 600'],
      readinessProbe: { exec: { command: ['/bin/cat', '/tmp/health'] }, periodSeconds: 300 },
      startupProbe: { exec: { command: ['/bin/cat', '/tmp/startup'] }, periodSeconds: 1, failureThreshold: 120 },
    });
    const started = await env.eventually(async () => (await cs(path)).started === true && (await pod(path)), 'started', 60_000);
    const p = await env.eventually(async () => {
      const x = await pod(path);
      return condition(x, 'Ready')?.status === 'True' && x;
    }, 'Ready', 60_000);
    expect(p.status.phase).toBe('Running');
    expect(started.status.containerStatuses[0].restartCount).toBe(0);
  });

  it('should override timeoutGracePeriodSeconds when LivenessProbe field is set [NodeConformance]', async () => {
    const n = await ns();
    // a pod grace of 500 s would keep the stop waiting for ever: the probe's 5 s is what the restart needs
    const path = await create(n, 'busybox', {
      command: ['/bin/sh', '-c', 'trap "" TERM; sleep 1000'],
      livenessProbe: { httpGet: { host: '127.0.0.1', path: '/healthz', port: 1 }, initialDelaySeconds: 1, failureThreshold: 1, terminationGracePeriodSeconds: 5 },
    }, { terminationGracePeriodSeconds: 500 });
    const p = await livenessTest(path, 1);
    // SIGTERM ignored: killed when the probe's 5 s ran out
    expect(p.status.containerStatuses[0].lastState.terminated).toMatchObject({ exitCode: 137, reason: 'Error' });
  });

  describe('GRPC liveness probes', () => {
    // kube's agnhost grpc-health-checking server; here a grpc-js health server of the test on 0.0.0.0,
    // which answers at the pod's loopback address where the probe connects
    let server: grpc.Server;
    let gport: number;
    beforeAll(async () => {
      server = new grpc.Server();
      server.addService(protoService('grpc-health.proto', 'grpc.health.v1', 'Health'), {
        Check: (_call: grpc.ServerUnaryCall<{ service: string }, object>, cb: grpc.sendUnaryData<object>) => cb(null, { status: 'SERVING' }),
      });
      gport = await new Promise<number>((resolve, reject) => server.bindAsync('0.0.0.0:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
    });
    afterAll(() => server.forceShutdown());

    it('should *not* be restarted with a GRPC liveness probe [NodeConformance] [Conformance]', async () => {
      const n = await ns();
      const path = await create(n, 'agnhost', { command: ['sleep', '600'], livenessProbe: { grpc: { port: gport }, initialDelaySeconds: 1, periodSeconds: 1, timeoutSeconds: 5, failureThreshold: 1 } });
      let reads = 0;
      await livenessTest(path, 0, async () => ++reads >= 30);
      expect(count(await events(n, 'agnhost'), 'Unhealthy')).toBe(0);
    });

    it('should be restarted with a GRPC liveness probe [NodeConformance] [Conformance]', async () => {
      const n = await ns();
      // a port nothing serves (kube's "wrong port" 2333)
      const path = await create(n, 'agnhost', { command: ['sleep', '600'], livenessProbe: { grpc: { port: await freePort() }, initialDelaySeconds: 1, periodSeconds: 1, timeoutSeconds: 5, failureThreshold: 1 } });
      await livenessTest(path, 1);
      expect((await eventOf(n, 'agnhost', 'Unhealthy')).message).toMatch(/^Liveness probe failed: timeout: failed to connect service "127\.[\d.]+:\d+" within 5s: context deadline exceeded$/);
    });
  });

  it('should mark readiness on pods to false and disable liveness probes while pod is in progress of terminating', async () => {
    const n = await ns();
    const script = `_term() {
	rm -f /tmp/ready
	rm -f /tmp/liveness
	sleep 5
	exit 0
}
trap _term TERM
touch /tmp/ready
touch /tmp/liveness
while true; do
  echo "hello"
  sleep 1
done
`;
    const path = await create(n, 'probe-test', {
      command: ['/bin/sh', '-c', script],
      readinessProbe: { exec: { command: ['cat', '/tmp/ready'] }, failureThreshold: 1, initialDelaySeconds: 1, periodSeconds: 1 },
      livenessProbe: { exec: { command: ['cat', '/tmp/liveness'] }, failureThreshold: 1, initialDelaySeconds: 1, periodSeconds: 1 },
    }, { terminationGracePeriodSeconds: 30 });
    await env.eventually(async () => condition(await pod(path), 'Ready')?.status === 'True', 'Ready', 60_000);
    await env.call('DELETE', path);
    // seen while the pod still exists (kube's informer sees the update before the deletion)
    const terminating = await env.eventually(async () => {
      const p = await pod(path);
      return condition(p, 'Ready')?.status === 'False' && p;
    }, 'not ready while terminating', 60_000);
    expect(terminating.metadata.deletionTimestamp).toBeTruthy();
    await env.eventually(async () => (await env.ts().request('GET', path)).status === 404, 'gone', 60_000);
    expect((await events(n, 'probe-test')).filter((e) => String(e.message).includes('failed liveness probe'))).toEqual([]);
  });
});
