// One stored kind served at several group/versions (src/registry/conversion.ts,
// spec 000 §6): core v1 Events and events.orch.io/v1 Events are one store,
// as are autoscaling/v1 and /v2 HorizontalPodAutoscalers. A write through
// one version is readable, listable (from the store and from the watch
// cache), watchable and deletable through the other, with fields converted.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKubectl } from '../helpers/kubectl.js';
import { openWatch } from '../helpers/watch-stream.js';
import { NO_NAMESPACE_DEFAULTS, type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
const NS = 'mv';
const CORE = `/api/v1/namespaces/${NS}/events`;
const EV1 = `/apis/events.orch.io/v1/namespaces/${NS}/events`;
const HPA1 = `/apis/autoscaling/v1/namespaces/${NS}/horizontalpodautoscalers`;
const HPA2 = `/apis/autoscaling/v2/namespaces/${NS}/horizontalpodautoscalers`;

beforeAll(async () => {
  // without the HPA controller: its first status write would race the read-modify-write tests below
  t = await startTestServer({ authn: { controllers: [...NO_NAMESPACE_DEFAULTS.controllers, '-horizontalpodautoscaling'] } });
  const r = await t.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  expect(r.status).toBe(201);
});
afterAll(async () => {
  await t?.stop();
});

type Obj = Record<string, any>;

describe('Events: one store, two versions', () => {
  it('a core v1 Event is read, listed and selected through events.orch.io/v1 with its fields renamed', async () => {
    const created = await t.request('POST', CORE, {
      body: {
        apiVersion: 'v1', kind: 'Event', metadata: { name: 'core-1' },
        involvedObject: { kind: 'Pod', namespace: NS, name: 'web-1', uid: 'u-1' },
        reason: 'Started', message: 'container started', type: 'Normal',
        source: { component: 'node-agent', host: 'n1' }, count: 3,
        firstTimestamp: '2026-01-01T00:00:00Z', lastTimestamp: '2026-01-01T00:05:00Z',
        reportingComponent: 'orch.io/node-agent', reportingInstance: 'n1',
      },
    });
    expect(created.status, created.text).toBe(201);
    const g = await t.request('GET', `${EV1}/core-1`);
    expect(g.status).toBe(200);
    const e = g.json<Obj>();
    expect(e).toMatchObject({
      apiVersion: 'events.orch.io/v1', kind: 'Event',
      metadata: { name: 'core-1', namespace: NS, uid: created.json<Obj>().metadata.uid, resourceVersion: created.json<Obj>().metadata.resourceVersion },
      regarding: { kind: 'Pod', name: 'web-1', uid: 'u-1' }, note: 'container started', reason: 'Started', type: 'Normal',
      deprecatedSource: { component: 'node-agent', host: 'n1' }, deprecatedCount: 3,
      deprecatedFirstTimestamp: '2026-01-01T00:00:00Z', deprecatedLastTimestamp: '2026-01-01T00:05:00Z',
      reportingController: 'orch.io/node-agent', reportingInstance: 'n1',
    });
    for (const f of ['involvedObject', 'message', 'source', 'count', 'firstTimestamp', 'reportingComponent']) expect(e).not.toHaveProperty(f);

    const l = await t.request('GET', `${EV1}?fieldSelector=regarding.name%3Dweb-1`);
    expect(l.status, l.text).toBe(200);
    const list = l.json<Obj>();
    expect(list.kind).toBe('EventList');
    expect(list.apiVersion).toBe('events.orch.io/v1');
    expect(list.items.map((i: Obj) => [i.metadata.name, i.note])).toEqual([['core-1', 'container started']]);
    // a selector on a field of the other version is refused as in Kubernetes
    expect((await t.request('GET', `${EV1}?fieldSelector=involvedObject.name%3Dweb-1`)).status).toBe(400);
    // paged (read from the store at a revision) and unpaged (from the watch cache) agree
    const paged = await t.request('GET', `${EV1}?limit=10`);
    expect(paged.json<Obj>().items.map((i: Obj) => i.note)).toEqual(['container started']);
  });

  it('an events.orch.io/v1 Event is read through core v1; updates and deletes through one version show in the other', async () => {
    const created = await t.request('POST', EV1, {
      body: {
        apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: { name: 'ev1-1' },
        eventTime: '2026-01-02T00:00:00.000000Z', reportingController: 'orch.io/gc', reportingInstance: 'gc-1',
        action: 'Delete', reason: 'Deleted', regarding: { kind: 'ConfigMap', namespace: NS, name: 'c' }, note: 'gone', type: 'Warning',
      },
    });
    expect(created.status, created.text).toBe(201);
    const core = await t.request('GET', `${CORE}/ev1-1`);
    expect(core.status).toBe(200);
    const c = core.json<Obj>();
    expect(c).toMatchObject({
      apiVersion: 'v1', kind: 'Event', involvedObject: { kind: 'ConfigMap', name: 'c' }, message: 'gone', reason: 'Deleted', action: 'Delete',
      reportingComponent: 'orch.io/gc', reportingInstance: 'gc-1', type: 'Warning', eventTime: '2026-01-02T00:00:00.000000Z',
    });
    expect(c).not.toHaveProperty('note');
    expect(c).not.toHaveProperty('regarding');

    // update through core v1 (the object as read), visible through events/v1
    c.message = 'gone for good';
    const put = await t.request('PUT', `${CORE}/ev1-1`, { body: c });
    expect(put.status, put.text).toBe(200);
    const again = (await t.request('GET', `${EV1}/ev1-1`)).json<Obj>();
    expect(again.note).toBe('gone for good');
    expect(again.reportingController).toBe('orch.io/gc');
    expect(again.metadata.resourceVersion).toBe(put.json<Obj>().metadata.resourceVersion);

    const coreList = (await t.request('GET', CORE)).json<Obj>();
    expect(coreList.items.map((i: Obj) => i.metadata.name).sort()).toEqual(['core-1', 'ev1-1']);
    expect(coreList.items.every((i: Obj) => i.apiVersion === undefined || i.apiVersion === 'v1')).toBe(true);

    expect((await t.request('DELETE', `${EV1}/ev1-1`)).status).toBe(200);
    expect((await t.request('GET', `${CORE}/ev1-1`)).status).toBe(404);
  });

  it("prints kube's empty structs ({}) in both versions, whichever version wrote the Event", async () => {
    const viaCore = await t.request('POST', CORE, { body: { apiVersion: 'v1', kind: 'Event', metadata: { name: 'bare-core' }, involvedObject: { kind: 'Pod', name: 'p' }, reason: 'R' } });
    expect(viaCore.status, viaCore.text).toBe(201);
    const viaV1 = await t.request('POST', EV1, {
      body: {
        apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: { name: 'bare-v1' }, eventTime: '2026-01-02T00:00:00.000000Z',
        reportingController: 'orch.io/x', reportingInstance: 'x-1', action: 'Do', reason: 'R', type: 'Normal', regarding: { kind: 'Pod', name: 'p' },
      },
    });
    expect(viaV1.status, viaV1.text).toBe(201);
    for (const name of ['bare-core', 'bare-v1']) {
      const core = (await t.request('GET', `${CORE}/${name}`)).json<Obj>();
      // client-node's `event.source.component` must not throw where kube's answer has `source: {}`
      expect(core.source).toEqual({});
      expect(core.involvedObject).toEqual({ kind: 'Pod', name: 'p' });
      const v1 = (await t.request('GET', `${EV1}/${name}`)).json<Obj>();
      expect(v1.deprecatedSource).toEqual({});
      expect(v1.regarding).toEqual({ kind: 'Pod', name: 'p' });
    }
  });

  it('a watch through events.orch.io/v1 receives Events written through core v1, converted', async () => {
    const rv = (await t.request('GET', EV1)).json<Obj>().metadata.resourceVersion;
    const w = openWatch(t.server, `${EV1}?watch=1&resourceVersion=${rv}&fieldSelector=reason%3DPulled`);
    const body = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'core-w' }, involvedObject: { kind: 'Pod', namespace: NS, name: 'p' }, reason: 'Pulled', message: 'pulled image', type: 'Normal' };
    expect((await t.request('POST', CORE, { body })).status).toBe(201);
    const [added] = await w.waitFor(1);
    expect(added!.type).toBe('ADDED');
    expect(added!.object).toMatchObject({ apiVersion: 'events.orch.io/v1', kind: 'Event', note: 'pulled image', regarding: { name: 'p' } });
    expect(added!.object).not.toHaveProperty('message');
    expect((await t.request('DELETE', `${CORE}/core-w`)).status).toBe(200);
    const [, deleted] = await w.waitFor(2);
    expect(deleted!).toMatchObject({ type: 'DELETED', object: { apiVersion: 'events.orch.io/v1', note: 'pulled image' } });
    w.close();
  });

  it('discovery lists Events in both groups with the storage version\'s storageVersionHash', async () => {
    const core = (await t.request('GET', '/api/v1')).json<Obj>().resources.find((r: Obj) => r.name === 'events');
    const ev = (await t.request('GET', '/apis/events.orch.io/v1')).json<Obj>().resources.find((r: Obj) => r.name === 'events');
    expect(core).toMatchObject({ kind: 'Event', namespaced: true });
    expect(ev).toMatchObject({ kind: 'Event', namespaced: true });
    expect(ev.storageVersionHash).toBe(core.storageVersionHash);
    const h1 = (await t.request('GET', '/apis/autoscaling/v1')).json<Obj>().resources.find((r: Obj) => r.name === 'horizontalpodautoscalers');
    const h2 = (await t.request('GET', '/apis/autoscaling/v2')).json<Obj>().resources.find((r: Obj) => r.name === 'horizontalpodautoscalers');
    expect(h1.storageVersionHash).toBe(h2.storageVersionHash);
  });
});

describe('HorizontalPodAutoscaler: autoscaling/v1 and v2 are one store', () => {
  const target = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };

  it('v1 targetCPUUtilizationPercentage reads as the v2 cpu Utilization metric, and back', async () => {
    const c = await t.request('POST', HPA1, { body: { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h1' }, spec: { scaleTargetRef: target, maxReplicas: 5, targetCPUUtilizationPercentage: 60 } } });
    expect(c.status, c.text).toBe(201);
    expect(c.json<Obj>().spec).toEqual({ scaleTargetRef: target, minReplicas: 1, maxReplicas: 5, targetCPUUtilizationPercentage: 60 });
    const v2 = (await t.request('GET', `${HPA2}/h1`)).json<Obj>();
    expect(v2.apiVersion).toBe('autoscaling/v2');
    expect(v2.spec).toEqual({ scaleTargetRef: target, minReplicas: 1, maxReplicas: 5, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } }] });
    expect(v2.metadata.annotations).toBeUndefined();
  });

  it('v2-only fields travel through v1 in annotations and survive a v1 read-modify-write', async () => {
    const metrics = [
      { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '500Mi' } } },
      { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } },
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
    ];
    const behavior = { scaleDown: { stabilizationWindowSeconds: 120 } };
    const c = await t.request('POST', HPA2, { body: { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h2', annotations: { keep: 'me' } }, spec: { scaleTargetRef: target, minReplicas: 2, maxReplicas: 9, metrics, behavior } } });
    expect(c.status, c.text).toBe(201);
    const v1 = (await t.request('GET', `${HPA1}/h2`)).json<Obj>();
    expect(v1.spec).toEqual({ scaleTargetRef: target, minReplicas: 2, maxReplicas: 9, targetCPUUtilizationPercentage: 70 });
    expect(v1.metadata.annotations.keep).toBe('me');
    expect(JSON.parse(v1.metadata.annotations['autoscaling.alpha.kubernetes.io/metrics'])).toEqual([
      { type: 'Resource', resource: { name: 'memory', targetAverageValue: '500Mi' } },
      { type: 'Pods', pods: { metricName: 'qps', targetAverageValue: '10' } },
    ]);
    expect(JSON.parse(v1.metadata.annotations['autoscaling.alpha.kubernetes.io/behavior'])).toEqual(behavior);

    // kubectl-style edit through v1: maxReplicas changes, the rest comes back from the annotations
    v1.spec.maxReplicas = 12;
    const put = await t.request('PUT', `${HPA1}/h2`, { body: v1 });
    expect(put.status, put.text).toBe(200);
    const v2 = (await t.request('GET', `${HPA2}/h2`)).json<Obj>();
    expect(v2.spec.maxReplicas).toBe(12);
    expect(v2.spec.behavior).toEqual(behavior);
    expect(v2.spec.metrics).toEqual([metrics[0], metrics[1], metrics[2]]);
    expect(v2.metadata.annotations).toEqual({ keep: 'me' });
    expect(v2.metadata.generation).toBe(2);
  });

  it('status converts: the cpu current metric and conditions', async () => {
    const cur = (await t.request('GET', `${HPA2}/h2`)).json<Obj>();
    cur.status = {
      currentReplicas: 3, desiredReplicas: 4,
      currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 42, averageValue: '120m' } } }],
      conditions: [{ type: 'AbleToScale', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'ReadyForNewScale' }],
    };
    const s = await t.request('PUT', `${HPA2}/h2/status`, { body: cur });
    expect(s.status, s.text).toBe(200);
    const v1 = (await t.request('GET', `${HPA1}/h2`)).json<Obj>();
    expect(v1.status).toMatchObject({ currentReplicas: 3, desiredReplicas: 4, currentCPUUtilizationPercentage: 42 });
    expect(JSON.parse(v1.metadata.annotations['autoscaling.alpha.kubernetes.io/conditions'])[0].type).toBe('AbleToScale');
    // a list through v1 from the watch cache converts too
    const list = (await t.request('GET', HPA1)).json<Obj>();
    expect(list.items.map((i: Obj) => [i.metadata.name, i.spec.targetCPUUtilizationPercentage])).toEqual([['h1', 60], ['h2', 70]]);
  });

  it('a v2 watch sees a v1 write as v2', async () => {
    const rv = (await t.request('GET', HPA2)).json<Obj>().metadata.resourceVersion;
    const w = openWatch(t.server, `${HPA2}?watch=1&resourceVersion=${rv}`);
    const c = await t.request('POST', HPA1, { body: { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h3' }, spec: { scaleTargetRef: target, maxReplicas: 3, targetCPUUtilizationPercentage: 33 } } });
    expect(c.status).toBe(201);
    const [added] = await w.waitFor(1);
    expect(added!.object).toMatchObject({ apiVersion: 'autoscaling/v2', spec: { metrics: [{ resource: { name: 'cpu', target: { averageUtilization: 33 } } }] } });
    w.close();
  });
});

describe('kubectl sees one Event store (--api-domain k8s.io)', () => {
  it('kubectl events (core v1) and kubectl get events.v1.events.k8s.io list an Event created through the other version', async () => {
    const k = await startTestServer({ apiDomain: 'k8s.io', ...NO_NAMESPACE_DEFAULTS });
    try {
      const c = await k.request('POST', '/apis/events.k8s.io/v1/namespaces/default/events', {
        body: {
          apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'via-v1' }, eventTime: '2026-01-02T00:00:00.000000Z',
          reportingController: 'example.com/ctl', reportingInstance: 'i-1', action: 'Act', reason: 'Because',
          regarding: { kind: 'Pod', namespace: 'default', name: 'p' }, note: 'written through events.k8s.io/v1', type: 'Normal',
        },
      });
      expect(c.status, c.text).toBe(201);
      const core = await k.request('POST', '/api/v1/namespaces/default/events', {
        body: { apiVersion: 'v1', kind: 'Event', metadata: { name: 'via-core' }, involvedObject: { kind: 'Pod', namespace: 'default', name: 'q' }, reason: 'Legacy', message: 'written through core v1', type: 'Warning' },
      });
      expect(core.status, core.text).toBe(201);
      // kubectl 1.32 `events` lists core v1 Events
      const ev = await runKubectl(k.server.kubeconfigPath, ['events', '-n', 'default']);
      expect(ev.stderr).toBe('');
      expect(ev.stdout).toMatch(/Normal\s+Because\s+Pod\/p\s+written through events\.k8s\.io\/v1/);
      expect(ev.stdout).toMatch(/Warning\s+Legacy\s+Pod\/q\s+written through core v1/);
      const v1 = await runKubectl(k.server.kubeconfigPath, ['get', 'events.v1.events.k8s.io', '-n', 'default', '-o', 'json']);
      expect(v1.stderr).toBe('');
      const items = (JSON.parse(v1.stdout) as { items: Obj[] }).items;
      expect(items.map((i) => [i.metadata.name, i.note])).toEqual([
        ['via-core', 'written through core v1'],
        ['via-v1', 'written through events.k8s.io/v1'],
      ]);
    } finally {
      await k.stop();
    }
  });
});
