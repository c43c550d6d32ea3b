// What Kubernetes' sig-node e2e tests of ConfigMaps, Secrets and PodTemplates
// check on the API (test/e2e/common/node/configmap.go, secrets.go,
// podtemplates.go), on orch with kube's group names: an empty data key is
// refused; a ConfigMap's update, and its lifecycle (strategic patch of labels
// and data, a list in all namespaces by label, deleteCollection); a Secret's
// strategic patch of labels and base64 data, then deleteCollection; a
// PodTemplate's lifecycle, deleteCollection, and replace with an annotation;
// and a fake Node's lifecycle (test/e2e/node/node_lifecycle.go).

import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { type Obj, type TestServer, call, listItems, newNamespace, useKubeServer } from '../helpers/kube-e2e.js';

let t: TestServer;
useKubeServer((s) => (t = s));

const STRATEGIC = 'application/strategic-merge-patch+json';
const CMS = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
const SECRETS = (ns: string) => `/api/v1/namespaces/${ns}/secrets`;
const PTS = (ns: string) => `/api/v1/namespaces/${ns}/podtemplates`;
const sel = (s: string) => `?labelSelector=${encodeURIComponent(s)}`;
const b64 = (s: string) => Buffer.from(s).toString('base64');
const uid = () => crypto.randomUUID();

/** kube's newConfigMap */
const newConfigMap = (name: string): Obj => ({
  apiVersion: 'v1', kind: 'ConfigMap', metadata: { name },
  data: { 'data-1': 'value-1', 'data-2': 'value-2', 'data-3': 'value-3' },
});

describe('[sig-node] ConfigMap', () => {
  it('should fail to create ConfigMap with empty key [Conformance]', async () => {
    const ns = await newNamespace(t, 'configmap');
    // kube's name here ("configmap-test-emptyKey-…") is itself invalid; a valid one isolates the key's check
    for (const name of [`configmap-test-emptyKey-${uid()}`, `configmap-test-emptykey-${uid()}`]) {
      const r = await t.request('POST', CMS(ns), { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { '': 'value-1' } } });
      expect(r.status, r.text).toBe(422);
      expect(r.text).toContain('a valid config key must consist of alphanumeric characters');
    }
    const r = await t.request('POST', CMS(ns), { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bin-empty' }, binaryData: { '': b64('x') } } });
    expect(r.status, r.text).toBe(422);
  });

  it('should update ConfigMap successfully', async () => {
    const ns = await newNamespace(t, 'configmap');
    const name = `configmap-test-${uid()}`;
    const cm = newConfigMap(name);
    await call(t, 'POST', CMS(ns), cm, undefined, 201);
    // Update of the object as the test built it: no resourceVersion (an unconditional update)
    cm.data = { data: 'value' };
    await call(t, 'PUT', `${CMS(ns)}/${name}`, cm, undefined, 200);
    expect((await call(t, 'GET', `${CMS(ns)}/${name}`)).data).toEqual({ data: 'value' });
  });

  it('should run through a ConfigMap lifecycle [Conformance]', async () => {
    const ns = await newNamespace(t, 'configmap');
    const name = `test-configmap${uid()}`;
    await call(t, 'POST', CMS(ns), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { 'test-configmap-static': 'true' } }, data: { valueName: 'value' } }, undefined, 201);
    const got = await call(t, 'GET', `${CMS(ns)}/${name}`);
    expect(got.data.valueName).toBe('value');
    expect(got.metadata.labels['test-configmap-static']).toBe('true');

    // a marshalled ConfigMap as a strategic merge patch
    await call(t, 'PATCH', `${CMS(ns)}/${name}`, { metadata: { labels: { 'test-configmap': 'patched' }, creationTimestamp: null }, data: { valueName: 'value1' } }, STRATEGIC);
    const found = (await listItems(t, `/api/v1/configmaps${sel('test-configmap=patched')}`)).find((cm) =>
      cm.metadata.name === name && cm.metadata.namespace === ns && cm.metadata.labels['test-configmap-static'] === 'true' &&
      cm.metadata.labels['test-configmap'] === 'patched' && cm.data.valueName === 'value1');
    expect(found, 'the patched ConfigMap by label selector').toBeDefined();

    await call(t, 'DELETE', `${CMS(ns)}${sel('test-configmap-static=true')}`);
    expect(await listItems(t, `${CMS(ns)}${sel('test-configmap-static=true')}`)).toHaveLength(0);
  });
});

describe('[sig-node] Secrets', () => {
  it('should fail to create secret due to empty secret key [Conformance]', async () => {
    const ns = await newNamespace(t, 'secrets');
    const r = await t.request('POST', SECRETS(ns), { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: `secret-emptykey-test-${uid()}` }, data: { '': b64('value-1\n') } } });
    expect(r.status, r.text).toBe(422);
    expect(r.json<Obj>().details.causes).toContainEqual(expect.objectContaining({ field: 'data[]' }));
  });

  it('should patch a secret [Conformance]', async () => {
    const ns = await newNamespace(t, 'secrets');
    const name = `test-secret-${uid()}`;
    const created = await call(t, 'POST', SECRETS(ns), { apiVersion: 'v1', kind: 'Secret', metadata: { name, labels: { 'testsecret-constant': 'true' } }, data: { key: b64('value') }, type: 'Opaque' }, undefined, 201);
    expect(created.metadata.resourceVersion).toMatch(/^\d+$/);

    const listed = await listItems(t, `/api/v1/secrets${sel('testsecret-constant=true')}`);
    expect(listed.length).not.toBe(0);
    expect(listed.find((s) => s.metadata.name === name && s.metadata.namespace === ns && s.data.key === b64('value'))).toBeDefined();

    await call(t, 'PATCH', `${SECRETS(ns)}/${name}`, { metadata: { labels: { testsecret: 'true' } }, data: { key: b64('value1') } }, STRATEGIC);
    const patched = await call(t, 'GET', `${SECRETS(ns)}/${name}`);
    expect(Buffer.from(patched.data.key as string, 'base64').toString()).toBe('value1');
    expect(patched.metadata.labels.testsecret).toBe('true');

    await call(t, 'DELETE', `${SECRETS(ns)}${sel('testsecret-constant=true')}`);
    const after = await listItems(t, `/api/v1/secrets${sel('testsecret-constant=true')}`);
    expect(after.find((s) => s.metadata.name === name && s.metadata.namespace === ns)).toBeUndefined();
  });
});

describe('[sig-node] PodTemplates', () => {
  const template = (name: string, labels: Record<string, string> | undefined, container: string, image: string): Obj => ({
    apiVersion: 'v1', kind: 'PodTemplate', metadata: { name, ...(labels ? { labels } : {}) },
    template: { spec: { containers: [{ name: container, image }] } },
  });
  const AGNHOST = 'registry.k8s.io/e2e-test-images/agnhost:2.53';

  it('should run the lifecycle of PodTemplates [Conformance]', async () => {
    const ns = await newNamespace(t, 'podtemplate');
    const name = `nginx-pod-template-${uid()}`;
    expect(await listItems(t, `/api/v1/podtemplates${sel('podtemplate-static=true')}`)).toHaveLength(0);
    await call(t, 'POST', PTS(ns), template(name, { 'podtemplate-static': 'true' }, 'nginx', 'nginx'), undefined, 201);
    expect((await call(t, 'GET', `${PTS(ns)}/${name}`)).metadata.name).toBe(name);

    await call(t, 'PATCH', `${PTS(ns)}/${name}`, { metadata: { labels: { podtemplate: 'patched' } } }, STRATEGIC);
    expect((await call(t, 'GET', `${PTS(ns)}/${name}`)).metadata.labels.podtemplate).toBe('patched');

    await call(t, 'DELETE', `${PTS(ns)}/${name}`);
    expect(await listItems(t, `/api/v1/podtemplates${sel('podtemplate-static=true')}`)).toHaveLength(0);
  });

  it('should delete a collection of pod templates [Conformance]', async () => {
    const ns = await newNamespace(t, 'podtemplate');
    const names = ['test-podtemplate-1', 'test-podtemplate-2', 'test-podtemplate-3'];
    for (const name of names) await call(t, 'POST', PTS(ns), template(name, { 'podtemplate-set': 'true' }, 'token-test', AGNHOST), undefined, 201);
    expect(await listItems(t, `${PTS(ns)}${sel('podtemplate-set=true')}`)).toHaveLength(names.length);
    await call(t, 'DELETE', `${PTS(ns)}${sel('podtemplate-set=true')}`);
    expect(await listItems(t, `${PTS(ns)}${sel('podtemplate-set=true')}`)).toHaveLength(0);
  });

  it('should replace a pod template [Conformance]', async () => {
    const ns = await newNamespace(t, 'podtemplate');
    const name = `podtemplate-${Math.random().toString(36).slice(2, 7)}`;
    await call(t, 'POST', PTS(ns), template(name, undefined, 'e2e-test', AGNHOST), undefined, 201);
    const cur = await call(t, 'GET', `${PTS(ns)}/${name}`);
    cur.metadata.annotations = { updated: 'true' };
    const updated = await call(t, 'PUT', `${PTS(ns)}/${name}`, cur);
    expect(updated.metadata.annotations).toEqual({ updated: 'true' });
  });
});

describe('[sig-node] Node Lifecycle', () => {
  it('should run through the lifecycle of a node [Conformance]', async () => {
    const nodes = '/api/v1/nodes';
    const name = `e2e-fake-node-${Math.random().toString(36).slice(2, 7)}`;
    // ready but unschedulable, so that nothing is scheduled onto it
    const created = await call(t, 'POST', nodes, {
      apiVersion: 'v1', kind: 'Node', metadata: { name }, spec: { unschedulable: true },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', reason: 'E2E', message: 'Set from e2e test' }] },
    });
    expect(created.metadata.name).toBe(name);
    expect(created.metadata.resourceVersion).toMatch(/^[1-9][0-9]*$/);
    expect((await call(t, 'GET', `${nodes}/${name}`)).metadata.name).toBe(name);
    const patched = await call(t, 'PATCH', `${nodes}/${name}`, { metadata: { labels: { [name]: 'patched' } } }, STRATEGIC);
    expect(patched.metadata.labels[name]).toBe('patched');
    expect(BigInt(patched.metadata.resourceVersion)).toBeGreaterThan(BigInt(created.metadata.resourceVersion));
    expect(await listItems(t, `${nodes}${sel(`${name}=patched`)}`)).toHaveLength(1);
    // retry.RetryOnConflict: the node lifecycle controller may write the node meanwhile
    const updated = await eventually(async () => {
      const cur = await call(t, 'GET', `${nodes}/${name}`);
      cur.metadata.labels[name] = 'updated';
      const r = await t.request('PUT', `${nodes}/${name}`, { body: cur });
      return r.status === 409 ? undefined : r.json<Obj>();
    }, `update of ${name}`);
    expect(updated.metadata.labels[name]).toBe('updated');
    await call(t, 'DELETE', `${nodes}/${name}`);
    await eventually(async () => (await t.request('GET', `${nodes}/${name}`)).status === 404, `${name} deleted`);
  });
});
