// Rules shared by ConfigMap and Secret: config key syntax and immutability.

import type { ApiObject, FieldError } from '../types.js';
import { regexError } from '../../machinery/schema/object-meta.js';

const CONFIG_KEY_FMT = '[-._a-zA-Z0-9]+';
const CONFIG_KEY_RE = /^[-._a-zA-Z0-9]+$/;

/** Kubernetes' IsConfigMapKey */
export function isConfigKey(k: string): string[] {
  const errs: string[] = [];
  if (k.length > 253) errs.push('must be no more than 253 characters');
  if (!CONFIG_KEY_RE.test(k)) {
    errs.push(regexError("a valid config key must consist of alphanumeric characters, '-', '_' or '.'", CONFIG_KEY_FMT, 'key.name', 'KEY_NAME', 'key-name'));
  }
  if (k === '.') errs.push("must not be '.'");
  else if (k === '..') errs.push("must not be '..'");
  else if (k.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

/** once `immutable: true` is stored, the data fields and the flag itself are frozen */
export function immutableDataErrors(o: ApiObject, old: ApiObject, fields: string[]): FieldError[] {
  if (old.immutable !== true) return [];
  const errs: FieldError[] = [];
  if (o.immutable !== true) {
    errs.push({ field: 'immutable', type: 'FieldValueForbidden', message: 'Forbidden: field is immutable when `immutable` is set' });
  }
  for (const f of fields) {
    if (JSON.stringify(o[f] ?? {}) !== JSON.stringify(old[f] ?? {})) {
      errs.push({ field: f, type: 'FieldValueForbidden', message: 'Forbidden: field is immutable when `immutable` is set' });
    }
  }
  return errs;
}
