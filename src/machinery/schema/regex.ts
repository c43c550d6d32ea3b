// Schema `pattern`s as Kubernetes compiles them: Go's regexp (RE2 syntax, `.`
// one rune, no lookaround or backreferences, linear time), through re2js.
// kube-openapi validate.Pattern: MatchString (unanchored search); a pattern
// that does not compile fails every value with its error (values.go).

import { RE2JS } from 're2js';

export interface CompiledPattern {
  /** the pattern as written */
  readonly source: string;
  /** true when `v` contains a match (Go's MatchString) */
  test(v: string): boolean;
  /** Go's compile error (`error parsing regexp: …`) when it does not compile */
  readonly error: string | undefined;
}

const cache = new Map<string, CompiledPattern>();
const CACHE_LIMIT = 10_000;

/** compiles `source` once per distinct text (CRD schemas share patterns across versions and updates) */
export function compilePattern(source: string): CompiledPattern {
  const hit = cache.get(source);
  if (hit) return hit;
  let compiled: CompiledPattern;
  try {
    const re = RE2JS.compile(source);
    compiled = { source, test: (v) => re.test(v), error: undefined };
  } catch (e) {
    compiled = { source, test: () => false, error: (e as Error).message };
  }
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(source, compiled);
  return compiled;
}

/** Go's `regexp.Compile` error for `source`, or undefined when it compiles */
export function patternError(source: string): string | undefined {
  return compilePattern(source).error;
}
