// Kubernetes' sig-cli e2e conformance tests of kubectl (test/e2e/kubectl/kubectl.go,
// `[Conformance]`), run with the real kubectl 1.32 against orch (kube's group
// names) and one real node agent on the simulated runtime: version,
// api-versions, cluster-info, describe of an RC's pod/RC/service/node/namespace,
// expose of an RC and of a service, label, patch, run --restart=Never,
// replace of a pod's image, server-side dry-run replace, diff of a Deployment,
// logs (tail, limit-bytes, timestamps, since) and `kubectl proxy` on port 0 and
// on a unix socket.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Obj, AGNHOST, PAUSE, WEBSERVER, e2eEnv, namespace } from '../helpers/e2e-apps.js';
import { type KubectlResult, runKubectl, startKubectl } from '../helpers/kubectl.js';

const env = e2eEnv('cli-node');
const BUSYBOX = 'registry.k8s.io/e2e-test-images/busybox:1.36.1-1';
let dir: string;
let seq = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-e2e-cli-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const ns = (base: string) => namespace(env, `${base}-${++seq}-${Math.random().toString(36).slice(2, 7)}`);
const kubectl = (n: string, ...args: string[]): Promise<KubectlResult> => runKubectl(env.ts().server.kubeconfigPath, ['--namespace', n, ...args]);
/** RunKubectlOrDie: the output, after checking the exit code */
async function ok(n: string, ...args: string[]): Promise<string> {
  const r = await kubectl(n, ...args);
  expect(r.code, `kubectl ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r.stdout;
}
/** RunKubectlOrDieInput: the manifest goes in a file (kube pipes it to `-f -`) */
async function withInput(n: string, input: string, ...args: string[]): Promise<string> {
  const f = join(dir, `in-${++seq}.json`);
  await writeFile(f, input);
  return ok(n, ...args.map((a) => (a === '-' ? f : a)));
}

/** checkOutput: each requirement's first string on a line at or after the previous one's, the rest on that line */
function checkOutput(output: string, required: string[][]): void {
  const lines = output.split('\n');
  let i = 0;
  for (const [first, ...rest] of required) {
    while (i < lines.length && !lines[i]!.includes(first!)) i++;
    expect(i, `${first} in\n${output}`).toBeLessThan(lines.length);
    for (const item of rest) expect(lines[i], `${item} on the line of ${first}`).toContain(item);
  }
}

// testing-manifests/kubectl/agnhost-primary-controller.json.in and agnhost-primary-service.json
const LABELS = { app: 'agnhost', role: 'primary' };
const agnhostRc = {
  kind: 'ReplicationController',
  apiVersion: 'v1',
  metadata: { name: 'agnhost-primary', labels: LABELS },
  spec: {
    replicas: 1,
    selector: LABELS,
    template: {
      metadata: { labels: LABELS },
      spec: { containers: [{ name: 'agnhost-primary', image: AGNHOST, args: ['guestbook', '--http-port', '6379'], ports: [{ name: 'agnhost-server', containerPort: 6379 }] }] },
    },
  },
};
const agnhostService = {
  kind: 'Service',
  apiVersion: 'v1',
  metadata: { name: 'agnhost-primary', labels: LABELS },
  spec: { ports: [{ port: 6379, targetPort: 'agnhost-server' }], selector: LABELS },
};
/** waitForOrFailWithDebug(1) and forEachPod: the running pods app=agnhost */
const agnhostPods = (n: string): Promise<Obj[]> => env.runningPods(n, 'app=agnhost', 1);

describe('[sig-cli] Kubectl client', () => {
  it('Kubectl version should check is all data is printed [Conformance]', async () => {
    const out = await ok('default', 'version');
    // kubectl 1.28+ prints the short form: each label followed by a semantic version
    for (const item of ['Client Version: ', 'Server Version: ']) expect(out).toMatch(new RegExp(`${item}v\\d\\.\\d+\\.[\\d\\w\\-.+]+`));
  });

  it('Kubectl api-versions should check if v1 is in available api versions [Conformance]', async () => {
    const out = await ok('default', 'api-versions');
    expect(out.split('\n')).toContain('v1');
  });

  it('Kubectl cluster-info should check if Kubernetes control plane services is included in cluster-info [Conformance]', async () => {
    const out = await ok('default', 'cluster-info');
    for (const item of ['Kubernetes control plane', 'is running at']) expect(out).toContain(item);
  });

  it('Kubectl describe should check if kubectl describe prints relevant information for rc and pods [Conformance]', async () => {
    const n = await ns('kubectl-describe');
    await withInput(n, JSON.stringify(agnhostRc), 'create', '-f', '-');
    await withInput(n, JSON.stringify(agnhostService), 'create', '-f', '-');
    for (const pod of await agnhostPods(n)) {
      checkOutput(await ok(n, 'describe', 'pod', pod.metadata.name), [
        ['Name:', 'agnhost-primary-'],
        ['Namespace:', n],
        ['Node:'],
        ['Labels:', 'app=agnhost'],
        ['role=primary'],
        ['Annotations:'],
        ['Status:', 'Running'],
        ['IP:'],
        ['Controlled By:', 'ReplicationController/agnhost-primary'],
        ['Image:', AGNHOST],
        ['State:', 'Running'],
        ['QoS Class:', 'BestEffort'],
      ]);
    }
    // checkKubectlOutputWithRetry: the RC's status follows its pod
    await env.eventually(async () => {
      const out = await ok(n, 'describe', 'rc', 'agnhost-primary');
      checkOutput(out, [
        ['Name:', 'agnhost-primary'],
        ['Namespace:', n],
        ['Selector:', 'app=agnhost,role=primary'],
        ['Labels:', 'app=agnhost'],
        ['role=primary'],
        ['Annotations:'],
        ['Replicas:', '1 current', '1 desired'],
        ['Pods Status:', '1 Running', '0 Waiting', '0 Succeeded', '0 Failed'],
        ['Pod Template:'],
        ['Image:', AGNHOST],
        ['Events:'],
      ]);
      return true;
    }, 'describe rc');
    checkOutput(await ok(n, 'describe', 'service', 'agnhost-primary'), [
      ['Name:', 'agnhost-primary'],
      ['Namespace:', n],
      ['Labels:', 'app=agnhost'],
      ['role=primary'],
      ['Annotations:'],
      ['Selector:', 'app=agnhost', 'role=primary'],
      ['Type:', 'ClusterIP'],
      ['IP:'],
      ['Port:', '<unset>', '6379/TCP'],
      ['Endpoints:'],
      ['Session Affinity:', 'None'],
    ]);
    const node = ((await env.list('/api/v1/nodes')).items as Obj[])[0]!;
    checkOutput(await ok(n, 'describe', 'node', node.metadata.name), [
      ['Name:', node.metadata.name],
      ['Labels:'],
      ['Annotations:'],
      ['CreationTimestamp:'],
      ['Conditions:'],
      ['Type', 'Status', 'LastHeartbeatTime', 'LastTransitionTime', 'Reason', 'Message'],
      ['Addresses:'],
      ['Capacity:'],
      ['Version:'],
      ['Kernel Version:'],
      ['OS Image:'],
      ['Container Runtime Version:'],
      ['Kubelet Version:'],
      ['Kube-Proxy Version:'],
      ['Pods:'],
    ]);
    checkOutput(await ok(n, 'describe', 'namespace', n), [['Name:', n], ['Labels:'], ['Annotations:'], ['Status:', 'Active']]);
  });

  it('Kubectl expose should create services for rc [Conformance]', async () => {
    const n = await ns('kubectl-expose');
    const agnhostPort = 6379;
    await withInput(n, JSON.stringify(agnhostRc), 'create', '-f', '-');
    await agnhostPods(n);
    // the test then waits for "Paused" in the pod's log: agnhost does not run on the simulated runtime
    const validateService = async (name: string, servicePort: number): Promise<void> => {
      // e2eendpoints.GetContainerPortsByPodUID: one pod behind the endpoints, on the agnhost port
      const ports = await env.eventually(async () => {
        const r = await env.ts().request('GET', `/api/v1/namespaces/${n}/endpoints/${name}`);
        if (r.status !== 200) return undefined;
        const byPod = new Map<string, number[]>();
        for (const ss of (r.json<Obj>().subsets ?? []) as Obj[])
          for (const a of (ss.addresses ?? []) as Obj[]) byPod.set(a.targetRef?.uid as string, ((ss.ports ?? []) as Obj[]).map((p) => p.port as number));
        return byPod.size > 0 ? byPod : undefined;
      }, `endpoints of ${name}`);
      expect(ports.size, 'too many endpoints found').toBe(1);
      for (const p of ports.values()) expect(p[0]).toBe(agnhostPort);
      const svc = await env.get(`/api/v1/namespaces/${n}/services/${name}`);
      expect(svc.spec.ports).toHaveLength(1);
      expect(svc.spec.ports[0].port).toBe(servicePort);
      expect(svc.spec.ports[0].targetPort).toBe(agnhostPort);
    };
    await ok(n, 'expose', 'rc', 'agnhost-primary', '--name=rm2', '--port=1234', `--target-port=${agnhostPort}`);
    await validateService('rm2', 1234);
    await ok(n, 'expose', 'service', 'rm2', '--name=rm3', '--port=2345', `--target-port=${agnhostPort}`);
    await validateService('rm3', 2345);
  });

  it('Kubectl label should update the label on a resource [Conformance]', async () => {
    const n = await ns('kubectl-label');
    // testing-manifests/kubectl/pause-pod.yaml.in
    const pausePod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'pause', labels: { name: 'pause' } }, spec: { containers: [{ name: 'pause', image: PAUSE }] } };
    await withInput(n, JSON.stringify(pausePod), 'create', '-f', '-');
    await env.runningPods(n, 'name=pause', 1);
    await ok(n, 'label', 'pods', 'pause', 'testing-label=testing-label-value');
    expect(await ok(n, 'get', 'pod', 'pause', '-L', 'testing-label')).toContain('testing-label-value');
    await ok(n, 'label', 'pods', 'pause', 'testing-label-');
    expect(await ok(n, 'get', 'pod', 'pause', '-L', 'testing-label')).not.toContain('testing-label-value');
    // cleanupKubectlInputs
    await withInput(n, JSON.stringify(pausePod), 'delete', '--grace-period=0', '--force', '-f', '-');
    expect(await ok(n, 'get', 'pods', '-l', 'name=pause', '-o', 'go-template={{ range .items }}{{ if not .metadata.deletionTimestamp }}{{ .metadata.name }}{{ "\\n" }}{{ end }}{{ end }}')).toBe('');
  });

  it('Kubectl patch should add annotations for pods in rc [Conformance]', async () => {
    const n = await ns('kubectl-patch');
    await withInput(n, JSON.stringify(agnhostRc), 'create', '-f', '-');
    for (const pod of await agnhostPods(n)) await ok(n, 'patch', 'pod', pod.metadata.name, '-p', '{"metadata":{"annotations":{"x":"y"}}}');
    for (const pod of await agnhostPods(n)) expect(pod.metadata.annotations?.x).toBe('y');
  });

  it('Kubectl run pod should create a pod from an image when restart is Never [Conformance]', async () => {
    const n = await ns('kubectl-run');
    await ok(n, 'run', 'e2e-test-httpd-pod', '--restart=Never', '--pod-running-timeout=2m0s', `--image=${WEBSERVER}`);
    const pod = await env.get(`/api/v1/namespaces/${n}/pods/e2e-test-httpd-pod`);
    expect(pod.spec.containers.map((c: Obj) => c.image)).toEqual([WEBSERVER]);
    expect(pod.spec.restartPolicy).toBe('Never');
    await ok(n, 'delete', 'pods', 'e2e-test-httpd-pod');
  });

  it("Kubectl replace should update a single-container pod's image [Conformance]", async () => {
    const n = await ns('kubectl-replace');
    const name = 'e2e-test-httpd-pod';
    await ok(n, 'run', name, `--image=${WEBSERVER}`, '--pod-running-timeout=2m0s', `--labels=run=${name}`);
    await env.runningPods(n, `run=${name}`, 1);
    const podJson = await ok(n, 'get', 'pod', name, '-o', 'json');
    expect(podJson).toContain(name);
    await withInput(n, podJson.replace(WEBSERVER, BUSYBOX), 'replace', '-f', '-');
    const pod = await env.get(`/api/v1/namespaces/${n}/pods/${name}`);
    expect(pod.spec.containers.map((c: Obj) => c.image)).toEqual([BUSYBOX]);
    await ok(n, 'delete', 'pods', name);
  });

  it('Kubectl server-side dry-run should check if kubectl can dry-run update Pods [Conformance]', async () => {
    const n = await ns('kubectl-dry-run');
    const name = 'e2e-test-httpd-pod';
    await ok(n, 'run', name, `--image=${WEBSERVER}`, '--pod-running-timeout=2m0s', `--labels=run=${name}`);
    // the simulated runtime's status writes come within milliseconds and would make the read's resourceVersion
    // stale (a 409), where kube's kubelet is still pulling; so read once the pod is running
    await env.runningPods(n, `run=${name}`, 1);
    const podJson = (await ok(n, 'get', 'pod', name, '-o', 'json')).replace(WEBSERVER, BUSYBOX);
    expect(podJson).toContain(BUSYBOX);
    await withInput(n, podJson, 'replace', '-f', '-', '--dry-run=server');
    const pod = await env.get(`/api/v1/namespaces/${n}/pods/${name}`);
    expect(pod.spec.containers.map((c: Obj) => c.image)).toEqual([WEBSERVER]);
    await ok(n, 'delete', 'pods', name);
  });

  it('Kubectl diff should check if kubectl diff finds a difference for Deployments [Conformance]', async () => {
    const n = await ns('kubectl-diff');
    // testing-manifests/kubectl/httpd-deployment3.yaml.in
    const deployment = (image: string) =>
      JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'httpd-deployment' },
        spec: { selector: { matchLabels: { app: 'httpd' } }, template: { metadata: { labels: { app: 'httpd' } }, spec: { containers: [{ name: 'httpd', image, ports: [{ containerPort: 80 }] }] } } },
      });
    await withInput(n, deployment(WEBSERVER), 'create', '-f', '-');
    const f = join(dir, `diff-${++seq}.json`);
    await writeFile(f, deployment(BUSYBOX));
    const r = await kubectl(n, 'diff', '-f', f);
    // exit code 1: differences found (kube fails on any other error)
    expect(r.code, r.stderr).toBe(1);
    for (const item of [WEBSERVER, BUSYBOX]) expect(r.stdout).toContain(item);
    await ok(n, 'delete', '-f', f);
  });

  it('Kubectl logs logs should be able to retrieve and filter logs [Conformance]', async () => {
    const n = await ns('kubectl-logs');
    // agnhost's logs-generator does not run on the simulated runtime; a shell loop writes its kind of lines (100 over 20 s)
    const script = 'for i in $(seq 1 100); do echo "I0000 $i logs_generator.go:67] $i GET /api/v1/namespaces/kube-system/pods/$i 200"; sleep 0.2; done';
    await ok(n, 'run', 'logs-generator', `--image=${BUSYBOX}`, '--restart=Never', '--pod-running-timeout=2m0s', '--', 'sh', '-c', script);
    await env.eventually(async () => ['Running', 'Succeeded'].includes((await env.get(`/api/v1/namespaces/${n}/pods/logs-generator`)).status?.phase), 'logs-generator running');
    // LookForStringInLog
    await env.eventually(async () => (await ok(n, 'logs', 'logs-generator', 'logs-generator')).includes('/api/v1/namespaces/kube-system'), 'the expected log line');
    const lines = (out: string) => out.replace(/\n+$/, '').split('\n');

    let out = await ok(n, 'logs', 'logs-generator', 'logs-generator', '--tail=1');
    expect(out).not.toBe('');
    expect(lines(out)).toHaveLength(1);
    out = await ok(n, 'logs', 'logs-generator', 'logs-generator', '--limit-bytes=1');
    expect(lines(out)).toHaveLength(1);
    expect(out).toHaveLength(1);
    out = await ok(n, 'logs', 'logs-generator', 'logs-generator', '--tail=1', '--timestamps');
    const l = lines(out);
    expect(l).toHaveLength(1);
    const words = l[0]!.split(' ');
    expect(words.length).toBeGreaterThan(1);
    expect(words[0]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/);
    // the test's own wait: the first lines are then more than a second old
    await new Promise((r) => setTimeout(r, 2500));
    const recent = (await ok(n, 'logs', 'logs-generator', 'logs-generator', '--since=1s')).split('\n').length;
    const older = (await ok(n, 'logs', 'logs-generator', 'logs-generator', '--since=24h')).split('\n').length;
    expect(recent).toBeLessThan(older);
    await ok(n, 'delete', 'pod', 'logs-generator');
  });

  describe('Proxy server', () => {
    it('should support proxy with --port 0 [Conformance]', async () => {
      const proxy = startKubectl(env.ts().server.kubeconfigPath, ['proxy', '-p', '0', '--disable-filter']);
      try {
        const m = await env.eventually(async () => /Starting to serve on 127\.0\.0\.1:(\d+)/.exec(proxy.out()) ?? undefined, `kubectl proxy's port: ${proxy.err()}`);
        const body = await httpGet({ host: '127.0.0.1', port: Number(m[1]), path: '/api/' });
        expect((JSON.parse(body) as Obj).versions.length).toBeGreaterThanOrEqual(1);
      } finally {
        await proxy.stop();
      }
    });

    it('should support --unix-socket=/path [Conformance]', async () => {
      const socketPath = join(dir, 'proxy.sock');
      const proxy = startKubectl(env.ts().server.kubeconfigPath, ['proxy', `--unix-socket=${socketPath}`]);
      try {
        await env.eventually(async () => proxy.out().length > 0, `kubectl proxy's first output: ${proxy.err()}`);
        const body = await httpGet({ socketPath, path: '/api' });
        expect((JSON.parse(body) as Obj).versions).toContain('v1');
      } finally {
        await proxy.stop();
      }
    });
  });
});

/** curl / curlUnix: a GET's body, after a 200 */
function httpGet(o: { host?: string; port?: number; socketPath?: string; path: string }): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ ...o, method: 'GET' }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`${res.statusCode}: ${body}`))));
    });
    req.on('error', reject);
    req.end();
  });
}
