// What Kubernetes' sig-apps e2e tests of Jobs (test/e2e/apps/job.go) check
// through the API, on orch with its controllers and a real node agent
// (simulated runtime): a merge patch of /status that also sets an annotation
// (kept: a Job's status strategy resets only the spec), an update of /status,
// GET /status; and the lifecycle of a suspended Job (strategic patch, update,
// list across namespaces, completion, deleteCollection), each seen by a watch.

import { describe, expect, it } from 'vitest';
import { type Obj, STRATEGIC, condition, e2eEnv, named, namespace } from '../helpers/e2e-apps.js';
import { newTestJob } from '../helpers/e2e-batch.js';

const env = e2eEnv('job-node');
const JOBS = (ns: string) => `/apis/batch/v1/namespaces/${ns}/jobs`;
/** metav1.Now().Rfc3339Copy(): whole seconds */
const nowSeconds = (): string => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

describe('[sig-apps] Job', () => {
  it('should apply changes to a job status [Conformance]', async () => {
    const ns = await namespace(env, 'job-status');
    const job = await env.call('POST', JOBS(ns), newTestJob('notTerminate', 'suspend-false-to-true', 2, 4, 6));
    await env.runningPods(ns, 'e2e-job-label=suspend-false-to-true', 2);

    const now1 = nowSeconds();
    const patched = await env.call('PATCH', `${JOBS(ns)}/suspend-false-to-true/status`, {
      metadata: { annotations: { patchedstatus: 'true' } },
      status: { conditions: [{ type: 'CustomConditionType', status: 'True', lastProbeTime: null, lastTransitionTime: now1 }] },
    });
    expect(condition(patched, 'CustomConditionType')?.lastTransitionTime).toBe(now1);
    // the annotation the patch set is kept: a Job's status strategy resets only the spec
    expect(patched.metadata.annotations).toMatchObject({ patchedstatus: 'true' });
    expect((await env.get(`${JOBS(ns)}/suspend-false-to-true`)).metadata.annotations).toMatchObject({ patchedstatus: 'true' });

    const now2 = new Date(Date.parse(now1) + 1000).toISOString().replace(/\.\d+Z$/, 'Z');
    const updated = await env.eventually(async () => {
      const cur = await env.get(`${JOBS(ns)}/suspend-false-to-true`);
      const c = condition(cur, 'CustomConditionType');
      expect(c, 'the patched condition').toBeDefined();
      c!.lastTransitionTime = now2;
      const r = await env.ts().request('PUT', `${JOBS(ns)}/suspend-false-to-true/status`, { body: cur });
      if (r.status === 409) return undefined;
      expect(r.status, r.text).toBe(200);
      return r.json<Obj>();
    }, 'the status update');
    expect(condition(updated, 'CustomConditionType')?.lastTransitionTime).toBe(now2);

    const status = await env.get(`${JOBS(ns)}/suspend-false-to-true/status`);
    expect(status.metadata.uid).toBe(job.metadata.uid);
  });

  it('should manage the lifecycle of a job [Conformance]', async () => {
    const ns = await namespace(env, 'job-lifecycle');
    const name = 'e2e-q4z8m';
    const sel = `e2e-job-label=${name}`;
    const rv = (await env.list(JOBS(ns), sel)).metadata.resourceVersion as string;
    const spec = newTestJob('succeed', name, 2, 4, 6);
    spec.metadata.labels = { 'e2e-job-label': name };
    spec.spec.suspend = true;
    const job = await env.call('POST', JOBS(ns), spec);
    expect(job.metadata.resourceVersion).toMatch(/^[1-9][0-9]*$/);

    const patched = await env.call('PATCH', `${JOBS(ns)}/${name}`, { metadata: { labels: { [name]: 'patched' } } }, STRATEGIC);
    expect(BigInt(patched.metadata.resourceVersion)).toBeGreaterThan(BigInt(job.metadata.resourceVersion));
    await env.until(JOBS(ns), rv, sel, (e) => e.type === 'MODIFIED' && named(name, e) && e.object.metadata.labels?.[name] === 'patched');

    let from = '';
    const updated = await env.eventually(async () => {
      const cur = await env.get(`${JOBS(ns)}/${name}`);
      from = cur.metadata.resourceVersion;
      cur.spec.suspend = false;
      cur.metadata.annotations = { ...(cur.metadata.annotations ?? {}), updated: 'true' };
      const r = await env.ts().request('PUT', `${JOBS(ns)}/${name}`, { body: cur });
      if (r.status === 409) return undefined;
      expect(r.status, r.text).toBe(200);
      return r.json<Obj>();
    }, 'the update');
    await env.until(JOBS(ns), from, sel, (e) => e.type === 'MODIFIED' && named(name, e) && e.object.metadata.annotations?.updated === 'true');
    expect(updated.metadata.annotations).toMatchObject({ updated: 'true' });

    const all = (await env.list('/apis/batch/v1/jobs', sel)).items as Obj[];
    expect(all.map((j) => j.metadata.name)).toEqual([name]);

    // WaitForJobComplete(CompletionsReached, 4)
    await env.eventually(async () => {
      const j = await env.get(`${JOBS(ns)}/${name}`);
      const complete = condition(j, 'Complete');
      return complete?.status === 'True' && complete.reason === 'CompletionsReached' && j.status.succeeded === 4;
    }, 'the Job complete');

    const r = await env.ts().request('DELETE', `${JOBS(ns)}?labelSelector=${encodeURIComponent(sel)}`, { body: { propagationPolicy: 'Background' } });
    expect(r.status, r.text).toBe(200);
    await env.until(JOBS(ns), updated.metadata.resourceVersion, sel, (e) => e.type === 'DELETED' && named(name, e));
    expect((await env.list('/apis/batch/v1/jobs', sel)).items).toEqual([]);
  });
});
