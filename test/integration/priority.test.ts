// The Priority admission plugin and the built-in system PriorityClasses on a
// real server: every new pod gets spec.priority and preemptionPolicy from its
// class (or the default), with kube's 403s for unknown classes and stated
// priorities; only one class may be the global default.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_WORKLOAD_CONTROLLERS, type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
const PODS = '/api/v1/namespaces/default/pods';
const PCS = '/apis/scheduling.orch.io/v1/priorityclasses';

type Pod = { metadata: { resourceVersion: string }; spec: { priority?: number; preemptionPolicy?: string; priorityClassName?: string } };

beforeAll(async () => {
  t = await startTestServer({ authn: NO_WORKLOAD_CONTROLLERS });
});
afterAll(async () => {
  await t?.stop();
});

const pod = (name: string, spec: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox:1' }], ...spec } });
const message = (r: { json<T>(): T }) => r.json<{ message: string }>().message;

describe('Priority admission', () => {
  it('serves the built-in system classes', async () => {
    const r = await t.request('GET', PCS);
    const items = r.json<{ items: { metadata: { name: string }; value: number; preemptionPolicy: string }[] }>().items;
    expect(items.map((i) => [i.metadata.name, i.value, i.preemptionPolicy])).toEqual([
      ['system-cluster-critical', 2000000000, 'PreemptLowerPriority'],
      ['system-node-critical', 2000001000, 'PreemptLowerPriority'],
    ]);
  });

  it('resolves a pod\'s class into priority and preemptionPolicy, and keeps them on an update that leaves them out', async () => {
    let r = await t.request('POST', PODS, { body: pod('plain') });
    expect(r.status, r.text).toBe(201);
    expect(r.json<Pod>().spec).toMatchObject({ priority: 0, preemptionPolicy: 'PreemptLowerPriority' });
    expect(r.json<Pod>().spec.priorityClassName).toBeUndefined();

    r = await t.request('POST', PODS, { body: pod('critical', { priorityClassName: 'system-cluster-critical' }) });
    expect(r.status, r.text).toBe(201);
    const created = r.json<Pod & Record<string, unknown>>();
    expect(created.spec).toMatchObject({ priority: 2000000000, preemptionPolicy: 'PreemptLowerPriority' });

    // a client that does not know the fields sends the pod back without them
    delete created.spec.priority;
    delete created.spec.preemptionPolicy;
    r = await t.request('PUT', `${PODS}/critical`, { body: created });
    expect(r.status, r.text).toBe(200);
    expect(r.json<Pod>().spec).toMatchObject({ priority: 2000000000, preemptionPolicy: 'PreemptLowerPriority' });
  });

  it('refuses an unknown class and a priority that differs from the class', async () => {
    let r = await t.request('POST', PODS, { body: pod('lost', { priorityClassName: 'nope' }) });
    expect(r.status, r.text).toBe(403);
    expect(message(r)).toBe('pods "lost" is forbidden: no PriorityClass with name nope was found');
    r = await t.request('POST', PODS, { body: pod('stated', { priority: 5 }) });
    expect(r.status, r.text).toBe(403);
    expect(message(r)).toBe('pods "stated" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name');
    r = await t.request('POST', PODS, { body: pod('same', { priority: 0 }) });
    expect(r.status, r.text).toBe(201);
  });

  it('keeps system- names for the built-in classes and user values at most 1e9', async () => {
    const pc = (name: string, value: number) => ({ apiVersion: 'scheduling.orch.io/v1', kind: 'PriorityClass', metadata: { name }, value });
    let r = await t.request('POST', PCS, { body: pc('system-mine', 10) });
    expect(r.status, r.text).toBe(422);
    expect(message(r)).toBe('PriorityClass.scheduling.orch.io "system-mine" is invalid: metadata.name: Forbidden: priority class names with \'system-\' prefix are reserved for system use only. error: name system-mine is not a known system priority class');
    r = await t.request('POST', PCS, { body: pc('huge', 2_000_000_000) });
    expect(r.status, r.text).toBe(422);
    expect(message(r)).toBe('PriorityClass.scheduling.orch.io "huge" is invalid: value: Forbidden: maximum allowed value of a user defined priority is 1000000000');
  });

  it('gives pods without a class the global default, and allows only one default', async () => {
    let r = await t.request('POST', PCS, { body: { apiVersion: 'scheduling.orch.io/v1', kind: 'PriorityClass', metadata: { name: 'high' }, value: 1000, globalDefault: true, preemptionPolicy: 'Never' } });
    expect(r.status, r.text).toBe(201);
    r = await t.request('POST', PCS, { body: { apiVersion: 'scheduling.orch.io/v1', kind: 'PriorityClass', metadata: { name: 'another' }, value: 10, globalDefault: true } });
    expect(r.status, r.text).toBe(403);
    expect(message(r)).toBe('priorityclasses.scheduling.orch.io "another" is forbidden: PriorityClass high is already marked as default. Only one default can exist');
    r = await t.request('POST', PODS, { body: pod('defaulted') });
    expect(r.status, r.text).toBe(201);
    expect(r.json<Pod>().spec).toMatchObject({ priorityClassName: 'high', priority: 1000, preemptionPolicy: 'Never' });
    r = await t.request('POST', PODS, { body: pod('conflict', { priorityClassName: 'high', preemptionPolicy: 'PreemptLowerPriority' }) });
    expect(r.status, r.text).toBe(403);
    expect(message(r)).toBe('pods "conflict" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name');
  });
});
