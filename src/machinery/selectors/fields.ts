// Field selectors: `field=value`, `field==value`, `field!=value`, comma
// separated, backslash escapes. Which fields are selectable is per kind
// (metadata.name and metadata.namespace always; the strategy adds more).

import type { ApiObject } from '../../core/object.js';
import { SelectorParseError } from './labels.js';

export interface FieldRequirement {
  field: string;
  op: '=' | '!=';
  value: string;
}

export type FieldSelector = FieldRequirement[];

export function parseFieldSelector(text: string): FieldSelector {
  const out: FieldRequirement[] = [];
  if (text.trim() === '') return out;
  for (const term of splitUnescaped(text, ',')) {
    const t = term;
    let idx = -1;
    let op: '=' | '!=' = '=';
    let width = 1;
    for (let i = 0; i < t.length; i++) {
      if (t[i] === '\\') {
        i++;
        continue;
      }
      if (t.startsWith('!=', i)) {
        idx = i;
        op = '!=';
        width = 2;
        break;
      }
      if (t.startsWith('==', i)) {
        idx = i;
        width = 2;
        break;
      }
      if (t[i] === '=') {
        idx = i;
        break;
      }
    }
    if (idx <= 0) throw new SelectorParseError(`invalid selector: '${text}'; can't understand '${t}'`);
    out.push({ field: t.slice(0, idx).trim(), op, value: unescape(t.slice(idx + width)) });
  }
  return out;
}

function splitUnescaped(s: string, sep: string): string[] {
  const parts: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\' && i + 1 < s.length) {
      cur += s[i]! + s[i + 1]!;
      i++;
    } else if (s[i] === sep) {
      parts.push(cur);
      cur = '';
    } else cur += s[i];
  }
  parts.push(cur);
  return parts;
}

/**
 * what field selection needs of a kind: its scope and its selectable fields
 * (structurally a `ResourceDefinition`; the selectors know no registry)
 */
export interface SelectableKind {
  scope: 'Namespaced' | 'Cluster';
  strategy: { selectableFields?: Record<string, (obj: ApiObject) => string | undefined> };
}

function unescape(s: string): string {
  return s.replace(/\\(.)/g, '$1');
}

/** the value of a selectable field, or undefined when the field is not selectable on this kind */
export function fieldAccessor(def: SelectableKind, field: string): ((o: ApiObject) => string | undefined) | undefined {
  if (field === 'metadata.name') return (o) => o.metadata?.name ?? '';
  if (field === 'metadata.namespace') return (o) => (def.scope === 'Namespaced' ? (o.metadata?.namespace ?? '') : '');
  return def.strategy.selectableFields?.[field];
}

/** checks every field of the selector is selectable on the kind (400 otherwise) */
export function compileFieldSelector(def: SelectableKind, sel: FieldSelector): (o: ApiObject) => boolean {
  const checks = sel.map((r) => {
    const get = fieldAccessor(def, r.field);
    if (!get) throw new SelectorParseError(`field label not supported: ${r.field}`);
    return { get, r };
  });
  return (o) => {
    for (const { get, r } of checks) {
      const v = get(o) ?? '';
      if (r.op === '=' ? v !== r.value : v === r.value) return false;
    }
    return true;
  };
}

/** the `metadata.name=x` value of a selector, for narrowing a list to one key */
export function exactName(sel: FieldSelector): string | undefined {
  return sel.find((r) => r.field === 'metadata.name' && r.op === '=')?.value;
}
