// Ports of Kubernetes 1.32's conformance tests "CustomResourceConversionWebhook
// [Privileged:ClusterAdmin]" (test/e2e/apimachinery/crd_conversion_webhook.go):
// a CRD of two versions (v1 `hostPort`, v2 `host` + `port`) converted by a
// webhook reached through a Service reference with a caBundle, as agnhost's
// crd-conversion-webhook converts.
//
// Differences from kube: the webhook runs in the test process (not in a pod
// of a Deployment), its Service (with Endpoints to the loopback address) lives
// in one namespace for the whole file, because its serving certificate must
// name `<service>.<namespace>.svc`, made once; kube's role binding for the
// webhook's authentication reader is not needed.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AdmissionWebhook, startAdmissionWebhook } from '../helpers/admission-webhook.js';
import { hostPortVersions, serveConversion } from '../helpers/conversion-webhook.js';
import { eventually } from '../helpers/eventually.js';
import { exposeWebhookService } from '../helpers/kube-e2e-webhook.js';
import { CRDS, type Obj, type TestServer, call, createCrdAndWait, deleteCrdAndWait, generateName, newNamespace, useKubeServer } from '../helpers/kube-e2e.js';

const SERVICE = 'e2e-test-crd-conversion-webhook';
const SERVICE_NS = 'e2e-crd-conversion-service';
const SERVICE_PORT = 9443;
const GROUP = 'stable.example.com';

let t: TestServer;
let hook: AdmissionWebhook;
let dir: string;
useKubeServer((s) => (t = s));

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-e2e-crd-conversion-'));
  hook = await startAdmissionWebhook(dir, [`${SERVICE}.${SERVICE_NS}.svc`]);
  serveConversion(hook, '/crdconvert');
  await exposeWebhookService(t, hook, { namespace: SERVICE_NS, name: SERVICE, port: SERVICE_PORT, targetPort: 9444, labels: { test: 'crd-webhook' } });
});

afterAll(async () => {
  await hook?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** crd.CreateMultiVersionTestCRD with the test's versions and webhook conversion */
async function createTestCrd(): Promise<Obj> {
  const base = generateName('e2e-test-crd-webhook-');
  const kind = `E${base.slice(1)}-crd`;
  return createCrdAndWait(t, {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${base}-crds.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: `${base}-crds`, singular: `${base}-crd`, kind, listKind: `${kind}List` },
      versions: hostPortVersions('v1'),
      conversion: {
        strategy: 'Webhook',
        webhook: {
          clientConfig: { caBundle: hook.caBundle, service: { namespace: SERVICE_NS, name: SERVICE, path: '/crdconvert', port: SERVICE_PORT } },
          conversionReviewVersions: ['v1', 'v1beta1'],
        },
      },
      preserveUnknownFields: false,
    },
  });
}

const crPath = (crd: Obj, version: string, ns: string, name?: string): string => `/apis/${GROUP}/${version}/namespaces/${ns}/${crd.spec.names.plural}${name ? `/${name}` : ''}`;

/** waitWebhookConversionReady: stub creates in `version` until one succeeds, then deleted */
async function waitWebhookConversionReady(crd: Obj, ns: string, version: string): Promise<void> {
  const name = generateName('stub-');
  await eventually(async () => {
    const r = await t.request('POST', crPath(crd, version, ns), { body: { kind: crd.spec.names.kind, apiVersion: `${GROUP}/${version}`, metadata: { name, namespace: ns } } });
    return r.status === 201;
  }, 'conversion ready');
  await call(t, 'DELETE', crPath(crd, version, ns, name));
}

function instance(crd: Obj, ns: string, name: string): Obj {
  return { kind: crd.spec.names.kind, apiVersion: `${GROUP}/v1`, metadata: { name, namespace: ns }, hostPort: 'localhost:8080' };
}

function verifyV1Object(o: Obj): void {
  expect(o.apiVersion).toBe(`${GROUP}/v1`);
  expect(o.hostPort).toBe('localhost:8080');
  expect(o).not.toHaveProperty('host');
  expect(o).not.toHaveProperty('port');
}

function verifyV2Object(o: Obj): void {
  expect(o.apiVersion).toBe(`${GROUP}/v2`);
  expect(o).not.toHaveProperty('hostPort');
  expect(o.host).toBe('localhost');
  expect(o.port).toBe('8080');
}

describe('CustomResourceConversionWebhook [Privileged:ClusterAdmin]', () => {
  it.concurrent('should be able to convert from CR v1 to CR v2', async () => {
    const ns = await newNamespace(t, 'crd-webhook');
    const crd = await createTestCrd();
    try {
      await waitWebhookConversionReady(crd, ns, 'v2');
      await call(t, 'POST', crPath(crd, 'v1', ns), instance(crd, ns, 'cr-instance-1'), undefined, 201);
      verifyV2Object(await call(t, 'GET', crPath(crd, 'v2', ns, 'cr-instance-1')));
    } finally {
      await deleteCrdAndWait(t, crd.metadata.name);
    }
  });

  it.concurrent('should be able to convert a non homogeneous list of CRs', async () => {
    const ns = await newNamespace(t, 'crd-webhook');
    let crd = await createTestCrd();
    try {
      await waitWebhookConversionReady(crd, ns, 'v2');
      await call(t, 'POST', crPath(crd, 'v1', ns), instance(crd, ns, 'cr-instance-1'), undefined, 201);
      // cr-instance-1 is stored as v1; the storage version becomes v2 (kube's alternativeAPIVersions)
      crd = await call(t, 'GET', `${CRDS}/${crd.metadata.name}`);
      crd.spec.versions = hostPortVersions('v2');
      crd = await call(t, 'PUT', `${CRDS}/${crd.metadata.name}`, crd);
      // kube retries the create: the new storage version takes effect shortly after the update
      await eventually(async () => (await t.request('POST', crPath(crd, 'v1', ns), { body: instance(crd, ns, 'cr-instance-2') })).status === 201, 'cr-instance-2 created');
      for (const [version, verify] of [['v1', verifyV1Object], ['v2', verifyV2Object]] as const) {
        const list = await call(t, 'GET', crPath(crd, version, ns));
        expect(list.items).toHaveLength(2);
        expect(list.items.map((o: Obj) => o.metadata.name).sort()).toEqual(['cr-instance-1', 'cr-instance-2']);
        for (const o of list.items as Obj[]) verify(o);
      }
    } finally {
      await deleteCrdAndWait(t, crd.metadata.name);
    }
  });
});
