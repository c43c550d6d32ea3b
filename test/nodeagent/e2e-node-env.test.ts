// Kubernetes' sig-node e2e conformance tests that read a pod's environment
// through a command (test/e2e/common/node/downwardapi.go, expansion.go,
// configmap.go and secrets.go "via environment variable" / "via the
// environment"), on orch with kube's API domain and a real node agent whose
// simulated runtime runs `sh -c env` as a real shell: the container's log,
// read through the API, is what kube's TestContainerOutput checks.
// The subPathExpr tests of expansion.go are in e2e-node-subpath.test.ts.

import { describe, expect, it } from 'vitest';
import { type Obj, e2eEnv, namespace } from '../helpers/e2e-apps.js';
import { BUSYBOX, testContainerOutput, uniqueName } from '../helpers/e2e-node-output.js';

const env = e2eEnv('env-node');
const ns = (base: string) => namespace(env, `${base}-${Math.random().toString(36).slice(2, 8)}`);
const IPV4 = /\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}/.source;

/** one busybox container `dapi-container` running `sh -c env` (kube's testDownwardAPI pod) */
function envPod(name: string, container: Obj, restartPolicy = 'Never'): Obj {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { name } }, spec: { containers: [{ name: 'dapi-container', image: BUSYBOX, command: ['sh', '-c', 'env'], ...container }], restartPolicy } };
}
const field = (name: string, fieldPath: string): Obj => ({ name, valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath } } });
const resource = (name: string, r: string): Obj => ({ name, valueFrom: { resourceFieldRef: { resource: r } } });
/** kube's testDownwardAPI: requests 250m/32Mi, limits 1250m/64Mi */
const RESOURCES = { requests: { cpu: '250m', memory: '32Mi' }, limits: { cpu: '1250m', memory: '64Mi' } };

describe('[sig-node] Downward API', () => {
  it('should provide pod name, namespace and IP address as env vars [NodeConformance] [Conformance]', async () => {
    const n = await ns('downward-api');
    const name = uniqueName('downward-api-');
    const pod = envPod(name, { resources: RESOURCES, env: [field('POD_NAME', 'metadata.name'), field('POD_NAMESPACE', 'metadata.namespace'), field('POD_IP', 'status.podIP')] });
    await testContainerOutput(env, n, pod, 0, [new RegExp(`POD_NAME=${name}`), new RegExp(`POD_NAMESPACE=${n}`), new RegExp(`POD_IP=${IPV4}`)]);
  });

  it('should provide host IP as an env var [NodeConformance] [Conformance]', async () => {
    const n = await ns('downward-api');
    const pod = envPod(uniqueName('downward-api-'), { resources: RESOURCES, env: [field('HOST_IP', 'status.hostIP')] });
    const log = await testContainerOutput(env, n, pod, 0, [new RegExp(`HOST_IP=${IPV4}`)]);
    // the agent runs with --node-ip 127.0.0.1: the node's InternalIP is the host IP
    expect(log).toContain('HOST_IP=127.0.0.1\n');
  });

  it('should provide host IP and pod IP as an env var if pod uses host network [LinuxOnly]', async () => {
    const n = await ns('downward-api');
    // kube's script; `[[` is busybox ash's, run here by bash
    const script = `[[ "\${HOST_IP:?}" == "\${POD_IP:?}" ]] && echo 'OK' || echo "HOST_IP: '\${HOST_IP}' != POD_IP: '\${POD_IP}'"`;
    const name = uniqueName('downward-api-');
    const pod = envPod(name, { command: ['sh', '-c', script], env: [field('HOST_IP', 'status.hostIP'), field('POD_IP', 'status.podIP')] });
    pod.spec.hostNetwork = true;
    const log = await testContainerOutput(env, n, pod, 0, ['OK']);
    expect(log).toBe('OK\n');
    // beyond kube's check: the pod's status says the same
    const p = await env.get(`/api/v1/namespaces/${n}/pods/${name}`);
    expect(p.status.podIP).toBe(p.status.hostIP);
  });

  it("should provide container's limits.cpu/memory and requests.cpu/memory as env vars [NodeConformance] [Conformance]", async () => {
    const n = await ns('downward-api');
    const pod = envPod(uniqueName('downward-api-'), {
      resources: RESOURCES,
      env: [resource('CPU_LIMIT', 'limits.cpu'), resource('MEMORY_LIMIT', 'limits.memory'), resource('CPU_REQUEST', 'requests.cpu'), resource('MEMORY_REQUEST', 'requests.memory')],
    });
    await testContainerOutput(env, n, pod, 0, ['CPU_LIMIT=2\n', 'MEMORY_LIMIT=67108864\n', 'CPU_REQUEST=1\n', 'MEMORY_REQUEST=33554432\n']);
  });

  it('should provide default limits.cpu/memory from node allocatable [NodeConformance] [Conformance]', async () => {
    const n = await ns('downward-api');
    const pod = envPod(uniqueName('downward-api-'), { env: [resource('CPU_LIMIT', 'limits.cpu'), resource('MEMORY_LIMIT', 'limits.memory')] });
    const log = await testContainerOutput(env, n, pod, 0, [/CPU_LIMIT=[1-9]/, /MEMORY_LIMIT=[1-9]/]);
    // beyond kube's check: the values are the node's allocatable (cpu in whole cores, rounded up; memory in bytes)
    const node = await env.get('/api/v1/nodes/env-node');
    expect(log).toContain(`CPU_LIMIT=${Math.ceil(Number(node.status.allocatable.cpu))}\n`);
    expect(log).toMatch(/MEMORY_LIMIT=\d{7,}\n/);
  });

  it('should provide pod UID as env vars [NodeConformance] [Conformance]', async () => {
    const n = await ns('downward-api');
    const name = uniqueName('downward-api-');
    const log = await testContainerOutput(env, n, envPod(name, { resources: RESOURCES, env: [field('POD_UID', 'metadata.uid')] }), 0, [
      /POD_UID=[a-z0-9]{8}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{12}/,
    ]);
    const p = await env.get(`/api/v1/namespaces/${n}/pods/${name}`);
    expect(log).toContain(`POD_UID=${p.metadata.uid}\n`);
  });
});

describe('[sig-node] Variable Expansion', () => {
  const expansionPod = (container: Obj): Obj => envPod(uniqueName('var-expansion-'), container);

  it('should allow composing env vars into new env vars [NodeConformance] [Conformance]', async () => {
    const n = await ns('var-expansion');
    const pod = expansionPod({ env: [{ name: 'FOO', value: 'foo-value' }, { name: 'BAR', value: 'bar-value' }, { name: 'FOOBAR', value: '$(FOO);;$(BAR)' }] });
    const log = await testContainerOutput(env, n, pod, 0, ['FOO=foo-value', 'BAR=bar-value', 'FOOBAR=foo-value;;bar-value']);
    // beyond kube's check: nothing of the node's own environment reaches a container — only what the agent set,
    // the runtime's PATH, HOME and HOSTNAME, and what the shell itself adds (PWD, SHLVL, _)
    const names = log.split('\n').filter(Boolean).map((l) => l.slice(0, l.indexOf('=')));
    expect(names.filter((k) => !/^(FOO|BAR|FOOBAR|PATH|HOME|HOSTNAME|PWD|SHLVL|_|KUBERNETES_\w+)$/.test(k))).toEqual([]);
  });

  it("should allow substituting values in a container's command [NodeConformance] [Conformance]", async () => {
    const n = await ns('var-expansion');
    const pod = expansionPod({ command: ['sh', '-c', 'TEST_VAR=wrong echo "$(TEST_VAR)"'], env: [{ name: 'TEST_VAR', value: 'test-value' }] });
    const log = await testContainerOutput(env, n, pod, 0, ['test-value']);
    // the agent expanded $(TEST_VAR) before the shell ran: not the shell's command substitution
    expect(log).toBe('test-value\n');
  });

  it("should allow substituting values in a container's args [NodeConformance] [Conformance]", async () => {
    const n = await ns('var-expansion');
    const pod = expansionPod({ command: ['sh', '-c'], args: ['TEST_VAR=wrong echo "$(TEST_VAR)"'], env: [{ name: 'TEST_VAR', value: 'test-value' }] });
    const log = await testContainerOutput(env, n, pod, 0, ['test-value']);
    expect(log).toBe('test-value\n');
  });
});

describe('[sig-node] ConfigMap and Secrets in the environment', () => {
  const data = { 'data-1': 'value-1', 'data-2': 'value-2', 'data-3': 'value-3' };
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  /** kube's secretForTest: each value ends with a newline */
  const secretData = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(`${v}\n`)]));
  const prefixed = ['data-1=value-1', 'data-2=value-2', 'data-3=value-3', 'p-data-1=value-1', 'p-data-2=value-2', 'p-data-3=value-3'];

  it('ConfigMap should be consumable via environment variable [NodeConformance] [Conformance]', async () => {
    const n = await ns('configmap');
    const name = uniqueName('configmap-test-');
    await env.call('POST', `/api/v1/namespaces/${n}/configmaps`, { metadata: { name }, data });
    const pod = envPod(uniqueName('pod-configmaps-'), { name: 'env-test', env: [{ name: 'CONFIG_DATA_1', valueFrom: { configMapKeyRef: { name, key: 'data-1' } } }] });
    await testContainerOutput(env, n, pod, 0, ['CONFIG_DATA_1=value-1']);
  });

  it('ConfigMap should be consumable via the environment [NodeConformance] [Conformance]', async () => {
    const n = await ns('configmap');
    const name = uniqueName('configmap-test-');
    await env.call('POST', `/api/v1/namespaces/${n}/configmaps`, { metadata: { name }, data });
    const pod = envPod(uniqueName('pod-configmaps-'), { name: 'env-test', envFrom: [{ configMapRef: { name } }, { prefix: 'p-', configMapRef: { name } }] });
    await testContainerOutput(env, n, pod, 0, prefixed);
  });

  it('Secrets should be consumable from pods in env vars [NodeConformance] [Conformance]', async () => {
    const n = await ns('secrets');
    const name = uniqueName('secret-test-');
    await env.call('POST', `/api/v1/namespaces/${n}/secrets`, { metadata: { name }, data: secretData });
    const pod = envPod(uniqueName('pod-secrets-'), { name: 'secret-env-test', env: [{ name: 'SECRET_DATA', valueFrom: { secretKeyRef: { name, key: 'data-1' } } }] });
    await testContainerOutput(env, n, pod, 0, ['SECRET_DATA=value-1']);
  });

  it('Secrets should be consumable via the environment [NodeConformance] [Conformance]', async () => {
    const n = await ns('secrets');
    const name = uniqueName('secret-test-');
    await env.call('POST', `/api/v1/namespaces/${n}/secrets`, { metadata: { name }, data: secretData });
    const pod = envPod(uniqueName('pod-configmaps-'), { name: 'env-test', envFrom: [{ secretRef: { name } }, { prefix: 'p-', secretRef: { name } }] });
    await testContainerOutput(env, n, pod, 0, prefixed);
  });
});
