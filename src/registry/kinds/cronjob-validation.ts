// A CronJob's schedule and time zone as kube 1.32's API validation reads them
// (pkg/apis/batch/validation validateScheduleFormat, validateTimeZone): the
// schedule must parse with the parser the controller runs (robfig/cron's
// standard parser: src/machinery/cron.ts), its error text is the message; a
// `TZ=`/`CRON_TZ=` prefix is refused on create and kept only by updates of a
// schedule that already had one; the time zone must be an explicit IANA name.

import { CronError, parseCron, validZone } from '../../machinery/cron.js';
import type { ApiObject, FieldError } from '../types.js';
import { getString } from './columns.js';

const invalid = (field: string, v: string, m: string): FieldError => ({ field, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(v)}: ${m}` });

/** an IANA zone component: letters, '.', '-', '_', and the legacy digits and '+', 1 to 14 of them */
const ZONE_PART = /^[A-Za-z.\-_0-9+]{1,14}$/;

/** the zone Go's time.LoadLocation would find: Intl's zone data, with Go's case-sensitive names */
function knownZone(tz: string): boolean {
  if (tz === 'UTC') return true;
  if (!validZone(tz)) return false;
  // Intl matches names case-insensitively, the zoneinfo files Go reads do not; an alias resolves to another name
  const resolved = new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
  return !(resolved !== tz && resolved.toLowerCase() === tz.toLowerCase());
}

function validateTimeZone(o: ApiObject): FieldError[] {
  const spec = (o.spec ?? {}) as Record<string, unknown>;
  if (!('timeZone' in spec) || spec.timeZone === null || spec.timeZone === undefined) return [];
  const tz = getString(o, 'spec', 'timeZone');
  if (tz === undefined) return [];
  const field = 'spec.timeZone';
  if (tz === '') return [invalid(field, tz, 'timeZone must be nil or non-empty string')];
  if (tz.split('/').some((p) => p === '.' || p === '..' || p.startsWith('-') || !ZONE_PART.test(p))) return [invalid(field, tz, `unknown time zone ${tz}`)];
  const errs: FieldError[] = [];
  if (tz.toLowerCase() === 'local') errs.push(invalid(field, tz, 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones'));
  else if (!knownZone(tz)) errs.push(invalid(field, tz, `unknown time zone ${tz}`));
  return errs;
}

/** spec.schedule and spec.timeZone of a CronJob; `old` on update */
export function validateCronSchedule(o: ApiObject, old?: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  const schedule = getString(o, 'spec', 'schedule');
  if (schedule !== undefined) {
    try {
      parseCron(schedule);
    } catch (err) {
      if (!(err instanceof CronError)) throw err;
      errs.push(invalid('spec.schedule', schedule, err.message));
    }
    const allowTZInSchedule = old !== undefined && (getString(old, 'spec', 'schedule') ?? '').includes('TZ');
    const hasTimeZone = getString(o, 'spec', 'timeZone') !== undefined;
    if (allowTZInSchedule && schedule.includes('TZ') && hasTimeZone) errs.push(invalid('spec.schedule', schedule, 'cannot use both timeZone field and TZ or CRON_TZ in schedule'));
    else if (!allowTZInSchedule && schedule.includes('TZ')) errs.push(invalid('spec.schedule', schedule, 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead'));
  }
  return [...errs, ...validateTimeZone(o)];
}
