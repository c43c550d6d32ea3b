// What Kubernetes' sig-node e2e tests of Pods (test/e2e/common/node/pods.go,
// the Conformance ones on the API) check, on orch with its controllers and a
// real node agent (simulated runtime): a pod gets a host IP; a pod is seen
// added and then deleted by a watch from a list, gracefully (its last state
// has a deletionTimestamp and a non-zero grace period); a label update is
// seen by a selector; deleteCollection by label removes running pods; a pod's
// lifecycle (strategic patch of labels and image, a status replace with Ready
// and ContainersReady False, deleteCollection seen by a watch, then 404); and a
// merge patch of /status that carries an annotation, a message and a reason;
// readiness gates: Ready only once the conditions others set are True, and the
// agent's own status writes keep those conditions; an image update restarts the
// running container with the new image (kubelet's "definition changed"); a
// Service's environment variables in a pod started after it; exec and logs
// over WebSockets with the protocols kube's e2e client offers (the unversioned
// `channel.k8s.io`, `binary.k8s.io`).

import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { type Event, type Obj, AGNHOST, PAUSE, STRATEGIC, WEBSERVER, e2eEnv, named, namespace, updateWithRetries } from '../helpers/e2e-apps.js';
import { openWatch } from '../helpers/watch-stream.js';
import { BUSYBOX, podLog, waitSucceeded } from '../helpers/e2e-node-output.js';

const env = e2eEnv('pods-node');
const PODS = (ns: string) => `/api/v1/namespaces/${ns}/pods`;
const NGINX = 'registry.k8s.io/e2e-test-images/nginx:1.14-4';
let seq = 0;
const ns = (base: string) => namespace(env, `${base}-${++seq}-${Math.random().toString(36).slice(2, 7)}`);

function pod(name: string, labels: Record<string, string>, container: string, image: string, extra: Obj = {}): Obj {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels }, spec: { containers: [{ name: container, image }], ...extra } };
}
/** e2epod.WaitForPodNameRunningInNamespace */
const running = (n: string, name: string): Promise<Obj> =>
  env.eventually(async () => {
    const p = await env.get(`${PODS(n)}/${name}`);
    return p.status?.phase === 'Running' ? p : undefined;
  }, `${name} Running`);

describe('[sig-node] Pods', () => {
  it('should get a host IP [NodeConformance] [Conformance]', async () => {
    const n = await ns('pods-hostip');
    const name = `pod-hostip-${crypto.randomUUID()}`;
    await env.call('POST', PODS(n), pod(name, {}, 'test', PAUSE));
    const p = await running(n, name);
    expect(p.status.hostIP).toMatch(/^\d+\.\d+\.\d+\.\d+$|:/);
  });

  it('should be submitted and removed [NodeConformance] [Conformance]', async () => {
    const n = await ns('pods-submit');
    const name = `pod-submit-remove-${crypto.randomUUID()}`;
    const time = String(process.hrtime()[1]);
    const sel = `time=${time}`;
    const before = await env.list(PODS(n), sel);
    expect(before.items).toHaveLength(0);
    // the informer's watch from its list
    const w = openWatch(env.ts().server, `${PODS(n)}?watch=1&resourceVersion=${before.metadata.resourceVersion}&labelSelector=${encodeURIComponent(sel)}`);
    try {
      await env.call('POST', PODS(n), pod(name, { name: 'foo', time }, 'nginx', NGINX));
      expect((await env.list(PODS(n), sel)).items).toHaveLength(1);
      const added = (await w.waitUntil((e) => (e as Event).type !== 'BOOKMARK', 10_000)) as Event;
      expect(added.type).toBe('ADDED');

      await running(n, name);
      await env.call('DELETE', `${PODS(n)}/${name}`, { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 30 });
      const deleted = (await w.waitUntil((e) => (e as Event).type === 'DELETED' || (e as Event).type === 'ERROR', 60_000)) as Event;
      expect(deleted.type).toBe('DELETED');
      expect(deleted.object.metadata.deletionTimestamp).toBeTruthy();
      expect(deleted.object.spec.terminationGracePeriodSeconds).not.toBe(0);
    } finally {
      w.close();
    }
    expect((await env.list(PODS(n), sel)).items).toHaveLength(0);
  });

  it('should be updated [NodeConformance] [Conformance]', async () => {
    const n = await ns('pods-update');
    const name = `pod-update-${crypto.randomUUID()}`;
    const time = String(process.hrtime()[1]);
    await env.call('POST', PODS(n), pod(name, { name: 'foo', time }, 'nginx', NGINX));
    await running(n, name);
    expect((await env.list(PODS(n), `time=${time}`)).items).toHaveLength(1);

    // podClient.Update: get, change the label, put; again on a conflict
    const value = `${time}1`;
    await env.eventually(async () => {
      const cur = await env.get(`${PODS(n)}/${name}`);
      cur.metadata.labels.time = value;
      const r = await env.ts().request('PUT', `${PODS(n)}/${name}`, { body: cur });
      if (r.status === 409) return undefined;
      expect(r.status, r.text).toBe(200);
      return true;
    }, 'the pod update');
    await running(n, name);
    expect((await env.list(PODS(n), `time=${value}`)).items).toHaveLength(1);
  });

  it('should delete a collection of pods [Conformance]', async () => {
    const n = await ns('pods-collection');
    for (const name of ['test-pod-1', 'test-pod-2', 'test-pod-3']) {
      await env.call('POST', PODS(n), pod(name, { type: 'Testing' }, 'token-test', AGNHOST, { terminationGracePeriodSeconds: 1, restartPolicy: 'Never' }));
    }
    await env.runningPods(n, 'type=Testing', 3);
    await env.call('DELETE', `${PODS(n)}?labelSelector=type%3DTesting`, { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 1 });
    await env.eventually(async () => (await env.list(PODS(n), 'type=Testing')).items.length === 0, 'the pods deleted');
  });

  it('should run through the lifecycle of Pods and PodStatus [Conformance]', async () => {
    const n = await ns('pods-lifecycle');
    const sel = 'test-pod-static=true';
    const all = await env.list('/api/v1/pods', sel);
    await env.call('POST', PODS(n), pod('pod-test', { 'test-pod-static': 'true' }, 'pod-test', AGNHOST, { terminationGracePeriodSeconds: 1 }));
    await env.until(PODS(n), all.metadata.resourceVersion, sel, (e) =>
      named('pod-test', e) && e.object.metadata.namespace === n && e.object.status?.phase === 'Running');
    const p = await env.get(`${PODS(n)}/pod-test`);
    expect(p.status.phase).toBe('Running');

    // a strategic merge patch of a marshalled Pod: a label and the container's image
    await env.call('PATCH', `${PODS(n)}/pod-test`, {
      metadata: { labels: { 'test-pod': 'patched' }, creationTimestamp: null },
      spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'pod-test', image: WEBSERVER, resources: {} }] },
      status: {},
    }, STRATEGIC);
    await env.until(PODS(n), p.metadata.resourceVersion, sel, (e) => e.type === 'MODIFIED' && e.object.metadata.labels?.['test-pod-static'] === 'true');
    const patched = await env.get(`${PODS(n)}/pod-test`);
    expect(patched.metadata.labels['test-pod']).toBe('patched');
    expect(patched.spec.containers[0].image).toBe(WEBSERVER);

    // UpdateStatus (retry on conflict) of what GET /status gave, Ready and ContainersReady set False
    const updated = await env.eventually(async () => {
      const st = await env.get(`${PODS(n)}/pod-test/status`);
      let flipped = 0;
      for (const c of st.status.conditions as Obj[]) {
        if ((c.type === 'Ready' || c.type === 'ContainersReady') && c.status === 'True') {
          c.status = 'False';
          flipped++;
        }
      }
      expect(flipped).toBe(2);
      const r = await env.ts().request('PUT', `${PODS(n)}/pod-test/status`, { body: st });
      if (r.status === 409) return undefined;
      expect(r.status, r.text).toBe(200);
      return r.json<Obj>();
    }, 'the status update');
    const falseConds = (updated.status.conditions as Obj[]).filter((c) => (c.type === 'Ready' || c.type === 'ContainersReady') && c.status === 'False');
    expect(falseConds).toHaveLength(2);

    await env.call('DELETE', `${PODS(n)}?labelSelector=${encodeURIComponent(sel)}`, { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 1 });
    await env.until(PODS(n), updated.metadata.resourceVersion, sel, (e) => e.type === 'DELETED' && e.object.metadata.labels?.['test-pod-static'] === 'true', 60_000);
    const r = await env.ts().request('GET', `${PODS(n)}/pod-test`);
    expect(r.status, r.text).toBe(404);
  });

  it('should patch a pod status [Conformance]', async () => {
    const n = await ns('pods-patch-status');
    const name = `pod-${Math.random().toString(36).slice(2, 7)}`;
    await env.call('POST', PODS(n), pod(name, { e2e: name }, 'agnhost', AGNHOST, { terminationGracePeriodSeconds: 1 }));
    await running(n, name);
    const patched = await env.call('PATCH', `${PODS(n)}/${name}/status`, {
      metadata: { annotations: { patchedstatus: 'true' } },
      status: { message: 'Patched by e2e test', reason: 'E2E' },
    });
    expect(patched.status.message).toBe('Patched by e2e test');
    expect(patched.status.reason).toBe('E2E');
    expect(patched.metadata.annotations).toMatchObject({ patchedstatus: 'true' });
  });

  it('should support pod readiness gates [NodeConformance]', async () => {
    const n = await ns('pods-readiness-gates');
    const [gate1, gate2] = ['k8s.io/test-condition1', 'k8s.io/test-condition2'];
    await env.call('POST', PODS(n), pod('pod-ready', {}, 'agnhost', AGNHOST, { readinessGates: [{ conditionType: gate1 }, { conditionType: gate2 }] }));
    await running(n, 'pod-ready');
    type Cond = { type: string; status: string; reason?: string; message?: string };
    const conditions = async (): Promise<Cond[]> => (await env.get(`${PODS(n)}/pod-ready`)).status.conditions as Cond[];
    const readyWhen = (check: (ready: Cond, all: Cond[]) => boolean, what: string): Promise<Cond[]> =>
      env.eventually(async () => {
        const all = await conditions();
        const ready = all.find((c) => c.type === 'Ready');
        return ready && check(ready, all) ? all : undefined;
      }, what);
    const setGate = (type: string, status: string) => env.call('PATCH', `${PODS(n)}/pod-ready/status`, { status: { conditions: [{ type, status }] } }, STRATEGIC);

    // the containers are ready, the gates' conditions are missing (kubelet's GeneratePodReadyCondition)
    await readyWhen(
      (r, all) => r.status === 'False' && r.reason === 'ReadinessGatesNotReady' && all.find((c) => c.type === 'ContainersReady')?.status === 'True',
      'Ready False for both gates',
    );
    expect((await conditions()).find((c) => c.type === 'Ready')?.message).toBe(
      `corresponding condition of pod readiness gate "${gate1}" does not exist., corresponding condition of pod readiness gate "${gate2}" does not exist.`,
    );
    await setGate(gate1, 'True');
    // still not ready: the second gate; the agent's write after the change keeps the first gate's condition
    const afterOne = await readyWhen((r) => r.message === `corresponding condition of pod readiness gate "${gate2}" does not exist.`, 'Ready waiting for the second gate');
    expect(afterOne.find((c) => c.type === 'Ready')?.status).toBe('False');
    expect(afterOne.find((c) => c.type === gate1)?.status).toBe('True');
    await setGate(gate2, 'True');
    const ready = await readyWhen((r) => r.status === 'True', 'Ready True');
    expect(ready.filter((c) => c.type === gate1 || c.type === gate2).map((c) => c.status)).toEqual(['True', 'True']);
    await setGate(gate1, 'False');
    await readyWhen((r) => r.status === 'False' && r.message === `the status of pod readiness gate "${gate1}" is not "True", but False`, 'Ready False again');
    // every condition once: the agent merges its own by type and leaves the others' as they were set
    const last = await conditions();
    expect(new Set(last.map((c) => c.type)).size).toBe(last.length);
    expect(last.filter((c) => c.type === gate1 || c.type === gate2).map((c) => [c.type, c.status]).sort()).toEqual([[gate1, 'False'], [gate2, 'True']]);
  });

  it('restarts a running container whose image was updated, with the new image (kubelet: definition changed)', async () => {
    const n = await ns('pods-image-update');
    await env.call('POST', PODS(n), pod('pod-image', {}, 'main', PAUSE, { terminationGracePeriodSeconds: 1 }));
    const before = (await running(n, 'pod-image')).status.containerStatuses[0];
    expect(before).toMatchObject({ image: PAUSE, restartCount: 0 });
    await updateWithRetries(env, `${PODS(n)}/pod-image`, (p) => (p.spec.containers[0].image = AGNHOST));
    const after = await env.eventually(async () => {
      const cs = (await env.get(`${PODS(n)}/pod-image`)).status.containerStatuses[0];
      return cs.image === AGNHOST && cs.state.running ? cs : undefined;
    }, 'the container running the new image');
    // a new container (attempt 1), whatever the restart policy; the last one ended when it was stopped
    expect(after.restartCount).toBe(1);
    expect(after.containerID).not.toBe(before.containerID);
    expect(after.lastState.terminated).toBeDefined();
    // the recorder sends events asynchronously: the new container may be seen first
    const events = async () => (await env.get(`/api/v1/namespaces/${n}/events?fieldSelector=${encodeURIComponent('involvedObject.name=pod-image')}`)).items as Obj[];
    const killing = await env.eventually(async () => (await events()).find((e) => e.reason === 'Killing'), 'a Killing event');
    expect(killing).toMatchObject({ type: 'Normal', message: 'Container main definition changed, will be restarted', involvedObject: { fieldPath: 'spec.containers{main}' } });
  });

  it('should contain environment variables for services [NodeConformance] [Conformance]', async () => {
    const n = await ns('pods-envvars');
    // the service's pod (serve-hostname), Running before the Service exists
    const serverName = `server-envvars-${crypto.randomUUID()}`;
    await env.call('POST', PODS(n), pod(serverName, { name: serverName }, 'srv', AGNHOST, { containers: [{ name: 'srv', image: AGNHOST, args: ['serve-hostname'], ports: [{ containerPort: 9376 }] }] }));
    await running(n, serverName);
    // kube keeps the fixed name: the variables' names derive from it
    await env.call('POST', `/api/v1/namespaces/${n}/services`, { metadata: { name: 'fooservice', labels: { name: 'fooservice' } }, spec: { ports: [{ port: 8765, targetPort: 8080 }], selector: { name: serverName } } });
    const expectedVars = ['FOOSERVICE_SERVICE_HOST=', 'FOOSERVICE_SERVICE_PORT=', 'FOOSERVICE_PORT=', 'FOOSERVICE_PORT_8765_TCP_PORT=', 'FOOSERVICE_PORT_8765_TCP_PROTO=', 'FOOSERVICE_PORT_8765_TCP=', 'FOOSERVICE_PORT_8765_TCP_ADDR='];
    // f.MatchContainerOutput, retried up to 3 times (the node may learn of the Service after the pod starts)
    let log = '';
    for (let attempt = 0; attempt < 3; attempt++) {
      const podName = `client-envvars-${crypto.randomUUID()}`;
      await env.call('POST', PODS(n), pod(podName, { name: podName }, 'env3cont', BUSYBOX, { containers: [{ name: 'env3cont', image: BUSYBOX, command: ['sh', '-c', 'env'] }], restartPolicy: 'Never' }));
      await waitSucceeded(env, n, podName);
      log = await podLog(env, n, podName, 'env3cont');
      await env.call('DELETE', `${PODS(n)}/${podName}`);
      if (expectedVars.every((v) => log.includes(v))) break;
    }
    for (const v of expectedVars) expect(log).toContain(v);
  });

  /** e2ewebsocket.OpenWebSocketForURL as the admin, then every message until the server closes */
  const websocketMessages = (path: string, protocol: string): Promise<Buffer[]> =>
    new Promise((resolve, reject) => {
      const ts = env.ts();
      const ws = new WebSocket(`wss://127.0.0.1:${ts.server.port}${path}`, [protocol], { ca: ts.server.caPem, cert: ts.server.adminCertPem, key: ts.server.adminKeyPem });
      const got: Buffer[] = [];
      ws.on('message', (d) => got.push(Buffer.isBuffer(d) ? d : Buffer.from(d as ArrayBuffer)));
      ws.on('unexpected-response', (_req, res) => reject(new Error(`${path}: HTTP ${res.statusCode}`)));
      ws.on('error', reject);
      ws.on('close', () => resolve(got));
    });
  const aliveContainer = (command: string): Obj => ({ containers: [{ name: 'main', image: BUSYBOX, command: ['/bin/sh', '-c', command] }] });

  it('should support remote command execution over websockets [NodeConformance] [Conformance]', async () => {
    const n = await ns('pods-exec-ws');
    const name = `pod-exec-websocket-${crypto.randomUUID()}`;
    await env.call('POST', PODS(n), pod(name, {}, 'main', BUSYBOX, aliveContainer('echo container is alive; sleep 600')));
    await running(n, name);
    // the unversioned `channel.k8s.io` protocol: stdout on channel 1, nothing else but empty messages
    const q = 'stderr=1&stdout=1&container=main&command=echo&command=remote+execution+test';
    const messages = await websocketMessages(`${PODS(n)}/${name}/exec?${q}`, 'channel.k8s.io');
    let out = '';
    for (const m of messages) {
      if (m.length === 0) continue;
      if (m[0] !== 1) {
        expect(m.length, `a message on channel ${m[0]}: ${m.subarray(1).toString()}`).toBe(1);
        continue;
      }
      out += m.subarray(1).toString();
    }
    expect(out).toContain('remote execution test');
    // beyond kube's test: a failure is told on the error channel as its message alone (no Status JSON)
    const failed = await websocketMessages(`${PODS(n)}/${name}/exec?stdout=1&container=main&command=sh&command=-c&command=exit+3`, 'channel.k8s.io');
    const errors = failed.filter((m) => m[0] === 3).map((m) => m.subarray(1).toString()).join('');
    expect(errors).toMatch(/^command terminated with non-zero exit code: .*exit code 3$/);
  });

  it('should support retrieving logs from the container over websockets [NodeConformance] [Conformance]', async () => {
    const n = await ns('pods-logs-ws');
    const name = `pod-logs-websocket-${crypto.randomUUID()}`;
    await env.call('POST', PODS(n), pod(name, {}, 'main', BUSYBOX, aliveContainer('echo container is alive; sleep 10000')));
    await running(n, name);
    // the log's bytes as binary messages (`binary.k8s.io`), the socket closed at its end; blank messages skipped
    const messages = await websocketMessages(`${PODS(n)}/${name}/log?container=main`, 'binary.k8s.io');
    expect(messages.filter((m) => m.toString().trim() !== '').map((m) => m.toString()).join('')).toBe('container is alive\n');
  });
});
