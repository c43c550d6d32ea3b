// CEL for admission (matchConditions of webhooks, ValidatingAdmissionPolicy
// validations, messageExpressions, variables). Expressions are parsed,
// checked and planned once when a configuration object is loaded — a syntax
// error is a 422 on the configuration's own write, never a per-request
// surprise — and their cost is bounded statically: at most MAX_NODES syntax
// nodes and no nested comprehensions, so one evaluation is linear in the
// size of the objects it reads (those are bounded by the 3 MiB body limit).
// Declared variables are dynamic (JSON values), as Kubernetes' are for
// objects without a typed schema.

import { CelScalar, celEnv, isCelError, parse, plan } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { type CelNode, celChildren, celToJs } from '../../machinery/schema/cel-ast.js';

export const MAX_EXPRESSION_LENGTH = 5 * 1024;
export const MAX_NODES = 1000;
export const MAX_COMPREHENSION_DEPTH = 1;

export interface AdmissionExpression {
  readonly source: string;
  /** evaluates with the variables; throws Error on an evaluation error */
  evaluate(vars: Record<string, unknown>): unknown;
}

/** the compile problem, without the field path (callers add it) */
export class AdmissionCelError extends Error {}

export function compileAdmissionCel(source: unknown, variables: readonly string[]): AdmissionExpression {
  if (typeof source !== 'string' || source.trim() === '') throw new AdmissionCelError('expression must be a non-empty string');
  if (source.length > MAX_EXPRESSION_LENGTH) throw new AdmissionCelError(`expression longer than ${MAX_EXPRESSION_LENGTH} characters`);
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(source);
  } catch (e) {
    throw new AdmissionCelError(`compilation failed: ${(e as Error).message.split('\n')[0]}`);
  }
  const { nodes, depth, idents, bound } = walk(parsed.expr);
  if (nodes > MAX_NODES) throw new AdmissionCelError(`expression too complex: ${nodes} nodes (at most ${MAX_NODES})`);
  if (depth > MAX_COMPREHENSION_DEPTH) throw new AdmissionCelError('expression too costly: nested comprehensions (map/filter/all/exists inside another) are not allowed');
  for (const id of idents) {
    if (!variables.includes(id) && !bound.has(id)) {
      throw new AdmissionCelError(`compilation failed: undeclared reference to '${id}' (in container '')`);
    }
  }
  const env = celEnv({ variables: Object.fromEntries(variables.map((v) => [v, CelScalar.DYN])), funcs: strings });
  let run: (ctx: Record<string, unknown>) => unknown;
  try {
    run = plan(env, parsed) as (ctx: Record<string, unknown>) => unknown;
  } catch (e) {
    throw new AdmissionCelError(`compilation failed: ${(e as Error).message.split('\n')[0]}`);
  }
  return {
    source,
    evaluate(vars) {
      let r: unknown;
      try {
        r = run(celInputs(vars));
      } catch (e) {
        throw new Error((e as Error).message);
      }
      if (isCelError(r)) throw new Error((r as Error).message);
      return celToJs(r);
    },
  };
}

/**
 * JSON → CEL input: integral numbers are CEL ints, as kube's objects give them (int fields of
 * built-in kinds, int64 of decoded unstructured JSON), so `object.spec.replicas % 2` is int
 * arithmetic, not a double with no `%` (kube e2e "should allow expressions to refer variables")
 */
function toCelInput(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(toCelInput);
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = toCelInput(x);
  return out;
}

/** the converted inputs of one variables record, made once: every expression of a policy reads the same objects */
const converted = new WeakMap<object, Record<string, unknown>>();

/** `variables` (the policy's, filled in as they are evaluated) is converted on each call, the rest once */
function celInputs(vars: Record<string, unknown>): Record<string, unknown> {
  let base = converted.get(vars);
  if (!base) {
    base = {};
    for (const [k, v] of Object.entries(vars)) if (k !== 'variables') base[k] = toCelInput(v);
    converted.set(vars, base);
  }
  return 'variables' in vars ? { ...base, variables: toCelInput(vars.variables) } : base;
}

/** size, comprehension depth, free identifiers and comprehension-bound names of a parsed expression */
function walk(root: unknown): { nodes: number; depth: number; idents: Set<string>; bound: Set<string> } {
  let nodes = 0;
  let maxDepth = 0;
  const idents = new Set<string>();
  const bound = new Set<string>();
  const go = (n: unknown, depth: number): void => {
    nodes++;
    const k = (n as CelNode).exprKind;
    if (k?.case === 'identExpr') idents.add((k.value as { name: string }).name);
    const isComp = k?.case === 'comprehensionExpr';
    if (isComp) {
      const c = k.value as { iterVar: string; iterVar2?: string; accuVar: string };
      bound.add(c.iterVar);
      if (c.iterVar2) bound.add(c.iterVar2);
      bound.add(c.accuVar);
    }
    const d = isComp ? depth + 1 : depth;
    if (d > maxDepth) maxDepth = d;
    for (const c of celChildren(n)) go(c, d);
  };
  go(root, 0);
  return { nodes, depth: maxDepth, idents, bound };
}
