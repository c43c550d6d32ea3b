// How kube's apiserver words a strategic merge patch whose result does not fit
// the kind's types: it converts the merged map straight into the Go struct
// (runtime.DefaultUnstructuredConverter), so the error is the converter's
// ("cannot restore map from string") and the value shown is the patch as Go's
// fmt prints a map[string]interface{} ("map[metadata:map[labels:invalid]]").

import type { CompiledSchema } from './compile.js';

/** the Go reflect kind a decoded JSON value has (ints stay int64, as kube's patch decoder keeps them) */
function goKind(v: unknown): string {
  if (Array.isArray(v)) return 'slice';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  if (typeof v === 'boolean') return 'bool';
  if (v !== null && typeof v === 'object') return 'map';
  return 'string';
}

/**
 * The converter's error for value `v` where the schema `s` wants another type;
 * undefined where kube's message comes from a custom decoder we do not mimic.
 */
export function converterMessage(s: CompiledSchema, v: unknown): string | undefined {
  if (s.intOrString || v === null) return undefined;
  const kind = goKind(v);
  switch (s.type) {
    case 'object':
      return s.properties ? `cannot restore struct from: ${kind}` : `cannot restore map from ${kind}`;
    case 'array':
      return `cannot restore slice from ${kind}`;
    case 'string':
      // Go converts an integer to a string type but has no rule for it here
      return kind === 'int64' ? 'cannot convert int64 to string' : 'unrecognized type: string';
    case 'integer': {
      const target = s.format === 'int32' ? 'int32' : 'int64';
      return kind === 'float64' ? `cannot convert float64 to ${target}` : `unrecognized type: ${target}`;
    }
    case 'number':
      return 'unrecognized type: float64';
    case 'boolean':
      return 'unrecognized type: bool';
    default:
      return undefined;
  }
}

/** a float as Go's %v (%g, shortest) prints it: exponent form below 1e-4 and from 1e6 */
function goFloat(n: number): string {
  const [mantissa, exp] = n.toExponential().split('e') as [string, string];
  const e = Number(exp);
  if (e >= -4 && e < 6) return String(n);
  const sign = e < 0 ? '-' : '+';
  return `${mantissa}e${sign}${String(Math.abs(e)).padStart(2, '0')}`;
}

/** `fmt.Sprintf("%+v", v)` of a decoded JSON value */
export function goFormat(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goFormat).join(' ')}]`;
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : goFloat(v);
  if (typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `map[${entries.map(([k, x]) => `${k}:${goFormat(x)}`).join(' ')}]`;
  }
  return String(v);
}
