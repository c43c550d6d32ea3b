// Ports of Kubernetes' API-only e2e tests "[sig-instrumentation] Events" and
// "Events API" (test/e2e/instrumentation/core_events.go, events.go) and
// "[sig-auth] ServiceAccounts" (test/e2e/auth/service_accounts.go) to orch, on
// a started server with kube's group names: core/v1 and events.k8s.io/v1
// events fetched, patched, updated, listed (by label and by the `source` /
// `reportingController` field selectors), deleted one by one and by
// collection; the kube-root-ca.crt ConfigMap kept in every namespace; a
// ServiceAccount's lifecycle and updates; a token requested for one and
// reviewed; pods of ServiceAccounts that opt in or out of the token's
// automount; "[sig-auth] SubjectReview" (subjectreviews.go): a
// SubjectAccessReview and a LocalSubjectAccessReview agreeing with what an
// impersonated ServiceAccount may do.

import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { type Obj, type TestServer, call, generateName, getOrUndefined, listItems, newNamespace, useKubeServer } from '../helpers/kube-e2e.js';
import { openWatch } from '../helpers/watch-stream.js';

let t: TestServer;
useKubeServer((s) => (t = s));

const SMP = 'application/strategic-merge-patch+json';
const sel = (s: string): string => `labelSelector=${encodeURIComponent(s)}`;
const fsel = (s: string): string => `fieldSelector=${encodeURIComponent(s)}`;
const found = (items: Obj[], ns: string, name: string): boolean => items.some((e) => e.metadata.name === name && e.metadata.namespace === ns);

/** the metadata the control plane sets, which the e2e clears before comparing */
function withoutServerFields(o: Obj): Obj {
  const { resourceVersion: _rv, managedFields: _mf, ...metadata } = o.metadata as Obj;
  return { ...o, metadata };
}

describe('[sig-instrumentation] Events (core_events.go)', () => {
  const coreEvent = (ns: string, name: string, label: string): Obj => ({
    // as Go's client marshals a v1.Event: zero times are null, empty structs and strings are sent
    metadata: { name, labels: { [label]: 'true' }, creationTimestamp: null },
    involvedObject: { namespace: ns },
    message: `This is ${name}`, reason: 'Test', source: {}, firstTimestamp: null, lastTimestamp: null, count: 1, type: 'Normal',
    eventTime: null, reportingComponent: '', reportingInstance: '',
  });

  // kube's title since 1.25 (it was "should ensure that an event can be fetched, patched, deleted, and listed")
  it('[Conformance] should manage the lifecycle of an event', async () => {
    const ns = await newNamespace(t, 'events');
    const path = `/api/v1/namespaces/${ns}/events`;
    await call(t, 'POST', path, { ...coreEvent(ns, 'event-test', 'testevent-constant'), message: 'This is a test event' }, undefined, 201);
    expect(found(await listItems(t, `/api/v1/events?${sel('testevent-constant=true')}`), ns, 'event-test')).toBe(true);
    await call(t, 'PATCH', `${path}/event-test`, { message: 'This is a test event - patched' }, SMP);
    expect((await call(t, 'GET', `${path}/event-test`)).message).toBe('This is a test event - patched');

    // an unconditional update (resourceVersion and managedFields cleared) adding a series
    const testEvent = withoutServerFields({ ...(await call(t, 'GET', `${path}/event-test`)), series: { count: 100, lastObservedTime: '2017-09-19T13:49:16.000000Z' } });
    await call(t, 'PUT', `${path}/event-test`, testEvent);
    expect(withoutServerFields(await call(t, 'GET', `${path}/event-test`))).toEqual(testEvent);

    await call(t, 'DELETE', `${path}/event-test`);
    expect(found(await listItems(t, `/api/v1/events?${sel('testevent-constant=true')}`), ns, 'event-test')).toBe(false);
  });

  it('[Conformance] should delete a collection of events', async () => {
    const ns = await newNamespace(t, 'events');
    const path = `/api/v1/namespaces/${ns}/events`;
    for (const n of ['test-event-1', 'test-event-2', 'test-event-3']) await call(t, 'POST', path, coreEvent(ns, n, 'testevent-set'), undefined, 201);
    expect(await listItems(t, `${path}?${sel('testevent-set=true')}`)).toHaveLength(3);
    await call(t, 'DELETE', `${path}?${sel('testevent-set=true')}`);
    await eventually(async () => (await listItems(t, `${path}?${sel('testevent-set=true')}`)).length === 0, 'events deleted');
  });
});

describe('[sig-instrumentation] Events API (events.go)', () => {
  const EV = '/apis/events.k8s.io/v1';
  const newEvent = (ns: string, name: string, label: string): Obj => ({
    // as Go's client marshals an events/v1 Event (deprecated zero times as null, an empty deprecatedSource)
    metadata: { name, labels: { [label]: 'true' }, creationTimestamp: null },
    eventTime: '2017-09-19T13:49:16.000000Z',
    reportingController: 'test-controller', reportingInstance: 'test-node',
    action: 'Do', reason: 'Test', regarding: { namespace: ns },
    note: `This is ${name}`, type: 'Normal',
    deprecatedSource: {}, deprecatedFirstTimestamp: null, deprecatedLastTimestamp: null,
  });

  it('[Conformance] should ensure that an event can be fetched, patched, deleted, and listed', async () => {
    const ns = await newNamespace(t, 'events');
    const path = `${EV}/namespaces/${ns}/events`;
    const one = `${path}/event-test`;
    await call(t, 'POST', path, newEvent(ns, 'event-test', 'testevent-constant'), undefined, 201);
    expect(found(await listItems(t, `${EV}/events?${sel('testevent-constant=true')}`), ns, 'event-test')).toBe(true);
    expect(found(await listItems(t, `${path}?${sel('testevent-constant=true')}`), ns, 'event-test')).toBe(true);

    // core/v1's `source` is the reporting controller; events.k8s.io selects on reportingController
    const bySource = await listItems(t, `/api/v1/namespaces/${ns}/events?${fsel('source=test-controller')}`);
    expect(bySource.map((e) => e.metadata.name)).toEqual(['event-test']);
    const byController = await listItems(t, `${path}?${fsel('reportingController=test-controller')}`);
    expect(byController.map((e) => e.metadata.name)).toEqual(['event-test']);

    // a strategic merge patch (the two-way patch of the event and a copy with a series) changes the series alone
    const testEvent = await call(t, 'GET', one);
    const series = { count: 2, lastObservedTime: '2017-09-19T13:49:11.000000Z' };
    await call(t, 'PATCH', one, { series }, SMP);
    expect(withoutServerFields(await call(t, 'GET', one))).toEqual(withoutServerFields({ ...testEvent, series }));

    // an unconditional update (no resourceVersion) of the series
    const toUpdate = withoutServerFields({ ...testEvent, series: { count: 100, lastObservedTime: '2017-09-19T13:49:16.000000Z' } });
    await call(t, 'PUT', one, { deprecatedSource: {}, deprecatedFirstTimestamp: null, deprecatedLastTimestamp: null, ...toUpdate });
    expect(withoutServerFields(await call(t, 'GET', one))).toEqual(toUpdate);

    await call(t, 'DELETE', one);
    expect(found(await listItems(t, `${EV}/events?${sel('testevent-constant=true')}`), ns, 'event-test')).toBe(false);
    expect(found(await listItems(t, `${path}?${sel('testevent-constant=true')}`), ns, 'event-test')).toBe(false);
  });

  it('[Conformance] should delete a collection of events', async () => {
    const ns = await newNamespace(t, 'events');
    const path = `${EV}/namespaces/${ns}/events`;
    for (const n of ['test-event-1', 'test-event-2', 'test-event-3']) await call(t, 'POST', path, newEvent(ns, n, 'testevent-set'), undefined, 201);
    expect(await listItems(t, `${path}?${sel('testevent-set=true')}`)).toHaveLength(3);
    await call(t, 'DELETE', `${path}?${sel('testevent-set=true')}`);
    expect(await listItems(t, `${path}?${sel('testevent-set=true')}`)).toHaveLength(0);
  });
});

describe('[sig-auth] ServiceAccounts (service_accounts.go)', () => {
  it('[Conformance] should guarantee kube-root-ca.crt exist in any namespace', async () => {
    const cmPath = (ns: string): string => `/api/v1/namespaces/${ns}/configmaps/kube-root-ca.crt`;
    const hasCA = (cm: Obj | undefined): boolean => typeof cm?.data?.['ca.crt'] === 'string' && (cm.data['ca.crt'] as string).includes('BEGIN CERTIFICATE');
    await eventually(async () => hasCA(await getOrUndefined(t, cmPath('default'))), 'kube-root-ca.crt in default');
    const ns = await newNamespace(t, 'svcaccounts');
    await eventually(async () => hasCA(await getOrUndefined(t, cmPath(ns))), 'kube-root-ca.crt in a new namespace');

    // deleted, it is recreated
    await call(t, 'DELETE', cmPath(ns), { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 });
    await eventually(async () => hasCA(await getOrUndefined(t, cmPath(ns))), 'kube-root-ca.crt recreated');

    // emptied by an unconditional update (no resourceVersion), it is reconciled
    await call(t, 'PUT', cmPath(ns), { metadata: { name: 'kube-root-ca.crt', creationTimestamp: null }, data: { 'ca.crt': '' } });
    await eventually(async () => hasCA(await getOrUndefined(t, cmPath(ns))), 'kube-root-ca.crt reconciled');
  });

  it('[Conformance] should run through the lifecycle of a ServiceAccount', async () => {
    const ns = await newNamespace(t, 'svcaccounts');
    const path = `/api/v1/namespaces/${ns}/serviceaccounts`;
    const name = 'testserviceaccount';
    const label = 'test-serviceaccount-static=true';
    const created = await call(t, 'POST', path, { metadata: { name, labels: { 'test-serviceaccount-static': 'true' }, creationTimestamp: null } }, undefined, 201);
    expect((await call(t, 'GET', `${path}/${name}`)).metadata.uid).toBe(created.metadata.uid);

    // a watch without resourceVersion, opened after the create: it starts with the object as ADDED
    const w = openWatch(t.server, `${path}?watch=true&${sel(label)}&timeoutSeconds=180`);
    try {
      await w.waitUntil((e) => e.type === 'ADDED' && e.object.metadata?.name === name);

      // json.Marshal(v1.ServiceAccount{AutomountServiceAccountToken: &false}): a null creationTimestamp comes along
      await call(t, 'PATCH', `${path}/${name}`, { metadata: { creationTimestamp: null }, automountServiceAccountToken: false }, SMP);
      await w.waitUntil((e) => e.type === 'MODIFIED' && e.object.automountServiceAccountToken === false);

      const all = await listItems(t, `/api/v1/serviceaccounts?${sel(label)}`);
      const mine = all.find((sa) => sa.metadata.name === name && sa.metadata.namespace === ns);
      expect(mine?.automountServiceAccountToken).toBe(false);
      expect(mine?.metadata.creationTimestamp).toBeTruthy();

      // the e2e deletes the whole collection of the namespace, no selector
      await call(t, 'DELETE', path);
      await w.waitUntil((e) => e.type === 'DELETED' && e.object.metadata?.name === name);
    } finally {
      w.close();
    }
    // the collection held the namespace's `default` account too: kube's serviceaccounts controller puts it back
    await eventually(async () => (await getOrUndefined(t, `${path}/default`)) !== undefined, 'default ServiceAccount recreated');
  });

  it('[Conformance] should update a ServiceAccount', async () => {
    const ns = await newNamespace(t, 'svcaccounts');
    const path = `/api/v1/namespaces/${ns}/serviceaccounts`;
    const name = generateName('e2e-sa-');
    const created = await call(t, 'POST', path, { metadata: { name }, automountServiceAccountToken: false }, undefined, 201);
    expect(created.automountServiceAccountToken).toBe(false);

    const cur = await call(t, 'GET', `${path}/${name}`);
    cur.automountServiceAccountToken = true;
    const updated = await call(t, 'PUT', `${path}/${name}`, cur);
    expect(updated.automountServiceAccountToken).toBe(true);

    const patched = await call(t, 'PATCH', `${path}/${name}`, { automountServiceAccountToken: false, metadata: { labels: { 'e2e-sa': 'patched' } } }, SMP);
    expect(patched.automountServiceAccountToken).toBe(false);
    expect(patched.metadata.labels).toEqual({ 'e2e-sa': 'patched' });
    expect((await call(t, 'GET', `${path}/${name}`)).automountServiceAccountToken).toBe(false);
  });

  it('[Conformance] should create a serviceAccountToken and ensure a successful TokenReview', async () => {
    const ns = await newNamespace(t, 'svcaccounts');
    const name = generateName('e2e-sa-');
    await call(t, 'POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name, creationTimestamp: null } }, undefined, 201);
    // an empty TokenRequest, as Go marshals &authenticationv1.TokenRequest{}
    const response = await call(t, 'POST', `/api/v1/namespaces/${ns}/serviceaccounts/${name}/token`, {
      apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', metadata: { creationTimestamp: null }, spec: { audiences: null }, status: { token: '', expirationTimestamp: null },
    }, undefined, 201);
    expect(response.status.token).toBeTruthy();
    const review = await call(t, 'POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', metadata: { creationTimestamp: null }, spec: { token: response.status.token }, status: { user: {} },
    }, undefined, 201);
    expect(review.status.authenticated).toBe(true);
    expect(review.status.error ?? '').toBe('');
    expect(review.status.user.username).toBe(`system:serviceaccount:${ns}:${name}`);
  });
});

describe('[sig-auth] ServiceAccounts (service_accounts.go, token automount)', () => {
  it('[Conformance] should allow opting out of API token automount', async () => {
    const ns = await newNamespace(t, 'svcaccounts');
    const sas = `/api/v1/namespaces/${ns}/serviceaccounts`;
    await call(t, 'POST', sas, { metadata: { name: 'mount' }, automountServiceAccountToken: true }, undefined, 201);
    await call(t, 'POST', sas, { metadata: { name: 'nomount' }, automountServiceAccountToken: false }, undefined, 201);
    await eventually(async () => (await getOrUndefined(t, `${sas}/default`)) !== undefined, 'the default ServiceAccount');
    const TOKEN_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
    // [account, the pod's automountServiceAccountToken, mounted]: kube's table (1a–3c)
    const cases: [string, boolean | undefined, boolean][] = [
      ['default', undefined, true], ['mount', undefined, true], ['nomount', undefined, false],
      ['default', true, true], ['mount', true, true], ['nomount', true, true],
      ['default', false, false], ['mount', false, false], ['nomount', false, false],
    ];
    for (const [sa, podMount, wantMount] of cases) {
      const pod = {
        metadata: { name: `pod-service-account-${sa}-${podMount ?? 'nil'}` },
        spec: {
          serviceAccountName: sa, containers: [{ name: 'token-test', image: 'registry.k8s.io/pause:3.10' }], restartPolicy: 'Never',
          ...(podMount === undefined ? {} : { automountServiceAccountToken: podMount }),
        },
      };
      const created = await call(t, 'POST', `/api/v1/namespaces/${ns}/pods`, pod, undefined, 201);
      const mounted = ((created.spec.containers[0].volumeMounts ?? []) as Obj[]).some((m) => m.mountPath === TOKEN_PATH);
      expect(mounted, `${pod.metadata.name}: the token mounted`).toBe(wantMount);
    }
  });
});

describe('[sig-auth] SubjectReview (subjectreviews.go)', () => {
  it('[Conformance] should support SubjectReview API operations', async () => {
    const ns = await newNamespace(t, 'subjectreview');
    const sa = await call(t, 'POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: 'e2e' } }, undefined, 201);
    const user = `system:serviceaccount:${ns}:e2e`;
    const groups = ['system:authenticated', 'system:serviceaccounts', `system:serviceaccounts:${ns}`];
    const uid = sa.metadata.uid as string;
    const attributes = { verb: 'list', resource: 'configmaps', namespace: ns, version: 'v1' };

    const sar = await call(t, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { resourceAttributes: attributes, user, groups, uid },
    }, undefined, 201);
    const expectedAllowed = sar.status.allowed === true;

    // the same list as the account (client-go's impersonation config: user, uid, groups)
    const r = await t.request('GET', `/api/v1/namespaces/${ns}/configmaps`, { headers: { 'Impersonate-User': user, 'Impersonate-Uid': uid, 'Impersonate-Group': groups } });
    expect([200, 403], r.text).toContain(r.status);
    const actuallyAllowed = r.status === 200;
    expect(actuallyAllowed, 'SubjectAccessReview allowed vs the request').toBe(expectedAllowed);

    // kube's LocalSubjectAccessReview names the account by its short name, with the account's groups
    const lsar = await call(t, 'POST', `/apis/authorization.k8s.io/v1/namespaces/${ns}/localsubjectaccessreviews`, {
      apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', metadata: { namespace: ns }, spec: { resourceAttributes: attributes, user: 'e2e', groups, uid },
    }, undefined, 201);
    expect(lsar.status.allowed === true, 'LocalSubjectAccessReview allowed vs the request').toBe(actuallyAllowed);
  });
});
