// Kubernetes' API-only e2e conformance tests of kinds around scheduling and
// policy, on orch with kube's group names: LimitRange
// (test/e2e/scheduling/limit_range.go), Lease (test/e2e/common/node/lease.go),
// CertificateSigningRequest (test/e2e/auth/certificates.go "should support
// CSR API operations"), PriorityClass endpoints
// (test/e2e/scheduling/preemption.go) and the FlowSchema and
// PriorityLevelConfiguration API operations
// (test/e2e/apimachinery/flowcontrol.go).

import { describe, expect, it } from 'vitest';
import { createCertificateRequest } from '../../src/core/x509.js';
import { type Obj, type TestServer, annotations, call, generateName, getOrUndefined, listItems, newNamespace, useKubeServer } from '../helpers/kube-e2e.js';
import { eventually } from '../helpers/eventually.js';
import { openWatch } from '../helpers/watch-stream.js';

let t: TestServer;
useKubeServer((s) => (t = s));

const STRATEGIC = 'application/strategic-merge-patch+json';
const rv = (o: Obj): bigint => BigInt(o.metadata.resourceVersion as string);
const sel = (s: string) => encodeURIComponent(s);

/** the discovery checks: the group and version in /apis and /apis/{group}, the resources in /apis/{group}/{version} */
async function expectDiscovered(group: string, version: string, resources: string[]): Promise<void> {
  const groups = (await call(t, 'GET', '/apis')).groups as Obj[];
  expect(groups.find((g) => g.name === group)?.versions.map((v: Obj) => v.version)).toContain(version);
  expect(((await call(t, 'GET', `/apis/${group}`)).versions as Obj[]).map((v) => v.version)).toContain(version);
  const names = ((await call(t, 'GET', `/apis/${group}/${version}`)).resources as Obj[]).map((r) => r.name);
  for (const r of resources) expect(names).toContain(r);
}

/**
 * the watch from the list's resourceVersion (`query` selects), a merge patch (`patch`) and an update
 * (`update` changes what the patch returned): every event up to the patched object is MODIFIED
 */
async function patchUpdateWatch(collection: string, name: string, listRv: string, query: string, patch: Obj, update: (o: Obj) => void): Promise<{ patched: Obj; updated: Obj }> {
  const w = openWatch(t.server, `${collection}?watch=true&resourceVersion=${listRv}&${query}`);
  try {
    const patched = await call(t, 'PATCH', `${collection}/${name}`, patch);
    expect(annotations(patched).patched).toBe('true');
    // retry.RetryOnConflict around get, change and update (a controller may write status meanwhile)
    const updated = await eventually(async () => {
      const toUpdate = await call(t, 'GET', `${collection}/${name}`);
      toUpdate.metadata.annotations.updated = 'true';
      update(toUpdate);
      const r = await t.request('PUT', `${collection}/${name}`, { body: toUpdate });
      if (r.status === 409) return undefined;
      expect(r.status, r.text).toBe(200);
      return r.json<Obj>();
    }, `update of ${name}`);
    expect(annotations(updated).updated).toBe('true');
    await w.waitUntil((e) => e.type !== 'MODIFIED' || annotations(e.object).patched === 'true');
    expect(w.events.map((e) => e.type)).toEqual(w.events.map(() => 'MODIFIED'));
    return { patched, updated };
  } finally {
    w.close();
  }
}

const conditionTypes = (o: Obj): string[] => ((o.status?.conditions ?? []) as Obj[]).map((c) => c.type as string);

describe('[sig-scheduling] LimitRange', () => {
  const resources = (cpu: string, memory: string, storage: string): Obj =>
    Object.fromEntries(Object.entries({ cpu, memory, 'ephemeral-storage': storage }).filter(([, v]) => v !== ''));
  const limits = (): Obj => ({
    type: 'Container',
    min: resources('50m', '100Mi', '100Gi'),
    max: resources('500m', '500Mi', '500Gi'),
    default: resources('500m', '500Mi', '500Gi'),
    defaultRequest: resources('100m', '200Mi', '200Gi'),
    maxLimitRequestRatio: {},
  });
  const testPod = (name: string, requests: Obj, lim: Obj): Obj => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { containers: [{ name: 'pause', image: 'registry.k8s.io/pause:3.10', resources: { requests, limits: lim } }] },
  });

  it('should create a LimitRange with defaults and ensure pod has those defaults applied. [Conformance]', async () => {
    const ns = await newNamespace(t, 'limitrange');
    const LR = `/api/v1/namespaces/${ns}/limitranges`;
    const PODS = `/api/v1/namespaces/${ns}/pods`;
    const value = `${Date.now()}${crypto.randomUUID()}`;
    const list = await call(t, 'GET', `${LR}?labelSelector=${sel(`time=${value}`)}`);
    expect(list.items).toHaveLength(0);
    const w = openWatch(t.server, `${LR}?watch=true&resourceVersion=${list.metadata.resourceVersion}&labelSelector=${sel(`time=${value}`)}`);
    try {
      await call(t, 'POST', LR, { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'limit-range', labels: { time: value } }, spec: { limits: [limits()] } });
      expect((await w.waitFor(1))[0]!.type).toBe('ADDED');
    } finally {
      w.close();
    }
    const lr = await call(t, 'GET', `${LR}/limit-range`);
    expect([lr.spec.limits[0].defaultRequest, lr.spec.limits[0].default]).toEqual([resources('100m', '200Mi', '200Gi'), resources('500m', '500Mi', '500Gi')]);

    const noResources = await call(t, 'POST', PODS, testPod('pod-no-resources', {}, {}));
    expect(noResources.spec.containers[0].resources).toEqual({ requests: resources('100m', '200Mi', '200Gi'), limits: resources('500m', '500Mi', '500Gi') });
    // a limit and no request: the request defaults to the limit, not to defaultRequest
    await call(t, 'POST', PODS, testPod('pod-partial-resources', resources('', '150Mi', '150Gi'), resources('300m', '', '')));
    const partial = await call(t, 'GET', `${PODS}/pod-partial-resources`);
    expect(partial.spec.containers[0].resources).toEqual({ requests: resources('300m', '150Mi', '150Gi'), limits: resources('300m', '500Mi', '500Gi') });

    await call(t, 'POST', PODS, testPod('pfpod', resources('10m', '50Mi', '50Gi'), {}), undefined, 403);
    // the default limit (500m) is put in first, so the pod's own validation refuses a request above it, as in kube
    await call(t, 'POST', PODS, testPod('pfpod', resources('600m', '600Mi', '600Gi'), {}), undefined, 422);

    lr.spec.limits[0].min = resources('9m', '49Mi', '49Gi');
    const updated = await call(t, 'PUT', `${LR}/limit-range`, lr);
    expect(updated.spec.limits[0].min).toEqual(resources('9m', '49Mi', '49Gi'));
    await call(t, 'POST', PODS, testPod('pfpod', resources('10m', '50Mi', '50Gi'), {}), undefined, 201);
    await call(t, 'POST', PODS, testPod('pfpod-max', resources('600m', '600Mi', '600Gi'), {}), undefined, 422);

    await call(t, 'DELETE', `${LR}/limit-range`, { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 30 });
    expect(await listItems(t, LR)).toHaveLength(0);
    await call(t, 'POST', PODS, testPod('pfpod2', resources('600m', '600Mi', '600Gi'), {}), undefined, 201);
  });

  it('should list, patch and delete a LimitRange by collection [Conformance]', async () => {
    const ns = await newNamespace(t, 'limitrange');
    const lrName = `e2e-limitrange-${Math.random().toString(36).slice(2, 7)}`;
    const body = { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: lrName, labels: { 'e2e-test': lrName, [lrName]: 'created' } }, spec: { limits: [limits()] } };
    const created = await call(t, 'POST', `/api/v1/namespaces/${ns}/limitranges`, body);
    expect(created.metadata.resourceVersion).toMatch(/^\d+$/);
    const other = await newNamespace(t, lrName);
    await call(t, 'POST', `/api/v1/namespaces/${other}/limitranges`, body);
    expect(await listItems(t, `/api/v1/limitranges?labelSelector=${sel(`e2e-test=${lrName}`)}`)).toHaveLength(2);

    const newLimits = [{ ...created.spec.limits[0], min: resources('9m', '49Mi', '49Gi') }];
    // json.Marshal of a LimitRange with only the creationTimestamp, the label and the limits
    const patch = { metadata: { creationTimestamp: created.metadata.creationTimestamp, labels: { [lrName]: 'patched' } }, spec: { limits: newLimits } };
    const patched = await call(t, 'PATCH', `/api/v1/namespaces/${ns}/limitranges/${lrName}`, patch, STRATEGIC);
    expect(patched.metadata.labels[lrName]).toBe('patched');
    expect(patched.spec.limits[0].min).toEqual(resources('9m', '49Mi', '49Gi'));
    expect(rv(patched)).toBeGreaterThan(rv(created));

    await call(t, 'DELETE', `/api/v1/namespaces/${ns}/limitranges?labelSelector=${sel(`${lrName}=patched`)}`);
    expect(await listItems(t, `/api/v1/namespaces/${ns}/limitranges?labelSelector=${sel(`${lrName}=patched`)}`)).toHaveLength(0);
    expect(await listItems(t, `/api/v1/limitranges?labelSelector=${sel(`e2e-test=${lrName}`)}`)).toHaveLength(1);
  });
});

describe('[sig-node] Lease', () => {
  // metav1.MicroTime of time.Time{} plus seconds, as Go marshals it
  const micro = (s: number): string => {
    const d = new Date(0);
    d.setUTCFullYear(1, 0, 1);
    d.setUTCHours(0, 0, s, 0);
    return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
  };
  const spec = (holder: string, duration: number, acquire: number, renew: number, transitions: number): Obj => ({
    holderIdentity: holder,
    leaseDurationSeconds: duration,
    acquireTime: micro(acquire),
    renewTime: micro(renew),
    leaseTransitions: transitions,
  });

  it('lease API should be available [Conformance]', async () => {
    const ns = await newNamespace(t, 'lease-test');
    const LEASES = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`;
    expect(micro(2)).toBe('0001-01-01T00:00:02.000000Z');
    const created = await call(t, 'POST', LEASES, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'lease' }, spec: spec('holder', 30, 2, 5, 0) });
    expect(created.metadata.resourceVersion).toMatch(/^\d+$/);
    expect((await call(t, 'GET', `${LEASES}/lease`)).spec).toEqual(spec('holder', 30, 2, 5, 0));

    created.spec = spec('holder2', 30, 20, 50, 1);
    await call(t, 'PUT', `${LEASES}/lease`, created);
    const read = await call(t, 'GET', `${LEASES}/lease`);
    expect(read.spec).toEqual(spec('holder2', 30, 20, 50, 1));

    // strategicpatch.CreateTwoWayMergePatch of the read lease and one with the new spec
    const want = spec('holder3', 60, 50, 70, 2);
    await call(t, 'PATCH', `${LEASES}/lease`, { spec: want }, STRATEGIC);
    const patched = await call(t, 'GET', `${LEASES}/lease`);
    expect(patched.spec).toEqual(want);
    expect(rv(patched)).toBeGreaterThan(rv(created));

    await call(t, 'POST', LEASES, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'lease2', labels: { deletecollection: 'true' } }, spec: spec('holder', 30, 2, 5, 0) });
    expect(await listItems(t, LEASES)).toHaveLength(2);
    await call(t, 'DELETE', `${LEASES}?labelSelector=${sel('deletecollection=true')}`);
    expect(await listItems(t, LEASES)).toHaveLength(1);
    await call(t, 'DELETE', `${LEASES}/lease`);
    expect(await getOrUndefined(t, `${LEASES}/lease`)).toBeUndefined();
    await call(t, 'GET', '/apis/coordination.k8s.io/v1/leases');
  });
});

describe('[sig-auth] Certificates API [Privileged:ClusterAdmin]', () => {
  it('should support CSR API operations [Conformance]', async () => {
    const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
    const { csrPem } = await createCertificateRequest({ commonName: 'e2e.example.com', dnsNames: ['e2e.example.com'] });
    // a self-signed certificate (kube makes one for e2e.example.com): the server's CA is one
    const certificate = Buffer.from(t.server.caPem).toString('base64');
    const signerName = `example.com/e2e-${generateName('certificates-')}`;
    const template = {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { generateName: 'e2e-example-csr-' },
      spec: { request: Buffer.from(csrPem).toString('base64'), signerName, expirationSeconds: 3600, usages: ['digital signature', 'key encipherment', 'server auth'] },
    };
    await expectDiscovered('certificates.k8s.io', 'v1', ['certificatesigningrequests', 'certificatesigningrequests/approval', 'certificatesigningrequests/status']);

    await call(t, 'POST', CSRS, template);
    await call(t, 'POST', CSRS, template);
    const created = await call(t, 'POST', CSRS, template);
    const name = created.metadata.name as string;
    const got = await call(t, 'GET', `${CSRS}/${name}`);
    expect(got.metadata.uid).toBe(created.metadata.uid);
    expect(got.spec.expirationSeconds).toBe(3600);
    const bySigner = `fieldSelector=${sel(`spec.signerName=${signerName}`)}`;
    const list = await call(t, 'GET', `${CSRS}?${bySigner}`);
    expect(list.items).toHaveLength(3);
    await patchUpdateWatch(CSRS, name, list.metadata.resourceVersion, `fieldSelector=${sel(`metadata.name=${name}`)}`, { metadata: { annotations: { patched: 'true' } } }, () => {});

    const approval = await call(t, 'GET', `${CSRS}/${name}/approval`);
    expect([approval.apiVersion, approval.kind, approval.metadata.uid]).toEqual(['certificates.k8s.io/v1', 'CertificateSigningRequest', created.metadata.uid]);
    const patchedApproval = await call(t, 'PATCH', `${CSRS}/${name}/approval`, {
      metadata: { annotations: { patchedapproval: 'true' } },
      status: { conditions: [{ type: 'ApprovalPatch', status: 'True', reason: 'e2e' }] },
    });
    expect(conditionTypes(patchedApproval)).toEqual(['ApprovalPatch']);
    expect(annotations(patchedApproval).patchedapproval).toBe('true');
    patchedApproval.status.conditions.push({ type: 'Approved', status: 'True', reason: 'E2E', message: 'Set from an e2e test' });
    const updatedApproval = await call(t, 'PUT', `${CSRS}/${name}/approval`, patchedApproval);
    expect(conditionTypes(updatedApproval)).toEqual(['ApprovalPatch', 'Approved']);

    const status = await call(t, 'GET', `${CSRS}/${name}/status`);
    expect([status.apiVersion, status.kind, status.metadata.uid]).toEqual(['certificates.k8s.io/v1', 'CertificateSigningRequest', created.metadata.uid]);
    const patchedStatus = await call(t, 'PATCH', `${CSRS}/${name}/status`, { metadata: { annotations: { patchedstatus: 'true' } }, status: { certificate } });
    expect(patchedStatus.status.certificate).toBe(certificate);
    expect(annotations(patchedStatus).patchedstatus).toBe('true');
    patchedStatus.status.conditions.push({ type: 'StatusUpdate', status: 'True', reason: 'E2E', message: 'Set from an e2e test' });
    const updatedStatus = await call(t, 'PUT', `${CSRS}/${name}/status`, patchedStatus);
    expect(conditionTypes(updatedStatus)).toHaveLength(patchedStatus.status.conditions.length);
    expect(conditionTypes(updatedStatus).at(-1)).toBe('StatusUpdate');

    await call(t, 'DELETE', `${CSRS}/${name}`);
    expect(await getOrUndefined(t, `${CSRS}/${name}`)).toBeUndefined();
    expect(await listItems(t, `${CSRS}?${bySigner}`)).toHaveLength(2);
    await call(t, 'DELETE', `${CSRS}?${bySigner}`);
    expect(await listItems(t, `${CSRS}?${bySigner}`)).toHaveLength(0);
  });
});

describe('[sig-scheduling] SchedulerPreemption [Serial] PriorityClass endpoints', () => {
  it('verify PriorityClass endpoints can be operated with different HTTP methods [Conformance]', async () => {
    const PCS = '/apis/scheduling.k8s.io/v1/priorityclasses';
    const testUUID = crypto.randomUUID();
    const pcs: Obj[] = [];
    for (const i of [1, 2]) pcs.push(await call(t, 'POST', PCS, { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: `p${i}`, labels: { e2e: testUUID } }, value: i }));
    try {
      // strategicpatch.CreateTwoWayMergePatch of the class and a copy with another value: immutable
      const r = await t.request('PATCH', `${PCS}/p1`, { body: { value: 10 }, headers: { 'content-type': STRATEGIC } });
      expect(r.status, r.text).toBe(422);
      await call(t, 'PUT', `${PCS}/p2`, { ...pcs[1], value: 20 }, undefined, 422);

      await call(t, 'PATCH', `${PCS}/p1`, { description: 'updated description' }, STRATEGIC);
      await call(t, 'PUT', `${PCS}/p2`, { ...pcs[1], description: 'updated description' });
      await call(t, 'GET', PCS);
      for (const pc of pcs) {
        const live = await call(t, 'GET', `${PCS}/${pc.metadata.name}`);
        expect(live.value).toBe(pc.value);
        expect(live.description).toBe('updated description');
        expect(rv(live)).toBeGreaterThan(rv(pc));
      }
    } finally {
      await call(t, 'DELETE', `${PCS}?labelSelector=${sel(`e2e=${testUUID}`)}`);
    }
  });
});

describe('[sig-api-machinery] API priority and fairness', () => {
  const GROUP = 'flowcontrol.apiserver.k8s.io';
  const cases = [
    {
      test: 'should support FlowSchema API operations [Conformance]',
      resource: 'flowschemas',
      labelKey: 'example-e2e-fs-label',
      template: (labels: Obj): Obj => ({
        apiVersion: `${GROUP}/v1`,
        kind: 'FlowSchema',
        metadata: { generateName: 'e2e-example-fs-', labels },
        spec: {
          matchingPrecedence: 10000,
          priorityLevelConfiguration: { name: 'global-default' },
          distinguisherMethod: { type: 'ByUser' },
          rules: [{ subjects: [{ kind: 'User', user: { name: 'example-e2e-non-existent-user' } }], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }] }],
        },
      }),
      patchSpec: { matchingPrecedence: 9999 },
      updateSpec: (o: Obj) => (o.spec.matchingPrecedence = 9000),
      read: (o: Obj) => o.spec.matchingPrecedence as number,
      values: [9999, 9000],
    },
    {
      test: 'should support PriorityLevelConfiguration API operations [Conformance]',
      resource: 'prioritylevelconfigurations',
      labelKey: 'example-e2e-pl-label',
      template: (labels: Obj): Obj => ({
        apiVersion: `${GROUP}/v1`,
        kind: 'PriorityLevelConfiguration',
        metadata: { generateName: 'e2e-example-pl-', labels },
        spec: { type: 'Limited', limited: { nominalConcurrencyShares: 2, limitResponse: { type: 'Reject' } } },
      }),
      patchSpec: { limited: { nominalConcurrencyShares: 4 } },
      updateSpec: (o: Obj) => (o.spec.limited.nominalConcurrencyShares = 6),
      read: (o: Obj) => o.spec.limited.nominalConcurrencyShares as number,
      values: [4, 6],
    },
  ];
  for (const c of cases) {
    it(c.test, async () => {
      await expectDiscovered(GROUP, 'v1', [c.resource, `${c.resource}/status`]);
      const COLL = `/apis/${GROUP}/v1/${c.resource}`;
      const labelValue = Math.random().toString(36).slice(2, 10);
      const bySelector = `labelSelector=${sel(`${c.labelKey}=${labelValue}`)}`;
      try {
        await call(t, 'POST', COLL, c.template({ [c.labelKey]: labelValue }));
        await call(t, 'POST', COLL, c.template({ [c.labelKey]: labelValue }));
        const created = await call(t, 'POST', COLL, c.template({ [c.labelKey]: labelValue }));
        const name = created.metadata.name as string;
        const read = await call(t, 'GET', `${COLL}/${name}`);
        expect(read.metadata.uid).toBe(created.metadata.uid);
        const list = await call(t, 'GET', `${COLL}?${bySelector}`);
        expect(list.items).toHaveLength(3);

        const { patched, updated } = await patchUpdateWatch(COLL, name, list.metadata.resourceVersion, bySelector, { metadata: { annotations: { patched: 'true' } }, spec: c.patchSpec }, c.updateSpec);
        expect([c.read(patched), c.read(updated)]).toEqual(c.values);
        expect(rv(patched)).toBeGreaterThan(rv(created));

        const status = await call(t, 'GET', `${COLL}/${name}/status`);
        expect([status.apiVersion, status.kind, status.metadata.uid]).toEqual([`${GROUP}/v1`, created.kind, created.metadata.uid]);
        const patchedStatus = await call(t, 'PATCH', `${COLL}/${name}/status`, { status: { conditions: [{ type: 'PatchStatusFailed', status: 'False', reason: 'e2e' }] } });
        expect(conditionTypes(patchedStatus)).toContain('PatchStatusFailed');
        const statusUpdated = await eventually(async () => {
          const cur = await call(t, 'GET', `${COLL}/${name}`);
          cur.status = { ...cur.status, conditions: [...((cur.status?.conditions ?? []) as Obj[]), { type: 'StatusUpdateFailed', status: 'False', reason: 'E2E', message: 'Set from an e2e test' }] };
          const r = await t.request('PUT', `${COLL}/${name}/status`, { body: cur });
          return r.status === 409 ? undefined : r.json<Obj>();
        }, `status update of ${name}`);
        expect(conditionTypes(statusUpdated)).toContain('StatusUpdateFailed');

        await call(t, 'DELETE', `${COLL}/${name}`);
        expect(await getOrUndefined(t, `${COLL}/${name}`)).toBeUndefined();
        expect(await listItems(t, `${COLL}?${bySelector}`)).toHaveLength(2);
      } finally {
        await call(t, 'DELETE', `${COLL}?${bySelector}`);
      }
      expect(await listItems(t, `${COLL}?${bySelector}`)).toHaveLength(0);
    });
  }

  // kube-apiserver's configuration consumer keeps each schema's Dangling condition (`kubectl get flowschemas` MISSINGPL)
  it('a FlowSchema carries the Dangling condition of the priority level it names', async () => {
    const FS = `/apis/${GROUP}/v1/flowschemas`;
    const dangling = (name: string, status: string) =>
      eventually(async () => ((await call(t, 'GET', `${FS}/${name}`)).status?.conditions ?? []).find((c: Obj) => c.type === 'Dangling' && c.status === status) as Obj | undefined, `${name} Dangling=${status}`);
    const found = await dangling('catch-all', 'False');
    expect(found).toMatchObject({ reason: 'Found', message: 'This FlowSchema references the PriorityLevelConfiguration object named "catch-all" and it exists' });
    expect(found.lastTransitionTime).toMatch(/Z$/);

    const level = generateName('e2e-level-');
    const name = generateName('e2e-dangling-');
    await call(t, 'POST', FS, { apiVersion: `${GROUP}/v1`, kind: 'FlowSchema', metadata: { name }, spec: { matchingPrecedence: 9000, priorityLevelConfiguration: { name: level } } });
    try {
      expect(await dangling(name, 'True')).toMatchObject({ reason: 'NotFound', message: `This FlowSchema references the PriorityLevelConfiguration object named "${level}" but there is no such object` });
      // other conditions stay: the consumer writes only its own
      await call(t, 'PATCH', `${FS}/${name}/status`, { status: { conditions: [...(await call(t, 'GET', `${FS}/${name}`)).status.conditions, { type: 'Other', status: 'True', reason: 'e2e' }] } });
      await call(t, 'POST', `/apis/${GROUP}/v1/prioritylevelconfigurations`, { apiVersion: `${GROUP}/v1`, kind: 'PriorityLevelConfiguration', metadata: { name: level }, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Reject' } } } });
      expect(await dangling(name, 'False')).toMatchObject({ reason: 'Found' });
      expect(conditionTypes(await call(t, 'GET', `${FS}/${name}`))).toEqual(['Dangling', 'Other']);
      const row = await t.request('GET', `${FS}/${name}`, { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
      expect((row.json<Obj>().rows as Obj[])[0]!.cells).toContain('False');
    } finally {
      await call(t, 'DELETE', `${FS}/${name}`);
      await t.request('DELETE', `/apis/${GROUP}/v1/prioritylevelconfigurations/${level}`);
    }
  });
});
