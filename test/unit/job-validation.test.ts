// kube's validation of the Job failure and success fields
// (src/registry/kinds/job-validation.ts) through the registry's write path:
// each bad spec is a 422 Invalid naming kube's field path and reason, nothing
// is stored, and the good specs (and CronJob job templates) pass.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusError } from '../../src/core/errors.js';
import { ManualClock } from '../../src/core/clock.js';
import type { ApiObject, JSONValue } from '../../src/registry/types.js';
import { indexesFormat } from '../../src/registry/kinds/job-validation.js';
import { validateCronSchedule } from '../../src/registry/kinds/cronjob-validation.js';
import { type LocalRegistry, openLocalRegistry } from '../helpers/local-registry.js';

type Obj = Record<string, JSONValue>;
let reg: LocalRegistry;
let n = 0;

beforeAll(async () => {
  reg = await openLocalRegistry('orch.io', 'orch-jobval-', new ManualClock(Date.parse('2026-01-01T00:00:00Z')));
  await reg.gs('namespaces').create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } }, { dryRun: false });
});
afterAll(async () => reg.close());

const job = (spec: Obj, restartPolicy = 'Never'): Obj => ({
  apiVersion: 'batch/v1', kind: 'Job', metadata: { name: `v${n++}` },
  spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox' }], restartPolicy } }, ...spec },
});

/** the causes of the 422 a create answers (and that nothing was stored) */
async function causes(o: Obj): Promise<{ field?: string; reason?: string; message?: string }[]> {
  const name = (o.metadata as Obj).name as string;
  const err = (await reg.gs('jobs', 'batch').create('default', o as never, { dryRun: false }).then(() => undefined, (e: unknown) => e)) as StatusError | undefined;
  expect(err, 'expected 422').toBeDefined();
  expect(err!.code).toBe(422);
  expect(err!.reason).toBe('Invalid');
  await expect(reg.gs('jobs', 'batch').get('default', name)).rejects.toMatchObject({ code: 404 });
  return err!.details?.causes ?? [];
}

const indexed = { completionMode: 'Indexed', completions: 4, parallelism: 2 };
const exit42 = { rules: [{ action: 'FailJob', onExitCodes: { operator: 'In', values: [42] } }] };

describe('Job validation (kube 1.32)', () => {
  it('backoffLimitPerIndex and maxFailedIndexes need Indexed; maxFailedIndexes needs backoffLimitPerIndex and at most completions', async () => {
    expect(await causes(job({ backoffLimitPerIndex: 1 }))).toEqual([
      { field: 'spec.backoffLimitPerIndex', reason: 'FieldValueInvalid', message: 'Invalid value: 1: requires indexed completion mode' },
    ]);
    expect(await causes(job({ ...indexed, maxFailedIndexes: 1 }))).toEqual([
      { field: 'spec.backoffLimitPerIndex', reason: 'FieldValueRequired', message: 'Required value: when maxFailedIndexes is specified' },
    ]);
    expect(await causes(job({ ...indexed, backoffLimitPerIndex: 1, maxFailedIndexes: 5 }))).toEqual([
      { field: 'spec.maxFailedIndexes', reason: 'FieldValueInvalid', message: 'Invalid value: 5: must be less than or equal to completions' },
    ]);
    expect((await causes(job({ ...indexed, backoffLimitPerIndex: -1 })))[0]).toMatchObject({ field: 'spec.backoffLimitPerIndex', message: 'Invalid value: -1: must be greater than or equal to 0' });
    expect(await causes(job({ completionMode: 'Indexed', parallelism: 2 }))).toEqual([
      { field: 'spec.completions', reason: 'FieldValueRequired', message: 'Required value: when completion mode is Indexed' },
    ]);
    const ok = await reg.gs('jobs', 'batch').create('default', job({ ...indexed, backoffLimitPerIndex: 1, maxFailedIndexes: 4 }) as never, { dryRun: false });
    expect(ok.object.spec).toMatchObject({ backoffLimitPerIndex: 1, maxFailedIndexes: 4, backoffLimit: 2147483647 });
  });

  it('podFailurePolicy: restartPolicy Never only, podReplacementPolicy Failed only, FailIndex only with backoffLimitPerIndex, well-formed rules', async () => {
    expect(await causes(job({ podFailurePolicy: exit42 }, 'OnFailure'))).toEqual([
      { field: 'spec.template.spec.restartPolicy', reason: 'FieldValueInvalid', message: 'Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified' },
    ]);
    expect(await causes(job({ podFailurePolicy: exit42, podReplacementPolicy: 'TerminatingOrFailed' }))).toEqual([
      { field: 'spec.podReplacementPolicy', reason: 'FieldValueNotSupported', message: 'Unsupported value: "TerminatingOrFailed": supported values: "Failed"' },
    ]);
    expect(await causes(job({ ...indexed, podFailurePolicy: { rules: [{ action: 'FailIndex', onExitCodes: { operator: 'In', values: [42] } }] } }))).toEqual([
      { field: 'spec.podFailurePolicy.rules[0].action', reason: 'FieldValueInvalid', message: 'Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set' },
    ]);
    const bad = await causes(job({ podFailurePolicy: { rules: [
      { action: 'Retry', onExitCodes: { containerName: 'nope', operator: 'In', values: [3, 0, 3] } },
      { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'Maybe' }] },
      { action: 'Count' },
    ] } }));
    expect(bad.map((c) => `${c.field} ${c.reason}`)).toEqual([
      'spec.podFailurePolicy.rules[0].action FieldValueNotSupported',
      'spec.podFailurePolicy.rules[0].onExitCodes.containerName FieldValueInvalid',
      'spec.podFailurePolicy.rules[0].onExitCodes.values[1] FieldValueInvalid',
      'spec.podFailurePolicy.rules[0].onExitCodes.values[2] FieldValueDuplicate',
      'spec.podFailurePolicy.rules[0].onExitCodes.values FieldValueInvalid',
      'spec.podFailurePolicy.rules[1].onPodConditions[0].status FieldValueNotSupported',
      'spec.podFailurePolicy.rules[2] FieldValueInvalid',
    ]);
    // the defaulted podReplacementPolicy with a podFailurePolicy is Failed, and a condition's status True
    const ok = await reg.gs('jobs', 'batch').create('default', job({ ...indexed, backoffLimitPerIndex: 0, podFailurePolicy: { rules: [
      { action: 'FailIndex', onExitCodes: { operator: 'In', values: [42] } },
      { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] },
    ] } }) as never, { dryRun: false });
    expect(ok.object.spec).toMatchObject({ podReplacementPolicy: 'Failed', podFailurePolicy: { rules: [{}, { onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] }] } });
  });

  it('successPolicy: Indexed only, at least one rule, each with succeededIndexes in range and succeededCount within bounds', async () => {
    expect(await causes(job({ successPolicy: { rules: [{ succeededCount: 1 }] } }))).toEqual([
      { field: 'spec.successPolicy', reason: 'FieldValueInvalid', message: 'Invalid value: {"rules":[{"succeededCount":1}]}: requires indexed completion mode' },
    ]);
    expect(await causes(job({ ...indexed, successPolicy: { rules: [] } }))).toEqual([
      { field: 'spec.successPolicy.rules', reason: 'FieldValueRequired', message: 'Required value: at least one rules must be specified when the successPolicy is specified' },
    ]);
    const bad = await causes(job({ ...indexed, successPolicy: { rules: [{}, { succeededIndexes: '0-4' }, { succeededCount: 5 }, { succeededIndexes: '1,2', succeededCount: 3 }] } }));
    expect(bad.map((c) => `${c.field} ${c.reason}`)).toEqual([
      'spec.successPolicy.rules[0] FieldValueRequired',
      'spec.successPolicy.rules[1].succeededIndexes FieldValueInvalid',
      'spec.successPolicy.rules[2].succeededCount FieldValueInvalid',
      'spec.successPolicy.rules[3].succeededCount FieldValueInvalid',
    ]);
    expect(bad[3]!.message).toBe('Invalid value: 3: must be less than or equal to 2 (the number of indexes in the specified succeededIndexes field)');
    await reg.gs('jobs', 'batch').create('default', job({ ...indexed, successPolicy: { rules: [{ succeededIndexes: '0,2-3', succeededCount: 2 }] } }) as never, { dryRun: false });
  });

  it('the policies, backoffLimitPerIndex and completionMode are immutable; maxFailedIndexes is not', async () => {
    const gs = reg.gs('jobs', 'batch');
    const { object } = await gs.create('default', job({ ...indexed, backoffLimitPerIndex: 1, maxFailedIndexes: 1 }) as never, { dryRun: false });
    const name = object.metadata!.name!;
    const err = await gs.guaranteedUpdate('default', name, { dryRun: false }, (cur) => ({ ...cur!, spec: { ...(cur!.spec as Obj), backoffLimitPerIndex: 2 } })).then(() => undefined, (e: unknown) => e as StatusError);
    expect(err?.code).toBe(422);
    expect(err?.details?.causes).toEqual([{ field: 'spec.backoffLimitPerIndex', reason: 'FieldValueInvalid', message: 'Invalid value: 2: field is immutable' }]);
    const r = await gs.guaranteedUpdate('default', name, { dryRun: false }, (cur) => ({ ...cur!, spec: { ...(cur!.spec as Obj), maxFailedIndexes: 2 } }));
    expect(r.object.spec).toMatchObject({ maxFailedIndexes: 2, backoffLimitPerIndex: 1 });
  });

  it('a CronJob\'s job template is checked with the same rules and paths', async () => {
    const err = await reg.gs('cronjobs', 'batch').create('default', {
      apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'cj' },
      spec: { schedule: '* * * * *', jobTemplate: { spec: { backoffLimitPerIndex: 1, template: { spec: { containers: [{ name: 'c', image: 'busybox' }], restartPolicy: 'Never' } } } } },
    } as never, { dryRun: false }).then(() => undefined, (e: unknown) => e as StatusError);
    expect(err?.code).toBe(422);
    expect(err?.details?.causes).toEqual([{ field: 'spec.jobTemplate.spec.backoffLimitPerIndex', reason: 'FieldValueInvalid', message: 'Invalid value: 1: requires indexed completion mode' }]);
  });

  it("a CronJob's schedule and timeZone: robfig's parse errors, no TZ= in new schedules, explicit IANA zones (kube 1.32's texts)", async () => {
    const cronCauses = async (spec: Obj): Promise<unknown> => {
      const name = `cj${n++}`;
      const err = await reg.gs('cronjobs', 'batch').create('default', {
        apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name },
        spec: { jobTemplate: { spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox' }], restartPolicy: 'Never' } } } }, ...spec },
      } as never, { dryRun: false }).then(() => undefined, (e: unknown) => e as StatusError);
      if (err === undefined) return undefined;
      expect(err.code).toBe(422);
      await expect(reg.gs('cronjobs', 'batch').get('default', name)).rejects.toMatchObject({ code: 404 });
      return err.details?.causes;
    };
    const bad = (field: string, value: string, message: string): unknown => [{ field, reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(value)}: ${message}` }];
    expect(await cronCauses({ schedule: '61 * * * *' })).toEqual(bad('spec.schedule', '61 * * * *', 'end of range (61) above maximum (59): 61'));
    expect(await cronCauses({ schedule: '* * * *' })).toEqual(bad('spec.schedule', '* * * *', 'expected exactly 5 fields, found 4: [* * * *]'));
    expect(await cronCauses({ schedule: '@every 5d' })).toEqual(bad('spec.schedule', '@every 5d', 'failed to parse duration @every 5d: time: unknown unit "d" in duration "5d"'));
    expect(await cronCauses({ schedule: 'CRON_TZ=UTC * * * * *' })).toEqual(bad('spec.schedule', 'CRON_TZ=UTC * * * * *', 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead'));
    expect(await cronCauses({ schedule: '* * * * *', timeZone: 'Europe/Pariss' })).toEqual(bad('spec.timeZone', 'Europe/Pariss', 'unknown time zone Europe/Pariss'));
    expect(await cronCauses({ schedule: '* * * * *', timeZone: 'europe/paris' })).toEqual(bad('spec.timeZone', 'europe/paris', 'unknown time zone europe/paris'));
    expect(await cronCauses({ schedule: '* * * * *', timeZone: 'Local' })).toEqual(bad('spec.timeZone', 'Local', 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones'));
    expect(await cronCauses({ schedule: '* * * * *', timeZone: '' })).toEqual(bad('spec.timeZone', '', 'timeZone must be nil or non-empty string'));
    for (const ok of [{ schedule: '@every 90s' }, { schedule: '*/61 * * * *' }, { schedule: '0 9 * * MON-FRI', timeZone: 'Europe/Paris' }, { schedule: '@daily', timeZone: 'US/Eastern' }] as Obj[]) {
      expect(await cronCauses(ok), JSON.stringify(ok)).toBeUndefined();
    }
  });

  it('an update may keep the TZ= of a schedule stored before the rule, but not add spec.timeZone beside it', () => {
    const cj = (schedule: string, timeZone?: string): ApiObject => ({ apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'old' }, spec: { schedule, ...(timeZone !== undefined ? { timeZone } : {}) } });
    const old = cj('TZ=UTC 0 * * * *');
    expect(validateCronSchedule(cj('TZ=UTC 5 * * * *'), old)).toEqual([]);
    expect(validateCronSchedule(cj('TZ=UTC 5 * * * *', 'UTC'), old).map((e) => e.message)).toEqual(['Invalid value: "TZ=UTC 5 * * * *": cannot use both timeZone field and TZ or CRON_TZ in schedule']);
    expect(validateCronSchedule(cj('5 * * * *'), old)).toEqual([]);
    expect(validateCronSchedule(cj('TZ=UTC 5 * * * *'), cj('0 * * * *')).map((e) => e.message)).toEqual(['Invalid value: "TZ=UTC 5 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead']);
  });

  it('succeededIndexes format: ascending intervals below completions', () => {
    expect(indexesFormat('0,2-3', 4)).toBe(3);
    expect(indexesFormat('', 4)).toBe(0);
    expect(indexesFormat('3-1', 4)).toMatch(/first index must be smaller/);
    expect(indexesFormat('1,1', 4)).toMatch(/non-increasing/);
    expect(indexesFormat('4', 4)).toMatch(/too large index/);
    expect(indexesFormat('a', 4)).toMatch(/cannot convert/);
  });
});
