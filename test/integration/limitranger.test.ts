// LimitRanger on a real server (src/registry/limit-ranger-admission.ts):
// LimitRange items defaulted as kube's SetDefaults_LimitRangeItem, new pods
// given the namespace's defaults (and the `kubernetes.io/limit-ranger`
// annotation), min/max breaches refused 403 with kube's messages, and a
// quota's required requests met by the defaults.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { NO_WORKLOAD_CONTROLLERS, type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
const NS = '/api/v1/namespaces/limits';
type Pod = { metadata: { annotations?: Record<string, string> }; spec: { containers: { resources?: { requests?: Record<string, string>; limits?: Record<string, string> } }[] } };

beforeAll(async () => {
  t = await startTestServer({ authn: NO_WORKLOAD_CONTROLLERS });
  expect((await t.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'limits' } } })).status).toBe(201);
});
afterAll(async () => {
  await t?.stop();
});

const pod = (name: string, resources?: Record<string, unknown>) =>
  t.request('POST', `${NS}/pods`, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox', ...(resources ? { resources } : {}) }] } } });

it('defaults LimitRange items, applies them to new pods and refuses what breaks min or max', async () => {
  const lr = await t.request('POST', `${NS}/limitranges`, {
    body: { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'lr' }, spec: { limits: [{ type: 'Container', max: { memory: '1Gi' }, default: { cpu: '300m' }, min: { cpu: '10m' } }] } },
  });
  expect(lr.status, lr.text).toBe(201);
  // default ← max; defaultRequest ← default, then min
  expect(lr.json<{ spec: { limits: Record<string, unknown>[] } }>().spec.limits[0]).toEqual({
    type: 'Container',
    max: { memory: '1Gi' },
    min: { cpu: '10m' },
    default: { cpu: '300m', memory: '1Gi' },
    defaultRequest: { cpu: '300m', memory: '1Gi' },
  });

  const a = await pod('a', { requests: { cpu: '50m' } });
  expect(a.status, a.text).toBe(201);
  const got = a.json<Pod>();
  expect(got.spec.containers[0]!.resources).toEqual({ requests: { cpu: '50m', memory: '1Gi' }, limits: { cpu: '300m', memory: '1Gi' } });
  expect(got.metadata.annotations?.['kubernetes.io/limit-ranger']).toBe('LimitRanger plugin set: memory request for container c; cpu, memory limit for container c');

  const small = await pod('b', { requests: { cpu: '5m' } });
  expect(small.status).toBe(403);
  expect(small.json<{ message: string; reason: string }>()).toMatchObject({ reason: 'Forbidden', message: 'pods "b" is forbidden: minimum cpu usage per Container is 10m, but request is 5m' });
  const big = await pod('c', { limits: { memory: '2Gi' }, requests: { memory: '2Gi' } });
  expect(big.status).toBe(403);
  expect(big.json<{ message: string }>().message).toBe('pods "c" is forbidden: maximum memory usage per Container is 1Gi, but limit is 2Gi');

  // a quota that needs requests is met by the defaults
  const q = await t.request('POST', `${NS}/resourcequotas`, { body: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, spec: { hard: { 'requests.cpu': '10' } } } });
  expect(q.status).toBe(201);
  await eventually(async () => (await t.request('GET', `${NS}/resourcequotas/q`)).json<{ status?: { used?: Record<string, string> } }>().status?.used, 'quota status written');
  const d = await pod('d');
  expect(d.status, d.text).toBe(201);
  expect(d.json<Pod>().spec.containers[0]!.resources?.requests).toEqual({ cpu: '300m', memory: '1Gi' });
  // without the LimitRange the same pod lacks the request the quota tracks
  expect((await t.request('DELETE', `${NS}/limitranges/lr`)).status).toBe(200);
  expect((await pod('e')).json<{ message: string }>().message).toBe('pods "e" is forbidden: failed quota: q: must specify requests.cpu for: c');
});
