// Protobuf wire-format primitives shared by the schema-driven codec (codec.ts)
// and the hand-laid messages (json-schema-props.ts).

import protobuf from 'protobufjs/minimal.js';
import { ProtobufError } from './errors.js';

export const WT_VARINT = 0;
export const WT_FIXED64 = 1;
export const WT_LEN = 2;
export const WT_FIXED32 = 5;

type WriterT = InstanceType<typeof protobuf.Writer>;

/** a field key: number and wire type */
export const tag = (n: number, wt: number): number => ((n << 3) | wt) >>> 0;

/** protobufjs int64 (a Long when long.js is present) as a JS number */
export function longToNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  const l = v as { toNumber?: () => number; low: number; high: number };
  return l.toNumber ? l.toNumber() : l.high * 2 ** 32 + (l.low >>> 0);
}

/**
 * A message `{bytes raw = 1}` holding JSON text (RawExtension, FieldsV1,
 * apiextensions JSON): the parsed value, undefined when raw is absent or empty.
 */
export function readRawJson(bytes: Uint8Array, path: string, what: string): unknown {
  const r = protobuf.Reader.create(bytes);
  let raw: Uint8Array | undefined;
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t >>> 3 === 1 && (t & 7) === WT_LEN) raw = r.bytes();
    else r.skipType(t & 7);
  }
  if (!raw || raw.length === 0) return undefined;
  try {
    return JSON.parse(Buffer.from(raw).toString('utf8'));
  } catch {
    throw new ProtobufError('Invalid', `${path}: ${what} does not hold JSON`);
  }
}

export type Scalar = 'string' | 'int32' | 'int64' | 'double' | 'bool';

/** writes one scalar field; false (nothing written) when the JSON value does not fit */
export function writeScalar(w: WriterT, n: number, kind: Scalar, v: unknown): boolean {
  switch (kind) {
    case 'string':
      if (typeof v !== 'string') return false;
      w.uint32(tag(n, WT_LEN)).string(v);
      return true;
    case 'int32':
    case 'int64':
      if (typeof v !== 'number' || !Number.isInteger(v)) return false;
      w.uint32(tag(n, WT_VARINT));
      if (kind === 'int32') w.int32(v);
      else w.int64(v);
      return true;
    case 'double':
      if (typeof v !== 'number') return false;
      w.uint32(tag(n, WT_FIXED64)).double(v);
      return true;
    case 'bool':
      if (typeof v !== 'boolean') return false;
      w.uint32(tag(n, WT_VARINT)).bool(v);
      return true;
  }
}
