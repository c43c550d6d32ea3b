// ResourceQuota on a real server: the resourcequota controller counts a
// namespace into `status`, the ResourceQuota admission plugin refuses writes
// past `status.hard` with kube's 403 messages and charges admitted ones, and
// deletions give the quota back (docs/controllers.md "Resource quota").

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { NO_WORKLOAD_CONTROLLERS, type TestServer, startTestServer } from '../helpers/server.js';
import { parseAmount } from '../../src/registry/quota/amount.js';
import { runKubectl } from '../helpers/kubectl.js';

let t: TestServer;

type Quota = { metadata: { resourceVersion: string }; spec: { hard: Record<string, string> }; status?: { hard?: Record<string, string>; used?: Record<string, string> } };
type Status = { code: number; reason: string; message: string; details?: { name?: string; kind?: string } };

beforeAll(async () => {
  t = await startTestServer({ authn: NO_WORKLOAD_CONTROLLERS });
});
afterAll(async () => {
  await t?.stop();
});

async function namespace(name: string): Promise<void> {
  const r = await t.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  expect(r.status, r.text).toBe(201);
  // pods need the namespace's default ServiceAccount (the ServiceAccount plugin)
  await eventually(async () => (await t.request('GET', `/api/v1/namespaces/${name}/serviceaccounts/default`)).status === 200, `default account in ${name}`);
}

async function createQuota(ns: string, name: string, spec: Record<string, unknown>): Promise<void> {
  const r = await t.request('POST', `/api/v1/namespaces/${ns}/resourcequotas`, { body: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name }, spec } });
  expect(r.status, r.text).toBe(201);
}

const quota = async (ns: string, name: string) => (await t.request('GET', `/api/v1/namespaces/${ns}/resourcequotas/${name}`)).json<Quota>();

/** the quota once its status answers for its spec and `check` holds */
async function counted(ns: string, name: string, check: (used: Record<string, string>) => boolean = () => true): Promise<Quota> {
  return eventually(async () => {
    const q = await quota(ns, name);
    const hard = q.status?.hard ?? {};
    const complete = Object.keys(q.spec.hard).every((k) => k in hard && k in (q.status?.used ?? {}));
    return complete && check(q.status?.used ?? {}) ? q : undefined;
  }, `quota ${ns}/${name} counted`);
}

const same = (a: string | undefined, b: string) => a !== undefined && parseAmount(a)?.nano === parseAmount(b)?.nano;

function pod(name: string, resources?: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox:1', ...(resources ? { resources } : {}) }], ...extra } };
}

const small = (cpu: string, memory = '64Mi') => ({ requests: { cpu, memory } });

describe('ResourceQuota', () => {
  it('counts the namespace, refuses what exceeds the quota with kube\'s messages, and charges what it admits', async () => {
    await namespace('quota-a');
    await createQuota('quota-a', 'compute', { hard: { pods: '2', 'requests.cpu': '1', 'requests.memory': '1Gi' } });
    const q = await counted('quota-a', 'compute');
    expect(q.status?.hard).toEqual({ pods: '2', 'requests.cpu': '1', 'requests.memory': '1Gi' });
    expect(q.status?.used).toEqual({ pods: '0', 'requests.cpu': '0', 'requests.memory': '0' });

    // a quota on requests makes every container state them (kube's "must specify")
    let r = await t.request('POST', '/api/v1/namespaces/quota-a/pods', { body: pod('bare') });
    expect(r.status, r.text).toBe(403);
    let s = r.json<Status>();
    expect(s.reason).toBe('Forbidden');
    expect(s.message).toBe('pods "bare" is forbidden: failed quota: compute: must specify requests.cpu for: c; requests.memory for: c');
    expect(s.details).toMatchObject({ name: 'bare', kind: 'pods' });

    r = await t.request('POST', '/api/v1/namespaces/quota-a/pods', { body: pod('one', small('500m', '256Mi')) });
    expect(r.status, r.text).toBe(201);
    const charged = (await quota('quota-a', 'compute')).status?.used ?? {};
    // charged by admission, printed as kube prints a sum on zero (the other operand's format)
    expect(charged).toEqual({ pods: '1', 'requests.cpu': '500m', 'requests.memory': '256Mi' });

    r = await t.request('POST', '/api/v1/namespaces/quota-a/pods', { body: pod('big', small('600m')) });
    expect(r.status, r.text).toBe(403);
    s = r.json<Status>();
    expect(s.message).toBe('pods "big" is forbidden: exceeded quota: compute, requested: requests.cpu=600m, used: requests.cpu=500m, limited: requests.cpu=1');

    // dry run: checked, not charged
    r = await t.request('POST', '/api/v1/namespaces/quota-a/pods?dryRun=All', { body: pod('dry', small('500m')) });
    expect(r.status, r.text).toBe(201);
    expect(same((await quota('quota-a', 'compute')).status?.used?.['requests.cpu'], '500m')).toBe(true);

    r = await t.request('POST', '/api/v1/namespaces/quota-a/pods', { body: pod('two', small('500m')) });
    expect(r.status, r.text).toBe(201);
    r = await t.request('POST', '/api/v1/namespaces/quota-a/pods', { body: pod('three', small('0')) });
    expect(r.status, r.text).toBe(403);
    expect(r.json<Status>().message).toBe('pods "three" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2');

    // a deleted pod gives its share back (the controller's replenishment)
    r = await t.request('DELETE', '/api/v1/namespaces/quota-a/pods/one?gracePeriodSeconds=0');
    expect(r.status, r.text).toBe(200);
    await counted('quota-a', 'compute', (u) => same(u.pods, '1') && same(u['requests.cpu'], '500m') && same(u['requests.memory'], '64Mi'));
    r = await t.request('POST', '/api/v1/namespaces/quota-a/pods', { body: pod('three', small('0')) });
    expect(r.status, r.text).toBe(201);
    // kubectl's columns: status.hard by name, `used/hard`, limits.* apart
    const out = await runKubectl(t.server.kubeconfigPath, ['get', 'quota', 'compute', '-n', 'quota-a', '--no-headers', '-o', 'custom-columns=X:.metadata.name']);
    expect(out.stdout.trim()).toBe('compute');
    const table = await runKubectl(t.server.kubeconfigPath, ['get', 'quota', '-n', 'quota-a']);
    expect(table.stdout).toMatch(/^NAME\s+AGE\s+REQUEST\s+LIMIT\n/);
    expect(table.stdout).toMatch(/compute\s+\S+\s+pods: 2\/2, requests\.cpu: 500m\/1, requests\.memory: 128Mi\/1Gi\s*\n/);
  });

  it('counts objects of any kind (count/<resource>.<group>, legacy names) and services by type', async () => {
    await namespace('quota-b');
    await createQuota('quota-b', 'objects', { hard: { services: '2', 'services.nodeports': '1', secrets: '1', 'count/deployments.apps': '1' } });
    await counted('quota-b', 'objects', (u) => same(u.services, '0') && same(u.secrets, '0') && same(u['count/deployments.apps'], '0'));

    const svc = (name: string, type?: string) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ...(type ? { type } : {}), ports: [{ port: 80 }] } });
    expect((await t.request('POST', '/api/v1/namespaces/quota-b/services', { body: svc('np', 'NodePort') })).status).toBe(201);
    let r = await t.request('POST', '/api/v1/namespaces/quota-b/services', { body: svc('np2', 'NodePort') });
    expect(r.status, r.text).toBe(403);
    expect(r.json<Status>().message).toBe('services "np2" is forbidden: exceeded quota: objects, requested: services.nodeports=1, used: services.nodeports=1, limited: services.nodeports=1');
    expect((await t.request('POST', '/api/v1/namespaces/quota-b/services', { body: svc('plain') })).status).toBe(201);

    const secret = (name: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: { a: 'b' } });
    expect((await t.request('POST', '/api/v1/namespaces/quota-b/secrets', { body: secret('s1') })).status).toBe(201);
    r = await t.request('POST', '/api/v1/namespaces/quota-b/secrets', { body: secret('s2') });
    expect(r.status, r.text).toBe(403);
    expect(r.json<Status>().message).toBe('secrets "s2" is forbidden: exceeded quota: objects, requested: secrets=1, used: secrets=1, limited: secrets=1');

    const deploy = (name: string) => ({
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
      spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
    });
    expect((await t.request('POST', '/apis/apps/v1/namespaces/quota-b/deployments', { body: deploy('d1') })).status).toBe(201);
    r = await t.request('POST', '/apis/apps/v1/namespaces/quota-b/deployments', { body: deploy('d2') });
    expect(r.status, r.text).toBe(403);
    expect(r.json<Status>().message).toBe('deployments.apps "d2" is forbidden: exceeded quota: objects, requested: count/deployments.apps=1, used: count/deployments.apps=1, limited: count/deployments.apps=1');

    // a deletion of a counted kind gives the count back
    expect((await t.request('DELETE', '/apis/apps/v1/namespaces/quota-b/deployments/d1')).status).toBe(200);
    await counted('quota-b', 'objects', (u) => same(u['count/deployments.apps'], '0'));
    expect((await t.request('POST', '/apis/apps/v1/namespaces/quota-b/deployments', { body: deploy('d2') })).status).toBe(201);
  });

  it('applies scopes to pods and follows a change of spec.hard', async () => {
    await namespace('quota-c');
    await createQuota('quota-c', 'best-effort', { hard: { pods: '1' }, scopes: ['BestEffort'] });
    await counted('quota-c', 'best-effort');
    expect((await t.request('POST', '/api/v1/namespaces/quota-c/pods', { body: pod('be1') })).status).toBe(201);
    const r = await t.request('POST', '/api/v1/namespaces/quota-c/pods', { body: pod('be2') });
    expect(r.status, r.text).toBe(403);
    expect(r.json<Status>().message).toContain('exceeded quota: best-effort, requested: pods=1, used: pods=1, limited: pods=1');
    // a pod with requests is not BestEffort: the scoped quota does not count it
    expect((await t.request('POST', '/api/v1/namespaces/quota-c/pods', { body: pod('burstable', small('100m')) })).status).toBe(201);
    expect(same((await quota('quota-c', 'best-effort')).status?.used?.pods, '1')).toBe(true);

    const q = await quota('quota-c', 'best-effort');
    const p = await t.request('PATCH', '/api/v1/namespaces/quota-c/resourcequotas/best-effort', {
      body: { spec: { hard: { pods: '3' } } }, headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(p.status, p.text).toBe(200);
    const after = await counted('quota-c', 'best-effort', () => true);
    await eventually(async () => (await quota('quota-c', 'best-effort')).status?.hard?.pods === '3', 'status.hard follows spec.hard');
    expect(after.metadata.resourceVersion).not.toBe(q.metadata.resourceVersion);
    expect((await t.request('POST', '/api/v1/namespaces/quota-c/pods', { body: pod('be2') })).status).toBe(201);
  });
});
