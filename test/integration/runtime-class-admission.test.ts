// The RuntimeClass admission plugin against a started server: a pod naming an
// unknown class is kube's 403 and is not stored; a class's overhead becomes
// the pod's (a differing one, or one without a class defining it, is
// refused); its node selector and tolerations are merged (a conflicting
// selector value is refused); updates of an admitted pod are not checked
// again, even once its class is gone; --disable-admission-plugins
// RuntimeClass leaves pods as they are sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
type Spec = { overhead?: Record<string, string>; nodeSelector?: Record<string, string>; tolerations?: Record<string, unknown>[]; runtimeClassName?: string };
type Pod = { metadata: { name: string; labels?: Record<string, string> }; spec: Spec };
const PODS = '/api/v1/namespaces/default/pods';
const RCS = '/apis/node.orch.io/v1/runtimeclasses';

const podBody = (name: string, spec: Spec = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec } });
const rcBody = (name: string, extra: Record<string, unknown> = {}) => ({ apiVersion: 'node.orch.io/v1', kind: 'RuntimeClass', metadata: { name }, handler: 'runsc', ...extra });
const SANDBOX_TOLERATION = { key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' };

async function createClasses(s: TestServer): Promise<void> {
  for (const body of [
    rcBody('kata', { overhead: { podFixed: { cpu: '250m', memory: '64Mi' } } }),
    rcBody('sandbox', { scheduling: { nodeSelector: { sandbox: 'true' }, tolerations: [SANDBOX_TOLERATION] } }),
  ]) {
    const r = await s.request('POST', RCS, { body });
    expect(r.status, r.text).toBe(201);
  }
}

beforeAll(async () => {
  t = await startTestServer();
  await createClasses(t);
});
afterAll(async () => {
  await t?.stop();
});

describe('RuntimeClass admission', () => {
  it("an unknown class is kube's 403 and the pod is not stored", async () => {
    const r = await t.request('POST', PODS, { body: podBody('lost', { runtimeClassName: 'nope' }) });
    expect(r.status).toBe(403);
    expect(r.json()).toMatchObject({
      kind: 'Status', reason: 'Forbidden', code: 403,
      message: 'pods "lost" is forbidden: pod rejected: RuntimeClass "nope" not found', details: { name: 'lost', kind: 'pods' },
    });
    expect((await t.request('GET', `${PODS}/lost`)).status).toBe(404);
  });

  it("the class's overhead becomes the pod's; an equal one is accepted, a differing one refused", async () => {
    const r = await t.request('POST', PODS, { body: podBody('kata', { runtimeClassName: 'kata' }) });
    expect(r.status, r.text).toBe(201);
    expect((await t.request('GET', `${PODS}/kata`)).json<Pod>().spec.overhead).toEqual({ cpu: '250m', memory: '64Mi' });
    const same = await t.request('POST', PODS, { body: podBody('kata-same', { runtimeClassName: 'kata', overhead: { cpu: '250m', memory: '64Mi' } }) });
    expect(same.status, same.text).toBe(201);
    const wrong = await t.request('POST', PODS, { body: podBody('kata-wrong', { runtimeClassName: 'kata', overhead: { cpu: '1' } }) });
    expect(wrong.status).toBe(403);
    expect(wrong.json<{ message: string }>().message).toBe("pods \"kata-wrong\" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
  });

  it('an overhead without a class that defines one is refused', async () => {
    const why = 'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead';
    const none = await t.request('POST', PODS, { body: podBody('no-class', { overhead: { cpu: '1' } }) });
    expect(none.status).toBe(403);
    expect(none.json<{ message: string }>().message).toBe(`pods "no-class" is forbidden: ${why}`);
    const sandbox = await t.request('POST', PODS, { body: podBody('sandbox-overhead', { runtimeClassName: 'sandbox', overhead: { cpu: '1' } }) });
    expect(sandbox.status).toBe(403);
    expect(sandbox.json<{ message: string }>().message).toBe(`pods "sandbox-overhead" is forbidden: ${why}`);
  });

  it("the class's node selector and tolerations are merged into the pod's; a conflicting selector value is refused", async () => {
    const own = { key: 'gpu', operator: 'Equal', value: 'yes', effect: 'NoSchedule' };
    const r = await t.request('POST', PODS, { body: podBody('sandboxed', { runtimeClassName: 'sandbox', nodeSelector: { disk: 'ssd' }, tolerations: [own] }) });
    expect(r.status, r.text).toBe(201);
    const spec = (await t.request('GET', `${PODS}/sandboxed`)).json<Pod>().spec;
    expect(spec.nodeSelector).toEqual({ disk: 'ssd', sandbox: 'true' });
    // kube's plugin order: DefaultTolerationSeconds adds its two to the pod's own, then the class's are merged in
    const defaults = ['not-ready', 'unreachable'].map((k) => ({ key: `node.orch.io/${k}`, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }));
    expect(spec.tolerations).toEqual([own, ...defaults, SANDBOX_TOLERATION]);
    expect(spec.tolerations?.filter((x) => x.key === 'sandbox')).toHaveLength(1);
    const clash = await t.request('POST', PODS, { body: podBody('clash', { runtimeClassName: 'sandbox', nodeSelector: { sandbox: 'false' } }) });
    expect(clash.status).toBe(403);
    expect(clash.json<{ message: string }>().message).toBe('pods "clash" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = true; pod.spec.nodeSelector[sandbox] = false');
  });

  it("a class's shorter not-ready toleration gives way to DefaultTolerationSeconds' broader one, as in kube's order", async () => {
    const short = { key: 'node.orch.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 };
    expect((await t.request('POST', RCS, { body: rcBody('short-ready', { scheduling: { tolerations: [short] } }) })).status).toBe(201);
    const r = await t.request('POST', PODS, { body: podBody('short-ready', { runtimeClassName: 'short-ready' }) });
    expect(r.status, r.text).toBe(201);
    const notReady = r.json<Pod>().spec.tolerations?.filter((x) => x.key === short.key);
    expect(notReady).toEqual([{ ...short, tolerationSeconds: 300 }]);
  });

  it("a controller's pods are admitted too (kube's controllers are clients): a ReplicaSet's pod gets its class's overhead", async () => {
    const labels = { app: 'rs-kata' };
    const rs = {
      apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'rs-kata' },
      spec: { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { runtimeClassName: 'kata', containers: [{ name: 'c', image: 'busybox' }] } } },
    };
    const r = await t.request('POST', '/apis/apps/v1/namespaces/default/replicasets', { body: rs });
    expect(r.status, r.text).toBe(201);
    const pod = await eventually(async () => (await t.request('GET', `${PODS}?labelSelector=app%3Drs-kata`)).json<{ items: Pod[] }>().items[0], "the ReplicaSet's pod");
    expect(pod.spec.overhead).toEqual({ cpu: '250m', memory: '64Mi' });
  });

  it('updates are not admitted again: a pod whose class is gone can still be changed', async () => {
    expect((await t.request('POST', RCS, { body: rcBody('brief', { overhead: { podFixed: { cpu: '100m' } } }) })).status).toBe(201);
    expect((await t.request('POST', PODS, { body: podBody('orphan', { runtimeClassName: 'brief' }) })).status).toBe(201);
    expect((await t.request('DELETE', `${RCS}/brief`)).status).toBe(200);
    const pod = (await t.request('GET', `${PODS}/orphan`)).json<Pod>();
    const put = await t.request('PUT', `${PODS}/orphan`, { body: { ...pod, metadata: { ...pod.metadata, labels: { touched: 'yes' } } } });
    expect(put.status, put.text).toBe(200);
    expect(put.json<Pod>()).toMatchObject({ metadata: { labels: { touched: 'yes' } }, spec: { runtimeClassName: 'brief', overhead: { cpu: '100m' } } });
  });
});

describe('RuntimeClass admission disabled', () => {
  let off: TestServer;
  beforeAll(async () => {
    off = await startTestServer({ admissionPlugins: { disable: ['RuntimeClass'] } });
    await createClasses(off);
  });
  afterAll(async () => {
    await off?.stop();
  });

  it('an unknown class is stored, and no overhead or scheduling is applied', async () => {
    expect((await off.request('POST', PODS, { body: podBody('lost', { runtimeClassName: 'nope' }) })).status).toBe(201);
    const kata = await off.request('POST', PODS, { body: podBody('kata', { runtimeClassName: 'kata' }) });
    expect(kata.status, kata.text).toBe(201);
    expect(kata.json<Pod>().spec.overhead).toBeUndefined();
    const sandbox = await off.request('POST', PODS, { body: podBody('sandboxed', { runtimeClassName: 'sandbox' }) });
    expect(sandbox.json<Pod>().spec.nodeSelector).toBeUndefined();
    expect(sandbox.json<Pod>().spec.tolerations?.some((x) => x.key === 'sandbox')).toBe(false);
  });
});
