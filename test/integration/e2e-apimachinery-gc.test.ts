// Kubernetes' e2e "[sig-api-machinery] Garbage collector" tests
// (test/e2e/apimachinery/garbage_collector.go) on a started orch server with
// kube's group names: ReplicationControllers, Deployments and their
// ReplicaSets and pods deleted with each propagation policy (and none: a
// core/v1 ReplicationController orphans by default), several owners, an
// ownership cycle, and custom resources as owners. The pods are objects only
// (no node runs them): the GC tests need their ownerReferences, not their
// containers.

import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import {
  type Obj, type TestServer, call, createCrdAndWait, crPath, deleteCrdAndWait, generateName, getOrUndefined, listItems, newNamespace,
  randomNameCrd, useKubeServer,
} from '../helpers/kube-e2e.js';

let t: TestServer;
useKubeServer((s) => (t = s));

const SMP = 'application/strategic-merge-patch+json';
const rcs = (ns: string): string => `/api/v1/namespaces/${ns}/replicationcontrollers`;
const pods = (ns: string): string => `/api/v1/namespaces/${ns}/pods`;
const deployments = (ns: string): string => `/apis/apps/v1/namespaces/${ns}/deployments`;
const replicaSets = (ns: string): string => `/apis/apps/v1/namespaces/${ns}/replicasets`;

let labelCount = 0;
/** getUniqLabel */
function uniqLabel(key: string, value: string): Record<string, string> {
  const n = String(++labelCount).padStart(5, '0');
  return { [`${key}-${n}`]: `${value}-${n}` };
}

const podTemplate = (labels: Record<string, string>): Obj => ({
  metadata: { labels },
  spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'nginx', image: 'registry.k8s.io/e2e-test-images/nginx:1.14-4' }] },
});

/** newOwnerRC */
const ownerRc = (name: string, replicas: number, labels: Record<string, string>): Obj => ({
  apiVersion: 'v1', kind: 'ReplicationController', metadata: { name }, spec: { replicas, selector: labels, template: podTemplate(labels) },
});

/** newOwnerDeployment (e2edeployment.NewDeployment: 2 replicas, RollingUpdate) */
const ownerDeployment = (name: string, labels: Record<string, string>): Obj => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, labels },
  spec: { replicas: 2, selector: { matchLabels: labels }, strategy: { type: 'RollingUpdate' }, template: podTemplate(labels) },
});

/** newGCPod */
const gcPod = (name: string): Obj => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name },
  spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'nginx', image: 'registry.k8s.io/e2e-test-images/nginx:1.14-4' }] },
});

const uidPrecondition = (uid: string, propagationPolicy?: string): Obj => ({
  apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid }, ...(propagationPolicy ? { propagationPolicy } : {}),
});

/** waitForReplicas: the rc's status.replicas reaches its spec.replicas */
async function waitForReplicas(ns: string, rc: Obj): Promise<void> {
  await eventually(async () => (await call(t, 'GET', `${rcs(ns)}/${rc.metadata.name}`)).status?.replicas === rc.spec.replicas,
    `${rc.metadata.name} status.replicas = ${rc.spec.replicas}`, 30_000);
}

/** verifyRemainingObjects */
async function remaining(ns: string, kinds: Record<string, (ns: string) => string>): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [k, path] of Object.entries(kinds)) out[k] = (await listItems(t, path(ns))).length;
  return out;
}

async function waitRemaining(ns: string, kinds: Record<string, (ns: string) => string>, want: Record<string, number>): Promise<void> {
  let last: Record<string, number> = {};
  await eventually(async () => JSON.stringify((last = await remaining(ns, kinds))) === JSON.stringify(want), 'remaining objects', {
    timeoutMs: 30_000, context: () => JSON.stringify(last),
  });
}

/** the pause the e2e tests make to see whether the collector deletes what it must not (30 s there) */
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 1500));

/** a random cluster-scoped CRD, an owner of its kind and a dependent of it */
async function customOwnerAndDependent(): Promise<{ crd: Obj; path: string; apiVersion: string; kind: string; ownerName: string; dependentName: string }> {
  const crd = await createCrdAndWait(t, randomNameCrd('Cluster'));
  const path = crPath(crd);
  const apiVersion = `${crd.spec.group}/${crd.spec.versions[0].name}`;
  const kind = crd.spec.names.kind as string;
  const ownerName = generateName('owner');
  const owner = await call(t, 'POST', path, { apiVersion, kind, metadata: { name: ownerName } }, undefined, 201);
  const dependentName = generateName('dependent');
  await call(t, 'POST', path, {
    apiVersion, kind, metadata: { name: dependentName, ownerReferences: [{ uid: owner.metadata.uid, apiVersion, kind, name: ownerName }] },
  }, undefined, 201);
  return { crd, path, apiVersion, kind, ownerName, dependentName };
}

describe('Garbage collector (garbage_collector.go)', () => {
  it('[Conformance] should delete pods created by rc when not orphaning', async () => {
    const ns = await newNamespace(t, 'gc');
    const rc = await call(t, 'POST', rcs(ns), ownerRc('simpletest.rc', 2, uniqLabel('gctest', 'delete_pods')), undefined, 201);
    await eventually(async () => (await listItems(t, pods(ns))).length > 0, 'some pods');
    await call(t, 'DELETE', `${rcs(ns)}/${rc.metadata.name}`, uidPrecondition(rc.metadata.uid, 'Background'));
    await waitRemaining(ns, { rcs, pods }, { rcs: 0, pods: 0 });
  });

  it('[Conformance] should orphan pods created by rc if delete options say so', async () => {
    const ns = await newNamespace(t, 'gc');
    const rc = await call(t, 'POST', rcs(ns), ownerRc('simpletest.rc', 10, uniqLabel('gctest', 'orphan_pods')), undefined, 201);
    await waitForReplicas(ns, rc);
    await call(t, 'DELETE', `${rcs(ns)}/${rc.metadata.name}`, uidPrecondition(rc.metadata.uid, 'Orphan'));
    await eventually(async () => (await listItems(t, rcs(ns))).length === 0, 'rc deleted', 30_000);
    await settle();
    const left = await listItems(t, pods(ns));
    expect(left).toHaveLength(10);
    // the collector took the deleted owner out of each pod's references
    for (const p of left) expect(p.metadata.ownerReferences ?? []).toEqual([]);
  });

  it('should orphan pods created by rc if deleteOptions.OrphanDependents is nil', async () => {
    const ns = await newNamespace(t, 'gc');
    const rc = await call(t, 'POST', rcs(ns), ownerRc('simpletest.rc', 2, uniqLabel('gctest', 'orphan_pods_nil_option')), undefined, 201);
    await waitForReplicas(ns, rc);
    // core/v1 ReplicationControllers orphan by default (rcStrategy.DefaultGarbageCollectionPolicy)
    await call(t, 'DELETE', `${rcs(ns)}/${rc.metadata.name}`, { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: rc.metadata.uid } });
    await eventually(async () => (await listItems(t, rcs(ns))).length === 0, 'rc deleted');
    await settle();
    expect(await listItems(t, pods(ns))).toHaveLength(2);
  });

  it('[Conformance] should delete RS created by deployment when not orphaning', async () => {
    const ns = await newNamespace(t, 'gc');
    const d = await call(t, 'POST', deployments(ns), ownerDeployment('simpletest.deployment', uniqLabel('gctest', 'delete_rs')), undefined, 201);
    await eventually(async () => (await listItems(t, replicaSets(ns))).length > 0, 'a ReplicaSet');
    await call(t, 'DELETE', `${deployments(ns)}/${d.metadata.name}`, uidPrecondition(d.metadata.uid, 'Background'));
    await waitRemaining(ns, { deployments, replicaSets, pods }, { deployments: 0, replicaSets: 0, pods: 0 });
  });

  it('[Conformance] should orphan RS created by deployment when deleteOptions.PropagationPolicy is Orphan', async () => {
    const ns = await newNamespace(t, 'gc');
    const d = await call(t, 'POST', deployments(ns), ownerDeployment('simpletest.deployment', uniqLabel('gctest', 'orphan_rs')), undefined, 201);
    const rs = await eventually(async () => (await listItems(t, replicaSets(ns)))[0], 'a ReplicaSet');
    await eventually(async () => {
      const cur = await call(t, 'GET', `${replicaSets(ns)}/${rs.metadata.name}`);
      return cur.status?.observedGeneration >= rs.metadata.generation && cur.status?.replicas === rs.spec.replicas;
    }, 'the ReplicaSet status caught up');
    await call(t, 'DELETE', `${deployments(ns)}/${d.metadata.name}`, uidPrecondition(d.metadata.uid, 'Orphan'));
    await eventually(async () => (await listItems(t, deployments(ns))).length === 0, 'deployment deleted');
    expect(await remaining(ns, { deployments, replicaSets, pods })).toEqual({ deployments: 0, replicaSets: 1, pods: 2 });
    for (const r of await listItems(t, replicaSets(ns))) {
      expect((r.metadata.ownerReferences ?? []).filter((o: Obj) => o.controller)).toEqual([]);
    }
  });

  it("[Conformance] should keep the rc around until all its pods are deleted if the deleteOptions says so", async () => {
    const ns = await newNamespace(t, 'gc');
    const rc = await call(t, 'POST', rcs(ns), ownerRc('simpletest.rc', 10, uniqLabel('gctest', 'delete_pods_foreground')), undefined, 201);
    await waitForReplicas(ns, rc);
    const deleting = await call(t, 'DELETE', `${rcs(ns)}/${rc.metadata.name}`, uidPrecondition(rc.metadata.uid, 'Foreground'));
    // the rc stays, marked, while its pods go
    expect(deleting.metadata.deletionTimestamp).toBeTruthy();
    expect(deleting.metadata.finalizers).toContain('foregroundDeletion');
    await eventually(async () => (await getOrUndefined(t, `${rcs(ns)}/${rc.metadata.name}`)) === undefined, 'rc deleted', 30_000);
    expect(await listItems(t, pods(ns))).toEqual([]);
  });

  it("[Conformance] should not delete dependents that have both valid owner and owner that's waiting for dependents to be deleted", async () => {
    const ns = await newNamespace(t, 'gc');
    const replicas = 10;
    const half = replicas / 2;
    const rc1 = await call(t, 'POST', rcs(ns), ownerRc('simpletest-rc-to-be-deleted', replicas, uniqLabel('gctest_d', 'valid_and_pending_owners_d')), undefined, 201);
    const rc2 = await call(t, 'POST', rcs(ns), ownerRc('simpletest-rc-to-stay', 0, uniqLabel('gctest_s', 'valid_and_pending_owners_s')), undefined, 201);
    await waitForReplicas(ns, rc1);
    const all = await listItems(t, pods(ns));
    const patch = { metadata: { ownerReferences: [{ apiVersion: 'v1', kind: 'ReplicationController', name: rc2.metadata.name, uid: rc2.metadata.uid }] } };
    for (const p of all.slice(0, half)) {
      const patched = await call(t, 'PATCH', `${pods(ns)}/${p.metadata.name}`, patch, SMP);
      // ownerReferences merge by uid: rc1's reference stays
      expect(patched.metadata.ownerReferences.map((o: Obj) => o.name).sort()).toEqual([rc1.metadata.name, rc2.metadata.name].sort());
    }
    await call(t, 'DELETE', `${rcs(ns)}/${rc1.metadata.name}`, uidPrecondition(rc1.metadata.uid, 'Foreground'));
    await eventually(async () => (await getOrUndefined(t, `${rcs(ns)}/${rc1.metadata.name}`)) === undefined, 'rc1 deleted', 30_000);
    const left = await listItems(t, pods(ns));
    expect(left).toHaveLength(half);
    for (const p of left) {
      expect(p.metadata.deletionTimestamp).toBeUndefined();
      expect(p.metadata.ownerReferences).toHaveLength(1);
      expect(p.metadata.ownerReferences[0].uid).toBe(rc2.metadata.uid);
    }
  });

  it('[Conformance] should not be blocked by dependency circle', async () => {
    const ns = await newNamespace(t, 'gc');
    const created: Obj[] = [];
    for (const name of ['pod1', 'pod2', 'pod3']) created.push(await call(t, 'POST', pods(ns), gcPod(name), undefined, 201));
    const refTo = (o: Obj): Obj => ({
      metadata: { ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: o.metadata.name, uid: o.metadata.uid, controller: true, blockOwnerDeletion: true }] },
    });
    // pod1 is owned by pod3, pod2 by pod1, pod3 by pod2
    const pod1 = await call(t, 'PATCH', `${pods(ns)}/pod1`, refTo(created[2]!), SMP);
    await call(t, 'PATCH', `${pods(ns)}/pod2`, refTo(created[0]!), SMP);
    await call(t, 'PATCH', `${pods(ns)}/pod3`, refTo(created[1]!), SMP);
    await call(t, 'DELETE', `${pods(ns)}/pod1`, uidPrecondition(pod1.metadata.uid, 'Foreground'));
    await eventually(async () => (await listItems(t, pods(ns))).length === 0, 'all pods deleted', 30_000);
  });

  it('should support cascading deletion of custom resources', async () => {
    const { crd, path, apiVersion, kind, ownerName, dependentName } = await customOwnerAndDependent();
    await call(t, 'DELETE', `${path}/${ownerName}`, { propagationPolicy: 'Background' });
    const canaryName = generateName('canary');
    await call(t, 'POST', path, { apiVersion, kind, metadata: { name: canaryName } }, undefined, 201);
    await call(t, 'DELETE', `${path}/${canaryName}`, { propagationPolicy: 'Foreground' });
    await eventually(async () => (await getOrUndefined(t, `${path}/${dependentName}`)) === undefined, 'dependent deleted');
    expect(await getOrUndefined(t, `${path}/${ownerName}`)).toBeUndefined();
    await deleteCrdAndWait(t, crd.metadata.name);
  });

  it('should support orphan deletion of custom resources', async () => {
    const { crd, path, ownerName, dependentName } = await customOwnerAndDependent();
    await call(t, 'DELETE', `${path}/${ownerName}`, { propagationPolicy: 'Orphan' });
    await eventually(async () => (await getOrUndefined(t, `${path}/${ownerName}`)) === undefined, 'owner deleted');
    await settle();
    const dependent = await getOrUndefined(t, `${path}/${dependentName}`);
    expect(dependent).toBeDefined();
    expect(dependent!.metadata.ownerReferences ?? []).toEqual([]);
    await deleteCrdAndWait(t, crd.metadata.name);
  });
});
