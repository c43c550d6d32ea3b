// Workload kinds over HTTP: bad input is 422 Invalid with field causes and no
// write; the scale sub-resource reads and writes spec.replicas only.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_WORKLOAD_CONTROLLERS, type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ authn: NO_WORKLOAD_CONTROLLERS });
});
afterAll(async () => {
  await t?.stop();
});

type Status = { kind: string; code: number; reason: string; details: { kind: string; name: string; causes: { field: string; reason: string }[] } };
const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';
const deployment = (name: string, labels: Record<string, string>, replicas = 1) => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
  spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
});

describe('workload kinds over HTTP', () => {
  it('a Deployment whose selector misses its template is 422 with field causes, and nothing is stored', async () => {
    const r = await t.request('POST', DEPLOYMENTS, { body: JSON.stringify(deployment('bad', { app: 'other' }, -2)) });
    expect(r.status).toBe(422);
    const s = r.json<Status>();
    expect(s).toMatchObject({ kind: 'Status', code: 422, reason: 'Invalid', details: { kind: 'Deployment', name: 'bad' } });
    expect(s.details.causes.map((c) => c.field).sort()).toEqual(['spec.replicas', 'spec.template.metadata.labels']);
    expect((await t.request('GET', `${DEPLOYMENTS}/bad`)).status).toBe(404);
  });

  it('a CronJob with an unparseable schedule is 422', async () => {
    const r = await t.request('POST', '/apis/batch/v1/namespaces/default/cronjobs', {
      body: JSON.stringify({ apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'cj' }, spec: { schedule: 'sometimes', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } } } }),
    });
    expect(r.status).toBe(422);
    expect(r.json<Status>().details.causes.map((c) => c.field)).toEqual(['spec.schedule']);
  });

  it('the scale sub-resource: GET, PUT with a stale resourceVersion (409), negative replicas (422), JSON patch', async () => {
    expect((await t.request('POST', DEPLOYMENTS, { body: JSON.stringify(deployment('web', { app: 'web' })) })).status).toBe(201);
    const scale = (await t.request('GET', `${DEPLOYMENTS}/web/scale`)).json<{ metadata: { resourceVersion: string }; spec: { replicas: number } }>();
    expect(scale.spec.replicas).toBe(1);
    const put = await t.request('PUT', `${DEPLOYMENTS}/web/scale`, { body: JSON.stringify({ ...scale, spec: { replicas: 4 } }) });
    expect(put.status).toBe(200);
    expect(put.json<{ spec: { replicas: number } }>().spec.replicas).toBe(4);
    const stale = await t.request('PUT', `${DEPLOYMENTS}/web/scale`, { body: JSON.stringify({ ...scale, spec: { replicas: 5 } }) });
    expect(stale.status).toBe(409);
    const neg = await t.request('PUT', `${DEPLOYMENTS}/web/scale`, { body: JSON.stringify({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: -1 } }) });
    expect(neg.status).toBe(422);
    expect(neg.json<Status>().details.causes.map((c) => c.field)).toEqual(['spec.replicas']);
    const patched = await t.request('PATCH', `${DEPLOYMENTS}/web/scale`, {
      body: JSON.stringify([{ op: 'replace', path: '/spec/replicas', value: 2 }]), headers: { 'Content-Type': 'application/json-patch+json' },
    });
    expect(patched.status).toBe(200);
    const d = (await t.request('GET', `${DEPLOYMENTS}/web`)).json<{ spec: { replicas: number; template: unknown } }>();
    expect(d.spec.replicas).toBe(2);
    // a kind without the scale sub-resource has no /scale
    expect((await t.request('GET', '/apis/batch/v1/namespaces/default/cronjobs/x/scale')).status).toBe(404);
  });
});

describe('CertificateSigningRequest approval', () => {
  it('PUT /approval changes only the status conditions', async () => {
    const CSRS = '/apis/certificates.orch.io/v1/certificatesigningrequests';
    const created = await t.request('POST', CSRS, {
      body: JSON.stringify({ apiVersion: 'certificates.orch.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'alice' }, spec: { request: 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K', signerName: 'example.com/signer', usages: ['client auth'] } }),
    });
    expect(created.status).toBe(201);
    const csr = created.json<Record<string, any>>();
    const approved = await t.request('PUT', `${CSRS}/alice/approval`, {
      body: JSON.stringify({ ...csr, spec: { ...csr.spec, signerName: 'other.example.com/x' }, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Test', message: 'ok' }] } }),
    });
    expect(approved.status).toBe(200);
    const after = (await t.request('GET', `${CSRS}/alice`)).json<Record<string, any>>();
    expect(after.status.conditions[0].type).toBe('Approved');
    expect(after.spec.signerName).toBe('example.com/signer');
  });
});
