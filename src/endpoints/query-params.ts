// The one reading of boolean and integer query parameters for every verb
// (list, watch, deletecollection, delete, patch, the CONNECT options): the
// conversion of Kubernetes' query parameters (spec 000 §4.2). `pretty` keeps
// its own rule in the negotiation filter (kube's strconv.ParseBool there).

import { badRequest } from '../core/errors.js';

/** `true`, `1`, or the bare name (`?watch`); anything else, or absence, is false */
export function boolParam(q: URLSearchParams, name: string): boolean {
  const v = q.get(name);
  return v === 'true' || v === '1' || (v === '' && q.has(name));
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
