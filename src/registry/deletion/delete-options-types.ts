// The types of a DeleteOptions body (spec 000 §2.6), checked as kube's JSON decoder
// checks them when it reads the body into its Go struct: a value of another type is
// an error naming the Go field and type ("json: cannot unmarshal string into Go
// struct field DeleteOptions.gracePeriodSeconds of type int64"), never a value
// quietly dropped (a dropped `preconditions` would delete without its guard).
// kube answers that error as a plain 500; orch answers 400 BadRequest with its text
// (docs/errors.md).

type GoType = 'string' | 'int64' | 'bool' | 'v1.DeletionPropagation' | 'types.UID' | '[]string' | 'v1.Preconditions';

/** the JSON word Go's UnmarshalTypeError uses for a value: "string", "number 1.5", "array", "object", "bool" */
function jsonWord(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return `number ${String(v)}`;
  return typeof v === 'object' ? 'object' : 'string';
}

const INT64_LIMIT = 2 ** 63;

/** whether `v` decodes into a Go value of `type` (null decodes into anything: a pointer stays nil) */
function fits(v: unknown, type: GoType): boolean {
  if (v === null) return true;
  switch (type) {
    case 'int64':
      return typeof v === 'number' && Number.isInteger(v) && Math.abs(v) <= INT64_LIMIT;
    case 'bool':
      return typeof v === 'boolean';
    case '[]string':
      return Array.isArray(v);
    case 'v1.Preconditions':
      return typeof v === 'object' && !Array.isArray(v);
    default:
      return typeof v === 'string';
  }
}

const FIELDS: Record<string, GoType> = {
  kind: 'string',
  apiVersion: 'string',
  gracePeriodSeconds: 'int64',
  preconditions: 'v1.Preconditions',
  orphanDependents: 'bool',
  propagationPolicy: 'v1.DeletionPropagation',
  dryRun: '[]string',
  ignoreStoreReadErrorWithClusterBreakingPotential: 'bool',
};

const PRECONDITIONS: Record<string, GoType> = { uid: 'types.UID', resourceVersion: 'string' };

function message(v: unknown, struct: string, field: string, type: string): string {
  // Go gives a number's text only where it wanted an integer ("number 1.5"), else the kind's name
  const word = typeof v === 'number' && type !== 'int64' ? 'number' : jsonWord(v);
  return `json: cannot unmarshal ${word} into Go struct field ${struct}.${field} of type ${type}`;
}

/** Go's decoding error for the first field (in body order) of the wrong type; undefined when all fit */
export function deleteOptionsTypeError(body: Record<string, unknown>): string | undefined {
  for (const [k, v] of Object.entries(body)) {
    const type = FIELDS[k];
    if (type === undefined) continue;
    if (!fits(v, type)) return message(v, 'DeleteOptions', k, type);
    if (k === 'dryRun' && Array.isArray(v)) {
      const bad = v.find((x) => typeof x !== 'string');
      if (bad !== undefined) return message(bad, 'DeleteOptions', k, 'string');
    }
    if (k === 'preconditions' && v !== null) {
      for (const [pk, pv] of Object.entries(v as Record<string, unknown>)) {
        const pt = PRECONDITIONS[pk];
        if (pt !== undefined && !fits(pv, pt)) return message(pv, 'Preconditions', `preconditions.${pk}`, pt);
      }
    }
  }
  return undefined;
}
