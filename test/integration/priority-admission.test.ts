// The Priority admission plugin against a started server (with kube's system
// PriorityClasses stored at start): a new pod gets
// priority 0 and PreemptLowerPriority (kubectl shows them), or its named
// class's value and policy; an unknown class is kube's 403; a conflicting
// priority is refused; a globalDefault class is taken (and named) by pods
// naming none, and only one class may be the default; `kubectl replace` of the
// manifest keeps the admitted values; --disable-admission-plugins Priority
// leaves them unset.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKubectl } from '../helpers/kubectl.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
type Pod = { metadata: { name: string }; spec: { priority?: number; preemptionPolicy?: string; priorityClassName?: string } };
const PODS = '/api/v1/namespaces/default/pods';
const PCS = '/apis/scheduling.orch.io/v1/priorityclasses';

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.stop();
});

const podBody = (name: string, spec: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec } });
const pcBody = (name: string, value: number, extra: Record<string, unknown> = {}) => ({ apiVersion: 'scheduling.orch.io/v1', kind: 'PriorityClass', metadata: { name }, value, ...extra });

describe('Priority admission', () => {
  it('kubectl run: priority 0 and PreemptLowerPriority; kubectl replace of the manifest keeps them', async () => {
    const kc = join(t.dataDir, 'admin.kubeconfig');
    const r = await runKubectl(kc, ['run', 'plain', '--image=busybox', '-o', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const pod = JSON.parse(r.stdout) as Pod;
    expect(pod.spec).toMatchObject({ priority: 0, preemptionPolicy: 'PreemptLowerPriority' });
    expect(pod.spec.priorityClassName).toBeUndefined();
    const put = await t.request('PUT', `${PODS}/plain`, { body: { ...podBody('plain'), spec: { ...pod.spec, priority: undefined, preemptionPolicy: undefined } } });
    expect(put.status, put.text).toBe(200);
    expect(put.json<Pod>().spec).toMatchObject({ priority: 0, preemptionPolicy: 'PreemptLowerPriority' });
  });

  it("kube's system classes are stored at start, as kubectl lists them", async () => {
    const r = await runKubectl(join(t.dataDir, 'admin.kubeconfig'), ['get', 'priorityclasses']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/system-cluster-critical\s+2000000000\s+false/);
    expect(r.stdout).toMatch(/system-node-critical\s+2000001000\s+false/);
    const node = (await t.request('GET', `${PCS}/system-node-critical`)).json<{ description: string; preemptionPolicy: string }>();
    expect(node).toMatchObject({ description: 'Used for system critical pods that must not be moved from their current node.', preemptionPolicy: 'PreemptLowerPriority' });
  });

  it("a named class gives its value and policy; kube's system classes are known; an unknown one is kube's 403", async () => {
    expect((await t.request('POST', PCS, { body: pcBody('high', 1000, { preemptionPolicy: 'Never' }) })).status).toBe(201);
    const high = await t.request('POST', PODS, { body: podBody('high', { priorityClassName: 'high' }) });
    expect(high.status, high.text).toBe(201);
    expect(high.json<Pod>().spec).toMatchObject({ priority: 1000, preemptionPolicy: 'Never' });
    const sys = await t.request('POST', PODS, { body: podBody('sys', { priorityClassName: 'system-node-critical' }) });
    expect(sys.json<Pod>().spec).toMatchObject({ priority: 2000001000, preemptionPolicy: 'PreemptLowerPriority' });
    const lost = await t.request('POST', PODS, { body: podBody('lost', { priorityClassName: 'nope' }) });
    expect(lost.status).toBe(403);
    expect(lost.json()).toMatchObject({ reason: 'Forbidden', code: 403, message: 'pods "lost" is forbidden: no PriorityClass with name nope was found', details: { name: 'lost', kind: 'pods' } });
    const wrong = await t.request('POST', PODS, { body: podBody('wrong', { priorityClassName: 'high', priority: 5 }) });
    expect(wrong.status).toBe(403);
    expect(wrong.json<{ message: string }>().message).toBe('pods "wrong" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name');
    const policy = await t.request('POST', PODS, { body: podBody('policy', { priorityClassName: 'high', preemptionPolicy: 'PreemptLowerPriority' }) });
    expect(policy.json<{ message: string }>().message).toBe('pods "policy" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name');
  });

  it('a globalDefault class is taken and named by pods naming none; a second default is refused', async () => {
    expect((await t.request('POST', PCS, { body: pcBody('fallback', 7, { globalDefault: true }) })).status).toBe(201);
    const pod = await t.request('POST', PODS, { body: podBody('defaulted') });
    expect(pod.json<Pod>().spec).toMatchObject({ priorityClassName: 'fallback', priority: 7, preemptionPolicy: 'PreemptLowerPriority' });
    const second = await t.request('POST', PCS, { body: pcBody('another', 8, { globalDefault: true }) });
    expect(second.status).toBe(403);
    expect(second.json()).toMatchObject({
      message: 'priorityclasses.scheduling.orch.io "another" is forbidden: PriorityClass fallback is already marked as default. Only one default can exist',
      details: { name: 'another', group: 'scheduling.orch.io', kind: 'priorityclasses' },
    });
  });
});

describe('Priority admission disabled', () => {
  let off: TestServer;
  beforeAll(async () => {
    off = await startTestServer({ admissionPlugins: { disable: ['Priority'] } });
  });
  afterAll(async () => {
    await off?.stop();
  });

  it('leaves priority and preemptionPolicy unset', async () => {
    const r = await off.request('POST', PODS, { body: podBody('bare') });
    expect(r.status, r.text).toBe(201);
    expect(r.json<Pod>().spec.priority).toBeUndefined();
    expect(r.json<Pod>().spec.preemptionPolicy).toBeUndefined();
  });
});
