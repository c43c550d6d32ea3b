// Go durations (`1h2m3.5s`, `300ms`), as kube's flags and `?timeout=` take them.

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** milliseconds; undefined when not a duration */
export function parseGoDuration(text: string): number | undefined {
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let matched = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    matched = re.lastIndex;
  }
  return matched === text.length && matched > 0 ? total : text === '0' ? 0 : undefined;
}

/** `value` with `decimals` fractional digits, trailing zeros (and a bare point) dropped, as Go's fmtFrac */
function frac(value: number, decimals: number): string {
  const whole = Math.floor(value / 10 ** decimals);
  const rest = value % 10 ** decimals;
  const f = rest === 0 ? '' : `.${String(rest).padStart(decimals, '0').replace(/0+$/, '')}`;
  return `${whole}${f}`;
}

/** Go's time.Duration.String() of whole nanoseconds (`15.004s`, `1m0.5s`, `500ms`, `0s`): metav1.Duration's JSON */
export function formatGoDuration(ns: number): string {
  if (!Number.isSafeInteger(ns)) throw new RangeError(`${ns} is not a whole number of nanoseconds`);
  if (ns === 0) return '0s';
  const sign = ns < 0 ? '-' : '';
  const d = Math.abs(ns);
  if (d < 1e3) return `${sign}${d}ns`;
  if (d < 1e6) return `${sign}${frac(d, 3)}µs`;
  if (d < 1e9) return `${sign}${frac(d, 6)}ms`;
  const h = Math.floor(d / 3.6e12);
  const m = Math.floor((d % 3.6e12) / 6e10);
  const s = `${frac(d % 6e10, 9)}s`;
  if (h > 0) return `${sign}${h}h${m}m${s}`;
  if (m > 0) return `${sign}${m}m${s}`;
  return `${sign}${s}`;
}
