// The resourcequota controller on a real server (loopback, real store, as
// leader): a quota's status gets `hard` from its spec and `used` from the
// namespace's objects, and follows them as they change, as
// kube-controller-manager keeps it (docs/controllers.md "Resource quotas").
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { NO_WORKLOAD_CONTROLLERS, type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
const NS = '/api/v1/namespaces/default';
type Quota = { status?: { hard?: Record<string, string>; used?: Record<string, string> } };

beforeAll(async () => {
  t = await startTestServer({ authn: NO_WORKLOAD_CONTROLLERS });
});
afterAll(async () => {
  await t?.stop();
});

const used = async (): Promise<Record<string, string> | undefined> => (await t.request('GET', `${NS}/resourcequotas/q`)).json<Quota>().status?.used;

it('keeps status.hard and status.used of a quota current as objects come and go', async () => {
  const q = await t.request('POST', `${NS}/resourcequotas`, {
    body: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, spec: { hard: { pods: '10', 'requests.cpu': '2', 'requests.memory': '1Gi', 'count/configmaps': '20', secrets: '9', 'example.com/other': '1' } } },
  });
  expect(q.status, q.text).toBe(201);
  const base = await eventually(async () => {
    const r = (await t.request('GET', `${NS}/resourcequotas/q`)).json<Quota>();
    return r.status?.used ? r.status : undefined;
  }, 'quota status written');
  expect(base.hard).toEqual({ pods: '10', 'requests.cpu': '2', 'requests.memory': '1Gi', 'count/configmaps': '20', secrets: '9', 'example.com/other': '1' });
  expect(base.used).toMatchObject({ pods: '0', 'requests.cpu': '0', 'requests.memory': '0' });
  expect(base.used).not.toHaveProperty('example.com/other');
  const configMaps = Number(base.used!['count/configmaps']);

  for (const [name, cpu, memory] of [['a', '250m', '64Mi'], ['b', '1', '128Mi']] as const) {
    const r = await t.request('POST', `${NS}/pods`, {
      body: { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu, memory } } }] } },
    });
    expect(r.status, r.text).toBe(201);
  }
  expect((await t.request('POST', `${NS}/configmaps`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'extra' } } })).status).toBe(201);
  await eventually(async () => {
    const u = await used();
    return u?.pods === '2' && u['requests.cpu'] === '1250m' && u['requests.memory'] === '192Mi' && u['count/configmaps'] === String(configMaps + 1) ? u : undefined;
  }, 'usage of two pods and one more config map');

  expect((await t.request('DELETE', `${NS}/pods/a?gracePeriodSeconds=0`)).status).toBe(200);
  await eventually(async () => {
    const u = await used();
    return u?.pods === '1' && u['requests.cpu'] === '1' ? u : undefined;
  }, 'usage after a pod is gone');
});
