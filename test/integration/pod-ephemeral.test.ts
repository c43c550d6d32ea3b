// A pod's ephemeralcontainers sub-resource over HTTP (kubectl debug): GET is
// the pod; PUT and the three patch types add ephemeral containers and change
// nothing else; changing or removing one is 422; the main resource cannot
// touch them.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdmissionWebhook, startAdmissionWebhook } from '../helpers/admission-webhook.js';
import { NO_WORKLOAD_CONTROLLERS, type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
let hook: AdmissionWebhook;
let dir: string;
beforeAll(async () => {
  t = await startTestServer({ authn: NO_WORKLOAD_CONTROLLERS });
  dir = await mkdtemp(join(tmpdir(), 'orch-ephemeral-'));
  hook = await startAdmissionWebhook(dir);
});
afterAll(async () => {
  await hook?.close();
  await t?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

type Pod = { metadata: { resourceVersion: string; labels?: Record<string, string> }; spec: Record<string, any> };
type Status = { code: number; reason: string; message: string; details: { causes: { field: string; reason: string; message: string }[] } };
const PODS = '/api/v1/namespaces/default/pods';
const SMP = { 'Content-Type': 'application/strategic-merge-patch+json' };

async function createPod(name: string): Promise<Pod> {
  const r = await t.request('POST', PODS, {
    body: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'app', image: 'nginx:1' }], initContainers: [{ name: 'init', image: 'busybox:1' }] } }),
  });
  expect(r.status).toBe(201);
  return r.json<Pod>();
}

const debugContainer = (name: string, extra: Record<string, unknown> = {}) => ({ name, image: 'busybox:1', command: ['sh'], stdin: true, tty: true, targetContainerName: 'app', ...extra });

describe('pods/ephemeralcontainers', () => {
  it('a strategic merge patch adds one (as kubectl debug does); GET returns the pod; other spec fields are ignored', async () => {
    await createPod('p1');
    const get = await t.request('GET', `${PODS}/p1/ephemeralcontainers`);
    expect(get.status).toBe(200);
    expect(get.json<{ kind: string }>().kind).toBe('Pod');
    const r = await t.request('PATCH', `${PODS}/p1/ephemeralcontainers`, {
      headers: SMP,
      body: JSON.stringify({ metadata: { labels: { a: 'b' } }, spec: { activeDeadlineSeconds: 5, ephemeralContainers: [debugContainer('dbg')] } }),
    });
    expect(r.status).toBe(200);
    const pod = (await t.request('GET', `${PODS}/p1`)).json<Pod>();
    expect(pod.spec.ephemeralContainers).toMatchObject([{ name: 'dbg', image: 'busybox:1', targetContainerName: 'app', imagePullPolicy: 'IfNotPresent' }]);
    expect(pod.spec.activeDeadlineSeconds).toBeUndefined();
    expect(pod.metadata.labels).toBeUndefined();
    // a second one by JSON merge patch (it replaces the list, so it repeats the first) and a third by JSON patch
    const merge = await t.request('PATCH', `${PODS}/p1/ephemeralcontainers`, {
      headers: { 'Content-Type': 'application/merge-patch+json' },
      body: JSON.stringify({ spec: { ephemeralContainers: [...pod.spec.ephemeralContainers, debugContainer('dbg2')] } }),
    });
    expect(merge.status).toBe(200);
    const json = await t.request('PATCH', `${PODS}/p1/ephemeralcontainers`, {
      headers: { 'Content-Type': 'application/json-patch+json' },
      body: JSON.stringify([{ op: 'add', path: '/spec/ephemeralContainers/-', value: debugContainer('dbg3') }]),
    });
    expect(json.status).toBe(200);
    expect(json.json<Pod>().spec.ephemeralContainers.map((c: { name: string }) => c.name)).toEqual(['dbg', 'dbg2', 'dbg3']);
  });

  it('PUT of the whole pod adds one and keeps the stored spec otherwise', async () => {
    const pod = await createPod('p2');
    const r = await t.request('PUT', `${PODS}/p2/ephemeralcontainers`, {
      body: JSON.stringify({ ...pod, spec: { ...pod.spec, containers: [{ name: 'app', image: 'nginx:2' }], ephemeralContainers: [debugContainer('dbg')] } }),
    });
    expect(r.status).toBe(200);
    const after = r.json<Pod>();
    expect(after.spec.containers[0].image).toBe('nginx:1');
    expect(after.spec.ephemeralContainers[0].name).toBe('dbg');
    // the object must exist: PUT to the sub-resource does not create
    const absent = await t.request('PUT', `${PODS}/nope/ephemeralcontainers`, { body: JSON.stringify({ ...pod, metadata: { name: 'nope' } }) });
    expect(absent.status).toBe(404);
  });

  it('server-side apply adds one and owns only it (managedFields name the sub-resource)', async () => {
    await createPod('p6');
    const cfg = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p6', labels: { ignored: 'yes' } }, spec: { containers: [{ name: 'app', image: 'nginx:9' }], ephemeralContainers: [debugContainer('dbg')] } };
    const r = await t.request('PATCH', `${PODS}/p6/ephemeralcontainers?fieldManager=debugger`, { headers: { 'Content-Type': 'application/apply-patch+yaml' }, body: JSON.stringify(cfg) });
    expect(r.status).toBe(200);
    const pod = r.json<Pod & { metadata: { managedFields: { manager: string; subresource?: string }[] } }>();
    expect(pod.spec.ephemeralContainers.map((c: { name: string }) => c.name)).toEqual(['dbg']);
    expect(pod.spec.containers[0].image).toBe('nginx:1');
    expect(pod.metadata.labels).toBeUndefined();
    expect(pod.metadata.managedFields.find((m) => m.manager === 'debugger')?.subresource).toBe('ephemeralcontainers');
  });

  it('an existing ephemeral container may not be changed or removed (422), and nothing is written', async () => {
    await createPod('p3');
    const added = await t.request('PATCH', `${PODS}/p3/ephemeralcontainers`, { headers: SMP, body: JSON.stringify({ spec: { ephemeralContainers: [debugContainer('dbg')] } }) });
    expect(added.status).toBe(200);
    const rv = added.json<Pod>().metadata.resourceVersion;
    const changed = await t.request('PATCH', `${PODS}/p3/ephemeralcontainers`, {
      headers: SMP, body: JSON.stringify({ spec: { ephemeralContainers: [{ name: 'dbg', image: 'busybox:2' }] } }),
    });
    expect(changed.status).toBe(422);
    const cs = changed.json<Status>();
    expect(cs.reason).toBe('Invalid');
    expect(cs.details.causes).toEqual([{ field: 'spec.ephemeralContainers', reason: 'FieldValueForbidden', message: 'Forbidden: existing ephemeral containers "dbg" may not be changed' }]);
    const removed = await t.request('PATCH', `${PODS}/p3/ephemeralcontainers`, {
      headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { ephemeralContainers: null } }),
    });
    expect(removed.status).toBe(422);
    expect(removed.json<Status>().message).toContain('existing ephemeral containers "dbg" may not be removed');
    expect((await t.request('GET', `${PODS}/p3`)).json<Pod>().metadata.resourceVersion).toBe(rv);
  });

  it('refuses fields ephemeral containers may not set, a duplicate name and an unknown target', async () => {
    await createPod('p4');
    const r = await t.request('PATCH', `${PODS}/p4/ephemeralcontainers`, {
      headers: SMP,
      body: JSON.stringify({ spec: { ephemeralContainers: [
        debugContainer('dbg', { ports: [{ containerPort: 80 }], readinessProbe: { exec: { command: ['true'] } }, resources: { limits: { cpu: '1' } }, restartPolicy: 'Always' }),
        debugContainer('init', { targetContainerName: 'nope' }),
      ] } }),
    });
    expect(r.status).toBe(422);
    const causes = r.json<Status>().details.causes.map((c) => `${c.field}: ${c.message}`).sort();
    expect(causes).toEqual([
      'spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container',
      'spec.ephemeralContainers[0].readinessProbe: Forbidden: cannot be set for an Ephemeral Container',
      'spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral Container',
      'spec.ephemeralContainers[0].restartPolicy: Forbidden: cannot be set for an Ephemeral Container',
      'spec.ephemeralContainers[1].name: Duplicate value: "init"',
      'spec.ephemeralContainers[1].targetContainerName: Not found: "nope"',
    ]);
  });

  it('the main resource can neither create nor change ephemeral containers', async () => {
    const create = await t.request('POST', PODS, {
      body: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p5' }, spec: { containers: [{ name: 'app', image: 'nginx:1' }], ephemeralContainers: [debugContainer('dbg')] } }),
    });
    expect(create.status).toBe(422);
    expect(create.json<Status>().details.causes).toEqual([{ field: 'spec.ephemeralContainers', reason: 'FieldValueForbidden', message: 'Forbidden: cannot be set on create' }]);
    await createPod('p5');
    const patch = await t.request('PATCH', `${PODS}/p5`, { headers: SMP, body: JSON.stringify({ spec: { ephemeralContainers: [debugContainer('dbg')] } }) });
    expect(patch.status).toBe(422);
    expect(patch.json<Status>().message).toContain('pod updates may not change fields');
    // a write to the main resource keeps those the sub-resource added
    expect((await t.request('PATCH', `${PODS}/p5/ephemeralcontainers`, { headers: SMP, body: JSON.stringify({ spec: { ephemeralContainers: [debugContainer('dbg')] } }) })).status).toBe(200);
    const labelled = await t.request('PATCH', `${PODS}/p5`, { headers: SMP, body: JSON.stringify({ metadata: { labels: { x: 'y' } } }) });
    expect(labelled.status).toBe(200);
    expect(labelled.json<Pod>().spec.ephemeralContainers[0].name).toBe('dbg');
  });

  it('admission webhooks see the sub-resource (rule pods/ephemeralcontainers) and can refuse the write', async () => {
    await createPod('p7');
    const r = await t.request('POST', '/apis/admissionregistration.orch.io/v1/validatingwebhookconfigurations', {
      body: JSON.stringify({ metadata: { name: 'no-debug' }, webhooks: [{
        name: 'no-debug.ephemeral.test', clientConfig: { url: hook.url('/deny'), caBundle: hook.caBundle }, sideEffects: 'None', admissionReviewVersions: ['v1'],
        rules: [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/ephemeralcontainers'] }],
      }] }),
    });
    expect(r.status, r.text).toBe(201);
    hook.on.set('/deny', { allowed: false, status: { code: 403, reason: 'Forbidden', message: 'no debugging here' } });
    try {
      // a write to the main resource does not match the rule
      expect((await t.request('PATCH', `${PODS}/p7`, { headers: SMP, body: JSON.stringify({ metadata: { labels: { a: 'b' } } }) })).status).toBe(200);
      expect(hook.seen).toHaveLength(0);
      const denied = await t.request('PATCH', `${PODS}/p7/ephemeralcontainers`, { headers: SMP, body: JSON.stringify({ spec: { ephemeralContainers: [debugContainer('dbg')] } }) });
      expect(denied.status).toBe(403);
      expect(denied.json<Status>().message).toContain('no debugging here');
      expect(hook.seen).toHaveLength(1);
      expect(hook.seen[0]!.review.request).toMatchObject({ operation: 'UPDATE', subResource: 'ephemeralcontainers', kind: { kind: 'Pod' }, resource: { resource: 'pods' } });
      expect((await t.request('GET', `${PODS}/p7`)).json<Pod>().spec.ephemeralContainers).toBeUndefined();
    } finally {
      await t.request('DELETE', '/apis/admissionregistration.orch.io/v1/validatingwebhookconfigurations/no-debug');
    }
  });
});

// kube 1.32's ValidatePodUpdate and ValidatePodSpec over HTTP (unit cases: test/unit/pod-validation.test.ts)
describe('pod updates and spec validation', () => {
  const causes = (r: { json<T>(): T }): string[] => r.json<Status>().details.causes.map((c) => `${c.field}: ${c.message}`);

  it('spec.nodeName only through pods/binding; terminationGracePeriodSeconds fixed; the spec validated on update', async () => {
    await createPod('u1');
    const bind = await t.request('PATCH', `${PODS}/u1`, { headers: SMP, body: JSON.stringify({ spec: { nodeName: 'node-1' } }) });
    expect(bind.status).toBe(422);
    expect(causes(bind)[0]).toContain('spec: Forbidden: pod updates may not change fields other than');
    const grace = await t.request('PATCH', `${PODS}/u1`, { headers: SMP, body: JSON.stringify({ spec: { terminationGracePeriodSeconds: 5 } }) });
    expect(grace.status).toBe(422);
    const deadline = await t.request('PATCH', `${PODS}/u1`, { headers: SMP, body: JSON.stringify({ spec: { activeDeadlineSeconds: -5 } }) });
    expect(deadline.status).toBe(422);
    expect(causes(deadline)).toContain('spec.activeDeadlineSeconds: Invalid value: -5: must be between 0 and 2147483647, inclusive');
    expect((await t.request('PATCH', `${PODS}/u1`, { headers: SMP, body: JSON.stringify({ spec: { activeDeadlineSeconds: 600 } }) })).status).toBe(200);
    const binding = await t.request('POST', `${PODS}/u1/binding`, { body: JSON.stringify({ apiVersion: 'v1', kind: 'Binding', metadata: { name: 'u1' }, target: { kind: 'Node', name: 'node-1' } }) });
    expect(binding.status, binding.text).toBe(201);
    expect((await t.request('GET', `${PODS}/u1`)).json<Pod>().spec.nodeName).toBe('node-1');
  });

  it('a create with kube\'s invalid pod specs is 422 naming each field; httpGet path defaults to "/"', async () => {
    const r = await t.request('POST', PODS, {
      body: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'u2' }, spec: {
        containers: [{ name: 'app', image: 'nginx:1', ports: [{ name: 'http', containerPort: 80 }, { name: 'http', containerPort: 81 }], livenessProbe: { tcpSocket: { port: 80 }, successThreshold: 2 } }],
        volumes: [{ name: 'v', emptyDir: {}, hostPath: { path: '/tmp' } }],
      } }),
    });
    expect(r.status).toBe(422);
    expect(causes(r)).toEqual([
      'spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type',
      'spec.containers[0].ports[1].name: Duplicate value: "http"',
      'spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1',
    ]);
    const ok = await t.request('POST', PODS, {
      body: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'u3' }, spec: { containers: [{ name: 'app', image: 'nginx:1', readinessProbe: { httpGet: { port: 80 } } }] } }),
    });
    expect(ok.status).toBe(201);
    expect(ok.json<Pod>().spec.containers[0].readinessProbe.httpGet.path).toBe('/');
  });
});
