// Path elements as text: the FieldsV1 keys (`f:`, `k:`, `v:`, `i:`), written
// byte for byte as Kubernetes writes them and parsed back, and the
// Kubernetes-style path text of error messages.

import type { JSONValue } from '../../core/object.js';
import { type Path, type PathElement, compareStrings, fieldPE, indexPE, keyPE, valuePE } from './path-element.js';

/**
 * JSON as Go's encoding/json writes it: object keys in the given order, HTML
 * characters and U+2028/U+2029 escaped. Kubernetes builds `k:` and `v:` keys
 * this way, so we do the same to produce identical strings.
 */
export function goJSON(v: JSONValue, sortKeys = true): string {
  if (v === null) return 'null';
  if (typeof v === 'string') {
    return JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  }
  if (typeof v === 'number' || typeof v === 'boolean') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map((x) => goJSON(x, sortKeys)).join(',')}]`;
  const entries = Object.entries(v);
  if (sortKeys) entries.sort((x, y) => compareStrings(x[0], y[0]));
  return `{${entries.map(([k, x]) => `${goJSON(k)}:${goJSON(x, sortKeys)}`).join(',')}}`;
}

export function serializePathElement(pe: PathElement): string {
  switch (pe.kind) {
    case 'field':
      return `f:${pe.name}`;
    case 'key':
      return `k:{${pe.fields.map(([k, v]) => `${goJSON(k)}:${goJSON(v)}`).join(',')}}`;
    case 'value':
      return `v:${goJSON(pe.value)}`;
    case 'index':
      return `i:${pe.index}`;
  }
}

export class FieldPathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FieldPathError';
  }
}

export function parsePathElement(s: string): PathElement {
  const prefix = s.slice(0, 2);
  const rest = s.slice(2);
  switch (prefix) {
    case 'f:':
      return fieldPE(rest);
    case 'k:': {
      let parsed: unknown;
      try {
        parsed = JSON.parse(rest);
      } catch {
        throw new FieldPathError(`invalid key path element ${JSON.stringify(s)}`);
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
        throw new FieldPathError(`invalid key path element ${JSON.stringify(s)}`);
      }
      return keyPE(parsed as Record<string, JSONValue>);
    }
    case 'v:':
      try {
        return valuePE(JSON.parse(rest) as JSONValue);
      } catch {
        throw new FieldPathError(`invalid value path element ${JSON.stringify(s)}`);
      }
    case 'i:': {
      if (!/^(0|[1-9][0-9]*)$/.test(rest)) throw new FieldPathError(`invalid index path element ${JSON.stringify(s)}`);
      return indexPE(Number(rest));
    }
    default:
      throw new FieldPathError(`unknown path element type ${JSON.stringify(s)}`);
  }
}

/** Go's `%v` rendering of a value as structured-merge-diff prints it in paths. */
function displayValue(v: JSONValue): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(displayValue).join(', ')}]`;
  return `{${Object.entries(v)
    .sort((a, b) => compareStrings(a[0], b[0]))
    .map(([k, x]) => `${k}=${displayValue(x)}`)
    .join(';')}}`;
}

export function pathElementToString(pe: PathElement): string {
  switch (pe.kind) {
    case 'field':
      return `.${pe.name}`;
    case 'key':
      return `[${pe.fields.map(([k, v]) => `${k}=${displayValue(v)}`).join(',')}]`;
    case 'value':
      return `[=${displayValue(pe.value)}]`;
    case 'index':
      return `[${pe.index}]`;
  }
}

/** Kubernetes-style path text: `.spec.containers[name="c"].image`. */
export function pathToString(path: Path): string {
  return path.map(pathElementToString).join('');
}
