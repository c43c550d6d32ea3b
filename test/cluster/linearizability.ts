// A linearizability checker (Wing & Gong's search with Lowe's memoization of
// (linearized set, state) pairs) over a history of operations, partitioned by
// key (P-compositionality: a history is linearizable iff every per-key
// sub-history is, when the model's keys are independent — Horn & Kroening).
//
// An operation whose outcome is unknown (timeout, connection reset) has
// `ret = Infinity`; the model decides what it may have done (usually: either
// nothing, or its effect at some point after its call).

export interface Operation<I, O> {
  key: string;
  input: I;
  output: O;
  /** invocation time (any monotonic clock; distinct from every other event time) */
  call: number;
  /** response time; Infinity when the outcome is unknown */
  ret: number;
  /** for diagnostics */
  client?: number;
}

export interface Model<S, I, O> {
  init(): S;
  /** every state the operation may lead to from `s` given its output; empty = not possible here */
  step(s: S, input: I, output: O): S[];
  /** canonical string of a state (memoization) */
  hash(s: S): string;
}

export interface CheckResult {
  ok: boolean;
  /** keys whose sub-history is not linearizable */
  failedKeys: string[];
  /** keys whose search gave up (budget exhausted): neither proven nor refuted */
  unknownKeys: string[];
}

export function checkLinearizable<S, I, O>(
  history: Operation<I, O>[],
  model: Model<S, I, O>,
  opts: { maxStatesPerKey?: number } = {},
): CheckResult {
  const byKey = new Map<string, Operation<I, O>[]>();
  for (const op of history) {
    let list = byKey.get(op.key);
    if (!list) byKey.set(op.key, (list = []));
    list.push(op);
  }
  const failedKeys: string[] = [];
  const unknownKeys: string[] = [];
  for (const [key, ops] of byKey) {
    const r = checkOne(ops, model, opts.maxStatesPerKey ?? 2_000_000);
    if (r === 'no') failedKeys.push(key);
    else if (r === 'unknown') unknownKeys.push(key);
  }
  return { ok: failedKeys.length === 0 && unknownKeys.length === 0, failedKeys, unknownKeys };
}

function checkOne<S, I, O>(ops: Operation<I, O>[], model: Model<S, I, O>, budget: number): 'yes' | 'no' | 'unknown' {
  const sorted = [...ops].sort((a, b) => a.call - b.call);
  const n = sorted.length;
  const done = new Uint8Array(n);
  const seen = new Set<string>();
  let visited = 0;
  let exhausted = false;

  // Depth-first: at each point, the candidates to linearize next are the
  // pending operations called before the earliest response among pending
  // operations (none of them can be ordered after an operation that had
  // already returned when it was invoked).
  const search = (state: S, remaining: number): boolean => {
    if (remaining === 0) return true;
    const memo = `${bitsKey(done)}|${model.hash(state)}`;
    if (seen.has(memo)) return false;
    seen.add(memo);
    if (++visited > budget) {
      exhausted = true;
      return false;
    }
    let minRet = Infinity;
    // index loops (i < n = sorted.length): this is the hot path of an exponential search
    for (let i = 0; i < n; i++) if (!done[i] && sorted[i]!.ret < minRet) minRet = sorted[i]!.ret;
    for (let i = 0; i < n; i++) {
      if (done[i]) continue;
      const op = sorted[i]!;
      if (op.call > minRet) break; // sorted by call: no later candidate either
      for (const next of model.step(state, op.input, op.output)) {
        done[i] = 1;
        const found = search(next, remaining - 1);
        done[i] = 0;
        if (found) return true;
        if (exhausted) return false;
      }
    }
    return false;
  };
  const ok = search(model.init(), n);
  if (ok) return 'yes';
  return exhausted ? 'unknown' : 'no';
}

function bitsKey(bits: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bits.length; i += 16) {
    let w = 0;
    for (let j = 0; j < 16 && i + j < bits.length; j++) if (bits[i + j]) w |= 1 << j;
    s += String.fromCharCode(w + 1);
  }
  return s;
}

// ---------------------------------------------------------------------------
// The model of one API object under create / update-with-precondition / get,
// as the chaos test drives it. Every written value is unique, and
// resourceVersions of one object grow with every write.

export type ObjectInput =
  | { type: 'create'; value: string }
  | { type: 'update'; value: string; expectRv: number }
  | { type: 'read' };

export type ObjectOutput =
  | { type: 'ok'; rv: number; value?: string }
  | { type: 'exists' }
  | { type: 'conflict' }
  | { type: 'notFound' }
  /** update rejected (404/409) but the rejection carries no information (see the chaos test) */
  | { type: 'rejected' }
  | { type: 'unknown' };

export interface ObjectState {
  exists: boolean;
  value?: string;
  /** undefined: written by an operation whose response was lost (rv not observed yet) */
  rv?: number;
  /** every rv of the object so far is <= floor; an unobserved rv is > floor */
  floor: number;
}

function rvMatches(s: ObjectState, rv: number): boolean {
  return s.rv === undefined ? rv > s.floor : s.rv === rv;
}

export const objectModel: Model<ObjectState, ObjectInput, ObjectOutput> = {
  init: () => ({ exists: false, floor: 0 }),
  hash: (s) => `${s.exists ? 1 : 0}/${s.value ?? ''}/${s.rv ?? '?'}/${s.floor}`,
  step(s, input, output) {
    switch (input.type) {
      case 'read':
        if (output.type === 'notFound') return s.exists ? [] : [s];
        if (output.type === 'ok') {
          if (!s.exists || s.value !== output.value || !rvMatches(s, output.rv)) return [];
          return [{ exists: true, value: s.value, rv: output.rv, floor: output.rv }];
        }
        return [s]; // a read with no answer has no effect
      case 'create':
        if (output.type === 'ok') return !s.exists && output.rv > s.floor ? [{ exists: true, value: input.value, rv: output.rv, floor: output.rv }] : [];
        if (output.type === 'exists') return s.exists ? [s] : [];
        if (output.type === 'unknown') return s.exists ? [s] : [s, { exists: true, value: input.value, rv: undefined, floor: s.floor }];
        return [];
      case 'update':
        if (output.type === 'ok') {
          if (!s.exists || !rvMatches(s, input.expectRv) || output.rv <= input.expectRv) return [];
          return [{ exists: true, value: input.value, rv: output.rv, floor: output.rv }];
        }
        if (output.type === 'conflict') return s.exists && (s.rv === undefined || s.rv !== input.expectRv) ? [s] : [];
        if (output.type === 'notFound') return s.exists ? [] : [s];
        if (output.type === 'rejected') return [s];
        if (output.type === 'unknown') {
          const out: ObjectState[] = [s];
          if (s.exists && rvMatches(s, input.expectRv)) {
            out.push({ exists: true, value: input.value, rv: undefined, floor: Math.max(s.floor, input.expectRv) });
          }
          return out;
        }
        return [];
    }
  },
};
