// Cron schedules as kube's CronJob controller reads them (robfig/cron's
// standard parser): five fields (minute, hour, day of month, month, day of
// week; `*`, `?`, `a`, `a-b`, `*/n`, `a-b/n`, `a/n` = a to the end by n,
// lists, JAN–DEC and SUN–SAT names), the descriptors @yearly, @annually,
// @monthly, @weekly, @daily, @midnight and @hourly, and a `TZ=` or
// `CRON_TZ=` prefix naming an IANA zone. Day of month and day of week are
// ORed when both are restricted and ANDed when either starts with `*`/`?`
// (a `*/n` step is a restriction), as in robfig. `@every <duration>` (Go's
// duration syntax) is robfig's constant delay: whole seconds, at least one,
// counted from the previous activation's second. Descriptors are matched
// exactly (robfig is case-sensitive), and the error texts are robfig's, which
// kube's API validation returns as they are (spec.schedule's 422).
//
// Shared by the CronJob controller and the CronJob kind's validation
// (src/registry/kinds/batch.ts), so what the API accepts is what runs.
//
// Written by hand rather than as a dependency: the matching is 100 lines,
// and the time-zone part uses the runtime's own zone data (Intl), which is
// what a library would use too. Times are walked in real (UTC) minutes and
// matched against the zone's wall clock, so a wall time skipped by a DST
// jump does not fire that day and one repeated fires twice (robfig differs
// on both edges; docs/controllers.md).

type Field = { bits: Set<number>; star: boolean };

/** five fields (or a descriptor standing for them) */
export interface FieldSchedule {
  minute: Field;
  hour: Field;
  dom: Field;
  month: Field;
  dow: Field;
  /** IANA zone; undefined = UTC */
  timeZone?: string;
}

/** `@every <duration>`: robfig's ConstantDelaySchedule */
export interface ConstantDelaySchedule {
  /** the delay in ms: whole seconds, at least 1,000 */
  everyMs: number;
  /** IANA zone; undefined = UTC (only how times are written: a delay has no wall clock) */
  timeZone?: string;
}

export type CronSchedule = FieldSchedule | ConstantDelaySchedule;

export const isConstantDelay = (s: CronSchedule): s is ConstantDelaySchedule => 'everyMs' in s;

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

/** Go's strconv.Atoi as robfig's mustParseInt uses it, with its error texts */
function mustParseInt(expr: string): number {
  if (!/^[+-]?\d+$/.test(expr)) throw new CronError(`failed to parse int from ${expr}: strconv.Atoi: parsing ${goQuote(expr)}: invalid syntax`);
  const n = Number(expr);
  if (n < 0) throw new CronError(`negative number (${n}) not allowed: ${expr}`);
  return n;
}

function intOrName(expr: string, names?: string[]): number {
  const i = names?.indexOf(expr.toUpperCase()) ?? -1;
  if (i >= 0) return i + (names === MONTHS ? 1 : 0);
  return mustParseInt(expr);
}

/** one field: robfig's getField/getRange, in its order of checks and with its texts */
function field(expr: string, min: number, max: number, names?: string[]): Field {
  const bits = new Set<number>();
  let star = false;
  for (const part of expr.split(',').filter((p) => p !== '')) {
    const rangeAndStep = part.split('/');
    const lowAndHigh = rangeAndStep[0]!.split('-');
    let lo: number;
    let hi: number;
    let isStar = false;
    if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
      lo = min;
      hi = max;
      isStar = true;
    } else {
      lo = intOrName(lowAndHigh[0]!, names);
      if (lowAndHigh.length === 1) hi = lo;
      else if (lowAndHigh.length === 2) hi = intOrName(lowAndHigh[1]!, names);
      else throw new CronError(`too many hyphens: ${part}`);
    }
    let step = 1;
    if (rangeAndStep.length === 2) {
      step = mustParseInt(rangeAndStep[1]!);
      // "N/step" means N to the end by step
      if (lowAndHigh.length === 1) hi = max;
      if (step > 1) isStar = false;
    } else if (rangeAndStep.length > 2) {
      throw new CronError(`too many slashes: ${part}`);
    }
    if (lo < min) throw new CronError(`beginning of range (${lo}) below minimum (${min}): ${part}`);
    if (hi > max) throw new CronError(`end of range (${hi}) above maximum (${max}): ${part}`);
    if (lo > hi) throw new CronError(`beginning of range (${lo}) beyond end of range (${hi}): ${part}`);
    if (step === 0) throw new CronError(`step of range should be a positive number: ${part}`);
    for (let v = lo; v <= hi; v += step) bits.add(v);
    if (isStar) star = true;
  }
  return { bits, star };
}

/** an IANA zone the runtime's zone data (Intl) knows, matched as Intl matches names (case-insensitively) */
export function validZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Go's strconv.Quote for the texts that appear here (printable ASCII, quotes and backslashes escaped) */
const goQuote = (s: string): string => JSON.stringify(s);

const DURATION_UNITS: Record<string, number> = { ns: 1, us: 1e3, 'µs': 1e3, 'μs': 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };
/** the largest time.Duration, in ns */
const MAX_DURATION_NS = 9_223_372_036_854_775_807;

/**
 * Go's time.ParseDuration, in nanoseconds (a float: the schedule keeps whole
 * seconds of it), with Go's error texts.
 */
export function parseGoDuration(text: string): number {
  const invalid = (): CronError => new CronError(`time: invalid duration ${goQuote(text)}`);
  let s = text;
  let sign = 1;
  if (s.startsWith('-') || s.startsWith('+')) {
    sign = s.startsWith('-') ? -1 : 1;
    s = s.slice(1);
  }
  if (s === '0') return 0;
  if (s === '') throw invalid();
  let total = 0;
  while (s !== '') {
    const m = /^(\d*)(?:\.(\d*))?/.exec(s)!;
    const [whole, int = '', frac] = m;
    if (int === '' && (frac === undefined || frac === '')) throw invalid();
    s = s.slice(whole.length);
    const unitEnd = s.search(/[\d.]/);
    const unit = unitEnd < 0 ? s : s.slice(0, unitEnd);
    if (unit === '') throw new CronError(`time: missing unit in duration ${goQuote(text)}`);
    const scale = DURATION_UNITS[unit];
    if (scale === undefined) throw new CronError(`time: unknown unit ${goQuote(unit)} in duration ${goQuote(text)}`);
    s = s.slice(unit.length);
    total += Number(`${int || '0'}.${frac ?? ''}0`) * scale;
    if (total > MAX_DURATION_NS) throw invalid();
  }
  return sign * total;
}

/** robfig's Every: less than a second is a second; the rest is truncated to whole seconds */
function constantDelay(durationText: string, descriptor: string, tz: string | undefined): ConstantDelaySchedule {
  let ns: number;
  try {
    ns = parseGoDuration(durationText);
  } catch (err) {
    throw new CronError(`failed to parse duration ${descriptor}: ${(err as Error).message}`);
  }
  const everyMs = ns < 1e9 ? 1000 : Math.floor(ns / 1e9) * 1000;
  return { everyMs, ...(tz !== undefined ? { timeZone: tz } : {}) };
}

/** parses a schedule; `timeZone` is the CronJob's spec.timeZone (a TZ= prefix in the schedule wins over none) */
export function parseCron(schedule: string, timeZone?: string): CronSchedule {
  if (schedule === '') throw new CronError('empty spec string');
  let s = schedule;
  let tz = timeZone;
  const m = /^(?:CRON_)?TZ=(\S*)(\s+.*)?$/.exec(s);
  if (m) {
    tz = m[1]!;
    s = (m[2] ?? '').trim();
  }
  if (tz !== undefined && tz !== 'UTC' && tz !== 'Etc/UTC' && !validZone(tz)) throw new CronError(`provided bad location ${tz}: unknown time zone ${tz}`);
  const zone = tz !== undefined && tz !== 'UTC' && tz !== 'Etc/UTC' ? tz : undefined;
  if (s.startsWith('@')) {
    if (s.startsWith('@every ')) return constantDelay(s.slice('@every '.length), s, zone);
    const d = DESCRIPTORS[s];
    if (!d) throw new CronError(`unrecognized descriptor: ${s}`);
    s = d;
  }
  const f = s.split(/\s+/).filter((x) => x !== '');
  if (f.length !== 5) throw new CronError(`expected exactly 5 fields, found ${f.length}: [${f.join(' ')}]`);
  return {
    minute: field(f[0]!, 0, 59),
    hour: field(f[1]!, 0, 23),
    dom: field(f[2]!, 1, 31),
    month: field(f[3]!, 1, 12, MONTHS),
    dow: field(f[4]!, 0, 6, DAYS),
    ...(zone !== undefined ? { timeZone: zone } : {}),
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

function dayMatches(s: FieldSchedule, w: WallTime): boolean {
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
  // robfig's ConstantDelaySchedule.Next: from the start of `after`'s second
  if (isConstantDelay(s)) return Math.floor(after / 1000) * 1000 + s.everyMs;
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
