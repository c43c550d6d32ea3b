// Container environments on a real node agent: a real control plane, a real
// `orch nodeagent` process with the simulated runtime (an `sh -c` command runs
// as a real shell with the environment the agent built) and kubectl 1.32 to
// read logs. A pod prints variables from fieldRef, a ConfigMap key, a Secret
// key, envFrom with a prefix, `$(VAR)` in its command and the kubernetes
// service variables; a namespace Service's variables with enableServiceLinks
// (and only the kubernetes ones without); a pod referencing a missing ConfigMap waits with
// CreateContainerConfigError until the ConfigMap appears; an Indexed Job's
// pods print their completion index.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { runKubectl } from '../helpers/kubectl.js';
import { type AgentProcess, startAgentProcess, stopAgentAndServer, waitNodeReady } from '../helpers/nodeagent.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let ts: TestServer;
let agent: AgentProcess | undefined;
type Pod = { metadata: { name: string; annotations?: Record<string, string> }; status?: { phase?: string; podIP?: string; containerStatuses?: { state?: { waiting?: { reason?: string; message?: string } } }[] } };

const context = (): string => agent!.output().slice(-2000);
async function create(path: string, body: object): Promise<void> {
  const r = await ts.request('POST', path, { body });
  expect(r.status, r.text).toBe(201);
}
async function pod(name: string): Promise<Pod> {
  return (await ts.request('GET', `/api/v1/namespaces/default/pods/${name}`)).json<Pod>();
}
async function logs(name: string): Promise<string> {
  const r = await runKubectl(join(ts.dataDir, 'admin.kubeconfig'), ['logs', `pod/${name}`]);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

beforeAll(async () => {
  ts = await startTestServer();
  agent = await startAgentProcess(ts, { nodeName: 'node-1' });
  await waitNodeReady(ts, agent, 'node-1');
});

afterAll(async () => {
  await stopAgentAndServer(agent, ts);
});

describe('container environments on a real node agent', () => {
  it('fieldRef, ConfigMap and Secret keys, envFrom with prefix, $(VAR) in the command, service variables', async () => {
    await create('/api/v1/namespaces/default/configmaps', { metadata: { name: 'cfg' }, data: { color: 'blue', size: 'XL' } });
    await create('/api/v1/namespaces/default/secrets', { metadata: { name: 'sec' }, stringData: { password: 's3cr3t' } });
    const script = `echo "name=$POD_NAME ns=$POD_NS ip=$POD_IP node=$NODE app=$APP color=$COLOR pass=$PASS pre=$CFG_size both=$(BOTH)" 'esc=$$(BOTH)' "k8s=$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT"`;
    // the kubelet turns $$(BOTH) into a literal $(BOTH); single quotes keep the shell from running it
    await create('/api/v1/namespaces/default/pods', {
      metadata: { name: 'env-pod', labels: { app: 'web' } },
      spec: {
        nodeName: 'node-1',
        restartPolicy: 'Never',
        containers: [
          {
            name: 'c',
            image: 'busybox',
            command: ['sh', '-c', script],
            envFrom: [{ prefix: 'CFG_', configMapRef: { name: 'cfg' } }],
            env: [
              { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              { name: 'POD_NS', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
              { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
              { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
              { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
              { name: 'COLOR', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'color' } } },
              { name: 'PASS', valueFrom: { secretKeyRef: { name: 'sec', key: 'password' } } },
              { name: 'BOTH', value: '$(POD_NAME)-$(COLOR)' },
            ],
          },
        ],
      },
    });
    await eventually(async () => (await pod('env-pod')).status?.phase === 'Succeeded', 'env-pod Succeeded', { timeoutMs: 30_000, context });
    const p = await pod('env-pod');
    const svc = (await ts.request('GET', '/api/v1/namespaces/default/services/kubernetes')).json<{ spec: { clusterIP: string; ports: { port: number }[] } }>();
    expect(p.status?.podIP).toBeTruthy();
    expect((await logs('env-pod')).trim()).toBe(
      `name=env-pod ns=default ip=${p.status!.podIP} node=node-1 app=web color=blue pass=s3cr3t pre=XL both=env-pod-blue esc=$(BOTH) k8s=${svc.spec.clusterIP}:${svc.spec.ports[0]!.port}`,
    );
  });

  it('service variables: the namespace services with enableServiceLinks, the kubernetes service always', async () => {
    await create('/api/v1/namespaces/default/services', { metadata: { name: 'my-svc' }, spec: { selector: { app: 'x' }, ports: [{ name: 'web', port: 8080 }] } });
    const svc = (await ts.request('GET', '/api/v1/namespaces/default/services/my-svc')).json<{ spec: { clusterIP: string } }>();
    const script = 'echo "svc=$MY_SVC_SERVICE_HOST:$MY_SVC_SERVICE_PORT_WEB link=$MY_SVC_PORT k8s=${KUBERNETES_SERVICE_HOST:+set}"';
    for (const [name, links] of [['links-on', true], ['links-off', false]] as const) {
      await create('/api/v1/namespaces/default/pods', { metadata: { name }, spec: { nodeName: 'node-1', restartPolicy: 'Never', enableServiceLinks: links, containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', script] }] } });
    }
    for (const name of ['links-on', 'links-off']) await eventually(async () => (await pod(name)).status?.phase === 'Succeeded', `${name} Succeeded`, { timeoutMs: 30_000, context });
    expect((await logs('links-on')).trim()).toBe(`svc=${svc.spec.clusterIP}:8080 link=tcp://${svc.spec.clusterIP}:8080 k8s=set`);
    expect((await logs('links-off')).trim()).toBe('svc=: link= k8s=set');
  });

  it('a missing ConfigMap is CreateContainerConfigError until it is created', async () => {
    await create('/api/v1/namespaces/default/pods', {
      metadata: { name: 'waits' },
      spec: { nodeName: 'node-1', restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'echo "got=$V"'], env: [{ name: 'V', valueFrom: { configMapKeyRef: { name: 'later', key: 'k' } } }] }] },
    });
    const waiting = async () => (await pod('waits')).status?.containerStatuses?.[0]?.state?.waiting;
    await eventually(async () => (await waiting())?.reason === 'CreateContainerConfigError', 'waits: CreateContainerConfigError', { timeoutMs: 30_000, context });
    expect(await waiting()).toEqual({ reason: 'CreateContainerConfigError', message: 'configmap "later" not found' });
    await create('/api/v1/namespaces/default/configmaps', { metadata: { name: 'later' }, data: { other: 'x' } });
    await eventually(async () => (await waiting())?.message === "couldn't find key k in ConfigMap default/later", 'waits: missing key', { timeoutMs: 30_000, context });
    const r = await ts.request('PUT', '/api/v1/namespaces/default/configmaps/later', { body: { metadata: { name: 'later' }, data: { k: 'finally' } } });
    expect(r.status, r.text).toBe(200);
    await eventually(async () => (await pod('waits')).status?.phase === 'Succeeded', 'waits Succeeded', { timeoutMs: 30_000, context });
    expect((await logs('waits')).trim()).toBe('got=finally');
  });

  it("an Indexed Job's pods print their completion index", async () => {
    await create('/apis/batch/v1/namespaces/default/jobs', {
      metadata: { name: 'idx' },
      spec: { completionMode: 'Indexed', completions: 2, parallelism: 2, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'echo "index=$JOB_COMPLETION_INDEX"'] }] } } },
    });
    const wait = await runKubectl(join(ts.dataDir, 'admin.kubeconfig'), ['wait', '--for=condition=complete', 'job/idx', '--timeout=30s']);
    expect(wait.code, `${wait.stdout}\n${wait.stderr}\n${context()}`).toBe(0);
    const list = (await ts.request('GET', `/api/v1/namespaces/default/pods?labelSelector=${encodeURIComponent('batch.kubernetes.io/job-name=idx')}`)).json<{ items: Pod[] }>().items;
    const seen = new Map<string, string>();
    for (const p of list) seen.set(p.metadata.annotations!['batch.kubernetes.io/job-completion-index']!, (await logs(p.metadata.name)).trim());
    expect(Object.fromEntries(seen)).toEqual({ '0': 'index=0', '1': 'index=1' });
  });
});
