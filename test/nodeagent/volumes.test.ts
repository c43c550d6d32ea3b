// Pod volumes on a real node agent (spec 001 §5.5; docs/nodeagent.md
// "Volumes"): a real control plane, a real `orch nodeagent` with the simulated
// runtime, kubectl 1.32. The ServiceAccount admission plugin adds the token
// volume; the agent writes it (a TokenRequest bound to the pod), and
// `kubectl exec … cat <well-known path>/token` prints a token that
// authenticates as the pod's account. configMap, secret, downwardAPI and
// emptyDir volumes reach an `sh -c` container; a missing ConfigMap is a
// FailedMount and the pod waits until it exists; a deleted pod's directory goes.
// The same with --api-domain k8s.io at kube's path.

import { readFile, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { runKubectl } from '../helpers/kubectl.js';
import { type AgentProcess, startAgentProcess, stopAgentAndServer, waitNodeReady } from '../helpers/nodeagent.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

type Pod = {
  metadata: { name: string; uid: string };
  spec: { serviceAccountName?: string; volumes?: { name: string }[] };
  status?: { phase?: string; containerStatuses?: { state?: { waiting?: { reason?: string }; running?: object } }[] };
};

function fixture(apiDomain: 'orch.io' | 'k8s.io') {
  let ts: TestServer | undefined;
  let agent: AgentProcess | undefined;
  beforeAll(async () => {
    ts = await startTestServer({ apiDomain });
    agent = await startAgentProcess(ts, { nodeName: 'node-1', ...(apiDomain === 'k8s.io' ? { config: { apiVersion: 'nodeagent.config.k8s.io/v1beta1' } } : {}) });
    await waitNodeReady(ts, agent, 'node-1');
  });
  afterAll(async () => {
    await stopAgentAndServer(agent, ts);
  });
  const t = () => ts!;
  const context = () => agent!.output().slice(-2000);
  const kubectl = (args: string[]) => runKubectl(join(t().dataDir, 'admin.kubeconfig'), args);
  const pod = async (name: string) => (await t().request('GET', `/api/v1/namespaces/default/pods/${name}`)).json<Pod>();
  const create = async (body: object) => {
    const r = await t().request('POST', '/api/v1/namespaces/default/pods', { body });
    expect(r.status, r.text).toBe(201);
    return r.json<Pod>();
  };
  const running = (name: string) => eventually(async () => (await pod(name)).status?.phase === 'Running', `${name} Running`, { timeoutMs: 30_000, context });
  return { t, agent: () => agent!, context, kubectl, pod, create, running };
}

/** the token read through `kubectl exec` authenticates as the pod's account */
async function tokenThroughExec(f: ReturnType<typeof fixture>, path: string, authGroup: string, account: string): Promise<void> {
  const r = await f.kubectl(['exec', 'tok', '--', 'cat', `${path}/token`]);
  expect(r.code, r.stderr).toBe(0);
  const token = r.stdout.trim();
  expect(token.split('.')).toHaveLength(3);
  const review = await f.t().request('POST', `/apis/${authGroup}/v1/selfsubjectreviews`, { anonymous: true, headers: { Authorization: `Bearer ${token}` }, body: { kind: 'SelfSubjectReview' } });
  expect(review.status, review.text).toBe(201);
  const info = review.json<{ status: { userInfo: { username: string; groups: string[]; extra?: Record<string, string[]> } } }>().status.userInfo;
  expect(info.username).toBe(`system:serviceaccount:default:${account}`);
  expect(info.groups).toContain('system:serviceaccounts:default');
  // bound to the pod (kube's extra keys, `authentication.kubernetes.io/pod-name` under the label domain)
  const p = await f.pod('tok');
  const extraKey = authGroup === 'authentication.k8s.io' ? 'authentication.kubernetes.io' : authGroup;
  expect(info.extra?.[`${extraKey}/pod-name`]).toEqual(['tok']);
  expect(info.extra?.[`${extraKey}/pod-uid`]).toEqual([p.metadata.uid]);
  // and to the agent's Node the pod runs on (kube's ServiceAccountTokenPodNodeInfo)
  const nodeName = (p.spec as { nodeName?: string }).nodeName ?? '';
  const node = (await f.t().request('GET', `/api/v1/nodes/${nodeName}`)).json<{ metadata: { uid: string } }>();
  expect(info.extra?.[`${extraKey}/node-name`]).toEqual([nodeName]);
  expect(info.extra?.[`${extraKey}/node-uid`]).toEqual([node.metadata.uid]);
  const ns = await f.kubectl(['exec', 'tok', '--', 'cat', `${path}/namespace`]);
  expect(ns.stdout).toBe('default');
  const ca = await f.kubectl(['exec', 'tok', '--', 'sh', '-c', `cat ${path}/ca.crt`]);
  expect(ca.stdout).toBe(await readFile(join(f.t().dataDir, 'pki', 'ca.crt'), 'utf8'));
}

describe('pod volumes on a real node agent (default domain)', () => {
  const f = fixture('orch.io');
  const PATH = '/var/run/secrets/orch.io/serviceaccount';

  it('mounts the service-account token at the well-known path; it authenticates as the account', async () => {
    const created = await f.create({ metadata: { name: 'tok' }, spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'sleep 3600'] }] } });
    expect(created.spec.serviceAccountName).toBe('default');
    const vol = created.spec.volumes?.find((v) => v.name.startsWith('orch-api-access-'));
    expect(vol).toBeDefined();
    await f.running('tok');
    await tokenThroughExec(f, PATH, 'authentication.orch.io', 'default');
    // kubelet's layout: <root>/pods/<uid>/volumes/<domain>~projected/<name>/{..data -> ..<version>, token -> ..data/token}
    const dir = join(f.agent().rootDir, 'pods', created.metadata.uid, 'volumes', 'orch.io~projected', vol!.name);
    expect(await readlink(join(dir, '..data'))).toMatch(/^\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\.\d+$/);
    expect(await readlink(join(dir, 'token'))).toBe('..data/token');
    expect((await stat(join(dir, 'token'))).mode & 0o777).toBe(0o644);
    // gone with the pod
    const del = await f.kubectl(['delete', 'pod', 'tok', '--wait=true']);
    expect(del.code, del.stderr).toBe(0);
    await eventually(async () => !(await stat(join(f.agent().rootDir, 'pods', created.metadata.uid)).then(() => true, () => false)), 'pod directory removed', { timeoutMs: 20_000, context: f.context });
  });

  it('a pod that opts out gets no token volume and no mount', async () => {
    const p = await f.create({ metadata: { name: 'quiet' }, spec: { nodeName: 'node-1', automountServiceAccountToken: false, containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', `ls ${PATH} 2>&1; sleep 3600`] }] } });
    expect(p.spec.volumes ?? []).toEqual([]);
    await f.running('quiet');
    const r = await f.kubectl(['exec', 'quiet', '--', 'sh', '-c', `test -e ${PATH}/token && echo present || echo absent`]);
    expect(r.stdout.trim()).toBe('absent');
  });

  it('configMap, secret, downwardAPI and emptyDir volumes; a missing ConfigMap is a FailedMount until it exists', async () => {
    const sec = await f.t().request('POST', '/api/v1/namespaces/default/secrets', { body: { metadata: { name: 'vsec' }, stringData: { password: 's3cr3t' } } });
    expect(sec.status).toBe(201);
    const script = 'cat /etc/cfg/color; echo; cat /etc/sec/pw; echo; cat /etc/info/labels; echo; cat /etc/info/name; echo; echo scratch > /scratch/f; cat /scratch/f; sleep 3600';
    await f.create({
      metadata: { name: 'vols', labels: { app: 'web', tier: 'front' } },
      spec: {
        nodeName: 'node-1',
        automountServiceAccountToken: false,
        containers: [
          {
            name: 'c',
            image: 'busybox',
            command: ['sh', '-c', script],
            volumeMounts: [
              { name: 'cfg', mountPath: '/etc/cfg' },
              { name: 'sec', mountPath: '/etc/sec' },
              { name: 'info', mountPath: '/etc/info' },
              { name: 'scratch', mountPath: '/scratch' },
            ],
          },
        ],
        volumes: [
          { name: 'cfg', configMap: { name: 'vcfg' } },
          { name: 'sec', secret: { secretName: 'vsec', items: [{ key: 'password', path: 'pw' }] } },
          { name: 'info', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }, { path: 'name', fieldRef: { fieldPath: 'metadata.name' } }] } },
          { name: 'scratch', emptyDir: {} },
        ],
      },
    });
    await eventually(
      async () => {
        const ev = await f.t().request('GET', '/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dvols%2Creason%3DFailedMount');
        return ev.json<{ items: { message: string; type: string }[] }>().items.some((e) => e.type === 'Warning' && e.message === 'MountVolume.SetUp failed for volume "cfg" : configmap "vcfg" not found');
      },
      'FailedMount event',
      { timeoutMs: 20_000, context: f.context },
    );
    // the container waits (its status is written after the event)
    await eventually(async () => (await f.pod('vols')).status?.containerStatuses?.[0]?.state?.waiting?.reason === 'ContainerCreating', 'vols ContainerCreating', { timeoutMs: 10_000, context: f.context });
    expect((await f.pod('vols')).status?.phase).toBe('Pending');
    const cm = await f.t().request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'vcfg' }, data: { color: 'blue' } } });
    expect(cm.status).toBe(201);
    await f.running('vols');
    await eventually(async () => (await f.kubectl(['logs', 'vols'])).stdout.includes('scratch'), 'vols logs', { timeoutMs: 20_000, context: f.context });
    expect((await f.kubectl(['logs', 'vols'])).stdout).toBe('blue\ns3cr3t\napp="web"\ntier="front"\nvols\nscratch\n');
  });
});

describe('pod volumes with --api-domain k8s.io', () => {
  const f = fixture('k8s.io');

  it("mounts the token at kube's path, under kube's names", async () => {
    const created = await f.create({ metadata: { name: 'tok' }, spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'sleep 3600'] }] } });
    const vol = created.spec.volumes?.find((v) => v.name.startsWith('kube-api-access-'));
    expect(vol).toBeDefined();
    await f.running('tok');
    await tokenThroughExec(f, '/var/run/secrets/kubernetes.io/serviceaccount', 'authentication.k8s.io', 'default');
    expect(await readlink(join(f.agent().rootDir, 'pods', created.metadata.uid, 'volumes', 'kubernetes.io~projected', vol!.name, 'token'))).toBe('..data/token');
  });
});
