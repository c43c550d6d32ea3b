// With `--api-domain k8s.io` an unmodified Kubernetes client manages
// admission (client-node's AdmissionregistrationV1Api), and a webhook gets
// `admission.k8s.io/v1` AdmissionReviews, as controller-runtime style
// webhooks expect.

import * as k8s from '@kubernetes/client-node';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdmissionWebhook, startAdmissionWebhook } from '../helpers/admission-webhook.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
let hook: AdmissionWebhook;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-admission-k8s-'));
  t = await startTestServer({ apiDomain: 'k8s.io' });
  hook = await startAdmissionWebhook(dir);
});
afterAll(async () => {
  await hook?.close();
  await t?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('admissionregistration.k8s.io/v1', () => {
  it('client-node creates a webhook configuration and a policy; the webhook sees admission.k8s.io/v1', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(t.server.kubeconfigPath);
    const ar = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
    const created = await ar.createValidatingWebhookConfiguration({
      body: {
        metadata: { name: 'k8s-hook' },
        webhooks: [{
          name: 'k8s.hook.test',
          clientConfig: { url: hook.url('/v'), caBundle: hook.caBundle },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        }],
      },
    });
    expect(created.webhooks?.[0]?.timeoutSeconds).toBe(10);
    await ar.createValidatingAdmissionPolicy({
      body: {
        metadata: { name: 'k8s-policy' },
        spec: { matchConstraints: { resourceRules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }] }, validations: [{ expression: "object.metadata.name != 'forbidden'" }] },
      },
    });
    await ar.createValidatingAdmissionPolicyBinding({ body: { metadata: { name: 'k8s-binding' }, spec: { policyName: 'k8s-policy', validationActions: ['Deny'] } } });
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'fine' }, data: {} } });
    expect(hook.seen).toHaveLength(1);
    expect(hook.seen[0]!.review.apiVersion).toBe('admission.k8s.io/v1');
    await expect(core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'forbidden' }, data: {} } })).rejects.toMatchObject({ code: 422 });
    const list = await ar.listValidatingAdmissionPolicy();
    expect(list.items.map((p) => p.metadata?.name)).toEqual(['k8s-policy']);
  });
});
