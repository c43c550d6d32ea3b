// Exact quantity arithmetic for ResourceQuota usage. Quota sums many requests
// (`100m` + `0.1` + `128Mi` …) and compares them with a hard limit, so values
// are kept as integers of nano-units (bigint: 64Gi is 6.9e19 nano-units, past
// a double's exact range). A sum keeps the format of its left operand (of the
// right one when the left is zero) as kube's Quantity.Add does, and prints as
// Quantity.String() does
// (src/core/quantity.ts has the same canonical rules for safe integers).

export interface Amount {
  /** the value in units of 10⁻⁹ */
  nano: bigint;
  /** BinarySI (`Ki`, `Mi`, …) rather than DecimalSI */
  binary: boolean;
}

const NANO = 1_000_000_000n;
const DECIMAL_EXP: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_POW: Record<string, number> = { Ki: 1, Mi: 2, Gi: 3, Ti: 4, Pi: 5, Ei: 6 };
const QUANTITY = /^([+-]?)(\d*)(?:\.(\d*))?(?:([eE][+-]?\d+)|(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei))?$/;

export const ZERO: Amount = { nano: 0n, binary: false };

/** a quantity string (or JSON number) as an exact amount; undefined when it is not one */
export function parseAmount(q: unknown): Amount | undefined {
  if (typeof q === 'number') return Number.isFinite(q) ? parseAmount(String(q)) : undefined;
  if (typeof q !== 'string') return undefined;
  const m = QUANTITY.exec(q.trim());
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return undefined;
  const frac = m[3] ?? '';
  const digits = BigInt(`${m[2]}${frac}` || '0');
  const suffix = m[5] ?? '';
  const binary = suffix in BINARY_POW;
  // value = digits × 10^(exp − |frac|) × 1024^pow, in nano-units
  const exp = (m[4] !== undefined ? Number(m[4].slice(1)) : binary ? 0 : DECIMAL_EXP[suffix]!) + 9 - frac.length;
  let nano = digits * 1024n ** BigInt(BINARY_POW[suffix] ?? 0);
  // below a nano-unit kube rounds up
  nano = exp >= 0 ? nano * 10n ** BigInt(exp) : ceilDiv(nano, 10n ** BigInt(-exp));
  return { nano: m[1] === '-' ? -nano : nano, binary };
}

function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}

export function addAmount(a: Amount, b: Amount): Amount {
  return { nano: a.nano + b.nano, binary: a.nano === 0n ? b.binary : a.binary };
}

export function subtractAmount(a: Amount, b: Amount): Amount {
  return { nano: a.nano - b.nano, binary: a.nano === 0n ? b.binary : a.binary };
}

/** Quantity.String(): canonical DecimalSI, or BinarySI for whole units of at least 1024 */
export function formatAmount(a: Amount): string {
  if (a.binary && a.nano % NANO === 0n) {
    const units = a.nano / NANO;
    const abs = units < 0n ? -units : units;
    if (abs >= 1024n) {
      let amount = abs;
      let pow = 0;
      while (amount % 1024n === 0n && pow < 6) {
        amount /= 1024n;
        pow++;
      }
      const suffix = Object.keys(BINARY_POW).find((k) => BINARY_POW[k] === pow) ?? '';
      return `${units < 0n ? '-' : ''}${amount}${suffix}`;
    }
  }
  return formatDecimal(a.nano);
}

const SUFFIX_OF: Record<number, string> = Object.fromEntries(Object.entries(DECIMAL_EXP).map(([s, e]) => [e, s]));

function formatDecimal(nano: bigint): string {
  if (nano === 0n) return '0';
  let amount = nano < 0n ? -nano : nano;
  let exponent = -9;
  while (amount % 10n === 0n) {
    amount /= 10n;
    exponent++;
  }
  // kube lands on a multiple of 3 by multiplying the mantissa back
  const r = ((exponent % 3) + 3) % 3;
  amount *= 10n ** BigInt(r);
  exponent -= r;
  const suffix = SUFFIX_OF[exponent] ?? `e${exponent}`;
  return `${nano < 0n ? '-' : ''}${amount}${suffix}`;
}

/** resource name → amount, as kube's ResourceList */
export type Usage = Map<string, Amount>;

/** kube's quota.Add: every key of either, added as Quantity.Add adds */
export function addUsage(a: Usage, b: Usage): Usage {
  const out = new Map(a);
  for (const [k, v] of b) {
    const have = out.get(k);
    out.set(k, have ? addAmount(have, v) : v);
  }
  return out;
}

/** kube's quota.SubtractWithNonNegativeResult */
export function subtractUsageNonNegative(a: Usage, b: Usage): Usage {
  const out: Usage = new Map();
  for (const [k, v] of a) {
    const d = subtractAmount(v, b.get(k) ?? ZERO);
    out.set(k, d.nano < 0n ? { nano: 0n, binary: d.binary } : d);
  }
  return out;
}

/** the keys of `u` named in `names` (kube's quota.Mask) */
export function maskUsage(u: Usage, names: Iterable<string>): Usage {
  const out: Usage = new Map();
  for (const n of names) {
    const v = u.get(n);
    if (v) out.set(n, v);
  }
  return out;
}

/** kube's prettyPrint: `name=value` sorted by name, comma separated */
export function printUsage(u: Usage): string {
  return [...u.keys()].sort().map((k) => `${k}=${formatAmount(u.get(k)!)}`).join(',');
}

/** a `{name: quantity}` map of an object (hard, used); unparsable entries left out */
export function usageOf(list: unknown): Usage {
  const out: Usage = new Map();
  if (!list || typeof list !== 'object' || Array.isArray(list)) return out;
  for (const [k, v] of Object.entries(list)) {
    const a = parseAmount(v);
    if (a) out.set(k, a);
  }
  return out;
}

export function usageToJSON(u: Usage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of [...u.keys()].sort()) out[k] = formatAmount(u.get(k)!);
  return out;
}
