// Port of Kubernetes' admission webhook conformance tests on built-in kinds
// (test/e2e/apimachinery/webhook.go, [sig-api-machinery] AdmissionWebhook
// [Privileged:ClusterAdmin]): discovery, denying pods and configmaps (and a
// webhook that hangs), denying attach, fail-closed webhooks, ordered
// mutation, mutation followed by defaulting, webhooks never applying to
// webhook configurations, and timeouts. The webhook is agnhost's behaviour
// in process, reached through a Service reference (test/helpers/kube-e2e-webhook.ts).
// Custom resources, CRDs, patching/listing configurations and match
// conditions: e2e-apimachinery-webhook-2.test.ts.

import { describe, expect, it } from 'vitest';
import { type Obj, call, getOrUndefined } from '../helpers/kube-e2e.js';
import {
  AR,
  MWC,
  VWC,
  cmPath,
  coreRule,
  createConfiguration,
  denyConfigMapWebhook,
  groupRule,
  labelledNamespace,
  mutateConfigMapWebhook,
  namedNonCompliantConfigMap,
  namedToBeMutatedConfigMap,
  refused,
  register,
  serviceRef,
  useWebhookEnv,
  waitReady,
  webhook,
  isReadyWebhook,
} from '../helpers/kube-e2e-webhook.js';

const env = useWebhookEnv();

const pod = (name: string, container: string, labels?: Record<string, string>): Obj => ({
  metadata: { name, ...(labels ? { labels } : {}) },
  spec: { containers: [{ name: container, image: 'registry.k8s.io/pause:3.10' }] },
});
const podsPath = (ns: string, name = ''): string => `/api/v1/namespaces/${ns}/pods${name ? `/${name}` : ''}`;

describe('AdmissionWebhook [Privileged:ClusterAdmin] (built-in kinds)', () => {
  it('should include webhook resources in discovery documents [Conformance]', async () => {
    const { t } = env();
    const groups = (await call(t, 'GET', '/apis')).groups as Obj[];
    const group = groups.find((g) => g.name === 'admissionregistration.k8s.io');
    expect(group, 'admissionregistration.k8s.io in /apis').toBeDefined();
    expect((group!.versions as Obj[]).some((v) => v.version === 'v1')).toBe(true);

    const g = await call(t, 'GET', '/apis/admissionregistration.k8s.io');
    expect(g.name).toBe('admissionregistration.k8s.io');
    expect((g.versions as Obj[]).some((v) => v.version === 'v1')).toBe(true);

    const list = await call(t, 'GET', AR);
    expect(list.groupVersion).toBe('admissionregistration.k8s.io/v1');
    const names = (list.resources as Obj[]).map((r) => r.name);
    expect(names).toContain('mutatingwebhookconfigurations');
    expect(names).toContain('validatingwebhookconfigurations');
  });

  it('should be able to deny pod and configmap creation [Conformance]', async () => {
    const e = env();
    const { t, ns, unique } = e;
    // a webhook the server cannot talk to (no caBundle), failing open
    const failOpen = webhook(e, 'fail-open.k8s.io', '/configmaps', [coreRule(['CREATE'], 'configmaps')], { clientConfig: serviceRef(e, '/configmaps', false), failurePolicy: 'Ignore' });
    await register(e, 'validating', unique, [webhook(e, 'deny-unwanted-pod-container-name-and-label.k8s.io', '/pods', [coreRule(['CREATE'], 'pods')]), denyConfigMapWebhook(e), failOpen]);

    const denied = await refused(t, 'POST', podsPath(ns), pod('disallowed-pod', 'webhook-disallow', { 'webhook-e2e-test': 'webhook-disallow' }));
    expect(denied.message).toContain('the pod contains unwanted container name');
    expect(denied.message).toContain('the pod contains unwanted label');

    // the webhook hangs: the call times out (timeoutSeconds defaults to 10) and, failing closed, refuses
    const hanging = await refused(t, 'POST', podsPath(ns), pod('hanging-pod', 'wait-forever', { 'webhook-e2e-test': 'wait-forever' }));
    expect(hanging.message).toContain('webhook');
    expect(hanging.message).toContain('deadline');
    expect(await getOrUndefined(t, podsPath(ns, 'hanging-pod'))).toBeUndefined();

    const unwanted = 'the configmap contains unwanted key and value';
    expect((await refused(t, 'POST', cmPath(ns), namedNonCompliantConfigMap('disallowed-configmap'))).message).toContain(unwanted);

    await call(t, 'POST', cmPath(ns), { metadata: { name: 'allowed-configmap' }, data: { admit: 'this' } });
    const cur = await call(t, 'GET', cmPath(ns, 'allowed-configmap'));
    cur.data['webhook-e2e-test'] = 'webhook-disallow';
    expect((await refused(t, 'PUT', cmPath(ns, 'allowed-configmap'), cur)).message).toContain(unwanted);
    const patched = await refused(t, 'PATCH', cmPath(ns, 'allowed-configmap'), { data: { 'webhook-e2e-test': 'webhook-disallow' } }, undefined, 'application/strategic-merge-patch+json');
    expect(patched.message).toContain(unwanted);

    // a namespace the configmap webhook's selector leaves out
    const skip = await labelledNamespace(t, 'exempted-namespace', { 'skip-webhook-admission': 'yes', [unique]: 'true' });
    await call(t, 'POST', cmPath(skip), namedNonCompliantConfigMap('disallowed-configmap'));
  });

  it('should be able to deny attaching pod [Conformance]', async () => {
    const e = env();
    const { t, ns, unique } = e;
    await register(e, 'validating', unique, [webhook(e, 'deny-attaching-pod.k8s.io', '/pods/attach', [coreRule(['CONNECT'], 'pods/attach')])]);
    await call(t, 'POST', podsPath(ns), pod('to-be-attached-pod', 'container1'));
    // kubectl attach -i -c=container1 (kube waits for the pod to run first; here no node agent runs it,
    // and admission comes before the node is reached)
    const r = await t.request('POST', `${podsPath(ns, 'to-be-attached-pod')}/attach?stdin=true&stdout=true&stderr=true&container=container1`);
    expect(r.status, r.text).toBeGreaterThanOrEqual(400);
    expect(r.json<Obj>().message).toContain("attaching to pod 'to-be-attached-pod' is not allowed");
    // the webhook saw a CONNECT of pods/attach with the PodAttachOptions
    const seen = e.hook.seen.find((s) => s.path === '/pods/attach')!.review.request as Obj;
    expect(seen).toMatchObject({ operation: 'CONNECT', subResource: 'attach', name: 'to-be-attached-pod', object: { kind: 'PodAttachOptions', stdin: true, container: 'container1' } });
  });

  it('should unconditionally reject operations on fail closed webhook [Conformance]', async () => {
    const e = env();
    const { t, unique } = e;
    const failClosed = webhook(e, 'fail-closed.k8s.io', '/configmaps', [coreRule(['CREATE'], 'configmaps')], {
      clientConfig: serviceRef(e, '/configmaps', false),
      failurePolicy: 'Fail',
      namespaceSelector: { matchLabels: { [unique]: 'true' }, matchExpressions: [{ key: 'fail-closed-webhook', operator: 'In', values: ['yes'] }] },
    });
    await register(e, 'validating', unique, [failClosed]);
    const failNs = await labelledNamespace(t, 'fail-closed-namespace', { 'fail-closed-webhook': 'yes', [unique]: 'true' });
    const s = await refused(t, 'POST', cmPath(failNs), { metadata: { name: 'foo' } }, 500);
    expect(s.reason).toBe('InternalError');
    expect(s.message).toContain('failed calling webhook "fail-closed.k8s.io"');
  });

  it('should mutate configmap [Conformance]', async () => {
    const e = env();
    await register(e, 'mutating', e.unique, [mutateConfigMapWebhook(e, 1), mutateConfigMapWebhook(e, 2)]);
    const got = await call(e.t, 'POST', cmPath(e.ns), namedToBeMutatedConfigMap('to-be-mutated'));
    expect(got.data).toEqual({ 'mutation-start': 'yes', 'mutation-stage-1': 'yes', 'mutation-stage-2': 'yes' });
  });

  it('should mutate pod and apply defaults after mutation [Conformance]', async () => {
    const e = env();
    await register(e, 'mutating', e.unique, [webhook(e, 'adding-init-container.k8s.io', '/mutating-pods', [coreRule(['CREATE'], 'pods')])]);
    const got = await call(e.t, 'POST', podsPath(e.ns), pod('webhook-to-be-mutated', 'example'));
    const inits = got.spec.initContainers as Obj[];
    expect(inits).toHaveLength(1);
    expect(inits[0]!.name).toBe('webhook-added-init-container');
    expect(inits[0]!.terminationMessagePolicy).toBe('File');
    // the rest of a container's defaults (no tag: pull Always), as kube's scheme defaults a decoded pod
    expect(inits[0]).toMatchObject({ terminationMessagePath: '/dev/termination-log', imagePullPolicy: 'Always' });
  });

  it('should not be able to mutate or prevent deletion of webhook configuration objects [Conformance]', async () => {
    const e = env();
    const { t, unique } = e;
    const configKinds = groupRule(['DELETE'], ['admissionregistration.k8s.io'], ['*'], ['validatingwebhookconfigurations', 'mutatingwebhookconfigurations']);
    await register(e, 'validating', `${unique}blocking`, [webhook(e, 'deny-webhook-configuration-deletions.k8s.io', '/always-deny', [configKinds], { failurePolicy: 'Fail' })]);
    await register(e, 'mutating', `${unique}blocking`, [
      webhook(e, 'add-label-to-webhook-configurations.k8s.io', '/add-label', [{ ...configKinds, operations: ['CREATE'] }], { failurePolicy: 'Fail' }),
    ]);
    // dummies that match nothing real and cannot be called (no caBundle, empty path), failing open
    const dummy = (name: string): Obj => webhook(e, name, '', [coreRule(['CREATE'], 'invalid')], { clientConfig: serviceRef(e, '', false), failurePolicy: 'Ignore' });
    for (const [kind, path, name] of [['validating', VWC, 'dummy-validating-webhook.k8s.io'], ['mutating', MWC, 'dummy-mutating-webhook.k8s.io']] as const) {
      const created = await createConfiguration(e, kind, unique, [dummy(name), isReadyWebhook(e, kind)]);
      expect(created.metadata.labels?.['added-label']).toBeUndefined();
      await waitReady(e);
      await call(t, 'DELETE', `${path}/${unique}`);
      expect(await getOrUndefined(t, `${path}/${unique}`)).toBeUndefined();
    }
    // neither webhook was ever called
    expect(e.hook.seen.filter((s) => s.path === '/add-label')).toEqual([]);
    expect(e.hook.seen.filter((s) => s.path === '/always-deny' && (s.review.request as Obj).resource.group === 'admissionregistration.k8s.io')).toEqual([]);
  });

  it('should honor timeout [Conformance]', async () => {
    const e = env();
    const { t, ns, unique } = e;
    const slow = async (failurePolicy: string, timeoutSeconds?: number): Promise<void> => {
      await register(e, 'validating', unique, [
        webhook(e, 'allow-configmap-with-delay-webhook.k8s.io', '/always-allow-delay-5s', [coreRule(['CREATE'], 'configmaps')], { failurePolicy, ...(timeoutSeconds ? { timeoutSeconds } : {}) }),
      ]);
    };
    const cleanup = async (): Promise<void> => {
      await call(t, 'DELETE', `${VWC}/${unique}`);
    };
    const createAndDelete = async (): Promise<void> => {
      await call(t, 'POST', cmPath(ns), { metadata: { name: 'e2e-test-slow-webhook-configmap' } });
      await call(t, 'DELETE', cmPath(ns, 'e2e-test-slow-webhook-configmap'));
    };

    // timeout (1s) shorter than the webhook's latency (5s), failing closed
    await slow('Fail', 1);
    const s = await refused(t, 'POST', cmPath(ns), { metadata: { name: 'e2e-test-slow-webhook-configmap' } });
    expect(s.message).toMatch(/context deadline exceeded|timeout/);
    expect(s.message).toContain('/always-allow-delay-5s?timeout=1s');
    await cleanup();

    // the same, failing open
    await slow('Ignore', 1);
    await createAndDelete();
    await cleanup();

    // a timeout longer than the latency, then the default (10s in v1)
    await slow('Fail', 10);
    await createAndDelete();
    await cleanup();
    await slow('Fail');
    await createAndDelete();
  });
});
