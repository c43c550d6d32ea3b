// Kubernetes resource quantities (`100m`, `0.5`, `128Mi`, `1G`, `1e3`) in
// base units: the scheduler's requests and allocatable (CPU in millicores,
// rounded up as Quantity.MilliValue does, everything else in units) and the
// node agent's eviction thresholds and reservations. The syntax check of the
// API is the schema's (src/machinery/schema/validate.ts).

const SUFFIX: Record<string, number> = {
  n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4, Pi: 1024 ** 5, Ei: 1024 ** 6,
};

const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?)$/;

/** the quantity in base units; undefined when it is not one (the API validated it, so only a corrupt object) */
export function parseQuantity(q: unknown): number | undefined {
  if (typeof q === 'number') return Number.isFinite(q) ? q : undefined;
  if (typeof q !== 'string') return undefined;
  const m = QUANTITY.exec(q.trim());
  if (!m) return undefined;
  const base = Number(m[1]);
  if (m[2] !== undefined) return base * 10 ** Number(m[2].slice(1));
  return base * SUFFIX[m[3] ?? '']!;
}

/** a resource amount in the unit the scheduler adds up: millicores for `cpu`, units otherwise */
export function resourceAmount(resource: string, q: unknown): number {
  const v = parseQuantity(q) ?? 0;
  return resource === 'cpu' ? Math.ceil(Math.round(v * 1e9) / 1e6) : Math.ceil(v);
}

// Canonical Quantity strings, as resource.Quantity's String() writes them (what
// metrics-server answers: `uint64Quantity(cpu, DecimalSI, -9)` and
// `uint64Quantity(memory, BinarySI, 0)`; docs/metrics.md). Integers only.

const DECIMAL_SUFFIX: Record<number, string> = { [-9]: 'n', [-6]: 'u', [-3]: 'm', 0: '', 3: 'k', 6: 'M', 9: 'G', 12: 'T', 15: 'P', 18: 'E' };
const BINARY_SUFFIX = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

/** `value`×10^`scale` in DecimalSI: factors of ten removed, exponent a multiple of 3 (12345000×10⁻⁹ → `12345u`) */
export function formatDecimalSI(value: number, scale: number): string {
  if (!Number.isSafeInteger(value)) throw new RangeError(`${value} is not a safe integer`);
  if (value === 0) return '0';
  let amount = Math.abs(value);
  let exponent = scale;
  while (amount >= 10 && amount % 10 === 0) {
    amount /= 10;
    exponent++;
  }
  const r = ((exponent % 3) + 3) % 3;
  // kube multiplies back by 10 or 100 to land on a multiple of 3
  if (r === 1) (amount *= 10), (exponent -= 1);
  else if (r === 2) (amount *= 100), (exponent -= 2);
  const suffix = DECIMAL_SUFFIX[exponent] ?? `e${exponent}`;
  return `${value < 0 ? '-' : ''}${amount}${suffix}`;
}

/** `value` bytes in BinarySI: |value| < 1024 as DecimalSI (`1k`), else factors of 1024 as `Ki`, `Mi`… (`1234567` stays) */
export function formatBinarySI(value: number): string {
  if (!Number.isSafeInteger(value)) throw new RangeError(`${value} is not a safe integer`);
  if (value > -1024 && value < 1024) return formatDecimalSI(value, 0);
  let amount = Math.abs(value);
  let times = 0;
  while (amount >= 1024 && amount % 1024 === 0 && times < BINARY_SUFFIX.length - 1) {
    amount /= 1024;
    times++;
  }
  return `${value < 0 ? '-' : ''}${amount}${BINARY_SUFFIX[times]}`;
}
