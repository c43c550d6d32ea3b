// Ports of Kubernetes' e2e conformance tests "[sig-api-machinery] Watchers"
// (test/e2e/apimachinery/watch.go) to orch: label-selected watches on
// ConfigMaps must see exactly the ADDED/MODIFIED/DELETED events of what they
// select, each carrying the object the write answered with; a watch started
// (or restarted) from a resourceVersion sees just the later changes; an object
// leaving the selector is DELETED and coming back is ADDED; concurrent watches
// started at each other's events see the same resourceVersions in the same order.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Obj, api } from '../helpers/e2e.js';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { type WatchEvent, type WatchStream, openWatch } from '../helpers/watch-stream.js';

let t: TestServer;
const k = api(() => t);
const LABEL = 'watch-this-configmap';

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t?.stop();
});

const cms = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;

/** the e2e's watchConfigMaps: `watch-this-configmap in (values)`, optionally from a resourceVersion */
function watchConfigMaps(ns: string, resourceVersion: string, ...values: string[]): WatchStream {
  const selector = encodeURIComponent(`${LABEL} in (${values.join(',')})`);
  const rv = resourceVersion ? `&resourceVersion=${resourceVersion}` : '';
  return openWatch(t.server, `${cms(ns)}?watch=1&labelSelector=${selector}${rv}`);
}

/** the e2e's updateConfigMap: read, change, PUT; returns what the PUT answered */
async function updateConfigMap(ns: string, name: string, mutate: (cm: Obj) => void): Promise<Obj> {
  const cm = await k.get(`${cms(ns)}/${name}`);
  mutate(cm);
  return k.send('PUT', `${cms(ns)}/${name}`, cm);
}
const setData = (key: string, value: string) => (cm: Obj) => {
  cm.data = { ...(cm.data ?? {}), [key]: value };
};

/** the e2e's expectEvent: the next events include one of this type whose object equals `object` (any object when omitted) */
async function expectEvent(w: WatchStream, type: string, object?: Obj): Promise<WatchEvent> {
  return w.waitUntil((ev) => ev.type === type && (object === undefined || JSON.stringify(ev.object) === JSON.stringify(object)));
}

/** the e2e's expectNoEvent, on what a watch has received by the time `settled` (a later event on another watch) arrived */
function expectNoEvent(w: WatchStream, type: string, name?: string): void {
  expect(w.events.filter((e) => e.type === type && (name === undefined || e.object.metadata?.name === name)).map((e) => e.object.metadata?.name)).toEqual([]);
}

/** waits until every watch has seen a marker write, so "no event" assertions look at a settled stream */
async function settle(ns: string, value: string, ...watches: WatchStream[]): Promise<void> {
  const name = `marker-${Math.random().toString(36).slice(2, 8)}`;
  await k.send('POST', cms(ns), { metadata: { name, labels: { [LABEL]: value } } });
  await Promise.all(watches.map((w) => w.waitUntil((e) => e.object.metadata?.name === name)));
}

describe('[sig-api-machinery] Watchers', () => {
  it('should observe add, update, and delete watch notifications on configmaps [Conformance]', async () => {
    const ns = await k.namespace('watch-');
    const watchA = watchConfigMaps(ns, '', 'multiple-watchers-A');
    const watchB = watchConfigMaps(ns, '', 'multiple-watchers-B');
    const watchAB = watchConfigMaps(ns, '', 'multiple-watchers-A', 'multiple-watchers-B');
    const marker = watchConfigMaps(ns, '', 'multiple-watchers-A', 'multiple-watchers-B', 'marker');
    try {
      // a watch without resourceVersion starts "now": wait until all four are open (they see the marker)
      await settle(ns, 'marker', marker);
      const a = 'e2e-watch-test-configmap-a';
      const b = 'e2e-watch-test-configmap-b';

      let cmA = await k.send('POST', cms(ns), { metadata: { name: a, labels: { [LABEL]: 'multiple-watchers-A' } } });
      await expectEvent(watchA, 'ADDED', cmA);
      await expectEvent(watchAB, 'ADDED', cmA);

      cmA = await updateConfigMap(ns, a, setData('mutation', '1'));
      await expectEvent(watchA, 'MODIFIED', cmA);
      await expectEvent(watchAB, 'MODIFIED', cmA);

      cmA = await updateConfigMap(ns, a, setData('mutation', '2'));
      await expectEvent(watchA, 'MODIFIED', cmA);
      await expectEvent(watchAB, 'MODIFIED', cmA);

      await k.send('DELETE', `${cms(ns)}/${a}`);
      await expectEvent(watchA, 'DELETED');
      await expectEvent(watchAB, 'DELETED');
      await settle(ns, 'multiple-watchers-B', watchB, watchAB);
      expectNoEvent(watchB, 'ADDED', a);
      expectNoEvent(watchB, 'MODIFIED', a);
      expectNoEvent(watchB, 'DELETED', a);

      const cmB = await k.send('POST', cms(ns), { metadata: { name: b, labels: { [LABEL]: 'multiple-watchers-B' } } });
      await expectEvent(watchB, 'ADDED', cmB);
      await expectEvent(watchAB, 'ADDED', cmB);
      await k.send('DELETE', `${cms(ns)}/${b}`);
      await expectEvent(watchB, 'DELETED');
      await expectEvent(watchAB, 'DELETED');
      await settle(ns, 'multiple-watchers-A', watchA, watchAB);
      expectNoEvent(watchA, 'ADDED', b);
      expectNoEvent(watchA, 'DELETED', b);
      // every event of A's configmap reached A and AB in order, none reached B
      const of = (w: WatchStream, name: string) => w.events.filter((e) => e.object.metadata?.name === name).map((e) => e.type);
      expect(of(watchA, a)).toEqual(['ADDED', 'MODIFIED', 'MODIFIED', 'DELETED']);
      expect(of(watchAB, a)).toEqual(['ADDED', 'MODIFIED', 'MODIFIED', 'DELETED']);
      expect(of(watchAB, b)).toEqual(['ADDED', 'DELETED']);
      expect(of(watchB, a)).toEqual([]);
    } finally {
      for (const w of [watchA, watchB, watchAB, marker]) w.close();
    }
  });

  it('should be able to start watching from a specific resource version [Conformance]', async () => {
    const ns = await k.namespace('watch-');
    const name = 'e2e-watch-test-resource-version';
    await k.send('POST', cms(ns), { metadata: { name, labels: { [LABEL]: 'from-resource-version' } } });
    const first = await updateConfigMap(ns, name, setData('mutation', '1'));
    const second = await updateConfigMap(ns, name, setData('mutation', '2'));
    await k.send('DELETE', `${cms(ns)}/${name}`);

    const w = watchConfigMaps(ns, first.metadata.resourceVersion, 'from-resource-version');
    try {
      await expectEvent(w, 'MODIFIED', second);
      const deleted = await expectEvent(w, 'DELETED');
      // only what happened after the first update, in order
      expect(w.events.slice(0, 2).map((e) => e.type)).toEqual(['MODIFIED', 'DELETED']);
      expect(Number(deleted.object.metadata?.resourceVersion)).toBeGreaterThan(Number(second.metadata.resourceVersion));
    } finally {
      w.close();
    }
  });

  it('should be able to restart watching from the last resource version observed by the previous watch [Conformance]', async () => {
    const ns = await k.namespace('watch-');
    const name = 'e2e-watch-test-watch-closed';
    const broken = watchConfigMaps(ns, '', 'watch-closed-and-restarted');
    const marker = watchConfigMaps(ns, '', 'watch-closed-and-restarted', 'marker');
    let restarted: WatchStream | undefined;
    try {
      await settle(ns, 'marker', marker);
      const created = await k.send('POST', cms(ns), { metadata: { name, labels: { [LABEL]: 'watch-closed-and-restarted' } } });
      await updateConfigMap(ns, name, setData('mutation', '1'));
      await expectEvent(broken, 'ADDED', created);
      const last = await expectEvent(broken, 'MODIFIED');
      broken.close();

      const second = await updateConfigMap(ns, name, setData('mutation', '2'));
      restarted = watchConfigMaps(ns, last.object.metadata!.resourceVersion!, 'watch-closed-and-restarted');
      await k.send('DELETE', `${cms(ns)}/${name}`);
      await expectEvent(restarted, 'MODIFIED', second);
      await expectEvent(restarted, 'DELETED');
      expect(restarted.events.slice(0, 2).map((e) => e.type)).toEqual(['MODIFIED', 'DELETED']);
    } finally {
      broken.close();
      marker.close();
      restarted?.close();
    }
  });

  it('should observe an object deletion if it stops meeting the requirements of the selector [Conformance]', async () => {
    const ns = await k.namespace('watch-');
    const name = 'e2e-watch-test-label-changed';
    const w = watchConfigMaps(ns, '', 'label-changed-and-restored');
    const marker = watchConfigMaps(ns, '', 'label-changed-and-restored', 'marker');
    try {
      await settle(ns, 'marker', marker);
      const created = await k.send('POST', cms(ns), { metadata: { name, labels: { [LABEL]: 'label-changed-and-restored' } } });
      const first = await updateConfigMap(ns, name, setData('mutation', '1'));
      const moved = await updateConfigMap(ns, name, (cm) => (cm.metadata.labels[LABEL] = 'wrong-value'));

      await expectEvent(w, 'ADDED', created);
      await expectEvent(w, 'MODIFIED', first);
      const gone = await expectEvent(w, 'DELETED');
      // kube's cacher: the last state the watch selected, at the resourceVersion of the change that moved it out
      expect(gone.object.metadata?.resourceVersion).toBe(moved.metadata.resourceVersion);
      expect((gone.object.metadata as Obj).labels[LABEL]).toBe('label-changed-and-restored');
      expect(gone.object.data).toEqual({ mutation: '1' });

      const second = await updateConfigMap(ns, name, setData('mutation', '2'));
      const restored = await updateConfigMap(ns, name, (cm) => (cm.metadata.labels[LABEL] = 'label-changed-and-restored'));
      const third = await updateConfigMap(ns, name, setData('mutation', '3'));
      await k.send('DELETE', `${cms(ns)}/${name}`);

      await expectEvent(w, 'ADDED', restored);
      await expectEvent(w, 'MODIFIED', third);
      await w.waitFor(6);
      const events = w.events.filter((e) => e.object.metadata?.name === name);
      expect(events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED', 'ADDED', 'MODIFIED', 'DELETED']);
      // the change made while it was out of the selector was not seen
      expect(events.some((e) => e.object.metadata?.resourceVersion === second.metadata.resourceVersion)).toBe(false);
    } finally {
      w.close();
      marker.close();
    }
  });

  it('should receive events on concurrent watches in same order [Conformance]', async () => {
    const ns = await k.namespace('watch-');
    let resourceVersion = (await k.get(cms(ns))).metadata.resourceVersion as string;
    let stop = false;
    // the e2e's produceConfigMapEvents: random creates, updates and deletes, one after the other
    const producer = (async () => {
      const existing: number[] = [];
      for (let i = 0; !stop; ) {
        const op = existing.length === 0 ? 0 : Math.floor(Math.random() * 3);
        if (op === 0) {
          await k.send('POST', cms(ns), { metadata: { name: `cm-${i}` } });
          existing.push(i++);
        } else {
          const idx = Math.floor(Math.random() * existing.length);
          const name = `cm-${existing[idx]}`;
          if (op === 1) await k.send('PUT', `${cms(ns)}/${name}`, { metadata: { name } });
          else {
            await k.send('DELETE', `${cms(ns)}/${name}`);
            existing.splice(idx, 1);
          }
        }
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const watches: { w: WatchStream; next: number }[] = [];
    const nextRv = async (x: { w: WatchStream; next: number }): Promise<string> => {
      const events = await x.w.waitFor(x.next + 1, 20_000);
      const e = events[x.next++]!;
      expect(e.object.kind, JSON.stringify(e.object)).toBe('ConfigMap');
      return e.object.metadata!.resourceVersion!;
    };
    try {
      for (let i = 0; i < 25; i++) {
        watches.push({ w: openWatch(t.server, `${cms(ns)}?watch=1&resourceVersion=${resourceVersion}`), next: 0 });
        resourceVersion = await nextRv(watches[0]!);
        for (const x of watches.slice(1)) expect(await nextRv(x)).toBe(resourceVersion);
      }
    } finally {
      stop = true;
      await producer;
      for (const x of watches) x.w.close();
    }
  });
});
