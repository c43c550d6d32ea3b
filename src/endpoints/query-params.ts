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

/** undefined when absent or empty; 400 when not an integer */
export function intParam(q: URLSearchParams, name: string): number | undefined {
  return intValue(name, q.get(name) ?? undefined);
}

/** a parameter read earlier as a string (ListOptions keep them as given) */
export function intValue(name: string, v: string | undefined): number | undefined {
  if (v === undefined || v === '') return undefined;
  if (!/^-?\d+$/.test(v)) throw badRequest(`${name}: Invalid value: "${v}": must be an integer`);
  return Number(v);
}
