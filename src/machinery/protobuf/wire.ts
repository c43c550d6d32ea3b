// Protobuf wire-format primitives shared by the schema-driven codec (codec.ts)
// and the hand-laid messages (json-schema-props.ts).

export const WT_VARINT = 0;
export const WT_FIXED64 = 1;
export const WT_LEN = 2;
export const WT_FIXED32 = 5;

/** a field key: number and wire type */
export const tag = (n: number, wt: number): number => ((n << 3) | wt) >>> 0;

/** protobufjs int64 (a Long when long.js is present) as a JS number */
export function longToNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  const l = v as { toNumber?: () => number; low: number; high: number };
  return l.toNumber ? l.toNumber() : l.high * 2 ** 32 + (l.low >>> 0);
}
