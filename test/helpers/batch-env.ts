// The batch controllers on a real LocalStore with a simulated clock, for the
// Job and CronJob tests: the test plays the node agent (pod phases, exit
// codes) and moves the clock. No sleeps: the clock only moves when told.

import { afterEach } from 'vitest';
import type { GenericStore } from '../../src/registry/generic-store.js';
import type { ApiObject, JSONValue } from '../../src/registry/types.js';
import { JobController } from '../../src/controllers/batch/job.js';
import { CronJobController } from '../../src/controllers/batch/cronjob.js';
import { TtlAfterFinishedController } from '../../src/controllers/batch/ttl-after-finished.js';
import { ManualClock } from '../../src/core/clock.js';
import { EventRecorder } from '../../src/controllers/event-recorder.js';
import { openLocalRegistry, settleControllers } from './local-registry.js';

const D = 'orch.io';
export const T0 = Date.parse('2026-01-01T00:00:30Z');

export type Obj = Record<string, JSONValue>;
interface Controller {
  start(): void;
  stop(): void;
  settled(): Promise<void>;
}

export interface Env {
  clock: ManualClock;
  gs(resource: string, group?: string): GenericStore;
  controllers: Controller[];
  /** the Events the controllers recorded, in order */
  events: Record<string, unknown>[];
}

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.reverse()) await f();
  cleanup = [];
});

export async function env(): Promise<Env> {
  const clock = new ManualClock(T0);
  const { store, gs, close } = await openLocalRegistry(D, 'orch-job-', clock);
  await gs('namespaces').create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } }, { dryRun: false });
  const events: Record<string, unknown>[] = [];
  const recorder = new EventRecorder({ create: async (_ns, ev) => (events.push(ev), `e${events.length}`), update: async () => true }, { component: 'test', clock });
  const controllers: Controller[] = [
    new JobController({ store, jobs: () => gs('jobs', 'batch'), pods: () => gs('pods'), clock, events: recorder.forComponent('job-controller') }),
    new CronJobController({ store, cronJobs: () => gs('cronjobs', 'batch'), jobs: () => gs('jobs', 'batch'), clock, events: recorder.forComponent('cronjob-controller') }),
    new TtlAfterFinishedController({ store, jobs: () => gs('jobs', 'batch'), clock }),
  ];
  for (const c of controllers) c.start();
  cleanup.push(async () => {
    for (const c of controllers) c.stop();
    await close();
  });
  return { clock, gs, controllers, events };
}

/** the messages of the Events with `reason` about `kind`/`name` */
export const eventMessages = (e: Env, kind: string, name: string, reason: string): string[] =>
  e.events.filter((ev) => ev.reason === reason && (ev.involvedObject as Obj | undefined)?.kind === kind && (ev.involvedObject as Obj | undefined)?.name === name).map((ev) => String(ev.message));

export async function settled(e: Env): Promise<void> {
  await settleControllers(e.controllers);
}

export async function advance(e: Env, ms: number): Promise<void> {
  e.clock.advance(ms);
  await settled(e);
}

export async function createJob(e: Env, name: string, spec: Obj): Promise<ApiObject> {
  const r = await e.gs('jobs', 'batch').create('default', {
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name },
    spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox' }], restartPolicy: 'Never' } }, ...spec },
  }, { dryRun: false });
  await settled(e);
  return r.object;
}

export const getJob = async (e: Env, name: string): Promise<ApiObject> => (await e.gs('jobs', 'batch').get('default', name)) as ApiObject;
/** the Job's status, its omitempty counters (absent when 0, as kube writes them) read as Go reads them */
export const status = async (e: Env, name: string): Promise<Obj> => ({ active: 0, succeeded: 0, failed: 0, ...(((await getJob(e, name)).status ?? {}) as Obj) });
export const conditions = async (e: Env, name: string): Promise<Obj[]> => ((await status(e, name)).conditions ?? []) as Obj[];
export const condition = async (e: Env, name: string, type: string): Promise<Obj | undefined> => (await conditions(e, name)).find((c) => c.type === type);

export async function podsOf(e: Env, job: string): Promise<ApiObject[]> {
  return (await e.gs('pods').list('default')).filter((p) => p.metadata?.labels?.['batch.kubernetes.io/job-name'] === job);
}

export const active = (ps: ApiObject[]): ApiObject[] => ps.filter((p) => !['Succeeded', 'Failed'].includes(String((p.status as Obj | undefined)?.phase ?? '')) && !p.metadata?.deletionTimestamp);

/** the node agent's part: the pod finishes with `code` in its only container */
export async function finish(e: Env, pod: ApiObject, code: number, extra: Obj = {}): Promise<void> {
  await e.gs('pods').guaranteedUpdate('default', pod.metadata!.name!, { dryRun: false, subresource: 'status' }, (cur) => ({
    ...cur!,
    status: {
      phase: code === 0 ? 'Succeeded' : 'Failed',
      containerStatuses: [{ name: 'c', image: 'busybox', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: code, reason: code === 0 ? 'Completed' : 'Error' } } }],
      ...extra,
    },
  }));
  await settled(e);
}
