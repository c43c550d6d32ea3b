// The DefaultStorageClass and DefaultIngressClass admission plugins on a real
// server: a new claim or Ingress that names no class gets the default one
// (the newest of several), one that names a class (even "") keeps it.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_WORKLOAD_CONTROLLERS, type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
const NS = '/api/v1/namespaces/default';

beforeAll(async () => {
  t = await startTestServer({ authn: NO_WORKLOAD_CONTROLLERS });
});
afterAll(async () => {
  await t?.stop();
});

async function create(path: string, body: Record<string, unknown>): Promise<Record<string, any>> {
  const r = await t.request('POST', path, { body });
  expect(r.status, r.text).toBe(201);
  return r.json();
}

const claim = (name: string, spec: Record<string, unknown> = {}, annotations?: Record<string, string>) => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, ...(annotations ? { annotations } : {}) },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec },
});
const storageClass = (name: string, isDefault: boolean) => ({
  apiVersion: 'storage.orch.io/v1', kind: 'StorageClass', provisioner: 'example.com/none',
  metadata: { name, ...(isDefault ? { annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } } : {}) },
});

describe('default classes', () => {
  it('a claim without a class gets the default StorageClass; "" and named classes stay', async () => {
    expect((await create(`${NS}/persistentvolumeclaims`, claim('before'))).spec.storageClassName).toBeUndefined();
    await create('/apis/storage.orch.io/v1/storageclasses', storageClass('plain', false));
    await create('/apis/storage.orch.io/v1/storageclasses', storageClass('standard', true));
    expect((await create(`${NS}/persistentvolumeclaims`, claim('defaulted'))).spec.storageClassName).toBe('standard');
    expect((await create(`${NS}/persistentvolumeclaims`, claim('none', { storageClassName: '' }))).spec.storageClassName).toBe('');
    expect((await create(`${NS}/persistentvolumeclaims`, claim('named', { storageClassName: 'plain' }))).spec.storageClassName).toBe('plain');
    const beta = await create(`${NS}/persistentvolumeclaims`, claim('beta', {}, { 'volume.beta.kubernetes.io/storage-class': 'plain' }));
    expect(beta.spec.storageClassName).toBeUndefined();
  });

  it('an Ingress without a class gets the default IngressClass, the newest of several', async () => {
    const ingressClass = (name: string) => ({
      apiVersion: 'networking.orch.io/v1', kind: 'IngressClass', metadata: { name, annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } }, spec: { controller: 'example.com/ingress' },
    });
    const ingress = (name: string, extra: Record<string, unknown> = {}, annotations?: Record<string, string>) => ({
      apiVersion: 'networking.orch.io/v1', kind: 'Ingress', metadata: { name, ...(annotations ? { annotations } : {}) },
      spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } }, ...extra },
    });
    const path = '/apis/networking.orch.io/v1/namespaces/default/ingresses';
    await create('/apis/networking.orch.io/v1/ingressclasses', ingressClass('a-old'));
    // creationTimestamp has second precision: the newer class must be a second younger
    await new Promise((r) => setTimeout(r, 1100));
    await create('/apis/networking.orch.io/v1/ingressclasses', ingressClass('b-new'));
    expect((await create(path, ingress('web'))).spec.ingressClassName).toBe('b-new');
    expect((await create(path, ingress('named', { ingressClassName: 'a-old' }))).spec.ingressClassName).toBe('a-old');
    expect((await create(path, ingress('legacy', {}, { 'kubernetes.io/ingress.class': 'nginx' }))).spec.ingressClassName).toBeUndefined();
  });
});
