// Field selections of a CRD's CEL rule checked against the schema the rule is
// declared on, as Kubernetes' type-checker does when the CRD is written
// (`self.nosuch` → `compilation failed: ERROR: <input>:1:5: undefined field
// 'nosuch'`). Conservative: only chains of `.field` from `self`/`oldSelf`
// through objects with declared properties are checked; maps, lists,
// int-or-string, preserve-unknown and anything else are left to run time.

import { parse } from '@bufbuild/cel';
import { type CelNode, celChildren } from '../../machinery/schema/cel-ast.js';

type J = Record<string, unknown>;
const isObj = (v: unknown): v is J => v !== null && typeof v === 'object' && !Array.isArray(v);

/** kube's escapes of property names that are not CEL identifiers */
function unescape(name: string): string {
  const m = /^__([a-z]+)__$/.exec(name);
  if (m && !['dash', 'dot', 'slash', 'underscores'].includes(m[1]!)) return m[1]!; // a reserved word
  return name.replace(/__(underscores|dot|dash|slash)__/g, (_, w: string) => ({ underscores: '__', dot: '.', dash: '-', slash: '/' })[w]!);
}

interface Select {
  exprKind: { case: 'selectExpr'; value: { operand: CelNode; field: string } };
  id: bigint | number | string;
}

/**
 * The first undefined field selected from `self` in `source`, as kube words it,
 * or undefined. `marker(j, name)` reads an `x-<prefix>-<name>` marker;
 * `resourceRoot`: the node is the object root or an embedded resource
 * (apiVersion, kind and metadata exist implicitly).
 */
export function undefinedField(source: string, node: J, resourceRoot: boolean, marker: (j: J, name: string) => unknown): string | undefined {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(source);
  } catch {
    return undefined; // reported by the syntax check
  }
  const positions = (parsed.sourceInfo?.positions ?? {}) as Record<string, number>;
  const fieldOf = (s: J, name: string, root: boolean): J | 'undefined' | 'dyn' => {
    if (marker(s, 'int-or-string') === true || marker(s, 'preserve-unknown-fields') === true) return 'dyn';
    if (s.additionalProperties !== undefined && s.additionalProperties !== false) return 'dyn';
    if (!isObj(s.properties) || (s.type !== undefined && s.type !== 'object')) return 'dyn';
    const props = s.properties;
    for (const n of [name, unescape(name)]) if (isObj(props[n])) return props[n] as J;
    if ((root || marker(s, 'embedded-resource') === true) && ['apiVersion', 'kind', 'metadata'].includes(unescape(name))) return 'dyn';
    return 'undefined';
  };
  let found: string | undefined;
  const visit = (n: unknown): void => {
    if (found) return;
    const k = (n as CelNode).exprKind;
    if (k?.case === 'selectExpr') {
      // the chain down to its base: self.a.b → [a, b]
      const chain: Select[] = [];
      let cur: unknown = n;
      while ((cur as CelNode).exprKind?.case === 'selectExpr') {
        chain.unshift(cur as Select);
        cur = (cur as Select).exprKind.value.operand;
      }
      const base = (cur as CelNode).exprKind;
      if (base?.case === 'identExpr' && ['self', 'oldSelf'].includes((base.value as { name: string }).name)) {
        let s: J | 'dyn' = node;
        let root = resourceRoot;
        for (const sel of chain) {
          if (s === 'dyn') break;
          const next = fieldOf(s, sel.exprKind.value.field, root);
          if (next === 'undefined') {
            const at = positions[String(sel.id)] ?? 0;
            const before = source.slice(0, at);
            const line = before.split('\n').length;
            const col = at - (before.lastIndexOf('\n') + 1) + 1;
            found = `compilation failed: ERROR: <input>:${line}:${col}: undefined field '${sel.exprKind.value.field}'`;
            return;
          }
          s = next;
          root = false;
        }
        return;
      }
    }
    for (const c of celChildren(n)) visit(c);
  };
  visit(parsed.expr);
  return found;
}

/** whether an expression refers to `oldSelf` (a transition rule; kube's UsesOldSelf) */
export function usesOldSelf(source: string): boolean {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(source);
  } catch {
    return false;
  }
  const visit = (n: unknown): boolean => {
    const k = (n as CelNode).exprKind;
    if (k?.case === 'identExpr' && (k.value as { name: string }).name === 'oldSelf') return true;
    return celChildren(n).some(visit);
  };
  return visit(parsed.expr);
}

/**
 * kube's cel.ValidFieldPath: `.name` and `['name']` steps through declared properties (or
 * the keys of a map schema), `[n]` through list items; relative to the rule's schema node
 */
export function validFieldPath(path: string, node: J): boolean {
  const tokens = path.match(/\.|\[|\]|'(?:[^'\\]|\\.)*'|[^.[\]']+/g) ?? [];
  if (tokens.join('') !== path) return false;
  let s: unknown = node;
  const step = (name: string): boolean => {
    if (!isObj(s)) return false;
    if (isObj(s.properties)) s = s.properties[name];
    else if (isObj(s.additionalProperties)) s = s.additionalProperties;
    else return false;
    return isObj(s);
  };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t === '.') {
      const name = tokens[++i];
      if (name === undefined || name === '.' || name === '[' || name === ']' || !step(name)) return false;
    } else if (t === '[') {
      const inner = tokens[++i];
      if (tokens[++i] !== ']' || inner === undefined) return false;
      if (/^\d+$/.test(inner)) {
        if (!isObj(s) || !isObj(s.items)) return false;
        s = s.items;
      } else if (inner.length >= 2 && inner.startsWith("'") && inner.endsWith("'")) {
        if (!step(inner.slice(1, -1).replace(/\\(.)/g, '$1'))) return false;
      } else return false;
    } else return false;
  }
  return true;
}
