// ResourceQuota on a real server (loopback, real store, the resourcequota
// controller as leader): the controller keeps status.hard and status.used
// (docs/controllers.md "Resource quotas"), the admission plugin refuses
// creates past a quota with kube's 403s and charges admitted ones at once
// (src/registry/resource-quota-admission.ts).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { NO_WORKLOAD_CONTROLLERS, type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
const NS = '/api/v1/namespaces/default';
type Quota = { status?: { hard?: Record<string, string>; used?: Record<string, string> } };
type Status = { kind: string; code: number; reason: string; message: string; details?: { name?: string; kind?: string } };

beforeAll(async () => {
  t = await startTestServer({ authn: NO_WORKLOAD_CONTROLLERS });
});
afterAll(async () => {
  await t?.stop();
});

const used = async (): Promise<Record<string, string> | undefined> => (await t.request('GET', `${NS}/resourcequotas/q`)).json<Quota>().status?.used;
const createPod = (name: string, resources?: Record<string, unknown>) =>
  t.request('POST', `${NS}/pods`, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox', ...(resources ? { resources } : {}) }] } } });

it('keeps status current, charges creates at admission and refuses what a quota does not allow', async () => {
  const q = await t.request('POST', `${NS}/resourcequotas`, {
    body: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, spec: { hard: { pods: '2', 'requests.cpu': '2', 'requests.memory': '1Gi', 'count/configmaps': '20', secrets: '9', 'example.com/other': '1' } } },
  });
  expect(q.status, q.text).toBe(201);
  const base = await eventually(async () => {
    const r = (await t.request('GET', `${NS}/resourcequotas/q`)).json<Quota>();
    return r.status?.used ? r.status : undefined;
  }, 'quota status written');
  expect(base.hard).toEqual({ pods: '2', 'requests.cpu': '2', 'requests.memory': '1Gi', 'count/configmaps': '20', secrets: '9', 'example.com/other': '1' });
  expect(base.used).toMatchObject({ pods: '0', 'requests.cpu': '0', 'requests.memory': '0' });
  expect(base.used).not.toHaveProperty('example.com/other');
  const configMaps = Number(base.used!['count/configmaps']);

  // charged as they are admitted: the status says so when the create returns
  expect((await createPod('a', { requests: { cpu: '250m', memory: '64Mi' } })).status).toBe(201);
  expect((await createPod('b', { requests: { cpu: '1', memory: '128Mi' } })).status).toBe(201);
  expect((await t.request('POST', `${NS}/configmaps`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'extra' } } })).status).toBe(201);
  expect(await used()).toMatchObject({ pods: '2', 'requests.cpu': '1250m', 'requests.memory': '192Mi', 'count/configmaps': String(configMaps + 1) });

  const over = await createPod('c', { requests: { cpu: '100m', memory: '1Mi' } });
  expect(over.status).toBe(403);
  expect(over.json<Status>()).toMatchObject({
    kind: 'Status',
    code: 403,
    reason: 'Forbidden',
    message: 'pods "c" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2',
    details: { name: 'c', kind: 'pods' },
  });
  const unspecified = await createPod('d');
  expect(unspecified.status).toBe(403);
  expect(unspecified.json<Status>().message).toBe('pods "d" is forbidden: failed quota: q: must specify requests.cpu for: c; requests.memory for: c');

  // a delete gives back (the controller recounts)
  expect((await t.request('DELETE', `${NS}/pods/a?gracePeriodSeconds=0`)).status).toBe(200);
  await eventually(async () => {
    const u = await used();
    return u?.pods === '1' && u['requests.cpu'] === '1' && u['requests.memory'] === '128Mi' ? u : undefined;
  }, 'usage after a pod is gone');
  expect((await createPod('c', { requests: { cpu: '100m', memory: '1Mi' } })).status).toBe(201);
});
