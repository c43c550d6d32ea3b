// `x-orch-validations` CEL rules (docs/crds.md; the Kubernetes CRD validation
// rules): each rule is parsed and planned once per schema node and kept with
// the rule object, `self` is the value at the node and `oldSelf` the stored
// value at the same place (transition rules run only on update, and only
// where an old value correlates: object properties, map values and items of
// list-maps by their keys).
//
// Cost is bounded twice: statically when the CRD is written (expression
// length, syntax nodes, comprehension nesting: validateRuleSyntax) and at run
// time per request (a budget of estimated work, RUNTIME_COST_BUDGET: per rule
// evaluation, syntax nodes × (1 + data below the node)^comprehension depth;
// when it runs out the write fails with a clear error instead of running on).

import { CelScalar, celEnv, isCelError, parse, plan } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import type { FieldError } from '../../core/object.js';
import { deepEqual } from '../meta.js';
import type { CompiledSchema } from './compile.js';
import type { ValidationRule } from './types.js';
import { type CelNode, celChildren } from './cel-ast.js';

export const MAX_RULE_LENGTH = 5 * 1024;
export const MAX_RULE_NODES = 1000;
export const MAX_COMPREHENSION_DEPTH = 2;
/** Kubernetes' per-request runtime CEL cost limit */
export const RUNTIME_COST_BUDGET = 10_000_000;

const VARIABLES = ['self', 'oldSelf'];

interface Program {
  run: (vars: Record<string, unknown>) => unknown;
  nodes: number;
  depth: number;
  usesOld: boolean;
}

const programs = new WeakMap<ValidationRule, { rule?: Program; message?: Program }>();
const env = celEnv({ variables: { self: CelScalar.DYN, oldSelf: CelScalar.DYN }, funcs: strings });

/** parses and measures an expression; returns an error text or the program */
function build(source: string): Program | string {
  if (typeof source !== 'string' || source.trim() === '') return 'must be a non-empty string';
  if (source.length > MAX_RULE_LENGTH) return `must be at most ${MAX_RULE_LENGTH} characters long`;
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(source);
  } catch (e) {
    return `compilation failed: ${(e as Error).message.split('\n')[0]}`;
  }
  let nodes = 0;
  let depth = 0;
  const idents = new Set<string>();
  const bound = new Set<string>();
  const walk = (n: unknown, d: number): void => {
    nodes++;
    const k = (n as CelNode).exprKind;
    const isComp = k?.case === 'comprehensionExpr';
    const nd = isComp ? d + 1 : d;
    if (nd > depth) depth = nd;
    if (k?.case === 'identExpr') idents.add((k.value as { name: string }).name);
    if (isComp) {
      const c = k.value as { iterVar: string; iterVar2?: string; accuVar: string };
      bound.add(c.iterVar);
      if (c.iterVar2) bound.add(c.iterVar2);
      bound.add(c.accuVar);
    }
    for (const c of celChildren(n)) walk(c, nd);
  };
  walk(parsed.expr, 0);
  if (nodes > MAX_RULE_NODES) return `estimated rule cost exceeds budget: ${nodes} syntax nodes (at most ${MAX_RULE_NODES})`;
  if (depth > MAX_COMPREHENSION_DEPTH) return `estimated rule cost exceeds budget: comprehensions nested ${depth} deep (at most ${MAX_COMPREHENSION_DEPTH})`;
  for (const id of idents) {
    if (!VARIABLES.includes(id) && !bound.has(id)) return `compilation failed: ERROR: undeclared reference to '${id}' (in container '')`;
  }
  let run: Program['run'];
  try {
    run = plan(env, parsed) as Program['run'];
  } catch (e) {
    return `compilation failed: ${(e as Error).message.split('\n')[0]}`;
  }
  return { run, nodes, depth, usesOld: idents.has('oldSelf') };
}


/**
 * The errors of one rule as written in a CRD (field paths relative to the
 * rule): compiled here, so that evaluation never compiles.
 */
export function validateRuleSyntax(rule: ValidationRule): { field: 'rule' | 'messageExpression'; message: string }[] {
  const out: { field: 'rule' | 'messageExpression'; message: string }[] = [];
  const r = build(rule.rule);
  if (typeof r === 'string') out.push({ field: 'rule', message: r });
  if (rule.messageExpression !== undefined) {
    const m = build(rule.messageExpression);
    if (typeof m === 'string') out.push({ field: 'messageExpression', message: m });
  }
  return out;
}

function programsOf(rule: ValidationRule): { rule?: Program; message?: Program } {
  let p = programs.get(rule);
  if (!p) {
    const r = build(rule.rule);
    const m = rule.messageExpression !== undefined ? build(rule.messageExpression) : undefined;
    p = { rule: typeof r === 'string' ? undefined : r, message: typeof m === 'object' ? m : undefined };
    programs.set(rule, p);
  }
  return p;
}

/** JSON to CEL input: integers of integer-typed fields (and of untyped data) are CEL ints */
function toCel(v: unknown, s: CompiledSchema | true | undefined): unknown {
  if (typeof v === 'number') {
    const numberTyped = s !== undefined && s !== true && (s.type === 'number' || (s.format === 'quantity'));
    return Number.isInteger(v) && !numberTyped ? BigInt(v) : v;
  }
  if (v === null || typeof v !== 'object') return v;
  const node = s === true ? undefined : s;
  if (Array.isArray(v)) return v.map((x) => toCel(x, node?.items));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    out[k] = toCel(x, node?.properties?.get(k) ?? node?.additional);
  }
  return out;
}

/** how much data a rule can walk at this node: entries of lists and maps below it, long strings by length */
function dataSize(v: unknown): number {
  if (typeof v === 'string') return v.length >> 6;
  if (v === null || typeof v !== 'object') return 0;
  let n = 0;
  if (Array.isArray(v)) for (const x of v) n += 1 + dataSize(x);
  else for (const x of Object.values(v as Record<string, unknown>)) n += 1 + dataSize(x);
  return n;
}

function typeWord(v: unknown, s: CompiledSchema): string {
  if (s.type) return s.type;
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

const REASON_PREFIX: Record<string, string> = {
  FieldValueInvalid: '',
  FieldValueForbidden: 'Forbidden: ',
  FieldValueRequired: 'Required value: ',
  FieldValueDuplicate: 'Duplicate value: ',
};

class RuleWalk {
  readonly errors: FieldError[] = [];
  private cost = 0;
  private exhausted = false;

  constructor(private readonly budget: number) {}

  walk(v: unknown, old: unknown, s: CompiledSchema, path: string): void {
    if (this.exhausted || !s.subtreeHasRules || v === undefined || v === null) return;
    if (s.rules) this.evaluate(v, old, s, path);
    if (Array.isArray(v)) {
      const items = s.items;
      if (!items || !items.subtreeHasRules) return;
      const oldByKey = s.listType === 'map' && s.listMapKeys && Array.isArray(old) ? indexByKeys(old, s.listMapKeys) : undefined;
      for (let i = 0; i < v.length; i++) {
        const o = oldByKey ? oldByKey.get(keyOf(v[i], s.listMapKeys!)) : undefined;
        this.walk(v[i], o, items, `${path}[${i}]`);
      }
      return;
    }
    if (typeof v !== 'object') return;
    const obj = v as Record<string, unknown>;
    const oldObj = old !== null && typeof old === 'object' && !Array.isArray(old) ? (old as Record<string, unknown>) : undefined;
    for (const k of Object.keys(obj)) {
      const child = s.properties?.get(k);
      if (child) this.walk(obj[k], oldObj?.[k], child, path === '' ? k : `${path}.${k}`);
      else if (s.additional && s.additional !== true) this.walk(obj[k], oldObj?.[k], s.additional, `${path}[${k}]`);
    }
  }

  private evaluate(v: unknown, old: unknown, s: CompiledSchema, path: string): void {
    let self: unknown;
    let oldSelf: unknown;
    let size = -1;
    let unchanged: boolean | undefined;
    for (const rule of s.rules!) {
      const p = programsOf(rule);
      if (!p.rule) continue; // refused when the CRD was written; cannot happen for stored CRDs
      if (p.rule.usesOld && old === undefined && !rule.optionalOldSelf) continue;
      // ratcheting (kube CRDValidationRatcheting, docs/crds.md): a rule without oldSelf does not
      // run again on a value the update left as stored
      if (!p.rule.usesOld && old !== undefined && (unchanged ??= deepEqual(v, old))) continue;
      if (size < 0) size = dataSize(v);
      this.cost += p.rule.nodes * Math.pow(1 + size, Math.max(1, p.rule.depth));
      if (this.cost > this.budget) {
        this.exhausted = true;
        this.errors.push({ field: path, type: 'FieldValueForbidden', message: 'Forbidden: validation failed due to running out of cost budget, no further validation rules will be run' });
        return;
      }
      self ??= toCel(v, s);
      if (oldSelf === undefined && old !== undefined) oldSelf = toCel(old, s);
      const vars = { self, oldSelf: oldSelf ?? null };
      const field = rule.fieldPath ? joinFieldPath(path, rule.fieldPath) : path;
      const result = p.rule.run(vars);
      if (isCelError(result)) {
        this.errors.push({ field, type: 'FieldValueInvalid', message: `Invalid value: "${typeWord(v, s)}": ${(result as Error).message} evaluating rule: ${rule.rule}` });
        continue;
      }
      if (result === true) continue;
      if (result !== false) {
        this.errors.push({ field, type: 'FieldValueInvalid', message: `Invalid value: "${typeWord(v, s)}": rule did not evaluate to a bool: ${rule.rule}` });
        continue;
      }
      let msg = rule.message ?? `failed rule: ${rule.rule}`;
      if (p.message) {
        const m = p.message.run(vars);
        if (typeof m === 'string' && m.trim() !== '' && !m.includes('\n')) msg = m;
      }
      const reason = rule.reason && rule.reason in REASON_PREFIX ? rule.reason : 'FieldValueInvalid';
      const message = reason === 'FieldValueInvalid' ? `Invalid value: "${typeWord(v, s)}": ${msg}` : `${REASON_PREFIX[reason]}${msg}`;
      this.errors.push({ field, type: reason, message });
    }
  }
}

function joinFieldPath(base: string, rel: string): string {
  const r = rel.startsWith('.') ? rel.slice(1) : rel;
  return base === '' ? r : `${base}.${r}`;
}

/** a `map` list item's identity: its key values */
export function keyOf(item: unknown, keys: readonly string[]): string {
  if (item === null || typeof item !== 'object') return '';
  const o = item as Record<string, unknown>;
  return JSON.stringify(keys.map((k) => o[k] ?? null));
}

export function indexByKeys(list: unknown[], keys: readonly string[]): Map<string, unknown> {
  const m = new Map<string, unknown>();
  for (const item of list) m.set(keyOf(item, keys), item);
  return m;
}

/** runs the rules of `s`'s tree over `obj` (`old` on update); field paths are Kubernetes field.Path strings */
export function validateRules(obj: unknown, old: unknown, s: CompiledSchema, budget = RUNTIME_COST_BUDGET): FieldError[] {
  if (!s.subtreeHasRules) return [];
  const w = new RuleWalk(budget);
  w.walk(obj, old, s, '');
  return w.errors;
}
