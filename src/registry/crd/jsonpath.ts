// The "simple JSON path" of printer columns and scale paths (Kubernetes'
// client-go jsonpath subset that CRDs use): `.a.b`, `.a[0]`, `.a[*].b`,
// `.a['x.y']`, and filters `.a[?(@.type=="Ready")].status` (==, != on a
// string, number or boolean). Parsed once per column; evaluation returns
// every match in order (a column shows the first).

export type Step =
  | { t: 'field'; name: string }
  | { t: 'index'; i: number }
  | { t: 'all' }
  | { t: 'filter'; path: string[]; op: '==' | '!='; value: unknown };

export class JsonPathError extends Error {}

/** parses `{.a.b}` or `.a.b` */
export function parseJsonPath(text: string): Step[] {
  let s = text.trim();
  if (s.startsWith('{') && s.endsWith('}')) s = s.slice(1, -1).trim();
  if (!s.startsWith('.') && !s.startsWith('[')) throw new JsonPathError(`must be a simple JSON path starting with ".": ${JSON.stringify(text)}`);
  const steps: Step[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === '.') {
      i++;
      if (s[i] === '.') throw new JsonPathError('recursive descent ("..") is not supported');
      let j = i;
      while (j < s.length && s[j] !== '.' && s[j] !== '[') j++;
      const name = s.slice(i, j);
      if (name === '' && j < s.length) throw new JsonPathError(`empty field name at offset ${i}`);
      if (name === '*') steps.push({ t: 'all' });
      else if (name !== '') steps.push({ t: 'field', name });
      i = j;
    } else if (c === '[') {
      const end = findClose(s, i);
      const inner = s.slice(i + 1, end).trim();
      i = end + 1;
      if (inner === '*') steps.push({ t: 'all' });
      else if (/^-?\d+$/.test(inner)) steps.push({ t: 'index', i: Number(inner) });
      else if (/^'[^']*'$/.test(inner) || /^"[^"]*"$/.test(inner)) steps.push({ t: 'field', name: inner.slice(1, -1) });
      else if (inner.startsWith('?(') && inner.endsWith(')')) steps.push(parseFilter(inner.slice(2, -1).trim()));
      else throw new JsonPathError(`unsupported subscript [${inner}]`);
    } else throw new JsonPathError(`unexpected ${JSON.stringify(c)} at offset ${i}`);
  }
  return steps;
}

function findClose(s: string, open: number): number {
  let quote = '';
  let depth = 0;
  for (let k = open; k < s.length; k++) {
    const c = s[k];
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') {
      depth--;
      if (depth === 0) return k;
    }
  }
  throw new JsonPathError('unterminated "["');
}

function parseFilter(expr: string): Step {
  const m = /^@((?:\.[A-Za-z0-9_$-]+)+)\s*(==|!=)\s*(.+)$/.exec(expr);
  if (!m) throw new JsonPathError(`unsupported filter ?(${expr}): only @.field == value and != are supported`);
  let value: unknown;
  const raw = m[3].trim();
  if (/^'.*'$/.test(raw)) value = raw.slice(1, -1);
  else {
    try {
      value = JSON.parse(raw);
    } catch {
      throw new JsonPathError(`unsupported filter value ${raw}`);
    }
  }
  return { t: 'filter', path: m[1].slice(1).split('.'), op: m[2] as '==' | '!=', value };
}

/** every value the path selects */
export function evalJsonPath(steps: Step[], root: unknown): unknown[] {
  let cur: unknown[] = [root];
  for (const st of steps) {
    const next: unknown[] = [];
    for (const v of cur) {
      if (st.t === 'field') {
        if (v !== null && typeof v === 'object' && !Array.isArray(v) && (v as Record<string, unknown>)[st.name] !== undefined) next.push((v as Record<string, unknown>)[st.name]);
      } else if (st.t === 'index') {
        if (Array.isArray(v)) {
          const k = st.i < 0 ? v.length + st.i : st.i;
          if (k >= 0 && k < v.length) next.push(v[k]);
        }
      } else if (st.t === 'all') {
        if (Array.isArray(v)) next.push(...v);
        else if (v !== null && typeof v === 'object') next.push(...Object.values(v));
      } else if (Array.isArray(v)) {
        for (const item of v) {
          let x: unknown = item;
          for (const k of st.path) x = x !== null && typeof x === 'object' ? (x as Record<string, unknown>)[k] : undefined;
          if ((x === st.value) === (st.op === '==')) next.push(item);
        }
      }
    }
    cur = next;
  }
  return cur;
}
