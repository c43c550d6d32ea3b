// Scalar values as kube-apiserver writes them back. A built-in kind is decoded
// into Go structs and encoded again, so a resource.Quantity comes back as its
// canonical string (`cpu: 2` → `"2"`, `1000m` → `"1"`, `1.5Gi` → `"1536Mi"`)
// and a metav1.Time / MicroTime as RFC 3339 in UTC (`…T00:00:00Z` with whole
// seconds, `…T00:00:00.000000Z` with six digits). Typed clients depend on it:
// Rust's k8s-openapi decodes a Quantity only from a JSON string. Custom
// resources are unstructured in kube and keep what was written.

import type { CompiledSchema } from './compile.js';

/** Quantity formats (resource.Format) */
type Format = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

const DECIMAL_SUFFIXES: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIXES: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_BY_EXPONENT = new Map(Object.entries(DECIMAL_SUFFIXES).map(([s, e]) => [e, s]));
const BINARY_BY_TIMES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

interface Parsed {
  positive: boolean;
  /** the number with its sign, before the suffix */
  value: string;
  num: string;
  denom: string;
  suffix: string;
}

/** kube's parseQuantityString: sign, numerator without leading zeros, denominator, suffix */
function parseQuantityString(str: string): Parsed | undefined {
  let pos = 0;
  const end = str.length;
  let positive = true;
  if (str[0] === '-') (positive = false), pos++;
  else if (str[0] === '+') pos++;
  while (pos < end && str[pos] === '0') pos++;
  if (pos >= end) return { positive, value: str, num: '0', denom: '', suffix: '' };
  let i = pos;
  while (i < end && isDigit(str[i]!)) i++;
  const num = str.slice(pos, i) || '0';
  pos = i;
  let denom = '';
  if (pos < end && str[pos] === '.') {
    i = ++pos;
    while (i < end && isDigit(str[i]!)) i++;
    denom = str.slice(pos, i);
    pos = i;
  }
  const value = str.slice(0, pos);
  const suffix = str.slice(pos);
  if (!/^[eEinumkKMGTP]*[-+]?[0-9]*$/.test(suffix)) return undefined;
  return { positive, value, num, denom, suffix };
}

function isDigit(c: string): boolean {
  return c >= '0' && c <= '9';
}

/** kube's suffixer: base, exponent and format of a suffix; undefined for an unknown one */
function interpret(suffix: string): { base: 10 | 2; exponent: number; format: Format } | undefined {
  if (suffix in DECIMAL_SUFFIXES) return { base: 10, exponent: DECIMAL_SUFFIXES[suffix]!, format: 'DecimalSI' };
  if (suffix in BINARY_SUFFIXES) return { base: 2, exponent: BINARY_SUFFIXES[suffix]!, format: 'BinarySI' };
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E') && /^[-+]?\d+$/.test(suffix.slice(1))) {
    const exponent = Number(suffix.slice(1));
    if (Number.isSafeInteger(exponent) && Math.abs(exponent) < 1e6) return { base: 10, exponent, format: 'DecimalExponent' };
  }
  return undefined;
}

/** the text Go's decoder saw for a JSON number (ours has only its value; Go's own text is equivalent) */
function numberText(n: number): string | undefined {
  return Number.isFinite(n) ? String(n) : undefined;
}

const abs = (v: bigint): bigint => (v < 0n ? -v : v);
const pow10 = (n: number): bigint => 10n ** BigInt(n);

/** the sign of m×10^e − n */
function compareScaled(m: bigint, e: number, n: bigint): number {
  const a = e >= 0 ? m * pow10(e) : m;
  const b = e >= 0 ? n : n * pow10(-e);
  return a === b ? 0 : a > b ? 1 : -1;
}

/**
 * A quantity as kube's resource.Quantity writes it after decoding `input`
 * (ParseQuantity, then MarshalJSON): the text kept when it was already
 * canonical, else CanonicalizeBytes. Undefined when it is not a quantity.
 */
export function canonicalQuantity(input: string | number): string | undefined {
  const text = typeof input === 'number' ? numberText(input) : input.trim();
  if (text === undefined || text === '') return undefined;
  if (text === '0') return '0';
  const p = parseQuantityString(text);
  const suf = p && interpret(p.suffix);
  if (!p || !suf) return undefined;
  let format = suf.format;
  // the int64 fast path, which keeps a canonical text as it was written
  let precision: number;
  let scale = 0;
  let mantissa = 1n;
  if (format === 'BinarySI') {
    if (suf.exponent >= 0 && p.denom.length === 0) {
      mantissa = 1n << BigInt(suf.exponent);
      precision = 15 - p.num.length - Math.trunc((suf.exponent * 3) / 10) - 1;
    } else precision = -1;
  } else {
    scale = suf.exponent;
    precision = 18 - (p.num.length + p.denom.length);
  }
  if (precision >= 0) {
    scale -= p.denom.length;
    if (scale >= -9) {
      const shifted = p.num + p.denom;
      const value = BigInt(shifted);
      let result = value * mantissa;
      if (value <= INT64_MAX && result <= INT64_MAX) {
        if (!p.positive) result = -result;
        const keep = format === 'BinarySI'
          ? suf.exponent % 10 === 0 && (value & 7n) !== 0n
          : scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0';
        return keep ? text : canonical(result, scale, format);
      }
    }
  }
  // inf.Dec: exact, rounded up (away from zero) to nano units
  const dot = p.value.indexOf('.');
  let m: bigint;
  try {
    m = BigInt(dot < 0 ? p.value : p.value.slice(0, dot) + p.value.slice(dot + 1));
  } catch {
    return undefined;
  }
  let e = dot < 0 ? 0 : -(p.value.length - dot - 1);
  if (suf.base === 10) e += suf.exponent;
  else m *= 1n << BigInt(suf.exponent);
  if (m !== 0n && e < -9) {
    const d = pow10(-9 - e);
    const q = abs(m) / d + (abs(m) % d === 0n ? 0n : 1n);
    m = m < 0n ? -q : q;
    e = -9;
  }
  if (format === 'BinarySI') {
    // capped at the int64 maximum; a fraction of one unit is DecimalSI
    if (compareScaled(abs(m), e, INT64_MAX) > 0) (m = m < 0n ? -INT64_MAX : INT64_MAX), (e = 0);
    if (m !== 0n && compareScaled(abs(m), e, 1n) < 0) format = 'DecimalSI';
  }
  return canonical(m, e, format);
}

/** resource.Quantity.CanonicalizeBytes of m×10^e */
function canonical(m: bigint, e: number, format: Format): string {
  if (m === 0n) return '0';
  if (format === 'BinarySI') {
    const integral = e >= 0 ? m * pow10(e) : m % pow10(-e) === 0n ? m / pow10(-e) : undefined;
    const small = compareScaled(abs(m), e, 1024n) < 0;
    if (small || integral === undefined || integral > INT64_MAX || integral < INT64_MIN) format = 'DecimalSI';
    else {
      let amount = abs(integral);
      let times = 0;
      while (amount >= 1024n && amount % 1024n === 0n && times < BINARY_BY_TIMES.length - 1) (amount /= 1024n), times++;
      return `${integral < 0n ? '-' : ''}${amount}${BINARY_BY_TIMES[times]}`;
    }
  }
  let amount = abs(m);
  let exponent = e;
  while (amount >= 10n && amount % 10n === 0n) (amount /= 10n), exponent++;
  const r = ((exponent % 3) + 3) % 3;
  if (r === 1) (amount *= 10n), exponent--;
  else if (r === 2) (amount *= 100n), (exponent -= 2);
  const sign = m < 0n ? '-' : '';
  if (format === 'DecimalExponent') return `${sign}${amount}${exponent === 0 ? '' : `e${exponent}`}`;
  const suffix = DECIMAL_BY_EXPONENT.get(exponent);
  return `${sign}${amount}${suffix ?? `e${exponent}`}`;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * A metav1.Time (`micro` false) or MicroTime as kube writes it back after
 * decoding `v`: UTC, whole seconds or six fraction digits (truncated).
 * Undefined when Go's RFC 3339 parse would refuse it.
 */
export function goTime(v: string, micro: boolean): string | undefined {
  const m = RFC3339.exec(v);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > DAYS[month - 1]! || hour > 23 || minute > 59 || second > 59) return undefined;
  if (month === 2 && day === 29 && !(year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0))) return undefined;
  const zone = m[8]!;
  const offset = zone === 'Z' ? 0 : (zone[0] === '-' ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
  if (zone !== 'Z' && (Number(zone.slice(1, 3)) > 23 || Number(zone.slice(4, 6)) > 59)) return undefined;
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute - offset, second, 0);
  const y = d.getUTCFullYear();
  if (y < 0 || y > 9999) return undefined;
  const two = (n: number): string => String(n).padStart(2, '0');
  const base = `${String(y).padStart(4, '0')}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())}T${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
  if (!micro) return `${base}Z`;
  return `${base}.${(m[7] ?? '.').slice(1, 7).padEnd(6, '0')}Z`;
}

const GO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
const GO_MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

/** whether goValues would change a value of `v`: a walk of the values alone, no checks (an update's stored object) */
export function needsGoValues(v: unknown, s: CompiledSchema): boolean {
  if (v === null || typeof v !== 'object') {
    if (s.format === 'quantity') {
      if (typeof v !== 'string' && typeof v !== 'number') return false;
      const q = canonicalQuantity(v);
      return q !== undefined && q !== v;
    }
    if (s.format !== 'date-time' || typeof v !== 'string') return false;
    const micro = s.source['x-orch-proto-type'] === 'MicroTime';
    if ((micro ? GO_MICRO_TIME : GO_TIME).test(v)) return false;
    const t = goTime(v, micro);
    return t !== undefined && t !== v;
  }
  if (Array.isArray(v)) {
    const items = s.items;
    if (!items) return false;
    for (let i = 0; i < v.length; i++) if (needsGoValues(v[i], items)) return true;
    return false;
  }
  const props = s.properties;
  const additional = s.additional;
  for (const k in v) {
    const child = props?.get(k) ?? additional;
    if (child !== undefined && child !== true && needsGoValues((v as Record<string, unknown>)[k], child)) return true;
  }
  return false;
}

/** a quantity or time as kube writes it back (go-values.ts); undefined when it stays as it is */
export function goValue(v: unknown, s: CompiledSchema): string | undefined {
  if (s.format === 'quantity') {
    if (typeof v !== 'string' && typeof v !== 'number') return undefined;
    const q = canonicalQuantity(v);
    return q === v ? undefined : q;
  }
  if (s.format !== 'date-time' || typeof v !== 'string') return undefined;
  const t = goTime(v, s.source['x-orch-proto-type'] === 'MicroTime');
  return t === v ? undefined : t;
}
