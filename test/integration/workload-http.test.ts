// Workload kinds over HTTP: bad input is 422 Invalid with field causes and no
// write; the scale sub-resource reads and writes spec.replicas only, and a Scale
// without a resourceVersion is retried over a concurrent write, never a 409.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdmissionWebhook, startAdmissionWebhook } from '../helpers/admission-webhook.js';
import { NO_WORKLOAD_CONTROLLERS, type TestServer, startTestServer } from '../helpers/server.js';
import { SAMPLE_CSR_REQUEST } from '../fixtures/csr-request.js';

let t: TestServer;
let hook: AdmissionWebhook;
let dir: string;
beforeAll(async () => {
  t = await startTestServer({ authn: NO_WORKLOAD_CONTROLLERS });
  dir = await mkdtemp(join(tmpdir(), 'orch-workload-http-'));
  hook = await startAdmissionWebhook(dir);
});
afterAll(async () => {
  await hook?.close();
  await t?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
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
    const neg = await t.request('PUT', `${DEPLOYMENTS}/web/scale`, { body: JSON.stringify({ kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: { name: 'web' }, spec: { replicas: -1 } }) });
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
      body: JSON.stringify({ apiVersion: 'certificates.orch.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'alice' }, spec: { request: SAMPLE_CSR_REQUEST, signerName: 'example.com/signer', usages: ['client auth'] } }),
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

describe('the scale sub-resource under a concurrent write', () => {
  it('a Scale without a resourceVersion wins over a write made between its read and its write (kube retries; no 409)', async () => {
    expect((await t.request('POST', DEPLOYMENTS, { body: JSON.stringify(deployment('raced', { app: 'raced' })) })).status).toBe(201);
    // the webhook admitting the scale writes the Deployment itself, once: the store's compare-and-swap
    // then finds a newer object, as when a controller writes at that moment
    let wrote = false;
    hook.on.set('/scale', (seen, res) => {
      const answer = () => {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ apiVersion: seen.review.apiVersion, kind: 'AdmissionReview', response: { uid: seen.review.request.uid, allowed: true } }));
      };
      if (wrote) return answer();
      wrote = true;
      const patch = JSON.stringify({ metadata: { labels: { touched: 'yes' } } });
      void t.request('PATCH', `${DEPLOYMENTS}/raced`, { body: patch, headers: { 'Content-Type': 'application/merge-patch+json' } }).then(answer, answer);
    });
    const cfg = {
      apiVersion: 'admissionregistration.orch.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'scale-race' },
      webhooks: [{
        name: 'scale.race.test', clientConfig: { url: hook.url('/scale'), caBundle: hook.caBundle }, sideEffects: 'None', admissionReviewVersions: ['v1'],
        rules: [{ operations: ['UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments/scale'] }],
      }],
    };
    const created = await t.request('POST', '/apis/admissionregistration.orch.io/v1/validatingwebhookconfigurations', { body: cfg });
    expect(created.status, created.text).toBe(201);
    try {
      const put = await t.request('PUT', `${DEPLOYMENTS}/raced/scale`, { body: JSON.stringify({ kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: { name: 'raced', namespace: 'default' }, spec: { replicas: 3 } }) });
      expect(put.status, put.text).toBe(200);
      expect(wrote).toBe(true);
      const d = (await t.request('GET', `${DEPLOYMENTS}/raced`)).json<{ metadata: { labels?: Record<string, string> }; spec: { replicas: number } }>();
      expect([d.spec.replicas, d.metadata.labels?.touched]).toEqual([3, 'yes']);
    } finally {
      await t.request('DELETE', '/apis/admissionregistration.orch.io/v1/validatingwebhookconfigurations/scale-race');
    }
  });
});
