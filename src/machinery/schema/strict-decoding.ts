// The strict decoding errors of a write (spec 000 §4.8): unknown and duplicate
// fields worded and ordered as kube 1.32 reports them, one Warning each under
// Warn, joined in the 400 under Strict (test/integration/apiserver/
// field_validation_test.go). The order follows kube's decoders:
// - a JSON body of a built-in kind: one strict JSON decoding in document order;
//   a field both unknown and duplicated (or below an unknown one) is only unknown;
// - a YAML body: yaml.v2's duplicate keys (`line 5: key "name" already set in
//   map`, one error under Strict), then the unknown fields of the JSON it
//   converts to, whose keys are sorted;
// - a merge or strategic merge patch: the patch's duplicates, then the unknown
//   fields of the patched object, again sorted JSON;
// - a JSON Patch: its operations' unknown and duplicate fields (`json patch …`),
//   then the patched object's;
// - custom resources decode unstructured (every duplicate), then pruning
//   reports unknown fields (`crdUnknownOrder`).
// Nothing here runs for a body with no unknown or duplicate field.

import { type DuplicateField, firstKeyOffsets } from './duplicates.js';

/** what decoding a request body found besides the object's unknown fields */
export type BodyFindings =
  /** a JSON object body of a built-in kind: problems in document order */
  | { kind: 'typed-json'; text: string; duplicates: DuplicateField[] }
  /** problems listed before the object's unknown fields; `yaml`: yaml.v2's, one error under Strict */
  | { kind: 'first'; problems: string[]; yaml?: boolean; sortUnknown: boolean };

export const unknownFieldText = (path: string): string => `unknown field "${path}"`;
export const duplicateFieldText = (path: string): string => `duplicate field "${path}"`;

/** the errors of a write's strict decoding, one per Warning (`strict`: as joined in the 400) */
export function strictDecodingErrors(found: BodyFindings | undefined, unknown: readonly string[], strict: boolean): string[] {
  if (found === undefined) return unknown.map(unknownFieldText);
  if (found.kind === 'typed-json') return typedJsonErrors(found.text, found.duplicates, unknown);
  const { problems } = found;
  const first = found.yaml && strict && problems.length > 0 ? [`yaml: unmarshal errors:\n  ${problems.join('\n  ')}`] : problems;
  if (unknown.length === 0) return first;
  const ordered = found.sortUnknown && unknown.length > 1 ? [...unknown].sort(compareFieldPaths) : unknown;
  return [...first, ...ordered.map(unknownFieldText)];
}

/**
 * kube's strict JSON decoding of a typed object (sigs.k8s.io/json): unknown and duplicate
 * fields in document order; a duplicate of an unknown field, or below one, is not reported
 */
export function typedJsonErrors(text: string, duplicates: readonly DuplicateField[], unknown: readonly string[]): string[] {
  if (duplicates.length === 0 && unknown.length <= 1) return unknown.map(unknownFieldText);
  const dups = unknown.length === 0 ? duplicates : duplicates.filter((d) => !unknown.some((u) => isAtOrBelow(d.path, u)));
  if (unknown.length === 0) return dups.map((d) => duplicateFieldText(d.path));
  const offsets = firstKeyOffsets(text, new Set(unknown));
  const all = [
    ...unknown.map((path) => ({ offset: offsets.get(path) ?? Number.MAX_SAFE_INTEGER, text: unknownFieldText(path) })),
    ...dups.map((d) => ({ offset: d.offset, text: duplicateFieldText(d.path) })),
  ];
  return all.sort((a, b) => a.offset - b.offset).map((e) => e.text);
}

function isAtOrBelow(path: string, field: string): boolean {
  if (!path.startsWith(field)) return false;
  const next = path.charCodeAt(field.length);
  return Number.isNaN(next) || next === 46 /* . */ || next === 91 /* [ */;
}

/** the order of field paths in JSON whose object keys are sorted (Go's map encoding): segment by segment */
export function compareFieldPaths(a: string, b: string): number {
  const sa = segments(a);
  const sb = segments(b);
  for (let i = 0; i < sa.length && i < sb.length; i++) {
    const x = sa[i]!;
    const y = sb[i]!;
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    return String(x) < String(y) ? -1 : 1;
  }
  return sa.length - sb.length;
}

/** `spec.ports[0].name` → ['spec', 'ports', 0, 'name'] */
function segments(path: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const m of path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) out.push(m[2] !== undefined ? Number(m[2]) : m[1]!);
  return out;
}

/**
 * a custom resource's unknown fields as kube's handler gathers them: the root
 * metadata's (sorted), then what pruning removed (sorted, sort.Strings), then an
 * embedded resource's metadata's (`embeddedMeta`, as found)
 */
export function crdUnknownOrder(unknown: readonly string[], embeddedMeta: readonly string[]): string[] {
  const embedded = new Set(embeddedMeta);
  const meta: string[] = [];
  const pruned: string[] = [];
  for (const p of unknown) {
    if (embedded.has(p)) continue;
    (p.startsWith('metadata.') ? meta : pruned).push(p);
  }
  return [...meta.sort(), ...pruned.sort(), ...embeddedMeta];
}
