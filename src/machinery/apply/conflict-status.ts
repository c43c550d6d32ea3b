// The error for apply conflicts (spec 000 §4.9, §7). The specification leaves
// the status code "not shown"; we answer as Kubernetes does — HTTP 409, reason
// `Conflict`, one `FieldManagerConflict` cause per conflicting field — so
// kubectl and client libraries print their usual conflict help (docs/apply.md).

import { StatusError, type StatusCause } from '../../core/errors.js';
import type { Conflict } from './apply.js';

/** `"kubectl"` for an applier, `"kube-controller-manager" using apps/v1` for an updater. */
export function describeManager(c: Pick<Conflict, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  let s = JSON.stringify(c.manager);
  if (c.subresource) s += ` with subresource ${JSON.stringify(c.subresource)}`;
  if (c.operation === 'Update') s += ` using ${c.apiVersion}`;
  return s;
}

export function conflictMessage(conflicts: readonly Conflict[]): string {
  if (conflicts.length === 1) {
    const c = conflicts[0]!;
    return `Apply failed with 1 conflict: conflict with ${describeManager(c)}: ${c.field}`;
  }
  const byManager = new Map<string, { who: string; fields: string[] }>();
  for (const c of conflicts) {
    const who = describeManager(c);
    const key = JSON.stringify([c.manager, c.operation, c.operation === 'Update' ? c.apiVersion : '', c.subresource ?? '']);
    const g = byManager.get(key) ?? { who, fields: [] };
    g.fields.push(c.field);
    byManager.set(key, g);
  }
  const lines: string[] = [];
  for (const key of [...byManager.keys()].sort()) {
    const g = byManager.get(key)!;
    lines.push(`conflicts with ${g.who}:`);
    for (const f of g.fields) lines.push(`- ${f}`);
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}

export function conflictCauses(conflicts: readonly Conflict[]): StatusCause[] {
  return conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${describeManager(c)}`, field: c.field }));
}

/**
 * 409 Conflict Status for apply conflicts. `_apiVersion` is accepted for
 * callers that pass the request's version; each conflict carries the other
 * manager's own version, which is what the message shows.
 */
export function conflictStatusError(conflicts: readonly Conflict[], _apiVersion?: string): StatusError {
  return new StatusError(409, 'Conflict', conflictMessage(conflicts), { causes: conflictCauses(conflicts) });
}
