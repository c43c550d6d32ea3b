// kubelet's Events from a real node agent: a real control plane, a real
// `orch nodeagent` process (node credentials, the simulated runtime) and
// kubectl 1.32 reading them as a user does (`describe`, `kubectl events
// --for`, `get events --field-selector`). The node's Starting and condition
// events; a pod's Pulling/Pulled/Created/Started with the container's
// fieldPath, Killing on delete; a crash-looping container's BackOff counted up
// on one Event (patched, no new objects); Failed for a missing ConfigMap and
// ErrImageNeverPull; and a node may write Events but not read or delete them.
// The three tests that wait out kubelet's back-offs (10 s and more) run at once,
// each with its own pods.

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { runKubectl } from '../helpers/kubectl.js';
import { SimControlClient } from '../../src/nodeagent/runtime/client.js';
import { serverWithAgent, startAgentProcess, waitNodeReady } from '../helpers/nodeagent.js';

const env = serverWithAgent('node-1');

interface Ev {
  metadata: { name: string; namespace: string; uid: string };
  involvedObject: { kind: string; name: string; namespace?: string; uid?: string; fieldPath?: string; apiVersion?: string };
  reason: string;
  message: string;
  type: string;
  count: number;
  source: { component: string; host?: string };
  reportingComponent: string;
  reportingInstance: string;
  firstTimestamp: string;
  lastTimestamp: string;
}

const context = (): string => env.agent().output().slice(-2000);
const admin = () => join(env.ts().dataDir, 'admin.kubeconfig');

async function events(ns: string, selector: string): Promise<Ev[]> {
  const r = await env.ts().request('GET', `/api/v1/namespaces/${ns}/events?fieldSelector=${encodeURIComponent(selector)}`);
  expect(r.status, r.text).toBe(200);
  return r.json<{ items: Ev[] }>().items;
}
async function createPod(name: string, container: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await env.ts().request('POST', '/api/v1/namespaces/default/pods', { body: { metadata: { name }, spec: { nodeName: 'node-1', containers: [{ name, ...container }], ...extra } } });
  expect(r.status, r.text).toBe(201);
  return r.json<{ metadata: { uid: string } }>().metadata.uid;
}
const reasons = (list: Ev[]) => list.map((e) => e.reason);

describe("kubelet's Events from a real node agent", () => {
  it('the node: Starting and the condition events, in default, about kind Node with the node name as uid', async () => {
    const want = ['Starting', 'NodeHasSufficientMemory', 'NodeHasNoDiskPressure', 'NodeHasSufficientPID', 'NodeReady'];
    const list = await eventually(async () => {
      const l = await events('default', 'involvedObject.kind=Node,involvedObject.name=node-1,source=kubelet');
      return want.every((r) => reasons(l).includes(r)) && l;
    }, 'node events', { timeoutMs: 20_000, context });
    const ready = list.find((e) => e.reason === 'NodeReady')!;
    expect(ready).toMatchObject({
      involvedObject: { kind: 'Node', name: 'node-1', uid: 'node-1' },
      type: 'Normal',
      message: 'Node node-1 status is now: NodeReady',
      source: { component: 'kubelet', host: 'node-1' },
      reportingComponent: 'kubelet',
      reportingInstance: 'node-1',
      count: 1,
    });
    expect(list.find((e) => e.reason === 'Starting')!.message).toBe('Starting kubelet.');
    // kubectl describe node merges the events about the Node's uid and about its name (kubelet's uid)
    const d = await runKubectl(admin(), ['describe', 'node', 'node-1']);
    expect(d.code, d.stderr).toBe(0);
    expect(d.stdout).toMatch(/Normal\s+NodeReady\s+\S+\s+kubelet\s+Node node-1 status is now: NodeReady/);
  });

  it('a pod: Pulling, Pulled, Created, Started on spec.containers{name}; Killing when deleted', async () => {
    const uid = await createPod('web', { image: 'busybox:1.36', command: ['sleep', '1000'] });
    const list = await eventually(async () => {
      const l = await events('default', 'involvedObject.name=web');
      return reasons(l).includes('Started') && l;
    }, 'web Started event', { timeoutMs: 30_000, context });
    expect(reasons(list)).toEqual(['Pulling', 'Pulled', 'Created', 'Started']);
    for (const e of list) {
      expect(e.involvedObject).toMatchObject({ kind: 'Pod', apiVersion: 'v1', namespace: 'default', name: 'web', uid, fieldPath: 'spec.containers{web}' });
      expect(e).toMatchObject({ type: 'Normal', source: { component: 'kubelet', host: 'node-1' }, count: 1 });
    }
    expect(list.map((e) => e.message)).toEqual([
      'Pulling image "busybox:1.36"',
      expect.stringMatching(/^Successfully pulled image "busybox:1\.36" in \S+ \(\S+ including waiting\)\. Image size: \d+ bytes\.$/),
      'Created container web',
      'Started container web',
    ]);
    const d = await runKubectl(admin(), ['describe', 'pod', 'web']);
    expect(d.code, d.stderr).toBe(0);
    expect(d.stdout).toMatch(/Normal\s+Started\s+\S+\s+kubelet\s+Started container web/);
    const ev = await runKubectl(admin(), ['events', '--for', 'pod/web']);
    expect(ev.code, ev.stderr).toBe(0);
    expect(ev.stdout).toMatch(/Normal\s+Created\s+Pod\/web\s+Created container web/);

    const del = await runKubectl(admin(), ['delete', 'pod', 'web', '--wait=true']);
    expect(del.code, del.stderr).toBe(0);
    const killing = await eventually(async () => (await events('default', 'involvedObject.name=web,reason=Killing'))[0], 'Killing event', { timeoutMs: 20_000, context });
    expect(killing).toMatchObject({ type: 'Normal', message: 'Stopping container web', involvedObject: { fieldPath: 'spec.containers{web}', uid } });
  });

  it.concurrent("a crash-looping container: one BackOff Event whose count rises (patched, never a new object)", async () => {
    const uid = await createPod('crash', { image: 'busybox:1.36', command: ['false'] });
    const backOff = async () => {
      const l = await events('default', 'involvedObject.name=crash,reason=BackOff');
      expect(l.length).toBeLessThanOrEqual(1);
      return l[0];
    };
    const first = await eventually(async () => {
      const e = await backOff();
      return e && e.count >= 2 && e;
    }, 'BackOff counted twice', { timeoutMs: 60_000, context });
    expect(first).toMatchObject({
      type: 'Warning',
      message: `Back-off restarting failed container crash in pod crash_default(${uid})`,
      involvedObject: { fieldPath: 'spec.containers{crash}', uid },
      source: { component: 'kubelet', host: 'node-1' },
    });
    const later = await eventually(async () => {
      const e = await backOff();
      return e && e.count > first.count && e;
    }, 'BackOff counted again', { timeoutMs: 60_000, context });
    expect([later.metadata.name, later.metadata.uid, later.firstTimestamp]).toEqual([first.metadata.name, first.metadata.uid, first.firstTimestamp]);
    expect(Date.parse(later.lastTimestamp)).toBeGreaterThan(Date.parse(first.lastTimestamp));
    // the restarts themselves: Created and Started counted up the same way
    const started = await events('default', 'involvedObject.name=crash,reason=Started');
    expect(started).toHaveLength(1);
    expect(started[0]!.count).toBeGreaterThanOrEqual(2);
    // kubectl shows the count as (xN over …)
    const d = await runKubectl(admin(), ['describe', 'pod', 'crash']);
    expect(d.stdout).toMatch(/Warning\s+BackOff\s+\S+ \(x\d+ over \S+\)\s+kubelet\s+Back-off restarting failed container crash in pod crash_default/);
  });

  it.concurrent('Failed: a missing ConfigMap, and an image absent with pull policy Never', async () => {
    await createPod('cfg', { image: 'busybox:1.36', envFrom: [{ configMapRef: { name: 'missing' } }] });
    await createPod('never', { image: 'not-here:1', imagePullPolicy: 'Never' });
    const cfg = await eventually(async () => (await events('default', 'involvedObject.name=cfg,reason=Failed'))[0], 'cfg Failed', { timeoutMs: 30_000, context });
    expect(cfg).toMatchObject({ type: 'Warning', message: 'Error: configmap "missing" not found', involvedObject: { fieldPath: 'spec.containers{cfg}' } });
    const never = await eventually(async () => {
      const l = await events('default', 'involvedObject.name=never');
      return reasons(l).includes('Failed') && l;
    }, 'never events', { timeoutMs: 30_000, context });
    expect(never.map((e) => [e.reason, e.type, e.message])).toEqual([
      ['ErrImageNeverPull', 'Warning', 'Container image "not-here:1" is not present with pull policy of Never'],
      ['Failed', 'Warning', 'Error: ErrImageNeverPull'],
    ]);
  });

  it.concurrent('a failed pull: Pulling, Failed with the runtime error, Error: ErrImagePull; then back-off: BackOff, Error: ImagePullBackOff', async () => {
    await createPod('pullfail', { image: 'UPPER:1' });
    const byReason = await eventually(async () => {
      const l = await events('default', 'involvedObject.name=pullfail');
      return reasons(l).includes('BackOff') && l;
    }, 'pullfail BackOff', { timeoutMs: 40_000, context });
    expect(byReason.map((e) => [e.reason, e.type, e.message])).toEqual(expect.arrayContaining([
      ['Pulling', 'Normal', 'Pulling image "UPPER:1"'],
      ['Failed', 'Warning', 'Failed to pull image "UPPER:1": rpc error: code = InvalidArgument desc = invalid image reference "UPPER:1"'],
      ['Failed', 'Warning', 'Error: ErrImagePull'],
      ['BackOff', 'Normal', 'Back-off pulling image "UPPER:1"'],
    ]));
    await eventually(async () => (await events('default', 'involvedObject.name=pullfail,reason=Failed')).some((e) => e.message === 'Error: ImagePullBackOff'), 'Error: ImagePullBackOff', { timeoutMs: 20_000, context });
    const p = (await env.ts().request('GET', '/api/v1/namespaces/default/pods/pullfail')).json<{ status: { containerStatuses: { state: { waiting?: { reason: string } } }[] } }>();
    expect(['ErrImagePull', 'ImagePullBackOff']).toContain(p.status.containerStatuses[0]!.state.waiting?.reason);
  });

  it('the node may create and patch Events but not read or delete them (as kube)', async () => {
    const node = join(env.agent().dir, 'node-1.kubeconfig');
    const get = await runKubectl(node, ['get', 'events', '-n', 'default']);
    expect(get.code).not.toBe(0);
    expect(get.stderr).toMatch(/forbidden/i);
    const anyEvent = (await events('default', 'source=kubelet'))[0]!;
    const del = await runKubectl(node, ['delete', 'event', '-n', 'default', anyEvent.metadata.name]);
    expect(del.code).not.toBe(0);
    expect(del.stderr).toMatch(/forbidden/i);
  });

  it('a runtime failing its Status call: NodeNotReady, then NodeReady counted up on the first Event', async () => {
    const ready = () => events('default', 'involvedObject.kind=Node,involvedObject.name=node-1,reason=NodeReady');
    const first = await ready();
    expect(first.map((e) => e.count)).toEqual([1]);
    const ctl = new SimControlClient(join(env.agent().rootDir, 'runtime-sim.sock'));
    try {
      await ctl.setFaults([{ method: 'Status', code: 14, message: 'runtime restarting' }]);
      const notReady = await eventually(async () => (await events('default', 'involvedObject.kind=Node,involvedObject.name=node-1,reason=NodeNotReady'))[0], 'NodeNotReady', { timeoutMs: 20_000, context });
      expect(notReady).toMatchObject({ type: 'Normal', message: 'Node node-1 status is now: NodeNotReady', source: { component: 'kubelet', host: 'node-1' } });
      await ctl.setFaults([]);
      await eventually(async () => (await ready())[0]?.count === 2, 'NodeReady counted again', { timeoutMs: 20_000, context });
      expect((await ready()).map((e) => e.metadata.name)).toEqual([first[0]!.metadata.name]);
    } finally {
      ctl.close();
    }
  });

  it('a restarted agent records Starting again but no NodeReady: the stored Node was Ready already (kubelet compares with it)', async () => {
    const before = await events('default', 'involvedObject.kind=Node,involvedObject.name=node-1,reason=NodeReady');
    expect(before).toHaveLength(1);
    const old = env.agent();
    await old.stop();
    const again = await startAgentProcess(env.ts(), { nodeName: 'node-1', dir: old.dir });
    try {
      await waitNodeReady(env.ts(), again, 'node-1');
      await eventually(async () => (await events('default', 'involvedObject.kind=Node,involvedObject.name=node-1,reason=Starting')).length === 2, 'a second Starting', { timeoutMs: 20_000, context: () => again.output() });
      await eventually(async () => (await events('default', 'involvedObject.kind=Node,involvedObject.name=node-1,reason=NodeHasSufficientPID')).length === 2, 'the pressure events again', { timeoutMs: 20_000, context: () => again.output() });
      expect((await events('default', 'involvedObject.kind=Node,involvedObject.name=node-1,reason=NodeReady')).map((e) => [e.metadata.name, e.count])).toEqual([[before[0]!.metadata.name, before[0]!.count]]);
    } finally {
      await again.stop();
    }
  });
});
