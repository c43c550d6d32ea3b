// The Deployment and ReplicaSet controllers (src/controllers/workloads/) on a
// real LocalStore with a simulated clock: no node agent, so the pods stay
// Pending and a rollout never completes; the test moves the clock past
// progressDeadlineSeconds and looks at the Progressing condition (kube's
// syncRolloutStatus, checkPausedConditions, DeploymentTimedOut). No sleeps.

import { describe, expect, it, onTestFinished } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { DeploymentController } from '../../src/controllers/workloads/deployment.js';
import { REPLICA_SET, ReplicaSetController } from '../../src/controllers/workloads/replicaset.js';
import type { GenericStore } from '../../src/registry/generic-store.js';
import type { ApiObject, JSONValue } from '../../src/registry/types.js';
import { openLocalRegistry, settleControllers } from '../helpers/local-registry.js';

type Obj = Record<string, JSONValue>;
const T0 = Date.parse('2026-01-01T00:00:00Z');

interface Env {
  clock: ManualClock;
  deployments: GenericStore;
  settled(): Promise<void>;
}

async function env(): Promise<Env> {
  const clock = new ManualClock(T0);
  const { store, gs, close } = await openLocalRegistry('orch.io', 'orch-deploy-', clock);
  await gs('namespaces').create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } }, { dryRun: false });
  const controllers = [
    new DeploymentController({ store, deployments: () => gs('deployments', 'apps'), replicaSets: () => gs('replicasets', 'apps'), pods: () => gs('pods'), clock }),
    new ReplicaSetController({ store, kind: REPLICA_SET, sets: () => gs('replicasets', 'apps'), pods: () => gs('pods'), clock }),
  ];
  for (const c of controllers) c.start();
  onTestFinished(async () => {
    for (const c of controllers) c.stop();
    await close();
  });
  return { clock, deployments: gs('deployments', 'apps'), settled: () => settleControllers(controllers) };
}

async function create(e: Env, name: string, spec: Obj): Promise<void> {
  await e.deployments.create('default', {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
    spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } }, ...spec },
  } as ApiObject, { dryRun: false });
  await e.settled();
}

async function patchSpec(e: Env, name: string, spec: Obj): Promise<void> {
  await e.deployments.guaranteedUpdate('default', name, { dryRun: false }, (cur) => ({ ...cur!, spec: { ...(cur!.spec as Obj), ...spec } }));
  await e.settled();
}

async function advance(e: Env, ms: number): Promise<void> {
  e.clock.advance(ms);
  await e.settled();
}

const conditions = async (e: Env, name: string): Promise<Obj[]> => ((((await e.deployments.get('default', name)) as ApiObject).status as Obj | undefined)?.conditions ?? []) as Obj[];
const progressing = async (e: Env, name: string): Promise<Obj | undefined> => (await conditions(e, name)).find((c) => c.type === 'Progressing');

describe('Deployment progress deadline on the simulated clock', () => {
  it('progressDeadlineSeconds 2147483647 means no deadline: no Progressing condition, paused or not; Available still', async () => {
    const e = await env();
    await create(e, 'forever', { progressDeadlineSeconds: 2147483647 });
    // kube's HasProgressDeadline: MaxInt32 is none, so syncRolloutStatus writes no Progressing
    expect((await conditions(e, 'forever')).map((c) => c.type)).toEqual(['Available']);
    await advance(e, 30 * 24 * 3_600_000);
    expect(await progressing(e, 'forever')).toBeUndefined();
    // checkPausedConditions is gated the same way
    await patchSpec(e, 'forever', { paused: true });
    expect(await progressing(e, 'forever')).toBeUndefined();
    await patchSpec(e, 'forever', { paused: false });
    expect(await progressing(e, 'forever')).toBeUndefined();
    // a Deployment that had a deadline loses its Progressing condition when it is set to MaxInt32
    await create(e, 'was', { progressDeadlineSeconds: 600 });
    expect(await progressing(e, 'was')).toMatchObject({ status: 'True' });
    await patchSpec(e, 'was', { progressDeadlineSeconds: 2147483647 });
    expect(await progressing(e, 'was')).toBeUndefined();
    expect((await conditions(e, 'was')).map((c) => c.type)).toEqual(['Available']);
  });

  it('pausing after the deadline passed keeps ProgressDeadlineExceeded, also after resuming', async () => {
    const e = await env();
    await create(e, 'late', { progressDeadlineSeconds: 60 });
    expect(await progressing(e, 'late')).toMatchObject({ status: 'True', reason: 'ReplicaSetUpdated' });
    await advance(e, 62_000);
    const timedOut = await progressing(e, 'late');
    expect(timedOut).toMatchObject({ status: 'False', reason: 'ProgressDeadlineExceeded' });
    // kube's checkPausedConditions leaves a reported lack of progress alone
    await patchSpec(e, 'late', { paused: true });
    expect(await progressing(e, 'late')).toEqual(timedOut);
    await advance(e, 5_000);
    await patchSpec(e, 'late', { paused: false });
    expect(await progressing(e, 'late')).toEqual(timedOut);
  });

  it('a stuck rollout paused and resumed times out progressDeadlineSeconds after the resume', async () => {
    const e = await env();
    await create(e, 'stuck', { progressDeadlineSeconds: 60 });
    await advance(e, 10_000);
    await patchSpec(e, 'stuck', { paused: true });
    expect(await progressing(e, 'stuck')).toMatchObject({ status: 'Unknown', reason: 'DeploymentPaused' });
    // paused: no deadline runs
    await advance(e, 300_000);
    expect(await progressing(e, 'stuck')).toMatchObject({ status: 'Unknown', reason: 'DeploymentPaused' });
    await patchSpec(e, 'stuck', { paused: false });
    const resumed = await progressing(e, 'stuck');
    expect(resumed).toMatchObject({ status: 'Unknown', reason: 'DeploymentResumed', message: 'Deployment is resumed', lastUpdateTime: '2026-01-01T00:05:10Z' });
    await advance(e, 30_000);
    expect(await progressing(e, 'stuck')).toEqual(resumed);
    // kube's DeploymentTimedOut: any reason but NewReplicaSetAvailable, from lastUpdateTime; the key comes back at the deadline
    await advance(e, 31_000);
    const cond = await progressing(e, 'stuck');
    expect(cond).toMatchObject({ status: 'False', reason: 'ProgressDeadlineExceeded' });
    expect(String(cond?.message)).toMatch(/^ReplicaSet "stuck-[a-z0-9]+" has timed out progressing\.$/);
  });
});
