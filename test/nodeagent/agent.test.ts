// A real control plane, a real `orch nodeagent` process (credentials
// system:node:node-a / system:nodes) and the simulated runtime over its real
// socket: registration, status, conditions, Lease renewals, pods, static and
// mirror pods, seccomp, checkpoints.
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueClientCertificate, loadPki } from '../../src/server/pki.js';
import { SimControlClient } from '../../src/nodeagent/runtime/client.js';
import { eventually as waitFor } from '../helpers/eventually.js';
import { runKubectl } from '../helpers/kubectl.js';
import { type AgentProcess, startAgentProcess } from '../helpers/nodeagent.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let ts: TestServer;
let agent: AgentProcess;
type Obj = { metadata: Record<string, unknown> & { uid?: string; annotations?: Record<string, string> }; spec: Record<string, unknown>; status: Record<string, unknown> & { conditions?: { type: string; status: string; lastTransitionTime: string }[] } };

/** the agent acts on its own schedule: poll for up to 45 s, and show its output when it never happens */
const eventually = <T>(f: () => Promise<T>, what: string, ms = 45_000) => waitFor(f, what, { timeoutMs: ms, intervalMs: 200, context: () => agent?.output() ?? '' });
const get = async (path: string) => {
  const r = await ts.request('GET', path);
  return r.status === 200 ? r.json<Obj>() : undefined;
};
const node = () => get('/api/v1/nodes/node-a');
const cond = (n: Obj | undefined, type: string) => n?.status.conditions?.find((c) => c.type === type);

const TOKEN = 'checkpoint-token-0123456789abcdef';
beforeAll(async () => {
  const { mkdtemp } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const tokDir = await mkdtemp(join(tmpdir(), 'orch-tok-'));
  await writeFile(join(tokDir, 'tokens.csv'), `${TOKEN},checkpoint-bot,1001,"system:masters"\n`);
  ts = await startTestServer({ authn: { tokenAuthFile: join(tokDir, 'tokens.csv') } });
  agent = await startAgentProcess(ts, { nodeName: 'node-a', config: { authorization: { mode: 'Webhook' } } });
});
afterAll(async () => {
  await agent?.stop();
  await ts?.stop();
  if (agent) await rm(agent.dir, { recursive: true, force: true });
});

describe('registration and status', () => {
  it('registers the Node with addresses, capacity, nodeInfo and five conditions', async () => {
    const n = await eventually(async () => { const x = await node(); return cond(x, 'Ready')?.status === 'True' && x; }, 'node Ready');
    expect(n.status.addresses).toEqual(expect.arrayContaining([{ type: 'InternalIP', address: '127.0.0.1' }, { type: 'Hostname', address: 'node-a' }]));
    const cap = n.status.capacity as Record<string, string>;
    expect(cap.pods).toBe('110');
    expect(Number(cap.memory!.replace('Ki', ''))).toBeGreaterThan(0);
    const info = n.status.nodeInfo as Record<string, string>;
    expect(info.containerRuntimeVersion).toBe('orch-runtime-sim://0.1.0');
    expect(info.kernelVersion).toBe((await readFile('/proc/sys/kernel/osrelease', 'utf8')).trim());
    expect(n.status.conditions!.map((c) => c.type).sort()).toEqual(['DiskPressure', 'MemoryPressure', 'NetworkUnavailable', 'PIDPressure', 'Ready']);
    const wide = await runKubectl(join(ts.dataDir, 'admin.kubeconfig'), ['get', 'nodes', '-o', 'wide']);
    expect(wide.stdout).toMatch(/node-a\s+Ready\s+<none>\s+(\S+\s+)?v1\.32\.0-orch\.0\.1\.0\s+127\.0\.0\.1\s+<none>\s+.*orch-runtime-sim:\/\/0\.1\.0/);
  });

  it('renews its Lease in the orch-node-lease namespace', async () => {
    const path = '/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases/node-a';
    const first = await eventually(() => get(path), 'lease');
    expect(first.spec.holderIdentity).toBe('node-a');
    await eventually(async () => (await get(path))!.spec.renewTime !== first.spec.renewTime, 'lease renewed');
  });

  it('flips MemoryPressure, DiskPressure and PIDPressure when the readings cross the thresholds, and back', async () => {
    const file = join(agent.dir, 'readings.json');
    await writeFile(file, JSON.stringify({ memoryTotalBytes: 8 * 2 ** 30, memoryAvailableBytes: 50 * 2 ** 20, diskTotalBytes: 1000, diskAvailableBytes: 50, pidsMax: 1000, pidsUsed: 950 }));
    const n = await eventually(async () => { const x = await node(); return ['MemoryPressure', 'DiskPressure', 'PIDPressure'].every((t) => cond(x, t)?.status === 'True') && x; }, 'pressure True');
    expect(cond(n, 'MemoryPressure')).toMatchObject({ reason: 'NodeHasInsufficientMemory' });
    expect((n.status.capacity as Record<string, string>).memory).toBe('8Gi');
    await writeFile(file, JSON.stringify({ memoryTotalBytes: 8 * 2 ** 30, memoryAvailableBytes: 4 * 2 ** 30 }));
    const back = await eventually(async () => { const x = await node(); return cond(x, 'MemoryPressure')?.status === 'False' && cond(x, 'DiskPressure')?.status === 'False' && x; }, 'pressure False');
    expect(cond(back, 'MemoryPressure')).toMatchObject({ reason: 'NodeHasSufficientMemory' });
    // a resource change alone (no condition change) is written too
    await writeFile(file, JSON.stringify({ memoryTotalBytes: 6 * 2 ** 30, memoryAvailableBytes: 4 * 2 ** 30 }));
    await eventually(async () => ((await node())?.status.capacity as Record<string, string>).memory === '6Gi', 'capacity follows readings');
  });

  it('reports Ready=False when the runtime reports errors, and Ready again after', async () => {
    const ctl = new SimControlClient(join(agent.rootDir, 'runtime-sim.sock'));
    try {
      await ctl.setFaults([{ method: 'Status', code: 14, message: 'runtime restarting' }]);
      const n = await eventually(async () => { const x = await node(); return cond(x, 'Ready')?.status === 'False' && x; }, 'Ready False');
      expect(n.status.conditions!.find((c) => c.type === 'Ready')).toMatchObject({ reason: 'ContainerRuntimeNotReady' });
      const health = await fetchAgent('GET', '/healthz');
      expect(health.status).toBe(500);
      await ctl.setFaults([]);
      const ready = await eventually(async () => { const x = await node(); return cond(x, 'Ready')?.status === 'True' && x; }, 'Ready True');
      // the agent's own wording with the default API domain (kubelet's with k8s.io: api-domain.test.ts)
      expect(cond(ready, 'Ready')).toMatchObject({ reason: 'NodeAgentReady', message: 'node agent is posting ready status' });
    } finally {
      ctl.close();
    }
  });
});

describe('pods', () => {
  it('runs a pod bound to the node (init container first) to Running, then deletes it gracefully', async () => {
    const pod = {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default' },
      spec: { nodeName: 'node-a', terminationGracePeriodSeconds: 5, initContainers: [{ name: 'init', image: 'busybox', command: ['true'] }], containers: [{ name: 'nginx', image: 'nginx:1.27' }, { name: 'side', image: 'busybox', command: ['sleep', '3600'] }] },
    };
    expect((await ts.request('POST', '/api/v1/namespaces/default/pods', { body: pod })).status).toBe(201);
    const p = await eventually(async () => { const x = await get('/api/v1/namespaces/default/pods/web'); return x?.status.phase === 'Running' && x; }, 'pod Running');
    const cs = p.status.containerStatuses as { name: string; ready: boolean; state: Record<string, unknown>; containerID: string }[];
    expect(cs.map((c) => [c.name, c.ready, Object.keys(c.state)[0]])).toEqual([['nginx', true, 'running'], ['side', true, 'running']]);
    expect(cs[0]!.containerID).toMatch(/^orch-runtime-sim:\/\/[0-9a-f]{32}$/);
    const init = (p.status.initContainerStatuses as { state: { terminated?: { exitCode: number } } }[])[0]!;
    expect(init.state.terminated?.exitCode).toBe(0);
    expect(cond(p, 'Ready')?.status).toBe('True');
    expect(p.status.podIP).toMatch(/^10\.88\.0\.\d+$/);
    const kc = join(ts.dataDir, 'admin.kubeconfig');
    expect((await runKubectl(kc, ['get', 'pod', 'web'])).stdout).toMatch(/web\s+2\/2\s+Running/);
    const del = await runKubectl(kc, ['delete', 'pod', 'web', '--wait=true']);
    expect(del.code).toBe(0);
    expect((await ts.request('GET', '/api/v1/namespaces/default/pods/web')).status).toBe(404);
  });

  it('restarts an exited container (restartPolicy Always) and counts the restart', async () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'crash', namespace: 'default' }, spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'exit 2'] }] } };
    expect((await ts.request('POST', '/api/v1/namespaces/default/pods', { body: pod })).status).toBe(201);
    const p = await eventually(async () => {
      const x = await get('/api/v1/namespaces/default/pods/crash');
      const s = (x?.status.containerStatuses as { restartCount: number; lastState?: { terminated?: { exitCode: number } } }[] | undefined)?.[0];
      return s && s.restartCount >= 1 && x;
    }, 'restart');
    expect(p.status.phase).toBe('Running');
    await ts.request('DELETE', '/api/v1/namespaces/default/pods/crash');
    await eventually(async () => (await ts.request('GET', '/api/v1/namespaces/default/pods/crash')).status === 404, 'crash removed');
  });

  it('a restarted container shows how the attempt before it ended in lastState ({} before any restart), as kubelet', async () => {
    type CS = { restartCount: number; containerID?: string; state: Record<string, unknown>; lastState: { terminated?: { exitCode: number; reason: string; containerID: string } } };
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'last', namespace: 'default' }, spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'busybox', command: ['sleep', '3600'] }] } };
    expect((await ts.request('POST', '/api/v1/namespaces/default/pods', { body: pod })).status).toBe(201);
    const status = async () => ((await get('/api/v1/namespaces/default/pods/last'))?.status.containerStatuses as CS[] | undefined)?.[0];
    const first = await eventually(async () => { const s = await status(); return s?.state.running ? s : undefined; }, 'first attempt running');
    expect(first.lastState).toEqual({});
    const ctl = new SimControlClient(join(agent.rootDir, 'runtime-sim.sock'));
    try {
      await ctl.exitContainer(first.containerID!.replace(/^orch-runtime-sim:\/\//, ''), 3);
    } finally {
      ctl.close();
    }
    const second = await eventually(async () => { const s = await status(); return s?.restartCount === 1 && s.state.running ? s : undefined; }, 'second attempt running');
    expect(second.lastState.terminated).toMatchObject({ exitCode: 3, reason: 'Error', containerID: first.containerID });
    await ts.request('DELETE', '/api/v1/namespaces/default/pods/last');
    await eventually(async () => (await ts.request('GET', '/api/v1/namespaces/default/pods/last')).status === 404, 'last removed');
  });

  it('a finished pod whose containers the runtime no longer knows keeps their terminated states (a runtime that restarted)', async () => {
    // no scheduler binds it: the test does, once its status says it finished
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'done', namespace: 'default' }, spec: { schedulerName: 'none', restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox', command: ['true'] }] } };
    expect((await ts.request('POST', '/api/v1/namespaces/default/pods', { body: pod })).status).toBe(201);
    const terminated = { exitCode: 0, reason: 'Completed', startedAt: '2026-01-01T00:00:00Z', finishedAt: '2026-01-01T00:00:01Z', containerID: 'orch-runtime-sim://0123456789abcdef0123456789abcdef' };
    const status = { phase: 'Succeeded', containerStatuses: [{ name: 'c', image: 'busybox', imageID: '', restartCount: 0, ready: false, started: false, lastState: {}, state: { terminated } }] };
    expect((await ts.request('PATCH', '/api/v1/namespaces/default/pods/done/status', { body: { status }, headers: { 'content-type': 'application/merge-patch+json' } })).status).toBe(200);
    const binding = { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'done' }, target: { kind: 'Node', name: 'node-a' } };
    expect((await ts.request('POST', '/api/v1/namespaces/default/pods/done/binding', { body: binding })).status).toBe(201);
    // the agent has written its view once it reports the host
    const p = await eventually(async () => { const x = await get('/api/v1/namespaces/default/pods/done'); return x?.status.hostIP ? x : undefined; }, 'agent status');
    expect(p.status.phase).toBe('Succeeded');
    expect((p.status.containerStatuses as { state: unknown }[])[0]!.state).toEqual({ terminated });
    await ts.request('DELETE', '/api/v1/namespaces/default/pods/done');
    await eventually(async () => (await ts.request('GET', '/api/v1/namespaces/default/pods/done')).status === 404, 'done removed');
  });

  it('a pod whose containers finish (restartPolicy Never) Succeeds or Fails by exit code', async () => {
    const mk = (name: string, cmd: string[]) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { nodeName: 'node-a', restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox', command: cmd }] } });
    await ts.request('POST', '/api/v1/namespaces/default/pods', { body: mk('ok', ['true']) });
    await ts.request('POST', '/api/v1/namespaces/default/pods', { body: mk('bad', ['sh', '-c', 'exit 4']) });
    await eventually(async () => (await get('/api/v1/namespaces/default/pods/ok'))?.status.phase === 'Succeeded', 'Succeeded');
    const bad = await eventually(async () => { const x = await get('/api/v1/namespaces/default/pods/bad'); return x?.status.phase === 'Failed' && x; }, 'Failed');
    expect((bad.status.containerStatuses as { state: { terminated: { exitCode: number } } }[])[0]!.state.terminated.exitCode).toBe(4);
  });

  it('a missing Localhost seccomp profile keeps the container waiting with CreateContainerError naming the file', async () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'sec', namespace: 'default' }, spec: { nodeName: 'node-a', securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: 'profiles/audit.json' } }, containers: [{ name: 'c', image: 'busybox', command: ['sleep', '3600'] }] } };
    expect((await ts.request('POST', '/api/v1/namespaces/default/pods', { body: pod })).status).toBe(201);
    const p = await eventually(async () => {
      const x = await get('/api/v1/namespaces/default/pods/sec');
      return (x?.status.containerStatuses as { state: { waiting?: { reason: string } } }[] | undefined)?.[0]?.state.waiting?.reason === 'CreateContainerError' && x;
    }, 'CreateContainerError');
    const waiting = (p.status.containerStatuses as { state: { waiting: { message: string } } }[])[0]!.state.waiting;
    expect(waiting.message).toContain(join(agent.rootDir, 'seccomp', 'profiles/audit.json'));
    // the profile appears: the container is created on a later sync
    const { mkdir } = await import('node:fs/promises');
    await mkdir(join(agent.rootDir, 'seccomp', 'profiles'), { recursive: true });
    await writeFile(join(agent.rootDir, 'seccomp', 'profiles', 'audit.json'), JSON.stringify({ defaultAction: 'SCMP_ACT_LOG', syscalls: [{ names: ['mkdir'], action: 'SCMP_ACT_ERRNO', errnoRet: 1 }] }));
    // a failed start is tried again 10 s later (kubelet's pod-worker pace, docs/nodeagent.md "Pods"): the bound leaves room for that
    await eventually(async () => (await get('/api/v1/namespaces/default/pods/sec'))?.status.phase === 'Running', 'Running with profile', 30_000);
  });
});

describe('static and mirror pods', () => {
  it('runs a manifest from staticPodPath and shows it as a mirror pod; a deleted mirror comes back', async () => {
    await writeFile(join(agent.dir, 'manifests', 'etcd.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: etcd\n  namespace: kube-system\nspec:\n  containers:\n  - name: etcd\n    image: etcd:3.5\n');
    const ns = await ts.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system' } } });
    expect([201, 409]).toContain(ns.status);
    const m = await eventually(async () => { const x = await get('/api/v1/namespaces/kube-system/pods/etcd-node-a'); return x?.status.phase === 'Running' && x; }, 'mirror Running');
    expect(m.metadata.annotations!['orch.io/config.mirror']).toMatch(/^[0-9a-f]{32}$/);
    expect(m.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Node', name: 'node-a' })]);
    // kubelet's file-source default: the mirror tolerates every NoExecute taint, so a NoExecute taint does not evict it
    expect((m.spec as { tolerations?: unknown[] }).tolerations).toContainEqual({ operator: 'Exists', effect: 'NoExecute' });
    const uid = m.metadata.uid;
    const taint = (taints: unknown[]) => ts.request('PATCH', '/api/v1/nodes/node-a', { headers: { 'content-type': 'application/merge-patch+json' }, body: { spec: { taints } } });
    expect((await taint([{ key: 'example.com/broken', effect: 'NoExecute' }])).status).toBe(200);
    try {
      await new Promise((r) => setTimeout(r, 3000));
      expect((await get('/api/v1/namespaces/kube-system/pods/etcd-node-a'))?.metadata).toMatchObject({ uid });
    } finally {
      expect((await taint([])).status).toBe(200);
    }
    // an invalid manifest (kubelet: "invalid pod") runs nothing and posts no mirror pod
    await writeFile(join(agent.dir, 'manifests', 'bad.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad\n  namespace: kube-system\nspec:\n  restartPolicy: Sometimes\n  containers:\n  - name: c\n    image: busybox\n');
    await agent.waitFor(/bad\.yaml: invalid pod: \[spec\.restartPolicy: Unsupported value: "Sometimes"/);
    expect((await ts.request('GET', '/api/v1/namespaces/kube-system/pods/bad-node-a')).status).toBe(404);
    await rm(join(agent.dir, 'manifests', 'bad.yaml'));
    await ts.request('DELETE', '/api/v1/namespaces/kube-system/pods/etcd-node-a');
    await eventually(async () => { const x = await get('/api/v1/namespaces/kube-system/pods/etcd-node-a'); return x && x.metadata.uid !== uid && !x.metadata.deletionTimestamp; }, 'mirror recreated');
    await rm(join(agent.dir, 'manifests', 'etcd.yaml'));
    await eventually(async () => (await ts.request('GET', '/api/v1/namespaces/kube-system/pods/etcd-node-a')).status === 404, 'mirror removed');
  });
});

// ---------------------------------------------------------------- checkpoint

async function fetchAgent(method: string, path: string, o: { cert?: { certPem: string; keyPem: string }; token?: string } = {}): Promise<{ status: number; body: Record<string, unknown> & { items?: string[]; message?: string } }> {
  const { request } = await import('node:https');
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: agent.port, method, path, rejectUnauthorized: false, cert: o.cert?.certPem, key: o.cert?.keyPem, headers: o.token ? { Authorization: `Bearer ${o.token}` } : {} }, (res) => {
      let t = '';
      res.on('data', (d: Buffer) => (t += d.toString()));
      res.on('end', () => {
        let body: Record<string, unknown> = {};
        try { body = JSON.parse(t) as Record<string, unknown>; } catch { body = { text: t }; }
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('checkpoint endpoint', () => {
  it('answers every status of spec 002 §7', async () => {
    const pki = await loadPki(join(ts.dataDir, 'pki'));
    const cert = await issueClientCertificate(pki, { commonName: 'checkpointer', organizations: ['system:masters'] });
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'db', namespace: 'default' }, spec: { nodeName: 'node-a', containers: [{ name: 'redis', image: 'redis:7' }] } };
    await ts.request('POST', '/api/v1/namespaces/default/pods', { body: pod });
    await eventually(async () => (await get('/api/v1/namespaces/default/pods/db'))?.status.phase === 'Running', 'db Running');

    // 401: no credentials
    expect((await fetchAgent('POST', '/checkpoint/default/db/redis')).status).toBe(401);
    // 200 with a client certificate (authorization by SubjectAccessReview nodes/checkpoint)
    const ok = await fetchAgent('POST', '/checkpoint/default/db/redis?timeout=30', { cert });
    expect(ok.status).toBe(200);
    const file = ok.body.items![0]!;
    expect(file).toMatch(new RegExp(`^${join(agent.rootDir, 'checkpoints')}/checkpoint-db_default-redis-\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\.tar$`));
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readFile(file)).subarray(257, 262).toString()).toBe('ustar');
    // 403: authenticated, but the SubjectAccessReview for nodes/checkpoint is denied (no RBAC rule grants it)
    const stranger = await issueClientCertificate(pki, { commonName: 'stranger', organizations: [] });
    const denied = await fetchAgent('POST', '/checkpoint/default/db/redis', { cert: stranger });
    expect(denied.status).toBe(403);
    expect(denied.body.message).toContain('user=stranger, verb=create, resource=nodes, subresource=checkpoint');
    // 200 with a bearer token checked by TokenReview
    expect((await fetchAgent('POST', '/checkpoint/default/db/redis', { token: TOKEN })).status).toBe(200);
    expect((await fetchAgent('POST', '/checkpoint/default/db/redis', { token: TOKEN + 'x' })).status).toBe(401);
    // 404: pod or container not found
    expect((await fetchAgent('POST', '/checkpoint/default/nope/redis', { cert })).status).toBe(404);
    expect((await fetchAgent('POST', '/checkpoint/default/db/nope', { cert })).status).toBe(404);
    expect((await fetchAgent('POST', '/checkpoint/other/db/redis', { cert })).status).toBe(404);
    // malformed paths and parameters
    expect((await fetchAgent('POST', '/checkpoint/default/db', { cert })).status).toBe(404);
    expect((await fetchAgent('POST', '/checkpoint/default/db/redis/x', { cert })).status).toBe(404);
    expect((await fetchAgent('POST', '/checkpoint/default/db/redis?timeout=-1', { cert })).status).toBe(400);
    expect((await fetchAgent('POST', '/checkpoint/default/DB!/redis', { cert })).status).toBe(400);
    expect((await fetchAgent('GET', '/checkpoint/default/db/redis', { cert })).status).toBe(405);
    // 500: runtime error, and runtime without the call
    const ctl = new SimControlClient(join(agent.rootDir, 'runtime-sim.sock'));
    try {
      await ctl.setFaults([{ method: 'CheckpointContainer', code: 13, message: 'criu failed: dump error' }]);
      const e1 = await fetchAgent('POST', '/checkpoint/default/db/redis', { cert });
      expect(e1.status).toBe(500);
      expect(e1.body.message).toContain('criu failed: dump error');
      await ctl.setFaults([{ method: 'CheckpointContainer', code: 12, message: 'unknown method' }]);
      const e2 = await fetchAgent('POST', '/checkpoint/default/db/redis', { cert });
      expect(e2.status).toBe(500);
      expect(e2.body.message).toContain('does not implement CheckpointContainer');
    } finally {
      await ctl.setFaults([]);
      ctl.close();
    }
  });
});
