// Kubernetes' e2e "[sig-api-machinery] CustomResourceDefinition resources"
// and "CustomResourceDefinition Watch" tests
// (test/e2e/apimachinery/custom_resource_definition.go, crd_watch.go) on a
// started orch server with kube's group names: creating and deleting CRDs
// (Established, NamesAccepted), listing them by label and deleting the
// collection, the status sub-resource (get, update, JSON patch), the CRD
// group in discovery, defaulting on requests and from storage as the schema's
// defaults change, and watches of custom resources by field selector.

import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import {
  CRDS, type Obj, type TestServer, call, createCrdAndWait, crPath, deleteCrdAndWait, generateName, getOrUndefined, listItems, noxuCrd,
  noxuInstance, randomNameCrd, useKubeServer,
} from '../helpers/kube-e2e.js';
import { type WatchStream, openWatch } from '../helpers/watch-stream.js';

let t: TestServer;
useKubeServer((s) => (t = s));

const JSON_PATCH = 'application/json-patch+json';
const condition = (crd: Obj, type: string): Obj | undefined => (crd.status?.conditions as Obj[] | undefined)?.find((c) => c.type === type);

describe('CustomResourceDefinition resources (custom_resource_definition.go)', () => {
  it('[Conformance] Simple CustomResourceDefinition creating/deleting custom resource definition objects works', async () => {
    const crd = await createCrdAndWait(t, randomNameCrd('Cluster'));
    expect(condition(crd, 'NamesAccepted')).toMatchObject({ status: 'True', reason: 'NoConflicts', message: 'no conflicts found' });
    expect(condition(crd, 'Established')).toMatchObject({ status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' });
    expect(crd.status.acceptedNames).toMatchObject({ plural: crd.spec.names.plural, kind: crd.spec.names.kind, singular: crd.spec.names.singular, listKind: crd.spec.names.listKind });
    expect(crd.status.storedVersions).toEqual(['v1beta1']);
    await deleteCrdAndWait(t, crd.metadata.name);
    expect((await t.request('GET', crPath(crd))).status).toBe(404);
  });

  it('[Conformance] Simple CustomResourceDefinition listing custom resource definition objects works', async () => {
    const uuid = crypto.randomUUID();
    const created: Obj[] = [];
    for (let i = 0; i < 10; i++) {
      const crd = randomNameCrd('Cluster');
      crd.metadata.labels = { 'e2e-list-test-uuid': uuid };
      created.push(await createCrdAndWait(t, crd));
    }
    const other = await createCrdAndWait(t, randomNameCrd('Cluster'));
    const selector = `labelSelector=${encodeURIComponent(`e2e-list-test-uuid=${uuid}`)}`;
    const list = await listItems(t, `${CRDS}?${selector}`);
    expect(list).toHaveLength(10);
    for (const actual of list) {
      const expected = created.find((c) => c.metadata.name === actual.metadata.name);
      expect(expected).toBeDefined();
      expect(actual.spec).toEqual(expected!.spec);
    }
    await call(t, 'DELETE', `${CRDS}?${selector}`);
    await eventually(async () => (await listItems(t, `${CRDS}?${selector}`)).length === 0, 'labelled CRDs deleted');
    expect(await getOrUndefined(t, `${CRDS}/${other.metadata.name}`)).toBeDefined();
    await deleteCrdAndWait(t, other.metadata.name);
  });

  it('[Conformance] Simple CustomResourceDefinition getting/updating/patching custom resource definition status sub-resource works', async () => {
    const crd = await createCrdAndWait(t, randomNameCrd('Cluster'));
    const status = await call(t, 'GET', `${CRDS}/${crd.metadata.name}/status`);
    expect(status.spec).toEqual(crd.spec);
    const updateCondition = { message: 'updated' };
    status.status.conditions.push(updateCondition);
    const updated = await call(t, 'PUT', `${CRDS}/${crd.metadata.name}/status`, status);
    // the condition comes back as sent (kube's expectCondition: semantic equality, no defaults added)
    expect(updated.status.conditions).toContainEqual(updateCondition);
    const patched = await call(t, 'PATCH', `${CRDS}/${crd.metadata.name}/status`, [{ op: 'add', path: '/status/conditions', value: [{ message: 'patched' }] }], JSON_PATCH);
    expect(patched.status.conditions).toContainEqual({ message: 'patched' });
    await deleteCrdAndWait(t, crd.metadata.name);
  });

  it('[Conformance] should include custom resource definition resources in discovery documents', async () => {
    const groups = (await call(t, 'GET', '/apis')).groups as Obj[];
    const group = groups.find((g) => g.name === 'apiextensions.k8s.io');
    expect(group).toBeDefined();
    expect((group!.versions as Obj[]).some((v) => v.version === 'v1')).toBe(true);
    const g = await call(t, 'GET', '/apis/apiextensions.k8s.io');
    expect(g.name).toBe('apiextensions.k8s.io');
    expect((g.versions as Obj[]).some((v) => v.version === 'v1')).toBe(true);
    const rl = await call(t, 'GET', '/apis/apiextensions.k8s.io/v1');
    expect(rl.groupVersion).toBe('apiextensions.k8s.io/v1');
    expect((rl.resources as Obj[]).some((r) => r.name === 'customresourcedefinitions')).toBe(true);
  });

  it('[Conformance] custom resource defaulting for requests and from storage works', async () => {
    const def = randomNameCrd('Cluster');
    def.spec.versions[0].schema.openAPIV3Schema.properties = { a: { type: 'string' }, b: { type: 'string' } };
    const crd = await createCrdAndWait(t, def);
    const path = crPath(crd);
    const apiVersion = `${crd.spec.group}/${crd.spec.versions[0].name}`;
    const name1 = generateName('cr-1');
    await call(t, 'POST', path, { apiVersion, kind: crd.spec.names.kind, metadata: { name: name1 } }, undefined, 201);
    // a default for a: objects read from storage get it
    await call(t, 'PATCH', `${CRDS}/${crd.metadata.name}`, [{ op: 'add', path: '/spec/versions/0/schema/openAPIV3Schema/properties/a/default', value: 'A' }], JSON_PATCH);
    await eventually(async () => (await call(t, 'GET', `${path}/${name1}`)).a === 'A', 'cr-1 defaulted on read');
    // a list reads it defaulted too
    expect((await listItems(t, path)).find((o) => o.metadata.name === name1)?.a).toBe('A');
    // a new object gets it in the request
    const name2 = generateName('cr-2');
    const u2 = await call(t, 'POST', path, { apiVersion, kind: crd.spec.names.kind, metadata: { name: name2 } }, undefined, 201);
    expect(u2.a).toBe('A');
    // the default of a goes, one for b comes: a stays as stored, b is defaulted on read
    await call(t, 'PATCH', `${CRDS}/${crd.metadata.name}`, [
      { op: 'remove', path: '/spec/versions/0/schema/openAPIV3Schema/properties/a/default' },
      { op: 'add', path: '/spec/versions/0/schema/openAPIV3Schema/properties/b/default', value: 'B' },
    ], JSON_PATCH);
    await eventually(async () => {
      const o = await call(t, 'GET', `${path}/${name2}`);
      if (o.b !== 'B') return false;
      expect(o.a).toBe('A');
      return true;
    }, 'cr-2 defaulted on read for b, a unchanged');
    await deleteCrdAndWait(t, crd.metadata.name);
  });
});

describe('CustomResourceDefinition Watch (crd_watch.go)', () => {
  it('[Conformance] CustomResourceDefinition Watch watch on custom resource definition objects', async () => {
    const crd = await createCrdAndWait(t, noxuCrd('Cluster'));
    const path = crPath(crd);
    const watchOf = (name: string): WatchStream =>
      openWatch(t.server, `${path}?watch=true&fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}&timeoutSeconds=600`);
    const watchA = watchOf('name1');
    const watchB = watchOf('name2');
    const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 200));
    try {
      await Promise.all([watchA.response, watchB.response].map((p) => Promise.race([p, settle()])));
      const expectEvent = async (w: WatchStream, n: number, type: string, name: string): Promise<void> => {
        const evs = await w.waitFor(n);
        expect(evs[n - 1]).toMatchObject({ type, object: { metadata: { name } } });
      };
      const created = await call(t, 'POST', path, noxuInstance('name1'), undefined, 201);
      expect(created.metadata.uid).toBeTruthy();
      expect(created).toMatchObject({ apiVersion: 'mygroup.example.com/v1beta1', kind: 'WishIHadChosenNoxu' });
      await expectEvent(watchA, 1, 'ADDED', 'name1');
      await call(t, 'POST', path, noxuInstance('name2'), undefined, 201);
      await expectEvent(watchB, 1, 'ADDED', 'name2');
      await call(t, 'PATCH', `${path}/name1`, [{ op: 'add', path: '/dummy', value: 'test' }], JSON_PATCH);
      await expectEvent(watchA, 2, 'MODIFIED', 'name1');
      await call(t, 'PATCH', `${path}/name2`, [{ op: 'add', path: '/dummy', value: 'test' }], JSON_PATCH);
      await expectEvent(watchB, 2, 'MODIFIED', 'name2');
      await call(t, 'DELETE', `${path}/name1`);
      await expectEvent(watchA, 3, 'DELETED', 'name1');
      await call(t, 'DELETE', `${path}/name2`);
      await expectEvent(watchB, 3, 'DELETED', 'name2');
      await settle();
      // each watch saw only its own object's events
      expect(watchA.events.map((e) => e.object.metadata?.name)).toEqual(['name1', 'name1', 'name1']);
      expect(watchB.events.map((e) => e.object.metadata?.name)).toEqual(['name2', 'name2', 'name2']);
    } finally {
      watchA.close();
      watchB.close();
    }
    await deleteCrdAndWait(t, crd.metadata.name);
  });
});
