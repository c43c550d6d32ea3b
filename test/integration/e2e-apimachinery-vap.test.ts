// Port of Kubernetes' ValidatingAdmissionPolicy conformance tests
// (test/e2e/apimachinery/validatingadmissionpolicy.go, [sig-api-machinery]
// ValidatingAdmissionPolicy [Privileged:ClusterAdmin]): validating a
// Deployment (a ReplicaSet is not matched), expressions referring to
// variables, and the API operations of policies (with /status) and
// bindings. Not ported: "should type check validation expressions" and
// "should type check a CRD" — orch does not write status.typeChecking
// (docs/admission.md "Not done").

import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { type Obj, type TestServer, call, deleteOneThenCollection, listItems, newNamespace, useKubeServer } from '../helpers/kube-e2e.js';
import { AR, labelNamespace } from '../helpers/kube-e2e-webhook.js';
import { openWatch } from '../helpers/watch-stream.js';

let t: TestServer;
useKubeServer((s) => (t = s));

const VAP = `${AR}/validatingadmissionpolicies`;
const VAPB = `${AR}/validatingadmissionpolicybindings`;

/** the namespace labelled with its unique name, as the test's BeforeEach does */
async function uniqueNamespace(): Promise<string> {
  const ns = await newNamespace(t, 'validating-admission-policy');
  await labelNamespace(t, ns, { [ns]: 'true' });
  return ns;
}

/** newValidatingAdmissionPolicyBuilder(...).MatchUniqueNamespace(unique) with one rule on apps/v1 deployments, CREATE and UPDATE */
const policy = (name: string, unique: string, spec: Obj): Obj => ({
  metadata: { name },
  spec: {
    matchConstraints: {
      namespaceSelector: { matchLabels: { [unique]: 'true' } },
      resourceRules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }],
    },
    ...spec,
  },
});
/** createBinding */
const binding = (name: string, unique: string, policyName: string): Obj => ({
  metadata: { name },
  spec: { policyName, matchResources: { namespaceSelector: { matchLabels: { [unique]: 'true' } } }, validationActions: ['Deny'] },
});

const template = { metadata: { labels: { app: 'nginx' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:latest' }] } };
/** basicDeployment / basicReplicaSet */
const workload = (kind: 'Deployment' | 'ReplicaSet', name: string, replicas: number): Obj => ({
  apiVersion: 'apps/v1',
  kind,
  metadata: { name, labels: { app: 'nginx' } },
  spec: { replicas, selector: { matchLabels: { app: 'nginx' } }, template },
});

/** the policy and binding in force: a one-replica marker Deployment is refused as Invalid */
async function createPolicyAndWaitForMarker(ns: string, spec: Obj): Promise<void> {
  const p = await call(t, 'POST', VAP, policy(`${ns}.policy.example.com`, ns, spec), undefined, 201);
  await call(t, 'POST', VAPB, binding(`${ns}.binding.example.com`, ns, p.metadata.name), undefined, 201);
  await eventually(async () => {
    const r = await t.request('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, { body: workload('Deployment', 'marker-deployment', 1) });
    await t.request('DELETE', `/apis/apps/v1/namespaces/${ns}/deployments/marker-deployment`);
    if (r.status < 300) return false;
    expect(r.status, r.text).toBe(422);
    expect(r.json<Obj>().reason).toBe('Invalid');
    return true;
  }, 'the marker deployment denied');
}

/** a replicated Deployment is allowed, a one-replica ReplicaSet is not matched */
async function expectAllowed(ns: string, replicas: number): Promise<void> {
  await call(t, 'POST', `/apis/apps/v1/namespaces/${ns}/deployments`, workload('Deployment', 'replicated', replicas));
  await call(t, 'POST', `/apis/apps/v1/namespaces/${ns}/replicasets`, workload('ReplicaSet', 'non-replicated', 1));
}

/**
 * the API-operations tests: three objects by generateName, get, list, watch from the
 * list, merge patch and update (both seen by the watch), delete one, delete the rest
 */
async function apiOperations(collection: string, body: Obj, patch: Obj, update: (o: Obj) => void, check: (patched: Obj, updated: Obj) => void): Promise<Obj> {
  const labelValue = Math.random().toString(36).slice(2, 10);
  const label = `example-e2e-label=${labelValue}`;
  const tmpl = { ...body, metadata: { generateName: 'e2e-example-', labels: { 'example-e2e-label': labelValue } } };
  await call(t, 'POST', collection, tmpl, undefined, 201);
  await call(t, 'POST', collection, tmpl, undefined, 201);
  const created = await call(t, 'POST', collection, tmpl, undefined, 201);
  const path = `${collection}/${created.metadata.name}`;
  expect((await call(t, 'GET', path)).metadata.uid).toBe(created.metadata.uid);

  const list = await call(t, 'GET', `${collection}?labelSelector=${encodeURIComponent(label)}`);
  expect(list.items).toHaveLength(3);
  const w = openWatch(t.server, `${collection}?watch=true&resourceVersion=${list.metadata.resourceVersion}&labelSelector=${encodeURIComponent(label)}`);
  try {
    const patched = await call(t, 'PATCH', path, { metadata: { annotations: { patched: 'true' } }, ...patch });
    expect(patched.metadata.annotations.patched).toBe('true');
    const toUpdate = await call(t, 'GET', path);
    toUpdate.metadata.annotations.updated = 'true';
    update(toUpdate);
    const updated = await call(t, 'PUT', path, toUpdate);
    expect(updated.metadata.annotations.updated).toBe('true');
    check(patched, updated);
    const ev = await w.waitUntil((e) => e.type !== 'MODIFIED' || e.object.metadata?.annotations?.patched === 'true');
    expect(ev.type).toBe('MODIFIED');
    expect([ev.object.apiVersion, ev.object.kind]).toEqual([created.apiVersion, created.kind]);
  } finally {
    w.close();
  }
  return { path, label, finish: () => deleteOneThenCollection(t, collection, path, label, 2) };
}

describe('ValidatingAdmissionPolicy [Privileged:ClusterAdmin]', () => {
  it('should validate against a Deployment [Conformance]', async () => {
    const ns = await uniqueNamespace();
    await createPolicyAndWaitForMarker(ns, {
      validations: [
        { expression: 'object.spec.replicas > 1', messageExpression: "'wants replicas > 1, got ' + object.spec.replicas" },
        { expression: `namespaceObject.metadata.name == '${ns}'`, message: 'Internal error! Other namespace should not be allowed.' },
      ],
    });
    // string + int has no overload in CEL: the messageExpression fails and kube falls back to the default message
    const r = await t.request('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, { body: workload('Deployment', 'one', 1) });
    expect(r.json<Obj>().message).toContain('denied request: failed expression: object.spec.replicas > 1');
    await expectAllowed(ns, 2);
  });

  it('should allow expressions to refer variables. [Conformance]', async () => {
    const ns = await uniqueNamespace();
    await createPolicyAndWaitForMarker(ns, {
      variables: [
        { name: 'replicas', expression: 'object.spec.replicas' },
        { name: 'oddReplicas', expression: 'variables.replicas % 2 == 1' },
      ],
      validations: [{ expression: 'variables.replicas > 1' }, { expression: 'variables.oddReplicas' }],
    });
    // two replicas pass the first validation, not the second
    expect((await t.request('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, { body: workload('Deployment', 'even', 2) })).status).toBe(422);
    await expectAllowed(ns, 3);
  });

  it('should support ValidatingAdmissionPolicy API operations [Conformance]', async () => {
    const disc = await call(t, 'GET', AR);
    const names = (disc.resources as Obj[]).map((r) => r.name);
    expect(names).toEqual(expect.arrayContaining(['validatingadmissionpolicies', 'validatingadmissionpolicies/status']));
    const spec = {
      validations: [{ expression: 'object.spec.replicas <= 100' }],
      matchConstraints: { resourceRules: [{ operations: ['CREATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }] },
    };
    const ops = await apiOperations(
      VAP,
      { spec },
      { spec: { failurePolicy: 'Ignore' } },
      (o) => (o.spec.failurePolicy = 'Fail'),
      (p, u) => expect([p.spec.failurePolicy, u.spec.failurePolicy]).toEqual(['Ignore', 'Fail']),
    );
    // /status: read, merge-patched and updated with conditions
    const status = await call(t, 'GET', `${ops.path}/status`);
    expect([status.apiVersion, status.kind]).toEqual(['admissionregistration.k8s.io/v1', 'ValidatingAdmissionPolicy']);
    const condition = (type: string): Obj => ({ type, status: 'False', reason: 'E2E', message: 'Set from an e2e test', lastTransitionTime: '2024-01-01T00:00:00Z' });
    const sp = await call(t, 'PATCH', `${ops.path}/status`, { status: { conditions: [condition('PatchStatusFailed')] } });
    expect((sp.status.conditions as Obj[]).map((c) => c.type)).toContain('PatchStatusFailed');
    const cur = await call(t, 'GET', ops.path);
    cur.status.conditions.push(condition('StatusUpdateFailed'));
    const su = await call(t, 'PUT', `${ops.path}/status`, cur);
    expect((su.status.conditions as Obj[]).map((c) => c.type)).toContain('StatusUpdateFailed');
    await ops.finish();
  });

  it('should support ValidatingAdmissionPolicyBinding API operations [Conformance]', async () => {
    expect(((await call(t, 'GET', AR)).resources as Obj[]).map((r) => r.name)).toContain('validatingadmissionpolicybindings');
    const ops = await apiOperations(
      VAPB,
      { spec: { policyName: 'replicalimit-policy.example.com', validationActions: ['Deny'] } },
      { spec: { validationActions: ['Warn'] } },
      (o) => (o.spec.validationActions = ['Deny']),
      (p, u) => expect([p.spec.validationActions, u.spec.validationActions]).toEqual([['Warn'], ['Deny']]),
    );
    await ops.finish();
    expect(await listItems(t, `${VAPB}?labelSelector=${encodeURIComponent(ops.label)}`)).toEqual([]);
  });
});
