// LimitRange on a real server: the object's own defaults, the LimitRanger
// admission plugin's container defaults (and kube's annotation saying what it
// set), and its min / max / ratio refusals for pods and claims with kube's
// messages (docs/admission.md, docs/controllers.md "Resource quota").

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { NO_WORKLOAD_CONTROLLERS, type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
const NS = '/api/v1/namespaces/limits-a';

type Container = { name: string; resources?: { requests?: Record<string, string>; limits?: Record<string, string> } };
type Pod = { metadata: { annotations?: Record<string, string> }; spec: { containers: Container[]; initContainers?: Container[] } };

beforeAll(async () => {
  t = await startTestServer({ authn: NO_WORKLOAD_CONTROLLERS });
  const r = await t.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'limits-a' } } });
  expect(r.status, r.text).toBe(201);
  await eventually(async () => (await t.request('GET', `${NS}/serviceaccounts/default`)).status === 200, 'default account');
  const lr = await t.request('POST', `${NS}/limitranges`, {
    body: {
      apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'limits' },
      spec: {
        limits: [
          { type: 'Container', default: { cpu: '500m', memory: '256Mi' }, defaultRequest: { cpu: '100m' }, max: { cpu: '1' }, min: { cpu: '50m' }, maxLimitRequestRatio: { cpu: '10' } },
          { type: 'Pod', max: { cpu: '1500m' } },
          { type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '10Gi' } },
        ],
      },
    },
  });
  expect(lr.status, lr.text).toBe(201);
});
afterAll(async () => {
  await t?.stop();
});

const pod = (name: string, containers: Container[], initContainers?: Container[]) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: containers.map((c) => ({ image: 'busybox:1', ...c })), ...(initContainers ? { initContainers: initContainers.map((c) => ({ image: 'busybox:1', ...c })) } : {}) },
});

describe('LimitRange', () => {
  it('defaults its own Container item as kube does (default request from the default limit)', async () => {
    const lr = (await t.request('GET', `${NS}/limitranges/limits`)).json<{ spec: { limits: Record<string, unknown>[] } }>();
    expect(lr.spec.limits[0]).toMatchObject({ default: { cpu: '500m', memory: '256Mi' }, defaultRequest: { cpu: '100m', memory: '256Mi' } });
    expect(lr.spec.limits[1]).not.toHaveProperty('default');
  });

  it('gives containers the defaults they lack and says so in the annotation', async () => {
    const r = await t.request('POST', `${NS}/pods`, { body: pod('bare', [{ name: 'app' }, { name: 'side', resources: { limits: { cpu: '200m' } } }], [{ name: 'init' }]) });
    expect(r.status, r.text).toBe(201);
    const p = r.json<Pod>();
    expect(p.spec.containers[0]!.resources).toEqual({ requests: { cpu: '100m', memory: '256Mi' }, limits: { cpu: '500m', memory: '256Mi' } });
    // the request came from the limit (API defaulting) before the plugin ran; only memory was added
    expect(p.spec.containers[1]!.resources).toEqual({ requests: { cpu: '200m', memory: '256Mi' }, limits: { cpu: '200m', memory: '256Mi' } });
    expect(p.metadata.annotations?.['kubernetes.io/limit-ranger']).toBe(
      'LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app; memory request for container side; memory limit for container side; cpu, memory request for init container init; cpu, memory limit for init container init');
  });

  it('refuses containers and pods outside min, max and the ratio with kube\'s messages', async () => {
    let r = await t.request('POST', `${NS}/pods`, { body: pod('big', [{ name: 'c', resources: { limits: { cpu: '1200m' } } }]) });
    expect(r.status, r.text).toBe(403);
    expect(r.json<{ message: string; reason: string }>()).toMatchObject({ reason: 'Forbidden', message: 'pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 1200m' });

    r = await t.request('POST', `${NS}/pods`, { body: pod('skew', [{ name: 'c', resources: { requests: { cpu: '10m' }, limits: { cpu: '500m' } } }]) });
    expect(r.status, r.text).toBe(403);
    expect(r.json<{ message: string }>().message).toBe(
      'pods "skew" is forbidden: [minimum cpu usage per Container is 50m, but request is 10m, cpu max limit to request ratio per Container is 10, but provided ratio is 50.000000]');

    r = await t.request('POST', `${NS}/pods`, { body: pod('many', [{ name: 'a', resources: { limits: { cpu: '800m' } } }, { name: 'b', resources: { limits: { cpu: '800m' } } }]) });
    expect(r.status, r.text).toBe(403);
    expect(r.json<{ message: string }>().message).toBe('pods "many" is forbidden: maximum cpu usage per Pod is 1500m, but limit is 1600m');
  });

  it('holds a claim\'s storage request to min and max', async () => {
    const claim = (name: string, storage: string) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } } });
    let r = await t.request('POST', `${NS}/persistentvolumeclaims`, { body: claim('small', '500Mi') });
    expect(r.status, r.text).toBe(403);
    expect(r.json<{ message: string }>().message).toBe('persistentvolumeclaims "small" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi');
    r = await t.request('POST', `${NS}/persistentvolumeclaims`, { body: claim('ok', '2Gi') });
    expect(r.status, r.text).toBe(201);
    // only a Bound claim's request may change at all (claim update validation, 422 otherwise): bound as the binder would mark it
    const merge = { 'content-type': 'application/merge-patch+json' };
    r = await t.request('PATCH', `${NS}/persistentvolumeclaims/ok/status`, { body: { status: { phase: 'Bound' } }, headers: merge });
    expect(r.status, r.text).toBe(200);
    r = await t.request('PATCH', `${NS}/persistentvolumeclaims/ok`, { body: { spec: { resources: { requests: { storage: '20Gi' } } } }, headers: merge });
    expect(r.status, r.text).toBe(403);
    expect(r.json<{ message: string }>().message).toBe('persistentvolumeclaims "ok" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi');
  });
});
