// Kube's Event bytes for zero times (docs/events.md "One Event store, two versions"):
// metav1.Time and MicroTime are Go structs, written `null` when zero, so a core/v1 Event
// from client-go's recorder carries `"eventTime":null`, one written through events/v1
// `"firstTimestamp":null,"lastTimestamp":null`, and an events/v1 read carries `eventTime`,
// `deprecatedFirstTimestamp` and `deprecatedLastTimestamp` whatever is set.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKubectl } from '../helpers/kubectl.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
const CORE = '/api/v1/namespaces/default/events';
const V1 = '/apis/events.k8s.io/v1/namespaces/default/events';

beforeAll(async () => {
  t = await startTestServer({ apiDomain: 'k8s.io' });
});
afterAll(async () => {
  await t?.stop();
});

describe('Event zero times', () => {
  it('a core/v1 Event as client-go\'s recorder writes it reads back with eventTime null, in both versions', async () => {
    const r = await t.request('POST', CORE, {
      body: {
        apiVersion: 'v1', kind: 'Event', metadata: { name: 'legacy.1' }, involvedObject: { kind: 'Pod', namespace: 'default', name: 'p' },
        reason: 'Started', message: 'm', source: { component: 'kubelet' }, firstTimestamp: '2026-01-01T00:00:00Z', lastTimestamp: '2026-01-01T00:00:00Z', count: 1, type: 'Normal',
      },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.json()).toMatchObject({ eventTime: null, firstTimestamp: '2026-01-01T00:00:00Z', reportingComponent: '', reportingInstance: '' });
    const core = await t.request('GET', `${CORE}/legacy.1`);
    expect(core.text).toContain('"eventTime":null');
    const v1 = (await t.request('GET', `${V1}/legacy.1`)).json();
    expect(v1).toMatchObject({ eventTime: null, deprecatedFirstTimestamp: '2026-01-01T00:00:00Z', deprecatedLastTimestamp: '2026-01-01T00:00:00Z', deprecatedCount: 1 });
  });

  it('an events/v1 Event reads back with null deprecated times, and null first/last times through core/v1', async () => {
    const r = await t.request('POST', V1, {
      body: {
        apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'new.1' }, eventTime: '2026-01-01T00:00:00.000000Z',
        reportingController: 'default-scheduler', reportingInstance: 'default-scheduler-x', action: 'Binding', reason: 'Scheduled', type: 'Normal',
        regarding: { kind: 'Pod', namespace: 'default', name: 'p' }, note: 'assigned',
      },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.json()).toMatchObject({ deprecatedFirstTimestamp: null, deprecatedLastTimestamp: null, eventTime: '2026-01-01T00:00:00.000000Z' });
    const core = (await t.request('GET', `${CORE}/new.1`)).json();
    expect(core).toMatchObject({ firstTimestamp: null, lastTimestamp: null, eventTime: '2026-01-01T00:00:00.000000Z' });
    // a watch or list sees the same bytes
    const list = (await t.request('GET', `${CORE}?fieldSelector=metadata.name%3Dnew.1`)).json<{ items: Record<string, unknown>[] }>();
    expect(list.items[0]).toMatchObject({ firstTimestamp: null, lastTimestamp: null });
  });

  it('protobuf clients read the same Events (a zero time is an absent field there)', async () => {
    const r = await t.request('GET', `${CORE}/legacy.1`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/vnd.kubernetes.protobuf');
  });

  it('kubectl get events -o yaml prints eventTime: null as kube does', async () => {
    const r = await runKubectl(t.server.kubeconfigPath, ['get', 'events', 'legacy.1', '-o', 'yaml']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^eventTime: null$/m);
  });
});
