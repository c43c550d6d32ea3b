// What Kubernetes' sig-node e2e tests of RuntimeClasses check on the API
// (test/e2e/common/node/runtimeclass.go), on orch with its controllers and a
// real node agent (simulated runtime): node.k8s.io/v1 runtimeclasses in
// discovery and every verb on them (create, 409 on a second create, watch,
// get, list by label, merge patch, update, delete, deleteCollection); a pod
// naming a missing (or deleted) RuntimeClass is refused with 403; a pod naming
// one is scheduled, its spec.overhead the class's podFixed (or none).

import { describe, expect, it } from 'vitest';
import { type Event, type Obj, e2eEnv, namespace } from '../helpers/e2e-apps.js';
import { openWatch } from '../helpers/watch-stream.js';

const env = e2eEnv('rc-node');
const RCS = '/apis/node.k8s.io/v1/runtimeclasses';
const PODS = (ns: string) => `/api/v1/namespaces/${ns}/pods`;
/** e2eruntimeclass.PreconfiguredRuntimeClassHandler */
const PRECONFIGURED = 'test-handler';
let seq = 0;
const ns = () => namespace(env, `runtimeclass-${++seq}-${Math.random().toString(36).slice(2, 7)}`);

/** runtimeclasstest.NewRuntimeClass */
const newRuntimeClass = (handler: string, name: string, extra: Obj = {}): Obj => ({ apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name }, handler, ...extra });

/** kube's createRuntimeClass: the name is the namespace's and the given one */
async function createRuntimeClass(n: string, name: string, handler: string, overhead?: Obj): Promise<string> {
  const rc = await env.call('POST', RCS, newRuntimeClass(handler, `${n}-${name}`, overhead ? { overhead } : {}));
  return rc.metadata.name as string;
}

/** e2eruntimeclass.NewRuntimeClassPod */
const runtimeClassPod = (rcName: string): Obj => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'test-runtimeclass-' },
  spec: { runtimeClassName: rcName, containers: [{ name: 'test', image: 'registry.k8s.io/e2e-test-images/busybox:1.36.1-1', command: ['true'] }], restartPolicy: 'Never', automountServiceAccountToken: false },
});

/** expectPodRejection: the create is Forbidden */
async function expectPodRejection(n: string, rcName: string): Promise<void> {
  const r = await env.ts().request('POST', PODS(n), { body: runtimeClassPod(rcName) });
  expect(r.status, r.text).toBe(403);
  expect(r.json<Obj>().reason).toBe('Forbidden');
}

/** e2epod.WaitForPodsWithLabelScheduled with an empty selector: the namespace's one pod, bound to a node */
const scheduledPods = (n: string): Promise<Obj[]> =>
  env.eventually(async () => {
    const items = (await env.list(PODS(n))).items as Obj[];
    return items.length > 0 && items.every((p) => p.spec.nodeName) ? items : undefined;
  }, 'the pod scheduled');

describe('[sig-node] RuntimeClass', () => {
  it('should reject a Pod requesting a non-existent RuntimeClass [NodeConformance] [Conformance]', async () => {
    const n = await ns();
    await expectPodRejection(n, `${n}-nonexistent`);
  });

  it('should reject a Pod requesting a deleted RuntimeClass [NodeConformance] [Conformance]', async () => {
    const n = await ns();
    const rcName = await createRuntimeClass(n, 'delete-me', 'runc');
    await env.call('DELETE', `${RCS}/${rcName}`);
    await env.eventually(async () => (await env.ts().request('GET', `${RCS}/${rcName}`)).status === 404, 'the RuntimeClass gone');
    await expectPodRejection(n, rcName);
  });

  it('should schedule a Pod requesting a RuntimeClass without PodOverhead [NodeConformance] [Conformance]', async () => {
    const n = await ns();
    const rcName = await createRuntimeClass(n, 'preconfigured-handler', PRECONFIGURED);
    const pod = await env.call('POST', PODS(n), runtimeClassPod(rcName));
    const pods = await scheduledPods(n);
    expect(pods).toHaveLength(1);
    expect(pods[0]!.metadata.name).toBe(pod.metadata.name);
    expect(pods[0]!.spec.overhead ?? {}).toEqual({});
    await env.call('DELETE', `${RCS}/${rcName}`);
  });

  it('should schedule a Pod requesting a RuntimeClass and initialize its Overhead [NodeConformance] [Conformance]', async () => {
    const n = await ns();
    const rcName = await createRuntimeClass(n, 'preconfigured-handler', PRECONFIGURED, { podFixed: { cpu: '10m', memory: '1Mi' } });
    const pod = await env.call('POST', PODS(n), runtimeClassPod(rcName));
    const pods = await scheduledPods(n);
    expect(pods).toHaveLength(1);
    expect(pods[0]!.metadata.name).toBe(pod.metadata.name);
    expect(pods[0]!.spec.overhead).toEqual({ cpu: '10m', memory: '1Mi' });
    await env.call('DELETE', `${RCS}/${rcName}`);
  });

  it('should support RuntimeClasses API operations [Conformance]', async () => {
    const unique = `runtimeclass-${Math.random().toString(36).slice(2, 7)}`;
    const label = `test=${unique}`;
    const labelled = (handler: string, name: string): Obj => {
      const rc = newRuntimeClass(handler, name);
      rc.metadata.labels = { test: unique };
      return rc;
    };
    const rc = labelled(`${unique}-handler`, `${unique}-conformance-runtime-class`);
    const rc2 = labelled(`${unique}-handler2`, `${unique}-conformance-runtime-class2`);
    const rc3 = labelled(`${unique}-handler3`, `${unique}-conformance-runtime-class3`);

    // discovery: /apis, /apis/node.k8s.io, /apis/node.k8s.io/v1
    const groups = (await env.get('/apis')).groups as Obj[];
    expect(groups.find((g) => g.name === 'node.k8s.io')?.versions.some((v: Obj) => v.version === 'v1')).toBe(true);
    expect(((await env.get('/apis/node.k8s.io')).versions as Obj[]).some((v) => v.version === 'v1')).toBe(true);
    expect(((await env.get('/apis/node.k8s.io/v1')).resources as Obj[]).some((r) => r.name === 'runtimeclasses')).toBe(true);

    const created = await env.call('POST', RCS, rc);
    const again = await env.ts().request('POST', RCS, { body: rc });
    expect(again.status, again.text).toBe(409);
    expect(again.json<Obj>().reason).toBe('AlreadyExists');
    await env.call('POST', RCS, rc2);

    // the watch starts before rc3 is created (from a list's resourceVersion: the stream's head may come with its first event)
    const from = (await env.list(RCS, label)).metadata.resourceVersion as string;
    const w = openWatch(env.ts().server, `${RCS}?watch=1&resourceVersion=${from}&labelSelector=${encodeURIComponent(label)}`);
    try {
      await env.call('POST', RCS, rc3);
      expect((await env.get(`${RCS}/${rc.metadata.name}`)).metadata.uid).toBe(created.metadata.uid);
      expect((await env.list(RCS, label)).items).toHaveLength(3);

      const patched = await env.call('PATCH', `${RCS}/${created.metadata.name}`, { metadata: { annotations: { patched: 'true' } } });
      expect(patched.metadata.annotations).toMatchObject({ patched: 'true' });
      patched.metadata.annotations.updated = 'true';
      const updated = await env.call('PUT', `${RCS}/${created.metadata.name}`, patched);
      expect(updated.metadata.annotations).toMatchObject({ updated: 'true' });

      // kube's loop ends at the first of these; each is checked here
      await w.waitUntil((e) => (e as Event).type === 'ADDED' && e.object.metadata?.name === rc3.metadata.name, 30_000);
      await w.waitUntil((e) => (e as Event).type === 'MODIFIED' && e.object.metadata?.annotations?.patched === 'true', 30_000);
      await w.waitUntil((e) => (e as Event).type === 'MODIFIED' && e.object.metadata?.annotations?.updated === 'true', 30_000);
      expect(w.events.every((e) => e.type === 'BOOKMARK' || e.object.kind === 'RuntimeClass')).toBe(true);
    } finally {
      w.close();
    }

    await env.call('DELETE', `${RCS}/${created.metadata.name}`);
    const gone = await env.ts().request('GET', `${RCS}/${created.metadata.name}`);
    expect(gone.status, gone.text).toBe(404);
    expect((await env.list(RCS, label)).items).toHaveLength(2);

    await env.call('DELETE', `${RCS}?labelSelector=${encodeURIComponent(label)}`);
    expect((await env.list(RCS, label)).items).toHaveLength(0);
  });
});
