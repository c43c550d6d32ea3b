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
