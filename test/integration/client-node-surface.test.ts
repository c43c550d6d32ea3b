// @kubernetes/client-node 1.3.0's documented surface against a started server, used as its README,
// examples and own tests use it, with a kubeconfig loaded by `KubeConfig.loadFromFile` (client
// certificates) unless a test is about another credential: typed APIs (CRUD, the four patch kinds
// through `setHeaderOptions`, selectors, paging, resourceVersion, status, deleteCollection, dry run,
// ApiException bodies), KubernetesObjectApi over discovery (also for a CRD's objects), Watch,
// informers, Health, the review APIs and the kubeconfig credential kinds. The node streams, Cp,
// Metrics and Top need a node agent: test/nodeagent/client-node-*.test.ts.

import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { issueClientCertificate, loadPki } from '../../src/server/pki.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { NO_NAMESPACE_DEFAULTS, NO_WORKLOAD_CONTROLLERS, type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
let kc: k8s.KubeConfig;
let core: k8s.CoreV1Api;
let apps: k8s.AppsV1Api;
let dir: string;

beforeAll(async () => {
  // no controllers writing into the test's objects or namespaces (status, kube-root-ca.crt): the answers are exact
  t = await startTestServer({ apiDomain: 'k8s.io', authn: { controllers: [...NO_WORKLOAD_CONTROLLERS.controllers, ...NO_NAMESPACE_DEFAULTS.controllers.slice(1)] } });
  dir = await mkdtemp(join(tmpdir(), 'orch-client-node-'));
  kc = new k8s.KubeConfig();
  kc.loadFromFile(t.server.kubeconfigPath);
  core = kc.makeApiClient(k8s.CoreV1Api);
  apps = kc.makeApiClient(k8s.AppsV1Api);
});

afterAll(async () => {
  await t?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

let seq = 0;
/** a fresh namespace per test, as the library's users give each app one */
async function newNamespace(base: string): Promise<string> {
  const name = `${base}-${++seq}`;
  await core.createNamespace({ body: { metadata: { name } } });
  return name;
}

/** the ApiException a call rejects with, its Status body parsed (the library hands it over as text) */
async function apiError(p: Promise<unknown>): Promise<{ code: number; status: k8s.V1Status }> {
  try {
    await p;
  } catch (e) {
    if (!(e instanceof k8s.ApiException)) throw e;
    const body = e.body as unknown;
    return { code: e.code, status: (typeof body === 'string' && body !== '' ? JSON.parse(body) : body) as k8s.V1Status };
  }
  throw new Error('the call succeeded');
}

const as = (contentType: k8s.PatchStrategy) => k8s.setHeaderOptions('Content-Type', contentType);

function deployment(name: string, labels: Record<string, string> = { app: name }): k8s.V1Deployment {
  return {
    metadata: { name, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] } },
    },
  };
}

describe('typed APIs', () => {
  it.concurrent('create, read, replace and delete a ConfigMap; the answers are the stored objects', async ({ expect }) => {
    const namespace = await newNamespace('crud');
    const created = await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'cm', labels: { a: '1' } }, data: { k: 'v' } } });
    expect(created).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace, labels: { a: '1' } }, data: { k: 'v' } });
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata?.creationTimestamp).toBeInstanceOf(Date);
    const read = await core.readNamespacedConfigMap({ namespace, name: 'cm' });
    expect(read.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);
    const replaced = await core.replaceNamespacedConfigMap({ namespace, name: 'cm', body: { ...read, data: { k: 'w' } } });
    expect(replaced.data).toEqual({ k: 'w' });
    expect(Number(replaced.metadata?.resourceVersion)).toBeGreaterThan(Number(read.metadata?.resourceVersion));
    // a replace with the old resourceVersion is a 409 Conflict, its Status as kube-apiserver words it
    const stale = await apiError(core.replaceNamespacedConfigMap({ namespace, name: 'cm', body: { ...read, data: { k: 'x' } } }));
    expect(stale.code).toBe(409);
    expect(stale.status).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'Conflict',
      code: 409,
      details: { name: 'cm', kind: 'configmaps' },
      message: 'Operation cannot be fulfilled on configmaps "cm": the object has been modified; please apply your changes to the latest version and try again',
    });
    const deleted = await core.deleteNamespacedConfigMap({ namespace, name: 'cm' });
    expect(deleted).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'cm', kind: 'configmaps', uid: created.metadata?.uid } });
    const gone = await apiError(core.readNamespacedConfigMap({ namespace, name: 'cm' }));
    expect(gone).toEqual({
      code: 404,
      status: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'NotFound', code: 404, details: { name: 'cm', kind: 'configmaps' }, message: 'configmaps "cm" not found' },
    });
  });

  it.concurrent('409 AlreadyExists and 422 Invalid carry the Status of kube-apiserver', async ({ expect }) => {
    const namespace = await newNamespace('errors');
    await core.createNamespacedSecret({ namespace, body: { metadata: { name: 's' }, stringData: { a: 'b' } } });
    const dup = await apiError(core.createNamespacedSecret({ namespace, body: { metadata: { name: 's' } } }));
    expect(dup.code).toBe(409);
    expect(dup.status).toMatchObject({ reason: 'AlreadyExists', code: 409, details: { name: 's', kind: 'secrets' }, message: 'secrets "s" already exists' });
    const invalid = await apiError(core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'Not_Valid' } } }));
    expect(invalid.code).toBe(422);
    expect(invalid.status).toMatchObject({ reason: 'Invalid', code: 422, details: { name: 'Not_Valid', kind: 'ConfigMap' } });
    expect(invalid.status.details?.causes?.[0]).toMatchObject({ reason: 'FieldValueInvalid', field: 'metadata.name' });
    expect(invalid.status.message).toMatch(/^ConfigMap "Not_Valid" is invalid: metadata.name: Invalid value: "Not_Valid": /);
  });

  it.concurrent('JSON patch, merge patch, strategic merge patch and server-side apply through setHeaderOptions', async ({ expect }) => {
    const namespace = await newNamespace('patch');
    await apps.createNamespacedDeployment({ namespace, body: deployment('web') });
    const json = await apps.patchNamespacedDeployment(
      { namespace, name: 'web', body: [{ op: 'replace', path: '/spec/replicas', value: 3 }, { op: 'add', path: '/metadata/labels/tier', value: 'front' }] },
      as(k8s.PatchStrategy.JsonPatch),
    );
    expect(json.spec?.replicas).toBe(3);
    expect(json.metadata?.labels).toEqual({ app: 'web', tier: 'front' });
    const merge = await apps.patchNamespacedDeployment({ namespace, name: 'web', body: { metadata: { labels: { tier: null } } } }, as(k8s.PatchStrategy.MergePatch));
    expect(merge.metadata?.labels).toEqual({ app: 'web' });
    // strategic merge: containers merge by name (a merge patch would have replaced the list)
    const smp = await apps.patchNamespacedDeployment(
      { namespace, name: 'web', body: { spec: { template: { spec: { containers: [{ name: 'sidecar', image: 'busybox' }] } } } } },
      as(k8s.PatchStrategy.StrategicMergePatch),
    );
    expect(smp.spec?.template.spec?.containers.map((c) => c.name)).toEqual(['sidecar', 'web']);
    // the patches above were made by the manager kube names after the User-Agent's product ("node-fetch")
    expect(smp.metadata?.managedFields?.map((m) => `${m.manager}/${m.operation}`)).toEqual(['node-fetch/Update']);
    // server-side apply: the manager owns what it sent; another manager's different value is a conflict, also
    // with the Update manager that set replicas (kube names its API version), until it forces
    const applyBody = (fields: object) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, ...fields });
    const applied = await apps.patchNamespacedDeployment(
      { namespace, name: 'web', fieldManager: 'client-node-example', body: applyBody({ metadata: { name: 'web', annotations: { owner: 'example' } }, spec: { minReadySeconds: 5 } }) },
      as(k8s.PatchStrategy.ServerSideApply),
    );
    expect(applied.spec?.minReadySeconds).toBe(5);
    expect(applied.metadata?.annotations).toEqual({ owner: 'example' });
    expect(applied.metadata?.managedFields?.map((m) => `${m.manager}/${m.operation}`)).toEqual(['client-node-example/Apply', 'node-fetch/Update']);
    const conflict = await apiError(
      apps.patchNamespacedDeployment({ namespace, name: 'web', fieldManager: 'other', body: applyBody({ spec: { minReadySeconds: 6, replicas: 4 } }) }, as(k8s.PatchStrategy.ServerSideApply)),
    );
    expect(conflict.code).toBe(409);
    expect(conflict.status).toMatchObject({
      reason: 'Conflict',
      details: {
        causes: [
          { reason: 'FieldManagerConflict', message: 'conflict with "client-node-example"', field: '.spec.minReadySeconds' },
          { reason: 'FieldManagerConflict', message: 'conflict with "node-fetch" using apps/v1', field: '.spec.replicas' },
        ],
      },
    });
    expect(conflict.status.message).toBe('Apply failed with 2 conflicts: conflicts with "client-node-example":\n- .spec.minReadySeconds\nconflicts with "node-fetch" using apps/v1:\n- .spec.replicas');
    const forced = await apps.patchNamespacedDeployment(
      { namespace, name: 'web', fieldManager: 'other', force: true, body: applyBody({ spec: { minReadySeconds: 6, replicas: 4 } }) },
      as(k8s.PatchStrategy.ServerSideApply),
    );
    expect(forced.spec).toMatchObject({ minReadySeconds: 6, replicas: 4 });
    // without the header the library sends its default (a JSON patch): a merge-shaped body is refused
    const wrong = await apiError(apps.patchNamespacedDeployment({ namespace, name: 'web', body: { spec: { replicas: 1 } } }));
    expect(wrong.code).toBe(400);
  });

  it.concurrent('list with label and field selectors, limit and continue, resourceVersion semantics', async ({ expect }) => {
    const namespace = await newNamespace('list');
    for (let i = 0; i < 5; i++) {
      await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: `cm-${i}`, labels: { parity: i % 2 ? 'odd' : 'even', i: String(i) } } } });
    }
    const names = (l: k8s.V1ConfigMapList) => l.items.map((o) => o.metadata?.name);
    expect(names(await core.listNamespacedConfigMap({ namespace, labelSelector: 'parity=even' }))).toEqual(['cm-0', 'cm-2', 'cm-4']);
    expect(names(await core.listNamespacedConfigMap({ namespace, labelSelector: 'i in (1,3),parity!=even' }))).toEqual(['cm-1', 'cm-3']);
    expect(names(await core.listNamespacedConfigMap({ namespace, fieldSelector: 'metadata.name=cm-3' }))).toEqual(['cm-3']);
    expect(names(await core.listNamespacedConfigMap({ namespace, fieldSelector: 'metadata.name!=cm-3', labelSelector: 'parity=odd' }))).toEqual(['cm-1']);
    const badField = await apiError(core.listNamespacedConfigMap({ namespace, fieldSelector: 'data.k=v' }));
    expect(badField.code).toBe(400);
    expect(badField.status).toMatchObject({ reason: 'BadRequest', message: 'field label not supported: data.k' });

    const first = await core.listNamespacedConfigMap({ namespace, limit: 2 });
    expect(names(first)).toEqual(['cm-0', 'cm-1']);
    expect(first.metadata?.remainingItemCount).toBe(3);
    const token = first.metadata?._continue;
    expect(token).toBeTruthy();
    // a change after the first page is not in the later pages: they read the first page's snapshot
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'cm-5' } } });
    const second = await core.listNamespacedConfigMap({ namespace, limit: 2, _continue: token });
    expect(names(second)).toEqual(['cm-2', 'cm-3']);
    expect(second.metadata?.resourceVersion).toBe(first.metadata?.resourceVersion);
    const third = await core.listNamespacedConfigMap({ namespace, limit: 2, _continue: second.metadata?._continue });
    expect(names(third)).toEqual(['cm-4']);
    expect(third.metadata?._continue).toBeUndefined();
    const forged = await apiError(core.listNamespacedConfigMap({ namespace, limit: 2, _continue: 'not-a-token' }));
    expect(forged.code).toBe(400);

    // resourceVersionMatch=Exact reads the old snapshot; NotOlderThan at least that one
    const rv = first.metadata!.resourceVersion!;
    const exact = await core.listNamespacedConfigMap({ namespace, resourceVersion: rv, resourceVersionMatch: 'Exact' });
    expect(names(exact)).toEqual(['cm-0', 'cm-1', 'cm-2', 'cm-3', 'cm-4']);
    expect(exact.metadata?.resourceVersion).toBe(rv);
    const notOlder = await core.listNamespacedConfigMap({ namespace, resourceVersion: rv, resourceVersionMatch: 'NotOlderThan' });
    expect(names(notOlder)).toContain('cm-5');
    const any = await core.listNamespacedConfigMap({ namespace, resourceVersion: '0' });
    expect(any.items.length).toBeGreaterThanOrEqual(5);
    const badMatch = await apiError(core.listNamespacedConfigMap({ namespace, resourceVersionMatch: 'Exact' }));
    expect(badMatch.code).toBe(422);
    expect(badMatch.status.reason).toBe('Invalid');
  });

  it.concurrent('status sub-resource: the main resource ignores status, the sub-resource only status', async ({ expect }) => {
    const namespace = await newNamespace('status');
    const created = await apps.createNamespacedDeployment({ namespace, body: { ...deployment('d'), status: { replicas: 7 } } });
    // the status a create is sent is dropped: a new Deployment's status is empty (kube's PrepareForCreate)
    expect(created.status).toEqual({});
    const withStatus = await apps.replaceNamespacedDeploymentStatus({
      namespace,
      name: 'd',
      body: { ...created, spec: { ...created.spec!, replicas: 9 }, status: { replicas: 1, observedGeneration: 1, conditions: [{ type: 'Available', status: 'True', reason: 'Test' }] } },
    });
    expect(withStatus.status).toMatchObject({ replicas: 1, observedGeneration: 1, conditions: [{ type: 'Available', status: 'True' }] });
    expect(withStatus.spec?.replicas).toBe(1);
    const patched = await apps.patchNamespacedDeploymentStatus({ namespace, name: 'd', body: { status: { readyReplicas: 1 } } }, as(k8s.PatchStrategy.MergePatch));
    expect(patched.status).toMatchObject({ replicas: 1, readyReplicas: 1 });
    const read = await apps.readNamespacedDeploymentStatus({ namespace, name: 'd' });
    expect(read.status?.readyReplicas).toBe(1);
    expect(read.metadata?.generation).toBe(1);
    const scale = await apps.readNamespacedDeploymentScale({ namespace, name: 'd' });
    expect(scale).toMatchObject({ apiVersion: 'autoscaling/v1', kind: 'Scale', spec: { replicas: 1 }, status: { replicas: 1, selector: 'app=d' } });
    const scaled = await apps.patchNamespacedDeploymentScale({ namespace, name: 'd', body: { spec: { replicas: 4 } } }, as(k8s.PatchStrategy.MergePatch));
    expect(scaled.spec?.replicas).toBe(4);
    expect((await apps.readNamespacedDeployment({ namespace, name: 'd' })).spec?.replicas).toBe(4);
  });

  it.concurrent('deleteCollection with a label selector, and dry run that persists nothing', async ({ expect }) => {
    const namespace = await newNamespace('dc');
    for (const [name, keep] of [['a', 'no'], ['b', 'no'], ['c', 'yes']] as const) {
      await core.createNamespacedConfigMap({ namespace, body: { metadata: { name, labels: { keep } } } });
    }
    // kube answers a deleteCollection with the list of what it deleted; the library types the answer as a
    // V1Status, so only the list's kind and metadata survive its deserializer
    const status = await core.deleteCollectionNamespacedConfigMap({ namespace, labelSelector: 'keep=no' });
    expect(status).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMapList' });
    expect((await core.listNamespacedConfigMap({ namespace, labelSelector: 'keep' })).items.map((o) => o.metadata?.name)).toEqual(['c']);

    const dry = await core.createNamespacedConfigMap({ namespace, dryRun: 'All', body: { metadata: { name: 'dry' }, data: { x: 'y' } } });
    expect(dry.metadata).toMatchObject({ name: 'dry', namespace });
    expect(dry.metadata?.uid).toBeTruthy();
    expect((await apiError(core.readNamespacedConfigMap({ namespace, name: 'dry' }))).code).toBe(404);
    const dryDelete = await core.deleteNamespacedConfigMap({ namespace, name: 'c', dryRun: 'All' });
    expect(dryDelete.status).toBe('Success');
    expect((await core.readNamespacedConfigMap({ namespace, name: 'c' })).metadata?.name).toBe('c');
    const dryPatch = await core.patchNamespacedConfigMap({ namespace, name: 'c', dryRun: 'All', body: { data: { d: 'e' } } }, as(k8s.PatchStrategy.MergePatch));
    expect(dryPatch.data).toEqual({ d: 'e' });
    expect((await core.readNamespacedConfigMap({ namespace, name: 'c' })).data).toBeUndefined();
    const badDry = await apiError(core.createNamespacedConfigMap({ namespace, dryRun: 'Some', body: { metadata: { name: 'x' } } }));
    expect(badDry.code).toBe(422);
    expect(badDry.status).toMatchObject({ reason: 'Invalid', details: { group: 'meta.k8s.io', kind: 'CreateOptions' } });
    expect(badDry.status.message).toContain('dryRun: Unsupported value: []string{"Some"}');
  });

  it.concurrent('delete preconditions, eviction of an unscheduled pod, lists across namespaces, a new namespace is Active', async ({ expect }) => {
    // a create starts from the kind's initial status, whatever the body says (kube's PrepareForCreate)
    const ns = await core.createNamespace({ body: { metadata: { name: `fresh-${++seq}` }, status: { phase: 'Terminating' } } });
    expect(ns.status?.phase).toBe('Active');
    expect(ns.spec?.finalizers).toEqual(['kubernetes']);
    const namespace = ns.metadata!.name!;
    const cm = await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'guarded', labels: { across: namespace } } } });
    const wrongUid = await apiError(core.deleteNamespacedConfigMap({ namespace, name: 'guarded', body: { preconditions: { uid: 'not-the-uid' } } }));
    expect(wrongUid.code).toBe(409);
    // kube's rest.BeforeDelete names the kind
    expect(wrongUid.status).toMatchObject({ reason: 'Conflict', details: { name: 'guarded', kind: 'ConfigMap' } });
    expect(wrongUid.status.message).toBe(
      `Operation cannot be fulfilled on ConfigMap "guarded": the UID in the precondition (not-the-uid) does not match the UID in record (${cm.metadata?.uid}). The object might have been deleted and then recreated`,
    );
    const across = await core.listConfigMapForAllNamespaces({ labelSelector: `across=${namespace}` });
    expect(across.items.map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`)).toEqual([`${namespace}/guarded`]);
    const byField = await core.listConfigMapForAllNamespaces({ fieldSelector: `metadata.namespace=${namespace}` });
    expect(byField.items.map((o) => o.metadata?.name)).toEqual(['guarded']);
    await core.deleteNamespacedConfigMap({ namespace, name: 'guarded', body: { preconditions: { uid: cm.metadata?.uid, resourceVersion: cm.metadata?.resourceVersion } } });

    // (the ServiceAccount controller is off here: the pod's account is made as it would)
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'default' } } });
    const pod = await core.createNamespacedPod({ namespace, body: { metadata: { name: 'evictee' }, spec: { containers: [{ name: 'c', image: 'busybox' }] }, status: { phase: 'Running' } } });
    expect(pod.status).toMatchObject({ phase: 'Pending', qosClass: 'BestEffort' });
    // a binding names the node (kube answers a Status; the library types it as the V1Binding it sent)
    await core.createNamespacedPod({ namespace, body: { metadata: { name: 'bound' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } });
    const bound = await core.createNamespacedPodBinding({ namespace, name: 'bound', body: { metadata: { name: 'bound' }, target: { kind: 'Node', name: 'node-x' } } });
    expect(bound).toMatchObject({ apiVersion: 'v1', kind: 'Status' });
    expect((await core.readNamespacedPod({ namespace, name: 'bound' })).spec?.nodeName).toBe('node-x');
    const again = await apiError(core.createNamespacedPodBinding({ namespace, name: 'bound', body: { metadata: { name: 'bound' }, target: { kind: 'Node', name: 'node-y' } } }));
    expect(again.code).toBe(409);
    expect(again.status.message).toBe('Operation cannot be fulfilled on pods/binding "bound": pod bound is already assigned to node "node-x"');
    const eviction = await core.createNamespacedPodEviction({ namespace, name: 'evictee', body: { metadata: { name: 'evictee', namespace } } });
    // kube answers a Status; the library types it as a V1Eviction, so only apiVersion, kind and metadata stay
    expect(eviction).toMatchObject({ apiVersion: 'v1', kind: 'Status' });
    expect((await apiError(core.readNamespacedPod({ namespace, name: 'evictee' }))).code).toBe(404);
  });

  it.concurrent('discovery through the typed APIs: /api, /apis, a group and its resources; the issuer documents', async ({ expect }) => {
    const core0 = await kc.makeApiClient(k8s.CoreApi).getAPIVersions();
    expect(core0).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
    // kube's ExternalAddress: the address and port clients reach the server at
    expect(core0.serverAddressByClientCIDRs).toEqual([{ clientCIDR: '0.0.0.0/0', serverAddress: `127.0.0.1:${t.server.port}` }]);
    const groups = await kc.makeApiClient(k8s.ApisApi).getAPIVersions();
    const apps0 = groups.groups.find((g) => g.name === 'apps');
    expect(apps0).toMatchObject({ name: 'apps', versions: [{ groupVersion: 'apps/v1', version: 'v1' }], preferredVersion: { groupVersion: 'apps/v1', version: 'v1' } });
    expect((await kc.makeApiClient(k8s.AppsApi).getAPIGroup()).preferredVersion?.groupVersion).toBe('apps/v1');
    const appsResources = await apps.getAPIResources();
    const deployments = appsResources.resources.find((r) => r.name === 'deployments');
    expect(deployments).toMatchObject({ kind: 'Deployment', namespaced: true, singularName: 'deployment', shortNames: ['deploy'], categories: ['all'] });
    expect([...(deployments?.verbs ?? [])].sort()).toEqual(['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
    expect(appsResources.resources.map((r) => r.name)).toContain('deployments/scale');
    const pods = (await core.getAPIResources()).resources.find((r) => r.name === 'pods/log');
    expect(pods).toMatchObject({ kind: 'Pod', namespaced: true, verbs: ['get'] });
    // typed `string`, but the library parses an application/json answer (kube's content type too) into an object
    const doc = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : v);
    const config = doc(await kc.makeApiClient(k8s.WellKnownApi).getServiceAccountIssuerOpenIDConfiguration()) as { issuer: string; jwks_uri: string };
    // the key set at the server's external address, as kube-apiserver without --service-account-jwks-uri
    expect(config.jwks_uri).toBe(`https://127.0.0.1:${t.server.port}/openid/v1/jwks`);
    expect(config.issuer).toMatch(/^https:\/\//);
    const keys = doc(await kc.makeApiClient(k8s.OpenidApi).getServiceAccountIssuerOpenIDKeyset()) as { keys: { kty: string; use: string; kid: string }[] };
    expect(keys.keys[0]).toMatchObject({ use: 'sig', kid: expect.any(String) });
  });

  it.concurrent('Events (events.k8s.io/v1 with a MicroTime), HPA v2, PDB, PriorityClass and StorageClass round-trip', async ({ expect }) => {
    const namespace = await newNamespace('more');
    const events = kc.makeApiClient(k8s.EventsV1Api);
    const eventTime = new k8s.V1MicroTime();
    const ev = await events.createNamespacedEvent({
      namespace,
      body: { metadata: { name: 'e1' }, eventTime, reportingController: 'example.com/ctl', reportingInstance: 'ctl-1', action: 'Test', reason: 'Tested', type: 'Normal', regarding: { kind: 'Pod', name: 'p', namespace }, note: 'hello' },
    });
    expect(new Date(String(ev.eventTime)).getTime()).toBe(eventTime.getTime());
    // the same Event through core/v1, as kubectl get events reads it
    const legacy = await core.readNamespacedEvent({ namespace, name: 'e1' });
    expect(legacy).toMatchObject({ reason: 'Tested', message: 'hello', type: 'Normal', involvedObject: { kind: 'Pod', name: 'p' }, reportingComponent: 'example.com/ctl', reportingInstance: 'ctl-1', source: {} });

    const hpa = await kc.makeApiClient(k8s.AutoscalingV2Api).createNamespacedHorizontalPodAutoscaler({
      namespace,
      body: { metadata: { name: 'h' }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 5, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } }] } },
    });
    expect(hpa.spec?.minReplicas).toBe(1);
    expect(hpa.spec?.metrics?.[0]?.resource?.target.averageUtilization).toBe(60);
    const v1 = await kc.makeApiClient(k8s.AutoscalingV1Api).readNamespacedHorizontalPodAutoscaler({ namespace, name: 'h' });
    expect(v1.spec?.targetCPUUtilizationPercentage).toBe(60);

    const pdb = await kc.makeApiClient(k8s.PolicyV1Api).createNamespacedPodDisruptionBudget({ namespace, body: { metadata: { name: 'pdb' }, spec: { minAvailable: '50%', selector: { matchLabels: { app: 'x' } } } } });
    expect(pdb.spec?.minAvailable).toBe('50%');
    const pc = await kc.makeApiClient(k8s.SchedulingV1Api).createPriorityClass({ body: { metadata: { name: `prio-${namespace}` }, value: 1000 } });
    expect(pc).toMatchObject({ value: 1000, preemptionPolicy: 'PreemptLowerPriority' });
    expect(pc.globalDefault).toBeUndefined(); // omitempty
    const sc = await kc.makeApiClient(k8s.StorageV1Api).createStorageClass({ body: { metadata: { name: `sc-${namespace}` }, provisioner: 'example.com/disk' } });
    expect(sc).toMatchObject({ reclaimPolicy: 'Delete', volumeBindingMode: 'Immediate' });
  });

  it.concurrent('generateName, immutable ConfigMaps, unconditional replace and a failing JSON patch test', async ({ expect }) => {
    const namespace = await newNamespace('misc');
    const generated = await core.createNamespacedConfigMap({ namespace, body: { metadata: { generateName: 'gen-' }, data: { a: '1' } } });
    expect(generated.metadata?.name).toMatch(/^gen-[a-z0-9]{5}$/);
    expect(generated.metadata?.generateName).toBe('gen-');
    const name = generated.metadata!.name!;
    // a replace without a resourceVersion is unconditional for ConfigMaps
    const replaced = await core.replaceNamespacedConfigMap({ namespace, name, body: { metadata: { name }, data: { a: '2' }, immutable: true } });
    expect(replaced).toMatchObject({ data: { a: '2' }, immutable: true });
    const frozen = await apiError(core.patchNamespacedConfigMap({ namespace, name, body: { data: { a: '3' } } }, as(k8s.PatchStrategy.MergePatch)));
    expect(frozen.code).toBe(422);
    expect(frozen.status.message).toBe(`ConfigMap "${name}" is invalid: data: Forbidden: field is immutable when \`immutable\` is set`);
    const test = await apiError(
      core.patchNamespacedConfigMap({ namespace, name, body: [{ op: 'test', path: '/data/a', value: 'nope' }, { op: 'remove', path: '/data/a' }] }, as(k8s.PatchStrategy.JsonPatch)),
    );
    expect(test.code).toBe(422);
    expect(test.status).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Invalid', code: 422 });
    // a watch from resourceVersion "0" starts with the current objects
    const seen: string[] = [];
    const ctl = await new k8s.Watch(kc).watch(`/api/v1/namespaces/${namespace}/configmaps`, { resourceVersion: '0' }, (type, o: k8s.V1ConfigMap) => seen.push(`${type} ${o.metadata?.name}`), () => {});
    await eventually(() => seen.length >= 1, 'the synthetic ADDED');
    ctl.abort();
    expect(seen).toEqual([`ADDED ${name}`]);
  });

  it.concurrent('BatchV1Api, RbacAuthorizationV1Api, CoordinationV1Api and NetworkingV1Api objects round-trip', async ({ expect }) => {
    const namespace = await newNamespace('groups');
    const batch = kc.makeApiClient(k8s.BatchV1Api);
    const job = await batch.createNamespacedJob({
      namespace,
      body: { metadata: { name: 'pi' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'pi', image: 'perl', command: ['perl', '-e', 'print 1'] }] } } } },
    });
    expect(job.apiVersion).toBe('batch/v1');
    // defaults the Job's API fills in, as kube's
    expect(job.spec).toMatchObject({ backoffLimit: 6, completions: 1, parallelism: 1, completionMode: 'NonIndexed', suspend: false });
    expect(job.spec?.selector?.matchLabels?.['batch.kubernetes.io/controller-uid']).toBe(job.metadata?.uid);
    const cron = await batch.createNamespacedCronJob({ namespace, body: { metadata: { name: 'c' }, spec: { schedule: '*/5 * * * *', jobTemplate: { spec: job.spec && { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'x', image: 'busybox' }] } } } } } } });
    expect(cron.spec).toMatchObject({ concurrencyPolicy: 'Allow', suspend: false, successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 1 });

    const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    const role = await rbac.createNamespacedRole({ namespace, body: { metadata: { name: 'r' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }] } });
    expect(role.rules).toEqual([{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }]);
    const binding = await rbac.createNamespacedRoleBinding({
      namespace,
      body: { metadata: { name: 'rb' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' }, subjects: [{ kind: 'User', name: 'jane', apiGroup: 'rbac.authorization.k8s.io' }] },
    });
    expect(binding.roleRef.name).toBe('r');
    const roleRefChange = await apiError(rbac.patchNamespacedRoleBinding({ namespace, name: 'rb', body: { roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'other' } } }, as(k8s.PatchStrategy.MergePatch)));
    expect(roleRefChange.code).toBe(422);
    expect(roleRefChange.status.message).toContain('cannot change roleRef');

    const coord = kc.makeApiClient(k8s.CoordinationV1Api);
    const now = new k8s.V1MicroTime();
    const lease = await coord.createNamespacedLease({ namespace, body: { metadata: { name: 'leader' }, spec: { holderIdentity: 'me', leaseDurationSeconds: 15, acquireTime: now, renewTime: now } } });
    expect(lease.spec?.holderIdentity).toBe('me');
    // the library sends V1MicroTime with six fraction digits and hands the answer's MicroTime back as the
    // string kube writes (its deserializer knows no V1MicroTime), so compare the instants
    expect(String(lease.spec?.renewTime)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(new Date(String(lease.spec?.renewTime)).getTime()).toBe(now.getTime());

    const net = kc.makeApiClient(k8s.NetworkingV1Api);
    const policy = await net.createNamespacedNetworkPolicy({ namespace, body: { metadata: { name: 'deny' }, spec: { podSelector: {} } } });
    expect(policy.spec?.policyTypes).toEqual(['Ingress']);
  });
});

describe('custom resources', () => {
  const group = 'stable.example.com';
  beforeAll(async () => {
    const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
    await ext.createCustomResourceDefinition({
      body: {
        metadata: { name: `crontabs.${group}` },
        spec: {
          group,
          scope: 'Namespaced',
          names: { plural: 'crontabs', singular: 'crontab', kind: 'CronTab', shortNames: ['ct'] },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              subresources: { status: {} },
              schema: {
                openAPIV3Schema: {
                  type: 'object',
                  properties: {
                    // the library's model names JSONSchemaProps' `default` `_default` (a plain `default` key is dropped)
                    spec: { type: 'object', properties: { cronSpec: { type: 'string' }, replicas: { type: 'integer', minimum: 1, _default: 1 } } },
                    status: { type: 'object', properties: { state: { type: 'string' } } },
                  },
                },
              },
            },
          ],
        },
      },
    });
    await eventually(async () => {
      const crd = await ext.readCustomResourceDefinitionStatus({ name: `crontabs.${group}` });
      return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    }, 'the CRD to be Established');
  });

  it.concurrent('CustomObjectsApi: create, get, list by label, patch, status, delete; invalid objects are 422', async ({ expect }) => {
    const namespace = await newNamespace('cr');
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const body = { apiVersion: `${group}/v1`, kind: 'CronTab', metadata: { name: 'nightly', labels: { when: 'night' } }, spec: { cronSpec: '0 2 * * *' } };
    // with a status sub-resource a create drops the status it is sent (kube's PrepareForCreate)
    const created = (await custom.createNamespacedCustomObject({ group, version: 'v1', namespace, plural: 'crontabs', body: { ...body, status: { state: 'Sent' } } })) as {
      spec: { replicas: number };
      metadata: { generation: number };
      status?: unknown;
    };
    expect(created.status).toBeUndefined();
    expect(created.spec).toEqual({ cronSpec: '0 2 * * *', replicas: 1 });
    expect(created.metadata.generation).toBe(1);
    const listed = (await custom.listNamespacedCustomObject({ group, version: 'v1', namespace, plural: 'crontabs', labelSelector: 'when=night' })) as { kind: string; items: unknown[] };
    expect(listed.kind).toBe('CronTabList');
    expect(listed.items).toHaveLength(1);
    const patched = (await custom.patchNamespacedCustomObject(
      { group, version: 'v1', namespace, plural: 'crontabs', name: 'nightly', body: { spec: { replicas: 3 } } },
      as(k8s.PatchStrategy.MergePatch),
    )) as { spec: { replicas: number }; metadata: { generation: number } };
    expect(patched.spec.replicas).toBe(3);
    expect(patched.metadata.generation).toBe(2);
    // custom resources take no strategic merge patch (kube: 415 Unsupported Media Type)
    const smp = await apiError(custom.patchNamespacedCustomObject({ group, version: 'v1', namespace, plural: 'crontabs', name: 'nightly', body: { spec: {} } }, as(k8s.PatchStrategy.StrategicMergePatch)));
    expect(smp.code).toBe(415);
    const status = (await custom.patchNamespacedCustomObjectStatus(
      { group, version: 'v1', namespace, plural: 'crontabs', name: 'nightly', body: { status: { state: 'Ready' }, spec: { replicas: 9 } } },
      as(k8s.PatchStrategy.MergePatch),
    )) as { status: { state: string }; spec: { replicas: number } };
    expect(status.status).toEqual({ state: 'Ready' });
    expect(status.spec.replicas).toBe(3);
    const got = (await custom.getNamespacedCustomObject({ group, version: 'v1', namespace, plural: 'crontabs', name: 'nightly' })) as { status: unknown };
    expect(got.status).toEqual({ state: 'Ready' });
    const strict = await apiError(
      custom.createNamespacedCustomObject({ group, version: 'v1', namespace, plural: 'crontabs', fieldValidation: 'Strict', body: { ...body, metadata: { name: 'strict' }, spec: { cronSpec: 'x', extra: 1 } } }),
    );
    expect(strict.code).toBe(400);
    expect(strict.status).toMatchObject({ reason: 'BadRequest', message: 'CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: unknown field "spec.extra"' });
    const invalid = await apiError(custom.createNamespacedCustomObject({ group, version: 'v1', namespace, plural: 'crontabs', body: { ...body, metadata: { name: 'bad' }, spec: { replicas: 0 } } }));
    expect(invalid.code).toBe(422);
    expect(invalid.status.message).toContain('spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1');
    const deleted = await custom.deleteNamespacedCustomObject({ group, version: 'v1', namespace, plural: 'crontabs', name: 'nightly' });
    expect(deleted).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'nightly', group, kind: 'crontabs' } });
    expect((await apiError(custom.getNamespacedCustomObject({ group, version: 'v1', namespace, plural: 'crontabs', name: 'nightly' }))).code).toBe(404);
  });

  it.concurrent('KubernetesObjectApi finds a CRD kind through discovery and works its objects', async ({ expect }) => {
    const namespace = await newNamespace('objcr');
    const client = k8s.KubernetesObjectApi.makeApiClient(kc);
    const spec = { apiVersion: `${group}/v1`, kind: 'CronTab', metadata: { name: 'hourly', namespace }, spec: { cronSpec: '0 * * * *' } };
    const created = await client.create(spec);
    expect(created).toMatchObject({ kind: 'CronTab', metadata: { name: 'hourly', namespace }, spec: { cronSpec: '0 * * * *', replicas: 1 } });
    const patched = await client.patch({ ...spec, spec: { cronSpec: '5 * * * *' } }, undefined, undefined, 'objapi', true, k8s.PatchStrategy.ServerSideApply);
    expect(patched).toMatchObject({ spec: { cronSpec: '5 * * * *', replicas: 1 } });
    const list = await client.list(`${group}/v1`, 'CronTab', namespace);
    expect(list.items.map((o) => o.metadata?.name)).toEqual(['hourly']);
    await client.delete(spec);
    expect((await apiError(client.read(spec))).code).toBe(404);
  });
});

describe('KubernetesObjectApi', () => {
  it.concurrent('create, read, patch (every strategy), replace, list with selectors and delete of built-in kinds', async ({ expect }) => {
    const namespace = await newNamespace('obj');
    const client = k8s.KubernetesObjectApi.makeApiClient(kc);
    const spec = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'dep', namespace, labels: { app: 'dep' } }, spec: deployment('dep').spec } as k8s.KubernetesObject & k8s.V1Deployment;
    const created = await client.create(spec);
    expect(created).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'dep', namespace } });
    // the answer is deserialized into the library's model: Dates, not strings
    expect(created.metadata?.creationTimestamp).toBeInstanceOf(Date);
    const read = await client.read<k8s.V1Deployment>({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'dep', namespace } });
    expect(read.spec?.template.spec?.containers[0]?.image).toBe('nginx:1.27');
    const smp = await client.patch({ ...spec, spec: { template: { spec: { containers: [{ name: 'web', image: 'nginx:1.28' }] } } } } as k8s.KubernetesObject, undefined, undefined, undefined, undefined, k8s.PatchStrategy.StrategicMergePatch);
    expect((smp as k8s.V1Deployment).spec?.template.spec?.containers[0]).toMatchObject({ name: 'web', image: 'nginx:1.28', ports: [{ containerPort: 80 }] });
    const merge = await client.patch({ ...spec, metadata: { ...spec.metadata, annotations: { a: 'b' } }, spec: undefined } as k8s.KubernetesObject, undefined, undefined, undefined, undefined, k8s.PatchStrategy.MergePatch);
    expect(merge.metadata?.annotations).toEqual({ a: 'b' });
    const replaced = await client.replace({ ...read, metadata: { ...read.metadata, resourceVersion: merge.metadata?.resourceVersion, labels: { app: 'dep', v: '2' } } });
    expect(replaced.metadata?.labels).toEqual({ app: 'dep', v: '2' });
    // the default namespace of the context fills a missing one
    const cm = await client.create<k8s.V1ConfigMap>({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `in-default-${namespace}` } });
    expect(cm.metadata?.namespace).toBe('default');
    await client.delete(cm);
    const list = await client.list<k8s.V1Deployment>('apps/v1', 'Deployment', namespace, undefined, undefined, undefined, 'metadata.name=dep', 'v=2');
    expect(list).toMatchObject({ apiVersion: 'apps/v1', kind: 'DeploymentList' });
    expect(list.items.map((o) => o.metadata?.name)).toEqual(['dep']);
    // a namespaced kind without a namespace lists across all of them
    const everywhere = await client.list<k8s.V1Deployment>('apps/v1', 'Deployment', undefined, undefined, undefined, undefined, `metadata.namespace=${namespace}`);
    expect(everywhere.items.map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`)).toEqual([`${namespace}/dep`]);
    const ns = await client.list('v1', 'Namespace', undefined, undefined, undefined, undefined, `metadata.name=${namespace}`);
    expect(ns.items).toHaveLength(1);
    const status = await client.delete(spec, undefined, undefined, 0, undefined, 'Foreground');
    expect(status.kind).toBe('Deployment');
    const unknown = await client.read({ apiVersion: 'v1', kind: 'NoSuchKind', metadata: { name: 'x', namespace } }).then(
      () => '',
      (e: Error) => e.message,
    );
    expect(unknown).toContain('Unrecognized API version and kind: v1 NoSuchKind');
  });
});

describe('the library\'s examples', () => {
  it.concurrent('apply-example: loadAllYaml, then read and patch (strategic merge) what exists, create what does not', async ({ expect }) => {
    const namespace = await newNamespace('apply');
    const client = k8s.KubernetesObjectApi.makeApiClient(kc);
    const manifest = (replicas: number, color: string) => `
apiVersion: v1
kind: ConfigMap
metadata: { name: settings, namespace: ${namespace} }
data: { color: ${color} }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: web, namespace: ${namespace}, labels: { app: web } }
spec:
  replicas: ${replicas}
  selector: { matchLabels: { app: web } }
  template:
    metadata: { labels: { app: web } }
    spec: { containers: [{ name: web, image: nginx }] }
---
apiVersion: v1
kind: Service
metadata: { name: web, namespace: ${namespace} }
spec: { selector: { app: web }, ports: [{ port: 80 }] }
`;
    // the example's loop, verbatim in what it calls
    const apply = async (text: string): Promise<k8s.KubernetesObject[]> => {
      const out: k8s.KubernetesObject[] = [];
      for (const spec of k8s.loadAllYaml(text) as k8s.KubernetesObject[]) {
        spec.metadata!.annotations = { ...spec.metadata!.annotations, 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify(spec) };
        try {
          await client.read(spec as Parameters<typeof client.read>[0]);
          out.push(await client.patch(spec));
        } catch {
          out.push(await client.create(spec));
        }
      }
      return out;
    };
    const first = await apply(manifest(1, 'red'));
    expect(first.map((o) => `${o.kind}/${o.metadata?.name}@${o.metadata?.generation ?? '-'}`)).toEqual(['ConfigMap/settings@-', 'Deployment/web@1', 'Service/web@-']);
    const svc = first[2] as k8s.V1Service;
    expect(svc.spec?.clusterIP).toMatch(/^10\./);
    expect(svc.spec?.ports?.[0]).toMatchObject({ port: 80, protocol: 'TCP', targetPort: 80 });
    const second = await apply(manifest(3, 'blue'));
    expect((second[0] as k8s.V1ConfigMap).data).toEqual({ color: 'blue' });
    expect((second[1] as k8s.V1Deployment).spec?.replicas).toBe(3);
    expect(second[1]!.metadata?.generation).toBe(2);
    // the Service kept its allocated cluster IP through the patch
    expect((second[2] as k8s.V1Service).spec?.clusterIP).toBe(svc.spec?.clusterIP);
    // dumpYaml of a read object parses back to the same object
    const read = await client.read({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace } });
    expect(k8s.loadYaml<k8s.V1ConfigMap>(k8s.dumpYaml(read)).data).toEqual({ color: 'blue' });
  });

  it.concurrent('raw-example: applyToHTTPSOptions credentials on a plain request', async ({ expect }) => {
    const opts: { headers: Record<string, string>; ca?: Buffer | string; cert?: Buffer | string; key?: Buffer | string } = { headers: {} };
    await kc.applyToHTTPSOptions(opts);
    const { request } = await import('node:https');
    const url = new URL(`${kc.getCurrentCluster()!.server}/api/v1/namespaces/default/serviceaccounts?limit=1`);
    const body = await new Promise<string>((resolve, reject) => {
      const req = request(url, { ...opts, agent: false }, (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve(`${res.statusCode} ${text}`));
      });
      req.on('error', reject);
      req.end();
    });
    expect(body).toMatch(/^200 \{"kind":"ServiceAccountList","apiVersion":"v1","metadata":\{"resourceVersion":"\d+"/);
  });
});

describe('Watch and informers', () => {
  it.concurrent('Watch: ADDED, MODIFIED and DELETED events from a list\'s resourceVersion, with a label selector', async ({ expect }) => {
    const namespace = await newNamespace('watch');
    const list = await core.listNamespacedConfigMap({ namespace });
    const events: string[] = [];
    let ended: unknown = 'open';
    const ctl = await new k8s.Watch(kc).watch(
      `/api/v1/namespaces/${namespace}/configmaps`,
      { resourceVersion: list.metadata?.resourceVersion, labelSelector: 'watched=yes' },
      (type, obj: k8s.V1ConfigMap) => events.push(`${type} ${obj.apiVersion}/${obj.kind} ${obj.metadata?.name} ${JSON.stringify(obj.data ?? {})}`),
      (err) => (ended = err),
    );
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'other' } } });
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'w', labels: { watched: 'yes' } } } });
    await core.patchNamespacedConfigMap({ namespace, name: 'w', body: { data: { a: 'b' } } }, as(k8s.PatchStrategy.MergePatch));
    await core.deleteNamespacedConfigMap({ namespace, name: 'w' });
    await eventually(() => events.length >= 3, 'three watch events');
    expect(events).toEqual(['ADDED v1/ConfigMap w {}', 'MODIFIED v1/ConfigMap w {"a":"b"}', 'DELETED v1/ConfigMap w {"a":"b"}']);
    ctl.abort();
    await eventually(() => ended !== 'open', 'the watch to end');
  });

  it.concurrent('Watch with sendInitialEvents: the current objects, the initial-events-end BOOKMARK, then changes', async ({ expect }) => {
    const namespace = await newNamespace('initial');
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'first' } } });
    const events: { type: string; obj: k8s.V1ConfigMap }[] = [];
    const ctl = await new k8s.Watch(kc).watch(
      `/api/v1/namespaces/${namespace}/configmaps`,
      { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true },
      (type, obj: k8s.V1ConfigMap) => events.push({ type, obj }),
      () => {},
    );
    await eventually(() => events.some((e) => e.type === 'BOOKMARK'), 'the initial-events-end bookmark');
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'second' } } });
    await eventually(() => events.length >= 3, 'the change after the bookmark');
    ctl.abort();
    expect(events.map((e) => `${e.type} ${e.obj.metadata?.name ?? ''}`)).toEqual(['ADDED first', 'BOOKMARK ', 'ADDED second']);
    const bookmark = events[1]!.obj;
    expect(bookmark).toMatchObject({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { annotations: { 'k8s.io/initial-events-end': 'true' } } });
    expect(Number(bookmark.metadata?.resourceVersion)).toBeGreaterThanOrEqual(Number(events[0]!.obj.metadata?.resourceVersion));
  });

  it.concurrent('Watch with allowWatchBookmarks and timeoutSeconds: a BOOKMARK before the server ends the stream', async ({ expect }) => {
    const namespace = await newNamespace('bookmark');
    const list = await core.listNamespacedConfigMap({ namespace });
    const events: { type: string; obj: k8s.V1ConfigMap }[] = [];
    let ended: unknown = 'open';
    await new k8s.Watch(kc).watch(
      `/api/v1/namespaces/${namespace}/configmaps`,
      { resourceVersion: list.metadata?.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: 3 },
      (type, obj: k8s.V1ConfigMap) => events.push({ type, obj }),
      (err) => (ended = err),
    );
    await eventually(() => ended !== 'open', 'the server to end the watch', 15_000);
    // the server closed the stream (done with no error), after the pre-timeout bookmark
    expect(ended).toBeNull();
    expect(events.map((e) => e.type)).toEqual(['BOOKMARK']);
    expect(events[0]!.obj).toEqual({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: expect.stringMatching(/^\d+$/) } });
  });

  it.concurrent('Watch from a compacted resourceVersion: an ERROR event with the 410 Expired Status', async ({ expect }) => {
    const namespace = await newNamespace('gone');
    const events: { type: string; obj: k8s.V1Status }[] = [];
    let done: unknown = 'open';
    await new k8s.Watch(kc).watch(
      `/api/v1/namespaces/${namespace}/secrets`,
      { resourceVersion: '1' },
      (type, obj: k8s.V1Status) => events.push({ type, obj }),
      (err) => (done = err),
    );
    await eventually(() => done !== 'open', 'the watch to end');
    expect(done).toBeNull();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'ERROR', obj: { kind: 'Status', status: 'Failure', reason: 'Expired', code: 410 } });
    expect(events[0]!.obj.message).toMatch(/^too old resource version: 1 \(\d+\)$/);
  });

  it.concurrent('ListWatch with a field selector: the cache holds the selected object only', async ({ expect }) => {
    const namespace = await newNamespace('fieldsel');
    const path = `/api/v1/namespaces/${namespace}/configmaps`;
    const cache = new k8s.ListWatch<k8s.V1ConfigMap>(path, new k8s.Watch(kc), () => core.listNamespacedConfigMap({ namespace, fieldSelector: 'metadata.name=target' }), false, undefined, 'metadata.name=target');
    const added: string[] = [];
    cache.on('add', (o) => added.push(o.metadata?.name ?? ''));
    await cache.start();
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'other' } } });
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'target' }, data: { k: 'v' } } });
    await eventually(() => cache.get('target', namespace), 'the selected object in the cache');
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'after' } } });
    await core.patchNamespacedConfigMap({ namespace, name: 'target', body: { data: { k: 'w' } } }, as(k8s.PatchStrategy.MergePatch));
    await eventually(() => cache.get('target', namespace)?.data?.k === 'w', 'the update');
    expect(added).toEqual(['target']);
    expect(cache.list(namespace).map((o) => o.metadata?.name)).toEqual(['target']);
    expect(Number(cache.latestResourceVersion())).toBeGreaterThan(0);
    await cache.stop();
  });

  // not concurrent: the forced 410 ends every watch of the server
  it('makeInformer: add, update, delete, connect; re-lists after a 410; a label-selector informer sees its objects only', async () => {
    const namespace = await newNamespace('informer');
    const path = `/api/v1/namespaces/${namespace}/configmaps`;
    let lists = 0;
    const informer = k8s.makeInformer(kc, path, () => (lists++, core.listNamespacedConfigMap({ namespace }))) as k8s.ListWatch<k8s.V1ConfigMap>;
    const selected = k8s.makeInformer(kc, path, () => core.listNamespacedConfigMap({ namespace, labelSelector: 'pick=yes' }), 'pick=yes') as k8s.ListWatch<k8s.V1ConfigMap>;
    const seen: string[] = [];
    const picked: string[] = [];
    let connects = 0;
    const errors: unknown[] = [];
    informer.on('add', (o) => seen.push(`add ${o.metadata?.name}`));
    informer.on('update', (o) => seen.push(`update ${o.metadata?.name} ${o.data?.v}`));
    informer.on('delete', (o) => seen.push(`delete ${o.metadata?.name}`));
    informer.on('connect', () => connects++);
    informer.on('error', (e) => errors.push(e));
    selected.on('add', (o) => picked.push(`add ${o.metadata?.name}`));
    selected.on('delete', (o) => picked.push(`delete ${o.metadata?.name}`));
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'before' } } });
    await informer.start();
    await selected.start();
    expect(seen).toEqual(['add before']);
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'x', labels: { pick: 'yes' } } } });
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'y', labels: { pick: 'no' } } } });
    await core.patchNamespacedConfigMap({ namespace, name: 'x', body: { data: { v: '1' } } }, as(k8s.PatchStrategy.MergePatch));
    await core.deleteNamespacedConfigMap({ namespace, name: 'before' });
    await eventually(() => seen.length >= 5, 'five informer events');
    expect(seen).toEqual(['add before', 'add x', 'add y', 'update x 1', 'delete before']);
    await eventually(() => picked.length >= 1, 'the selected add');
    expect(picked).toEqual(['add x']);
    expect(informer.list(namespace).map((o) => o.metadata?.name).sort()).toEqual(['x', 'y']);
    expect(informer.get('x', namespace)?.data).toEqual({ v: '1' });

    // a 410 ends every watch: the informer lists again, and reports what changed meanwhile
    const connectsBefore = connects;
    const listsBefore = lists;
    expect(t.server.watch.expireWatchers()).toBeGreaterThanOrEqual(2);
    await eventually(() => lists > listsBefore && connects > connectsBefore, 'the re-list');
    await core.deleteNamespacedConfigMap({ namespace, name: 'x' });
    await eventually(() => picked.length >= 2, 'the selected delete');
    expect(picked).toEqual(['add x', 'delete x']);
    await eventually(() => seen.length >= 6, 'the delete after the re-list');
    expect(seen.slice(5)).toEqual(['delete x']);
    expect(errors).toEqual([]);
    await informer.stop();
    await selected.stop();
  });
});

describe('non-resource paths and reviews', () => {
  it.concurrent('Health: readyz and livez answer true; VersionApi', async ({ expect }) => {
    const health = new k8s.Health(kc);
    expect(await health.readyz({})).toBe(true);
    expect(await health.livez({})).toBe(true);
    const version = await kc.makeApiClient(k8s.VersionApi).getCode();
    expect(version.major).toBe('1');
    expect(version.gitVersion).toMatch(/^v1\.32\./);
  });

  it.concurrent('AuthenticationV1Api.createSelfSubjectReview and the AuthorizationV1Api access reviews', async ({ expect }) => {
    const review = await kc.makeApiClient(k8s.AuthenticationV1Api).createSelfSubjectReview({ body: {} });
    expect(review).toMatchObject({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
    expect(review.status?.userInfo?.groups).toContain('system:masters');
    expect(review.status?.userInfo?.groups).toContain('system:authenticated');
    const authz = kc.makeApiClient(k8s.AuthorizationV1Api);
    const self = await authz.createSelfSubjectAccessReview({ body: { spec: { resourceAttributes: { verb: 'delete', resource: 'nodes' } } } });
    expect(self.status).toMatchObject({ allowed: true });
    const other = await authz.createSubjectAccessReview({ body: { spec: { user: 'nobody', resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'default' } } } });
    expect(other.status).toMatchObject({ allowed: false });
    const local = await authz.createNamespacedLocalSubjectAccessReview({
      namespace: 'default',
      body: { spec: { user: 'nobody', groups: ['system:masters'], resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'default' } } },
    });
    expect(local.status?.allowed).toBe(true);
    const mismatch = await apiError(authz.createNamespacedLocalSubjectAccessReview({ namespace: 'default', body: { spec: { user: 'x', resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'other' } } } }));
    expect(mismatch.code).toBe(400);
    const rules = await authz.createSelfSubjectRulesReview({ body: { spec: { namespace: 'default' } } });
    expect(rules.status?.resourceRules).toContainEqual(expect.objectContaining({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }));
  });
});

describe('credentials from a kubeconfig', () => {
  let token: string;
  let saNamespace: string;

  beforeAll(async () => {
    saNamespace = await newNamespace('creds');
    await core.createNamespacedServiceAccount({ namespace: saNamespace, body: { metadata: { name: 'robot' } } });
    const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac.createNamespacedRoleBinding({
      namespace: saNamespace,
      body: { metadata: { name: 'robot-view' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'ServiceAccount', name: 'robot', namespace: saNamespace }] },
    });
    const tr = await core.createNamespacedServiceAccountToken({ namespace: saNamespace, name: 'robot', body: { spec: { audiences: [], expirationSeconds: 3600 } } });
    expect(tr.status?.token.split('.')).toHaveLength(3);
    expect(tr.status?.expirationTimestamp).toBeInstanceOf(Date);
    token = tr.status!.token;
    await core.createNamespacedConfigMap({ namespace: saNamespace, body: { metadata: { name: 'visible' } } });
  });

  /** a kubeconfig file with the admin's cluster entry and the given user entry, loaded as users load one */
  async function kubeconfigWith(name: string, user: Record<string, unknown>): Promise<k8s.KubeConfig> {
    const admin = kc.getCurrentCluster()!;
    const file = join(dir, `${name}.kubeconfig`);
    const config = {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'orch', cluster: { server: admin.server, 'certificate-authority-data': Buffer.from(t.server.caPem).toString('base64') } }],
      users: [{ name, user }],
      contexts: [{ name, context: { cluster: 'orch', user: name, namespace: saNamespace } }],
      'current-context': name,
    };
    await writeFile(file, JSON.stringify(config));
    const out = new k8s.KubeConfig();
    out.loadFromFile(file);
    return out;
  }

  async function whoAmI(config: k8s.KubeConfig): Promise<k8s.V1UserInfo | undefined> {
    return (await config.makeApiClient(k8s.AuthenticationV1Api).createSelfSubjectReview({ body: {} })).status?.userInfo;
  }

  async function checkRobot(config: k8s.KubeConfig): Promise<void> {
    const user = await whoAmI(config);
    expect(user?.username).toBe(`system:serviceaccount:${saNamespace}:robot`);
    expect(user?.groups).toEqual(['system:serviceaccounts', `system:serviceaccounts:${saNamespace}`, 'system:authenticated']);
    const api = config.makeApiClient(k8s.CoreV1Api);
    expect((await api.listNamespacedConfigMap({ namespace: saNamespace })).items.map((o) => o.metadata?.name)).toContain('visible');
    const denied = await apiError(api.createNamespacedConfigMap({ namespace: saNamespace, body: { metadata: { name: 'nope' } } }));
    expect(denied.code).toBe(403);
    expect(denied.status).toMatchObject({
      reason: 'Forbidden',
      details: { kind: 'configmaps' },
      message: `configmaps is forbidden: User "system:serviceaccount:${saNamespace}:robot" cannot create resource "configmaps" in API group "" in the namespace "${saNamespace}"`,
    });
  }

  it('client certificates (the admin kubeconfig)', async () => {
    const user = await whoAmI(kc);
    expect(user?.username).toBe('orch-admin');
    expect(user?.groups).toContain('system:masters');
  });

  it('a bearer token from TokenRequest', async () => {
    await checkRobot(await kubeconfigWith('token', { token }));
    const bad = await kubeconfigWith('bad-token', { token: 'not.a.token' });
    const unauthorized = await apiError(bad.makeApiClient(k8s.CoreV1Api).listNamespacedConfigMap({ namespace: saNamespace }));
    expect(unauthorized.code).toBe(401);
  });

  it('an exec credential plugin', async () => {
    const script = join(dir, 'credential-plugin.sh');
    const credential = JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token } });
    await writeFile(script, `#!/bin/sh\ncat <<'EOF'\n${credential}\nEOF\n`);
    await chmod(script, 0o755);
    await checkRobot(await kubeconfigWith('exec', { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: script, interactiveMode: 'Never' } }));
  });

  it('an exec credential plugin that hands over a client certificate', async () => {
    const pki = await loadPki(join(t.dataDir, 'pki'));
    const cert = await issueClientCertificate(pki, { commonName: 'exec-cert-user', organizations: ['exec-group'] });
    const script = join(dir, 'cert-plugin.sh');
    const credential = JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { clientCertificateData: cert.certPem, clientKeyData: cert.keyPem } });
    await writeFile(script, `#!/bin/sh\ncat <<'EOF'\n${credential}\nEOF\n`);
    await chmod(script, 0o755);
    const config = await kubeconfigWith('exec-cert', { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: script, interactiveMode: 'Never' } });
    const user = await whoAmI(config);
    expect(user).toMatchObject({ username: 'exec-cert-user', groups: ['exec-group', 'system:authenticated'] });
  });

  it('an informer whose user may not list reports the 403 on its error callback', async () => {
    const robot = await kubeconfigWith('informer-robot', { token });
    const api = robot.makeApiClient(k8s.CoreV1Api);
    // the view role has no secrets
    const informer = k8s.makeInformer(robot, `/api/v1/namespaces/${saNamespace}/secrets`, () => api.listNamespacedSecret({ namespace: saNamespace }));
    const errors: unknown[] = [];
    informer.on('error', (e) => errors.push(e));
    await informer.start();
    await eventually(() => errors.length > 0, 'the informer error');
    const e = errors[0];
    expect(e).toBeInstanceOf(k8s.ApiException);
    expect((e as k8s.ApiException<string>).code).toBe(403);
    expect(JSON.parse((e as k8s.ApiException<string>).body)).toMatchObject({ reason: 'Forbidden', details: { kind: 'secrets' } });
    await informer.stop();
  });

  it('in-cluster: the token file and CA under the service account path', async () => {
    const root = join(dir, 'in-cluster');
    const sa = join(root, 'var/run/secrets/kubernetes.io/serviceaccount');
    await mkdir(sa, { recursive: true });
    await writeFile(join(sa, 'token'), token);
    await writeFile(join(sa, 'ca.crt'), t.server.caPem);
    await writeFile(join(sa, 'namespace'), saNamespace);
    const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
    process.env.KUBERNETES_SERVICE_HOST = '127.0.0.1';
    process.env.KUBERNETES_SERVICE_PORT = String(t.server.port);
    const inCluster = new k8s.KubeConfig();
    try {
      inCluster.loadFromCluster(root);
    } finally {
      for (const [k, v] of [['KUBERNETES_SERVICE_HOST', saved.host], ['KUBERNETES_SERVICE_PORT', saved.port]] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
    expect(inCluster.getContextObject(inCluster.getCurrentContext())?.namespace).toBe(saNamespace);
    await checkRobot(inCluster);
  });
});
