// An Eviction's deleteOptions on a started server, as kube 1.32's EvictionREST
// treats them: decoded with the body (a value of the wrong type is 400),
// dryRun merged with the query's (propagateDryRun: two different lists are a
// 500), then checked by the pod's delete (rest.BeforeDelete:
// ValidateDeleteOptions' 422 on DeleteOptions, a negative grace period taken as
// 1 s) — after the DisruptionTarget condition was written, as kube writes it.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_WORKLOAD_CONTROLLERS, type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
const NS = '/api/v1/namespaces/default';
type Obj = Record<string, any>;

beforeAll(async () => {
  t = await startTestServer({ authn: NO_WORKLOAD_CONTROLLERS });
});
afterAll(async () => {
  await t?.stop();
});

/** a Running, Ready pod, bound to a node when asked (deleted gracefully then) */
async function runningPod(name: string, nodeName?: string): Promise<void> {
  const r = await t.request('POST', `${NS}/pods`, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'c', image: 'busybox:1' }] } } });
  expect(r.status, r.text).toBe(201);
  const pod = r.json<Obj>();
  const s = await t.request('PUT', `${NS}/pods/${name}/status`, { body: { ...pod, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } } });
  expect(s.status, s.text).toBe(200);
}

const evict = async (name: string, deleteOptions: unknown, query = '', want?: number): Promise<Obj> => {
  const r = await t.request('POST', `${NS}/pods/${name}/eviction${query}`, { body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name }, ...(deleteOptions === undefined ? {} : { deleteOptions }) } });
  if (want !== undefined) expect(r.status, r.text).toBe(want);
  return r.json<Obj>();
};
const pod = async (name: string): Promise<Obj | undefined> => {
  const r = await t.request('GET', `${NS}/pods/${name}`);
  return r.status === 200 ? r.json<Obj>() : undefined;
};
const disruptionTarget = (p: Obj | undefined) => (p?.status?.conditions as Obj[] | undefined)?.find((c) => c.type === 'DisruptionTarget');

describe('pods/eviction deleteOptions', () => {
  it('an unknown propagationPolicy is the delete\'s 422 on DeleteOptions; the condition was written first', async () => {
    await runningPod('policy');
    const s = await evict('policy', { propagationPolicy: 'Sideways' }, '', 422);
    expect(s).toEqual({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Invalid', code: 422,
      message: 'DeleteOptions.meta.orch.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"',
      details: { group: 'meta.orch.io', kind: 'DeleteOptions', causes: [{ reason: 'FieldValueNotSupported', field: 'propagationPolicy', message: 'Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"' }] },
    });
    const p = await pod('policy');
    expect(p?.metadata.deletionTimestamp).toBeUndefined();
    expect(disruptionTarget(p)).toMatchObject({ status: 'True', reason: 'EvictionByEvictionAPI' });
  });

  it('orphanDependents beside a propagationPolicy is 422; an absent pod is 404 first', async () => {
    await runningPod('both');
    const s = await evict('both', { propagationPolicy: 'Orphan', orphanDependents: true }, '', 422);
    expect(s.message).toBe('DeleteOptions.meta.orch.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set');
    expect((await pod('both'))?.metadata.deletionTimestamp).toBeUndefined();
    expect((await evict('absent', { propagationPolicy: 'Sideways' }, '', 404)).reason).toBe('NotFound');
  });

  it('a dryRun value other than All is 422, and as a dry run nothing is written before it', async () => {
    await runningPod('dry');
    const s = await evict('dry', { dryRun: ['Bogus'] }, '', 422);
    expect(s.message).toBe('DeleteOptions.meta.orch.io "" is invalid: dryRun: Unsupported value: []string{"Bogus"}: supported values: "All"');
    expect(disruptionTarget(await pod('dry'))).toBeUndefined();
  });

  it('a body dryRun that differs from the query\'s is kube\'s 500 (propagateDryRun); the same one is a dry run', async () => {
    await runningPod('mixed');
    const s = await evict('mixed', { dryRun: ['All', 'All'] }, '?dryRun=All', 500);
    // a plain Go error: kube's Status has no reason (StatusReasonUnknown is omitted)
    expect(s).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 500, message: 'Non-matching dry-run options in request and content: [All] and [All All]' });
    await evict('mixed', { dryRun: ['All'] }, '?dryRun=All', 201);
    expect((await pod('mixed'))?.metadata.deletionTimestamp).toBeUndefined();
  });

  it('a negative grace period is taken as 1 second (rest.BeforeDelete), not refused', async () => {
    await runningPod('hasty', 'node-x');
    await evict('hasty', { gracePeriodSeconds: -5 }, '', 201);
    const p = await pod('hasty');
    expect(p?.metadata.deletionGracePeriodSeconds).toBe(1);
  });

  it('a value of the wrong type is the decoder\'s 400, before the pod is read', async () => {
    const bad = async (deleteOptions: unknown, message: string) => expect((await evict('nowhere', deleteOptions, '', 400)).message).toBe(`Eviction in version "v1" cannot be handled as a Eviction: json: cannot unmarshal ${message}`);
    await bad({ gracePeriodSeconds: '30' }, 'string into Go struct field DeleteOptions.deleteOptions.gracePeriodSeconds of type int64');
    await bad({ gracePeriodSeconds: 1.5 }, 'number 1.5 into Go struct field DeleteOptions.deleteOptions.gracePeriodSeconds of type int64');
    await bad({ dryRun: 'All' }, 'string into Go struct field DeleteOptions.deleteOptions.dryRun of type []string');
    await bad({ preconditions: { uid: 7 } }, 'number into Go struct field Preconditions.deleteOptions.preconditions.uid of type types.UID');
    await bad('soon', 'string into Go struct field Eviction.deleteOptions of type v1.DeleteOptions');
  });

  it('an Eviction without a name does not match the URL (400)', async () => {
    await runningPod('nameless');
    const r = await t.request('POST', `${NS}/pods/nameless/eviction`, { body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: {} } });
    expect([r.status, r.json<Obj>().message]).toEqual([400, 'name in URL does not match name in Eviction object']);
    expect(await pod('nameless')).toBeDefined();
  });
});
