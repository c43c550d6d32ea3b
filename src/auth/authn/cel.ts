// CEL for AuthenticationConfiguration (spec 001 §5.6): expressions are parsed
// and planned once when the configuration loads (a syntax error is reported
// with the field path then, never per request), and their evaluation cost is
// bounded statically: at most MAX_NODES syntax nodes and no nested
// comprehensions, so one evaluation is linear in the size of the token's
// claims (itself bounded by MAX_TOKEN_BYTES).

import { CelScalar, celEnv, isCelError, mapType, parse, plan } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { type CelNode, celChildren, celToJs } from '../../machinery/schema/cel-ast.js';

export const MAX_EXPRESSION_LENGTH = 5 * 1024;
export const MAX_NODES = 500;
export const MAX_COMPREHENSION_DEPTH = 1;

export interface CompiledExpression {
  readonly source: string;
  /** evaluates with the given variables; throws Error on evaluation errors */
  evaluate(vars: Record<string, unknown>): unknown;
}

/** a compile error carrying the field path of the expression */
export class CelCompileError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: Invalid value: ${message}`);
  }
}

export function compileCel(source: string, variables: string[], field: string): CompiledExpression {
  if (typeof source !== 'string' || source.trim() === '') throw new CelCompileError(field, 'expression must be a non-empty string');
  if (source.length > MAX_EXPRESSION_LENGTH) throw new CelCompileError(field, `expression longer than ${MAX_EXPRESSION_LENGTH} characters`);
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(source);
  } catch (e) {
    throw new CelCompileError(field, `compilation failed: ${(e as Error).message}`);
  }
  const { nodes, depth } = measure(parsed.expr);
  if (nodes > MAX_NODES) throw new CelCompileError(field, `expression too complex: ${nodes} nodes (at most ${MAX_NODES})`);
  if (depth > MAX_COMPREHENSION_DEPTH) throw new CelCompileError(field, 'expression too costly: nested comprehensions (map/filter/all/exists inside another) are not allowed');
  for (const id of identifiers(parsed.expr)) {
    if (!variables.includes(id) && !comprehensionVars(parsed.expr).has(id)) {
      throw new CelCompileError(field, `compilation failed: undeclared reference to '${id}' (variables: ${variables.join(', ')})`);
    }
  }
  const env = celEnv({ variables: Object.fromEntries(variables.map((v) => [v, mapType(CelScalar.STRING, CelScalar.DYN)])), funcs: strings });
  const run = plan(env, parsed) as (ctx: Record<string, unknown>) => unknown;
  return {
    source,
    evaluate(vars) {
      const r = run(vars);
      if (isCelError(r)) throw new Error(`expression ${JSON.stringify(source)}: ${(r as Error).message}`);
      return celToJs(r);
    },
  };
}

function measure(root: unknown): { nodes: number; depth: number } {
  let nodes = 0;
  let maxDepth = 0;
  const walk = (n: unknown, depth: number): void => {
    nodes++;
    const isComp = (n as CelNode).exprKind?.case === 'comprehensionExpr';
    const d = isComp ? depth + 1 : depth;
    if (d > maxDepth) maxDepth = d;
    for (const c of celChildren(n)) walk(c, d);
  };
  walk(root, 0);
  return { nodes, depth: maxDepth };
}

function identifiers(root: unknown): Set<string> {
  const out = new Set<string>();
  const walk = (n: unknown): void => {
    const k = (n as CelNode).exprKind;
    if (k?.case === 'identExpr') out.add((k.value as { name: string }).name);
    for (const c of celChildren(n)) walk(c);
  };
  walk(root);
  return out;
}

function comprehensionVars(root: unknown): Set<string> {
  const out = new Set<string>();
  const walk = (n: unknown): void => {
    const k = (n as CelNode).exprKind;
    if (k?.case === 'comprehensionExpr') {
      const c = k.value as { iterVar: string; iterVar2?: string; accuVar: string };
      out.add(c.iterVar);
      if (c.iterVar2) out.add(c.iterVar2);
      out.add(c.accuVar);
    }
    for (const c of celChildren(n)) walk(c);
  };
  walk(root);
  return out;
}
