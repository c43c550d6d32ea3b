// pods/{name}/eviction and pods/{name}/binding on a real server (loopback,
// real store, the disruption controller running as leader): what
// kube-apiserver answers for each case (docs/controllers.md "Disruption").

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdmissionWebhook } from '../helpers/admission-webhook.js';
import { eventually } from '../helpers/eventually.js';
import { userCert } from '../helpers/identities.js';
import { NO_WORKLOAD_CONTROLLERS, type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
const NS = '/api/v1/namespaces/default';

type Pod = { metadata: { name: string; uid: string; resourceVersion: string; deletionTimestamp?: string }; spec: { nodeName?: string }; status: { conditions?: { type: string; status: string; reason?: string }[] } };
type Pdb = { metadata: { generation: number }; status: { observedGeneration?: number; disruptionsAllowed: number; currentHealthy: number; desiredHealthy: number; expectedPods: number; disruptedPods?: Record<string, string>; conditions?: { type: string; status: string; reason: string }[] } };
type Status = { kind: string; status: string; code: number; reason?: string; message?: string; details?: { causes?: { reason: string; message: string }[]; retryAfterSeconds?: number } };

beforeAll(async () => {
  t = await startTestServer({ authn: NO_WORKLOAD_CONTROLLERS });
});
afterAll(async () => {
  await t?.stop();
});

async function createPod(name: string, labels: Record<string, string>, o: { ready?: boolean; nodeName?: string } = {}): Promise<Pod> {
  const r = await t.request('POST', `${NS}/pods`, {
    body: { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels }, spec: { ...(o.nodeName ? { nodeName: o.nodeName } : {}), containers: [{ name: 'c', image: 'busybox:1' }] } },
  });
  expect(r.status, r.text).toBe(201);
  if (o.ready === false) return r.json<Pod>();
  // Running and Ready, as a node agent would report it
  const pod = r.json<Pod & { status: Record<string, unknown> }>();
  pod.status = { ...pod.status, phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
  const s = await t.request('PUT', `${NS}/pods/${name}/status`, { body: pod });
  expect(s.status, s.text).toBe(200);
  return s.json<Pod>();
}

async function createPdb(name: string, labels: Record<string, string>, spec: Record<string, unknown>): Promise<void> {
  const r = await t.request('POST', '/apis/policy/v1/namespaces/default/poddisruptionbudgets', {
    body: { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name }, spec: { selector: { matchLabels: labels }, ...spec } },
  });
  expect(r.status, r.text).toBe(201);
}

const pdb = async (name: string) => (await t.request('GET', `/apis/policy/v1/namespaces/default/poddisruptionbudgets/${name}`)).json<Pdb>();
const getPod = (name: string) => t.request('GET', `${NS}/pods/${name}`);

/** the controller has computed the budget's status for its generation */
async function pdbSettled(name: string, check: (p: Pdb) => boolean = () => true): Promise<Pdb> {
  return eventually(async () => {
    const p = await pdb(name);
    return (p.status.observedGeneration ?? 0) >= p.metadata.generation && check(p) ? p : undefined;
  }, `budget ${name} computed`);
}

const evict = (name: string, body: Record<string, unknown> = {}, query = '', cert?: { certPem: string; keyPem: string }) =>
  t.request('POST', `${NS}/pods/${name}/eviction${query}`, {
    body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: 'default' }, ...body },
    ...(cert ? { cert } : {}),
  });

describe('pods/eviction', () => {
  it('without a budget the pod is deleted and the answer is a 201 Status Success', async () => {
    await createPod('solo', { app: 'solo' });
    const r = await evict('solo');
    expect(r.status, r.text).toBe(201);
    expect(r.json<Status>()).toMatchObject({ kind: 'Status', status: 'Success', code: 201 });
    // not bound to a node: removed at once
    expect((await getPod('solo')).status).toBe(404);
  });

  it('a pod bound to a node is deleted gracefully and marked DisruptionTarget', async () => {
    await createPod('bound', { app: 'bound' }, { nodeName: 'node-x' });
    const r = await evict('bound', { deleteOptions: { gracePeriodSeconds: 30 } });
    expect(r.status, r.text).toBe(201);
    const p = (await getPod('bound')).json<Pod & { metadata: { deletionGracePeriodSeconds?: number } }>();
    expect(p.metadata.deletionTimestamp).toBeTruthy();
    expect(p.metadata.deletionGracePeriodSeconds).toBe(30);
    expect(p.status.conditions?.find((c) => c.type === 'DisruptionTarget')).toMatchObject({ status: 'True', reason: 'EvictionByEvictionAPI' });
  });

  it('a policy/v1beta1 Eviction is accepted, and YAML bodies too', async () => {
    await createPod('old-client', { app: 'old' });
    const r = await t.request('POST', `${NS}/pods/old-client/eviction`, { body: { apiVersion: 'policy/v1beta1', kind: 'Eviction', metadata: { name: 'old-client' } } });
    expect(r.status, r.text).toBe(201);
    await createPod('yaml-client', { app: 'yaml' });
    const y = await t.request('POST', `${NS}/pods/yaml-client/eviction`, {
      body: 'apiVersion: policy/v1\nkind: Eviction\nmetadata:\n  name: yaml-client\n',
      headers: { 'content-type': 'application/yaml' },
    });
    expect(y.status, y.text).toBe(201);
    expect((await getPod('yaml-client')).status).toBe(404);
  });

  it('an absent pod is 404, a name mismatch 400, a wrong kind 400', async () => {
    const missing = await evict('nope');
    expect(missing.status).toBe(404);
    expect(missing.json<Status>().reason).toBe('NotFound');
    await createPod('named', { app: 'named' });
    const mismatch = await t.request('POST', `${NS}/pods/named/eviction`, { body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'other' } } });
    expect(mismatch.status).toBe(400);
    expect(mismatch.json<Status>().message).toBe('name in URL does not match name in Eviction object');
    const wrongKind = await t.request('POST', `${NS}/pods/named/eviction`, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'named' } } });
    expect(wrongKind.status).toBe(400);
    // deleteOptions: eviction-delete-options.test.ts
    // nothing was lost
    expect((await getPod('named')).status).toBe(200);
  });

  it('dry run (query or deleteOptions) evicts nothing and spends nothing', async () => {
    await createPod('dry', { app: 'dry' });
    expect((await evict('dry', {}, '?dryRun=All')).status).toBe(201);
    expect((await evict('dry', { deleteOptions: { dryRun: ['All'] } })).status).toBe(201);
    expect((await getPod('dry')).status).toBe(200);
    // a budget that allows one disruption: a dry run leaves it at one
    await createPod('dry-2', { app: 'dry' });
    await createPdb('dry-budget', { app: 'dry' }, { minAvailable: 1 });
    await pdbSettled('dry-budget', (p) => p.status.disruptionsAllowed === 1);
    expect((await evict('dry', {}, '?dryRun=All')).status).toBe(201);
    const after = await pdb('dry-budget');
    expect(after.status.disruptionsAllowed).toBe(1);
    expect(after.status.disruptedPods ?? {}).toEqual({});
    expect((await getPod('dry')).status).toBe(200);
  });

  it('a uid precondition that does not match is 409 and the pod stays', async () => {
    await createPod('pinned', { app: 'pinned' });
    const r = await evict('pinned', { deleteOptions: { preconditions: { uid: 'not-the-uid' } } });
    expect(r.status, r.text).toBe(409);
    expect(r.json<Status>().reason).toBe('Conflict');
    expect((await getPod('pinned')).status).toBe(200);
    const uid = (await getPod('pinned')).json<Pod>().metadata.uid;
    expect((await evict('pinned', { deleteOptions: { preconditions: { uid } } })).status).toBe(201);
  });

  it('a user without create pods/eviction is refused 403', async () => {
    await createPod('guarded', { app: 'guarded' });
    const nobody = await userCert(t, 'nobody');
    const r = await evict('guarded', {}, '', nobody);
    expect(r.status).toBe(403);
    expect(r.json<Status>().message).toContain('pods/eviction');
    expect((await getPod('guarded')).status).toBe(200);
  });

  it('a budget allowing 1 of 2: the first eviction 201, the second 429 until a replacement is healthy', async () => {
    await createPod('web-1', { app: 'web' });
    await createPod('web-2', { app: 'web' });
    await createPdb('web', { app: 'web' }, { minAvailable: 1 });
    const before = await pdbSettled('web', (p) => p.status.disruptionsAllowed === 1);
    expect(before.status).toMatchObject({ currentHealthy: 2, desiredHealthy: 1, expectedPods: 2 });
    expect(before.status.conditions?.find((c) => c.type === 'DisruptionAllowed')).toMatchObject({ status: 'True', reason: 'SufficientPods' });

    expect((await evict('web-1')).status).toBe(201);
    // the controller sees web-1 gone: nothing more may go
    await pdbSettled('web', (p) => p.status.currentHealthy === 1 && p.status.disruptionsAllowed === 0);
    const refused = await evict('web-2');
    expect(refused.status, refused.text).toBe(429);
    const st = refused.json<Status>();
    expect(st.reason).toBe('TooManyRequests');
    expect(st.message).toBe("Cannot evict pod as it would violate the pod's disruption budget.");
    expect(st.details?.causes).toEqual([{ reason: 'DisruptionBudget', message: 'The disruption budget web needs 1 healthy pods and has 1 currently' }]);
    expect((await getPod('web-2')).status).toBe(200);

    // a replacement becomes ready: one disruption allowed again
    await createPod('web-3', { app: 'web' });
    await pdbSettled('web', (p) => p.status.disruptionsAllowed === 1);
    expect((await evict('web-2')).status).toBe(201);
    expect((await getPod('web-2')).status).toBe(404);
  });

  it('concurrent evictions under one budget: each spends it in turn (a conflict is retried, never a 409)', async () => {
    for (const n of ['par-1', 'par-2', 'par-3', 'par-4']) await createPod(n, { app: 'par' });
    await createPdb('par', { app: 'par' }, { minAvailable: 2 });
    await pdbSettled('par', (p) => p.status.disruptionsAllowed === 2);
    const codes = (await Promise.all(['par-1', 'par-2', 'par-3'].map((n) => evict(n)))).map((r) => r.status).sort();
    // two allowed: two evicted, the third refused by the budget (not a conflict)
    expect(codes).toEqual([201, 201, 429]);
  });

  it('two budgets selecting the pod: 500 with kube message, the pod stays', async () => {
    await createPod('twice', { app: 'twice', tier: 'x' });
    await createPdb('twice-a', { app: 'twice' }, { minAvailable: 0 });
    await createPdb('twice-b', { tier: 'x' }, { minAvailable: 0 });
    const r = await evict('twice');
    expect(r.status, r.text).toBe(500);
    expect(r.json<Status>()).toMatchObject({ status: 'Failure', code: 500, message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.' });
    expect((await getPod('twice')).status).toBe(200);
  });

  it('pending, or unready with unhealthyPodEvictionPolicy AlwaysAllow: deleted without spending the budget', async () => {
    await createPod('pend', { app: 'pend' }, { ready: false });
    await createPdb('pend', { app: 'pend' }, { minAvailable: 5 });
    await pdbSettled('pend');
    // Pending: the budget (which allows nothing) is not consulted
    expect((await evict('pend')).status).toBe(201);

    await createPod('sick-1', { app: 'sick' });
    await createPod('sick-2', { app: 'sick' });
    const sick = (await getPod('sick-2')).json<Pod & { status: Record<string, unknown> }>();
    sick.status = { ...sick.status, phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] };
    expect((await t.request('PUT', `${NS}/pods/sick-2/status`, { body: sick })).status).toBe(200);
    await createPdb('sick', { app: 'sick' }, { minAvailable: 2, unhealthyPodEvictionPolicy: 'AlwaysAllow' });
    await pdbSettled('sick', (p) => p.status.currentHealthy === 1);
    expect((await pdb('sick')).status.disruptionsAllowed).toBe(0);
    // the unready pod goes; the ready one is still guarded
    expect((await evict('sick-2')).status).toBe(201);
    expect((await evict('sick-1')).status).toBe(429);
  });

  it('a protobuf Eviction body is decoded', async () => {
    await createPod('proto', { app: 'proto' });
    // k8s envelope: magic, Unknown{typeMeta{apiVersion,kind}, raw = Eviction{metadata{name}}}
    const str = (field: number, s: string) => Buffer.concat([Buffer.from([(field << 3) | 2, Buffer.byteLength(s)]), Buffer.from(s)]);
    const msg = (field: number, b: Buffer) => Buffer.concat([Buffer.from([(field << 3) | 2, b.length]), b]);
    const typeMeta = Buffer.concat([str(1, 'policy/v1'), str(2, 'Eviction')]);
    const raw = msg(1, str(1, 'proto'));
    const unknown = Buffer.concat([msg(1, typeMeta), msg(2, raw)]);
    const body = Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x00]), unknown]);
    const r = await t.request('POST', `${NS}/pods/proto/eviction`, { body, headers: { 'content-type': 'application/vnd.kubernetes.protobuf' } });
    expect(r.status, r.text).toBe(201);
    expect((await getPod('proto')).status).toBe(404);
  });
});

describe('pods/eviction with the budget status written by hand (no disruption controller)', () => {
  let u: TestServer;
  beforeAll(async () => {
    u = await startTestServer({ authn: { controllers: [...NO_WORKLOAD_CONTROLLERS.controllers, '-disruption'] } });
  });
  afterAll(async () => {
    await u?.stop();
  });
  const PDBS = '/apis/policy/v1/namespaces/default/poddisruptionbudgets';

  it('a budget not observed at its generation is 429 "still being processed"; an observed one is spent and records the pod', async () => {
    for (const name of ['h-1', 'h-2']) {
      const r = await u.request('POST', `${NS}/pods`, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'h' } }, spec: { containers: [{ name: 'c', image: 'busybox:1' }] } } });
      const pod = r.json<Record<string, unknown> & { status: Record<string, unknown> }>();
      pod.status = { ...pod.status, phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
      expect((await u.request('PUT', `${NS}/pods/${name}/status`, { body: pod })).status).toBe(200);
    }
    const c = await u.request('POST', PDBS, { body: { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'h' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'h' } } } } });
    expect(c.status, c.text).toBe(201);
    const evictH = (name: string) => u.request('POST', `${NS}/pods/${name}/eviction`, { body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name } } });

    const early = await evictH('h-1');
    expect(early.status, early.text).toBe(429);
    expect(early.headers['retry-after']).toBe('10');
    expect(early.json<Status>().details?.causes).toEqual([{ reason: 'DisruptionBudget', message: 'The disruption budget h is still being processed by the server.' }]);

    // what the controller would write: generation 1 observed, one disruption allowed
    const cur = c.json<Record<string, unknown>>();
    const w = await u.request('PUT', `${PDBS}/h/status`, { body: { ...cur, status: { observedGeneration: 1, disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2 } } });
    expect(w.status, w.text).toBe(200);
    expect((await evictH('h-1')).status).toBe(201);
    const spent = (await u.request('GET', `${PDBS}/h`)).json<Pdb>();
    expect(spent.status.disruptionsAllowed).toBe(0);
    expect(Object.keys(spent.status.disruptedPods ?? {})).toEqual(['h-1']);
    expect(spent.status.conditions?.find((x) => x.type === 'DisruptionAllowed')).toMatchObject({ status: 'False', reason: 'InsufficientPods' });
    // nothing left to spend
    const refused = await evictH('h-2');
    expect(refused.status).toBe(429);
    expect(refused.json<Status>().details?.causes?.[0]?.message).toBe('The disruption budget h needs 1 healthy pods and has 2 currently');
    expect((await u.request('GET', `${NS}/pods/h-2`)).status).toBe(200);
  });
});

describe('pods/eviction admission', () => {
  it('webhooks for pods/eviction CREATE see the Eviction (kind policy/v1 Eviction) and may refuse it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'orch-evict-hook-'));
    const hook = await startAdmissionWebhook(dir);
    try {
      hook.on.set('/deny', { allowed: false, status: { code: 403, message: 'evictions are frozen' } });
      const r = await t.request('POST', '/apis/admissionregistration.orch.io/v1/validatingwebhookconfigurations', {
        body: {
          metadata: { name: 'freeze-evictions' },
          webhooks: [{
            name: 'freeze.evictions.test',
            clientConfig: { url: hook.url('/deny'), caBundle: hook.caBundle },
            rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/eviction'] }],
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
          }],
        },
      });
      expect(r.status, r.text).toBe(201);
      await createPod('frozen', { app: 'frozen' });
      // dry runs until the configuration is in effect (sideEffects None: dry runs are admitted too)
      await eventually(async () => (await evict('frozen', {}, '?dryRun=All')).status === 403, 'the webhook refuses the eviction');
      const refused = await evict('frozen');
      expect(refused.status, refused.text).toBe(403);
      expect(refused.json<Status>().message).toContain('evictions are frozen');
      expect((await getPod('frozen')).status).toBe(200);
      const review = hook.seen.at(-1)!.review.request as Record<string, unknown>;
      expect(review).toMatchObject({ operation: 'CREATE', kind: { group: 'policy', version: 'v1', kind: 'Eviction' }, resource: { group: '', version: 'v1', resource: 'pods' }, subResource: 'eviction', name: 'frozen', namespace: 'default' });
      expect((review.object as { kind: string }).kind).toBe('Eviction');
      expect((await t.request('DELETE', '/apis/admissionregistration.orch.io/v1/validatingwebhookconfigurations/freeze-evictions')).status).toBe(200);
      await eventually(async () => (await evict('frozen', {}, '?dryRun=All')).status === 201, 'the webhook is gone');
      expect((await evict('frozen')).status).toBe(201);
    } finally {
      await hook.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('pods/binding', () => {
  it('binds an unbound pod to a node; a second binding is 409', async () => {
    await createPod('sched', { app: 'sched' }, { ready: false });
    const bind = (node: string) => t.request('POST', `${NS}/pods/sched/binding`, { body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'sched' }, target: { apiVersion: 'v1', kind: 'Node', name: node } } });
    const r = await bind('node-1');
    expect(r.status, r.text).toBe(201);
    expect(r.json<Status>()).toMatchObject({ kind: 'Status', status: 'Success' });
    const p = (await getPod('sched')).json<Pod>();
    expect(p.spec.nodeName).toBe('node-1');
    expect(p.status.conditions?.find((c) => c.type === 'PodScheduled')?.status).toBe('True');
    const again = await bind('node-2');
    expect(again.status, again.text).toBe(409);
    expect(again.json<Status>().message).toBe('Operation cannot be fulfilled on pods/binding "sched": pod sched is already assigned to node "node-1"');
    expect((await getPod('sched')).json<Pod>().spec.nodeName).toBe('node-1');
  });

  it('a Binding without a target name is 422, to another kind 422, to an absent pod 404', async () => {
    await createPod('sched-2', { app: 'sched' }, { ready: false });
    const noName = await t.request('POST', `${NS}/pods/sched-2/binding`, { body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'sched-2' }, target: { kind: 'Node' } } });
    expect(noName.status).toBe(422);
    const notNode = await t.request('POST', `${NS}/pods/sched-2/binding`, { body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'sched-2' }, target: { kind: 'Pod', name: 'x' } } });
    expect(notNode.status).toBe(422);
    const absent = await t.request('POST', `${NS}/pods/ghost/binding`, { body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'ghost' }, target: { kind: 'Node', name: 'n' } } });
    expect(absent.status).toBe(404);
    expect((await getPod('sched-2')).json<Pod>().spec.nodeName).toBeUndefined();
  });
});
