// Table cell helpers shared by the kinds' strategy columns (spec 000 §2.3).

import { humanDuration } from '../table.js';
import type { ApiObject, JSONValue, TableColumn } from '../types.js';

export type Cell = TableColumn['cell'];

export function column(name: string, type: TableColumn['type'], cell: Cell, opts: { priority?: number; description?: string; format?: string } = {}): TableColumn {
  return { name, type, cell, priority: opts.priority ?? 0, description: opts.description ?? '', format: opts.format ?? '' };
}

/** reads a nested field (`get(o, 'status', 'phase')`) without allocating */
export function get(o: unknown, ...path: string[]): JSONValue | undefined {
  let cur: unknown = o;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur as JSONValue | undefined;
}

export function getString(o: unknown, ...path: string[]): string | undefined {
  const v = get(o, ...path);
  return typeof v === 'string' ? v : undefined;
}

export function getArray(o: unknown, ...path: string[]): JSONValue[] {
  const v = get(o, ...path);
  return Array.isArray(v) ? v : [];
}

export function getObject(o: unknown, ...path: string[]): Record<string, JSONValue> | undefined {
  const v = get(o, ...path);
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : undefined;
}

export function countKeys(o: unknown, ...path: string[]): number {
  const m = getObject(o, ...path);
  return m ? Object.keys(m).length : 0;
}

/** kubectl-style relative time of a timestamp ("<unknown>" when absent) */
export function since(ts: string | undefined, now: number): string {
  if (!ts) return '<unknown>';
  const t = Date.parse(ts);
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now - t);
}

/** selectable-field accessor for an integer counter, '0' when absent (Go's int zero value, as kube formats it) */
export function countOf(...path: string[]): (o: ApiObject) => string {
  return (o) => {
    const v = get(o, ...path);
    return typeof v === 'number' ? String(v) : '0';
  };
}

/** selectable-field accessor for a string/boolean/number field, '' when absent (Kubernetes semantics) */
export function fieldOf(...path: string[]): (o: ApiObject) => string {
  return (o) => {
    const v = get(o, ...path);
    return v === undefined || v === null ? '' : typeof v === 'object' ? '' : String(v);
  };
}
