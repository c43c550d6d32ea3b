// The one reading of boolean and integer query parameters for every verb
// (list, watch, deletecollection, delete, patch, the CONNECT options): the
// conversion of Kubernetes' query parameters (spec 000 §4.2). `pretty` keeps
// its own rule in the negotiation filter (kube's strconv.ParseBool there).

import { badRequest } from '../core/errors.js';

/** kube's reading of a boolean query parameter (see queryBool) */
export function boolParam(q: URLSearchParams, name: string): boolean {
  return queryBool(q.get(name));
}

/**
 * kube's Convert_Slice_string_To_bool: absent is false; `0` and `false` in any case are
 * false; anything else, even empty, is true. The Python client sends `True`/`False`.
 */
export function queryBool(v: string | null): boolean {
  return v !== null && v !== '0' && v.toLowerCase() !== 'false';
}

/** undefined when absent; else kube's strconv.ParseInt of it (an empty value too is a 400) */
export function intParam(q: URLSearchParams, name: string): number | undefined {
  return intValue(q.get(name) ?? undefined);
}

const INT64_MAX = 2n ** 63n - 1n;

/**
 * A parameter read earlier as a string, converted as kube's query conversion does
 * (runtime.Convert_Slice_string_To_int64: strconv.ParseInt(v, 10, 64)): its error is
 * kube's 400 message, `strconv.ParseInt: parsing "abc": invalid syntax`, and a value
 * beyond int64 is `value out of range`, not a number quietly rounded.
 */
export function intValue(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^[+-]?\d+$/.test(v)) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
  const n = BigInt(v);
  if (n > INT64_MAX || n < -INT64_MAX - 1n) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: value out of range`);
  return Number(n);
}
