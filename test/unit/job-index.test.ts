// Indexed Jobs' backoffLimitPerIndex, maxFailedIndexes, the FailIndex action
// (KEP-3850) and successPolicy (KEP-3998), on the Job controller with a real
// LocalStore and a simulated clock; the test plays the node agent.

import { describe, expect, it } from 'vitest';
import type { ApiObject } from '../../src/registry/types.js';
import { COMPLETION_INDEX } from '../../src/controllers/batch/job-plan.js';
import { INDEX_FAILURE_COUNT, INDEX_IGNORED_FAILURE_COUNT } from '../../src/controllers/batch/job-index.js';
import { type Env, active, advance, condition, conditions, createJob, env, finish, getJob, podsOf, status } from '../helpers/batch-env.js';

const indexOfPod = (p: ApiObject): string => p.metadata?.annotations?.[COMPLETION_INDEX] ?? '';
const activeAt = async (e: Env, job: string, i: string): Promise<ApiObject[]> => active(await podsOf(e, job)).filter((p) => indexOfPod(p) === i);
const kinds = async (e: Env, job: string): Promise<string[]> => (await conditions(e, job)).map((c) => `${String(c.type)}:${String(c.reason)}`);

describe('backoffLimitPerIndex', () => {
  it('counts failures per index on the pods, fails an index past its limit without retrying it, and ends with FailedIndexes', async () => {
    const e = await env();
    await createJob(e, 'per', { completions: 3, parallelism: 3, completionMode: 'Indexed', backoffLimitPerIndex: 1 });
    expect((await getJob(e, 'per')).spec).toMatchObject({ backoffLimit: 2147483647 });
    const first = active(await podsOf(e, 'per'));
    expect(first.map((p) => p.metadata?.annotations?.[INDEX_FAILURE_COUNT])).toEqual(['0', '0', '0']);
    expect(first.every((p) => p.metadata?.annotations?.[INDEX_IGNORED_FAILURE_COUNT] === undefined)).toBe(true);
    // index 0's first failure: retried after its own back-off, the replacement carries the count
    await finish(e, (await activeAt(e, 'per', '0'))[0]!, 1);
    expect(await status(e, 'per')).toMatchObject({ failed: 1, failedIndexes: '', active: 2 });
    await advance(e, 9_000);
    expect(await activeAt(e, 'per', '0')).toHaveLength(0);
    await advance(e, 1_001);
    const again = await activeAt(e, 'per', '0');
    expect(again).toHaveLength(1);
    expect(again[0]!.metadata?.annotations?.[INDEX_FAILURE_COUNT]).toBe('1');
    // its second failure passes backoffLimitPerIndex 1: the index fails, nothing replaces it
    await finish(e, again[0]!, 1);
    expect(await status(e, 'per')).toMatchObject({ failed: 2, failedIndexes: '0', active: 2 });
    await advance(e, 600_000);
    expect(await activeAt(e, 'per', '0')).toHaveLength(0);
    expect(await condition(e, 'per', 'FailureTarget')).toBeUndefined();
    // the other indexes still run to the end; then the Job fails for its failed index
    for (const i of ['1', '2']) await finish(e, (await activeAt(e, 'per', i))[0]!, 0);
    expect(await status(e, 'per')).toMatchObject({ completedIndexes: '1-2', failedIndexes: '0', succeeded: 2, failed: 2, active: 0 });
    expect(await kinds(e, 'per')).toEqual(['FailureTarget:FailedIndexes', 'Failed:FailedIndexes']);
    expect(await condition(e, 'per', 'Failed')).toMatchObject({ status: 'True', message: 'Job has failed indexes' });
  });

  it('FailIndex fails an index at its first failure; past maxFailedIndexes the Job fails and its other pods go', async () => {
    const e = await env();
    await createJob(e, 'fi', {
      completions: 4, parallelism: 4, completionMode: 'Indexed', backoffLimitPerIndex: 3, maxFailedIndexes: 1,
      podFailurePolicy: { rules: [{ action: 'FailIndex', onExitCodes: { containerName: 'c', operator: 'In', values: [42] } }] },
    });
    await finish(e, (await activeAt(e, 'fi', '1'))[0]!, 42);
    expect(await status(e, 'fi')).toMatchObject({ failedIndexes: '1', failed: 1, active: 3 });
    expect(await condition(e, 'fi', 'FailureTarget')).toBeUndefined();
    // a plain failure of index 2 is retried (backoffLimitPerIndex 3)
    await finish(e, (await activeAt(e, 'fi', '2'))[0]!, 1);
    expect(await status(e, 'fi')).toMatchObject({ failedIndexes: '1', failed: 2 });
    await advance(e, 10_001);
    expect((await activeAt(e, 'fi', '2'))[0]?.metadata?.annotations?.[INDEX_FAILURE_COUNT]).toBe('1');
    // a second failed index is more than maxFailedIndexes 1
    await finish(e, (await activeAt(e, 'fi', '3'))[0]!, 42);
    expect(await kinds(e, 'fi')).toEqual(['FailureTarget:MaxFailedIndexesExceeded', 'Failed:MaxFailedIndexesExceeded']);
    expect(await condition(e, 'fi', 'Failed')).toMatchObject({ message: 'Job has exceeded the specified maximal number of failed indexes' });
    expect(active(await podsOf(e, 'fi'))).toHaveLength(0);
    // the two pods still running (indexes 0 and 2) count as failed once the Job fails, as kube's
    expect(await status(e, 'fi')).toMatchObject({ failedIndexes: '1,3', failed: 5, active: 0 });
  });

  it('an Ignore-d failure is carried in the ignored count and replaced at once; it does not count against the index', async () => {
    const e = await env();
    await createJob(e, 'ign', {
      completions: 1, completionMode: 'Indexed', backoffLimitPerIndex: 0,
      podFailurePolicy: { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] }] },
    });
    await finish(e, (await activeAt(e, 'ign', '0'))[0]!, 137, { conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'PreemptionByScheduler' }] });
    const next = await activeAt(e, 'ign', '0');
    expect(next).toHaveLength(1);
    expect(next[0]!.metadata?.annotations).toMatchObject({ [INDEX_FAILURE_COUNT]: '0', [INDEX_IGNORED_FAILURE_COUNT]: '1' });
    expect(await status(e, 'ign')).toMatchObject({ failed: 0, failedIndexes: '' });
    // backoffLimitPerIndex 0: the first counted failure fails the index, and with it the Job
    await finish(e, next[0]!, 1);
    expect(await status(e, 'ign')).toMatchObject({ failed: 1, failedIndexes: '0' });
    expect(await kinds(e, 'ign')).toEqual(['FailureTarget:FailedIndexes', 'Failed:FailedIndexes']);
  });
});

describe('successPolicy', () => {
  it('succeededIndexes: once those indexes succeeded the Job gets SuccessCriteriaMet (SuccessPolicy), its other pods go, then Complete', async () => {
    const e = await env();
    await createJob(e, 'leader', { completions: 4, parallelism: 4, completionMode: 'Indexed', successPolicy: { rules: [{ succeededIndexes: '0' }] } });
    await finish(e, (await activeAt(e, 'leader', '1'))[0]!, 0);
    expect(await condition(e, 'leader', 'SuccessCriteriaMet')).toBeUndefined();
    await finish(e, (await activeAt(e, 'leader', '0'))[0]!, 0);
    expect(await kinds(e, 'leader')).toEqual(['SuccessCriteriaMet:SuccessPolicy', 'Complete:SuccessPolicy']);
    expect(await condition(e, 'leader', 'Complete')).toMatchObject({ status: 'True', message: 'Matched rules at index 0' });
    const st = await status(e, 'leader');
    expect(st).toMatchObject({ completedIndexes: '0-1', succeeded: 2, failed: 0, active: 0 });
    expect(st.completionTime).toBeDefined();
    // the remaining pods were deleted by the controller, not counted as failures
    expect(active(await podsOf(e, 'leader'))).toHaveLength(0);
  });

  it('succeededCount with succeededIndexes: that many of those indexes; the second rule can match first', async () => {
    const e = await env();
    await createJob(e, 'quorum', {
      completions: 6, parallelism: 6, completionMode: 'Indexed',
      successPolicy: { rules: [{ succeededIndexes: '0-2', succeededCount: 2 }, { succeededCount: 3 }] },
    });
    await finish(e, (await activeAt(e, 'quorum', '4'))[0]!, 0);
    await finish(e, (await activeAt(e, 'quorum', '0'))[0]!, 0);
    expect(await condition(e, 'quorum', 'SuccessCriteriaMet')).toBeUndefined();
    await finish(e, (await activeAt(e, 'quorum', '5'))[0]!, 0);
    expect(await condition(e, 'quorum', 'Complete')).toMatchObject({ status: 'True', reason: 'SuccessPolicy', message: 'Matched rules at index 1' });
    expect(await status(e, 'quorum')).toMatchObject({ completedIndexes: '0,4-5', succeeded: 3, active: 0 });
  });
});
