// Cron schedules as kube's CronJob controller reads them (robfig/cron's
// standard parser): five fields (minute, hour, day of month, month, day of
// week; `*`, `?`, `a`, `a-b`, `*/n`, `a-b/n`, `a/n` = a to the end by n,
// lists, JAN–DEC and SUN–SAT names), the descriptors @yearly, @annually,
// @monthly, @weekly, @daily, @midnight and @hourly, and a `TZ=` or
// `CRON_TZ=` prefix naming an IANA zone. Day of month and day of week are
// ORed when both are restricted and ANDed when either starts with `*`/`?`
// (a `*/n` step is a restriction), as in robfig. `@every` is not supported.
//
// Written by hand rather than as a dependency: the matching is 100 lines,
// and the time-zone part uses the runtime's own zone data (Intl), which is
// what a library would use too. Times are walked in real (UTC) minutes and
// matched against the zone's wall clock, so a wall time skipped by a DST
// jump does not fire that day and one repeated fires twice (robfig differs
// on both edges; docs/controllers.md).

type Field = { bits: Set<number>; star: boolean };

export interface CronSchedule {
  minute: Field;
  hour: Field;
  dom: Field;
  month: Field;
  dow: Field;
  /** IANA zone; undefined = UTC */
  timeZone?: string;
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

const DESCRIPTORS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

export class CronError extends Error {}

function value(s: string, min: number, max: number, names?: string[]): number {
  const i = names?.indexOf(s.toUpperCase()) ?? -1;
  const n = i >= 0 ? i + (names === MONTHS ? 1 : 0) : /^\d+$/.test(s) ? Number(s) : NaN;
  if (Number.isNaN(n)) throw new CronError(`failed to parse int from ${s}`);
  if (n < min || n > max) throw new CronError(`${s} out of range [${min}, ${max}]`);
  return n;
}

function field(expr: string, min: number, max: number, names?: string[]): Field {
  const bits = new Set<number>();
  let star = false;
  for (const part of expr.split(',')) {
    const [range, stepText, extra] = part.split('/');
    if (extra !== undefined || range === undefined || range === '') throw new CronError(`invalid expression ${part}`);
    let lo: number;
    let hi: number;
    let isStar = false;
    if (range === '*' || range === '?') {
      lo = min;
      hi = max;
      isStar = true;
    } else {
      const [a, b, more] = range.split('-');
      if (more !== undefined) throw new CronError(`too many hyphens: ${range}`);
      lo = value(a!, min, max, names);
      hi = b !== undefined ? value(b, min, max, names) : stepText !== undefined ? max : lo;
    }
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step <= 0 || (stepText !== undefined && !/^\d+$/.test(stepText))) throw new CronError(`invalid step ${stepText ?? ''}`);
    if (lo > hi) throw new CronError(`beginning of range (${lo}) beyond end of range (${hi}): ${part}`);
    for (let v = lo; v <= hi; v += step) bits.add(v);
    if (isStar && step === 1) star = true;
  }
  return { bits, star };
}

function validZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** parses a schedule; `timeZone` is the CronJob's spec.timeZone (a TZ= prefix in the schedule wins over none) */
export function parseCron(schedule: string, timeZone?: string): CronSchedule {
  let s = schedule.trim();
  let tz = timeZone;
  const m = /^(?:CRON_)?TZ=(\S+)\s+(.*)$/.exec(s);
  if (m) {
    tz = m[1]!;
    s = m[2]!.trim();
  }
  if (tz !== undefined && tz !== 'UTC' && tz !== 'Etc/UTC' && !validZone(tz)) throw new CronError(`provided bad location ${tz}: unknown time zone ${tz}`);
  if (s.startsWith('@')) {
    const d = DESCRIPTORS[s.toLowerCase()];
    if (!d) throw new CronError(`unrecognized descriptor: ${s}`);
    s = d;
  }
  const f = s.split(/\s+/);
  if (f.length !== 5) throw new CronError(`expected exactly 5 fields, found ${f.length}: ${s}`);
  return {
    minute: field(f[0]!, 0, 59),
    hour: field(f[1]!, 0, 23),
    dom: field(f[2]!, 1, 31),
    month: field(f[3]!, 1, 12, MONTHS),
    dow: field(f[4]!, 0, 6, DAYS),
    ...(tz !== undefined && tz !== 'UTC' && tz !== 'Etc/UTC' ? { timeZone: tz } : {}),
  };
}

export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  /** 0 = Sunday */
  weekday: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();
const WEEKDAYS: Record<string, number> = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 };

/** the wall clock of `zone` (UTC when undefined) at `ms` */
export function wallTime(ms: number, zone?: string): WallTime {
  if (zone === undefined) {
    const d = new Date(ms);
    return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), weekday: d.getUTCDay() };
  }
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', weekday: 'short' });
    formatters.set(zone, f);
  }
  const p: Record<string, string> = {};
  for (const part of f.formatToParts(ms)) p[part.type] = part.value;
  return { year: Number(p.year), month: Number(p.month), day: Number(p.day), hour: Number(p.hour) % 24, minute: Number(p.minute), weekday: WEEKDAYS[p.weekday!] ?? 0 };
}

function dayMatches(s: CronSchedule, w: WallTime): boolean {
  const dom = s.dom.bits.has(w.day);
  const dow = s.dow.bits.has(w.weekday);
  return s.dom.star || s.dow.star ? dom && dow : dom || dow;
}

const MINUTE = 60_000;
const daysIn = (year: number, month: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate();
/** robfig gives up after five years without a match (Feb 30 never comes) */
const HORIZON = 5 * 366 * 24 * 60 * MINUTE;

/** the first activation strictly after `after` (ms), undefined when none comes within five years */
export function nextAfter(s: CronSchedule, after: number): number | undefined {
  let t = Math.floor(after / MINUTE) * MINUTE + MINUTE;
  const end = t + HORIZON;
  while (t < end) {
    const w = wallTime(t, s.timeZone);
    if (!s.month.bits.has(w.month) || !dayMatches(s, w)) {
      // towards the next wall-clock month or day: big steps that stop two
      // hours short of its midnight (a DST jump cannot carry them past it), then hours
      const days = s.month.bits.has(w.month) ? 0 : daysIn(w.year, w.month) - w.day;
      const left = (days + 1) * 24 * 60 - (w.hour * 60 + w.minute);
      t += Math.max(60 - w.minute, left - 120) * MINUTE;
      continue;
    }
    if (!s.hour.bits.has(w.hour)) {
      t += (60 - w.minute) * MINUTE;
      continue;
    }
    if (!s.minute.bits.has(w.minute)) {
      let m = w.minute + 1;
      while (m < 60 && !s.minute.bits.has(m)) m++;
      t += (m - w.minute) * MINUTE;
      continue;
    }
    return t;
  }
  return undefined;
}

/** RFC 3339 of `ms` in the zone's offset (Go's time.RFC3339 of a time in that location) */
export function rfc3339In(ms: number, zone?: string): string {
  const w = wallTime(ms, zone);
  const seconds = Math.floor(ms / 1000) % 60;
  const localMs = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, seconds);
  const offset = Math.round((localMs - Math.floor(ms / 1000) * 1000) / MINUTE);
  const pad = (n: number, l = 2): string => String(n).padStart(l, '0');
  const base = `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)}T${pad(w.hour)}:${pad(w.minute)}:${pad(seconds)}`;
  if (offset === 0) return `${base}Z`;
  const sign = offset < 0 ? '-' : '+';
  const a = Math.abs(offset);
  return `${base}${sign}${pad(Math.floor(a / 60))}:${pad(a % 60)}`;
}
