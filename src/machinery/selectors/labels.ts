// Label selectors (equality- and set-based), parsed once per request and
// matched per object on list, watch and deletecollection (spec 000 §4.2).

export type LabelOp = 'in' | 'notin' | 'exists' | '!' | '=' | '!=' | 'gt' | 'lt';

export interface LabelRequirement {
  key: string;
  op: LabelOp;
  values: string[];
}

export type LabelSelector = LabelRequirement[];

export class SelectorParseError extends Error {}

const KEY_NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

export function validLabelKey(key: string): string | undefined {
  const slash = key.indexOf('/');
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (slash >= 0) {
    const prefix = key.slice(0, slash);
    if (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix)) {
      return `prefix part must be a lowercase RFC 1123 subdomain`;
    }
  }
  if (name.length === 0) return 'name part must be non-empty';
  if (name.length > 63) return 'name part must be no more than 63 characters';
  if (!KEY_NAME.test(name)) {
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  }
  return undefined;
}

export function validLabelValue(value: string): string | undefined {
  if (value.length > 63) return 'must be no more than 63 characters';
  if (!LABEL_VALUE.test(value)) {
    return "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  }
  return undefined;
}

/** Tokenizer + recursive descent over the Kubernetes selector grammar. */
export function parseLabelSelector(text: string): LabelSelector {
  const s = text.trim();
  if (s === '') return [];
  const out: LabelRequirement[] = [];
  let i = 0;
  const n = s.length;
  const skipWs = () => {
    while (i < n && (s[i] === ' ' || s[i] === '\t')) i++;
  };
  const readIdent = (): string => {
    skipWs();
    const start = i;
    while (i < n && !' \t,=!()<>'.includes(s[i]!)) i++;
    return s.slice(start, i);
  };
  /** the literal of the token at i, as kube's lexer reads it ('' at the end of the string) */
  const peek = (): string => {
    if (i >= n) return '';
    const two = s.slice(i, i + 2);
    if (two === '!=' || two === '==') return two;
    if ('!=()<>,'.includes(s[i]!)) return s[i]!;
    const save = i;
    const word = readIdent();
    i = save;
    return word;
  };
  const fail = (msg: string): never => {
    throw new SelectorParseError(`unable to parse requirement: ${msg}`);
  };
  /** an error of the selector as a whole: kube's parse() does not say "unable to parse requirement" */
  const failSelector = (msg: string): never => {
    throw new SelectorParseError(msg);
  };
  const startsRequirement = (): boolean => {
    const t = peek();
    return t === '!' || (t !== '' && t !== '!=' && !'=()<>,'.includes(t));
  };
  skipWs();
  if (!startsRequirement()) failSelector(`found '${peek()}', expected: !, identifier, or 'end of string'`);
  for (;;) {
    skipWs();
    let op: LabelOp | undefined;
    if (s[i] === '!') {
      i++;
      op = '!';
    }
    const key = readIdent();
    if (!key) fail(`found '${peek()}', expected: identifier`);
    const keyErr = validLabelKey(key);
    if (keyErr) fail(`key: Invalid value: "${key}": ${keyErr}`);
    skipWs();
    let values: string[] = [];
    if (op === '!') {
      // `!key` stands alone
    } else if (i >= n || s[i] === ',') {
      op = 'exists';
    } else if (s.startsWith('==', i)) {
      i += 2;
      op = '=';
    } else if (s.startsWith('!=', i)) {
      i += 2;
      op = '!=';
    } else if (s[i] === '=') {
      i += 1;
      op = '=';
    } else if (s[i] === '>' || s[i] === '<') {
      op = s[i] === '>' ? 'gt' : 'lt';
      i += 1;
    } else {
      const word = readIdent();
      if (word === 'in' || word === 'notin') {
        op = word;
        skipWs();
        if (s[i] !== '(') fail(`found '${peek()}', expected: '('`);
        i++;
        values = [];
        for (;;) {
          skipWs();
          if (s[i] === ')') {
            i++;
            break;
          }
          const v = readIdent();
          const vErr = validLabelValue(v);
          if (vErr) fail(`values[${values.length}][${key}]: Invalid value: "${v}": ${vErr}`);
          values.push(v);
          skipWs();
          if (s[i] === ',') {
            i++;
            continue;
          }
          if (s[i] === ')') {
            i++;
            break;
          }
          fail(`found '${peek()}', expected: ',' or ')'`);
        }
        if (values.length === 0) fail(`for 'in', 'notin' operators, values set can't be empty`);
      } else {
        fail(`found '${word || peek()}', expected: in, notin, =, ==, !=, gt, lt`);
      }
    }
    if (op === '=' || op === '!=' || op === 'gt' || op === 'lt') {
      const v = readIdent();
      if (op === 'gt' || op === 'lt') {
        if (!/^-?\d+$/.test(v)) fail(`for 'Gt', 'Lt' operators, the value must be an integer`);
      } else {
        const vErr = validLabelValue(v);
        if (vErr) fail(`values[0][${key}]: Invalid value: "${v}": ${vErr}`);
      }
      values = [v];
    }
    out.push({ key, op: op!, values });
    skipWs();
    if (i >= n) break;
    if (s[i] !== ',') failSelector(`found '${peek()}', expected: ',' or 'end of string'`);
    i++;
    skipWs();
    if (!startsRequirement()) failSelector(`found '${peek()}', expected: identifier after ','`);
  }
  return out;
}

export function matchesLabels(sel: LabelSelector, labels: Record<string, string> | undefined): boolean {
  for (const r of sel) {
    const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, r.key);
    const v = has ? labels![r.key]! : undefined;
    switch (r.op) {
      case 'exists':
        if (!has) return false;
        break;
      case '!':
        if (has) return false;
        break;
      case '=':
        if (v !== r.values[0]) return false;
        break;
      case '!=':
        if (v === r.values[0]) return false;
        break;
      case 'in':
        if (!has || !r.values.includes(v!)) return false;
        break;
      case 'notin':
        if (has && r.values.includes(v!)) return false;
        break;
      case 'gt':
      case 'lt': {
        if (!has || !/^-?\d+$/.test(v!)) return false;
        const a = Number(v);
        const b = Number(r.values[0]);
        if (r.op === 'gt' ? !(a > b) : !(a < b)) return false;
        break;
      }
    }
  }
  return true;
}
