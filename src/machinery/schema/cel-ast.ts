// Small helpers over @bufbuild/cel values and parsed expressions, shared by
// every CEL user (authentication claim mappings and match conditions, CRD
// validation rules, admission match conditions and policies): results to plain
// JS values, and the child expressions of a parsed node for cost walks.
import { isCelList, isCelMap } from '@bufbuild/cel';

/** a parsed expression node as the cost walks read it */
export type CelNode = { exprKind?: { case?: string; value?: unknown } };

/** CEL lists and maps to plain JS values; bigint to number */
export function celToJs(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (isCelList(v)) return Array.from(v as Iterable<unknown>, celToJs);
  if (isCelMap(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of v as unknown as Iterable<[unknown, unknown]>) out[String(k)] = celToJs(x);
    return out;
  }
  return v;
}

/** the direct sub-expressions of a parsed node (any depth of plain containers in between) */
export function celChildren(n: unknown): unknown[] {
  const out: unknown[] = [];
  const visit = (v: unknown): void => {
    if (v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      v.forEach(visit);
      return;
    }
    if ('exprKind' in (v as object)) {
      out.push(v);
      return;
    }
    for (const x of Object.values(v as object)) visit(x);
  };
  const kind = (n as CelNode).exprKind;
  if (kind?.value) visit(kind.value);
  return out;
}
