// Pieces the workload kinds share (issue #11 item 4): the pod template, the
// label selector that must match it, replica counts, conditions, and the
// checks kube makes on them. No controller acts on these kinds yet
// (docs/compatibility.md "Kinds served").

import type { SchemaNames } from '../schema/naming.js';
import type { Schema } from '../schema/types.js';
import type { ApiObject, FieldError, JSONValue } from '../types.js';
import { get, getObject } from './columns.js';
import { int32, int64, listMap, obj, ref, str, time } from './dsl.js';
import { defaultPod, validatePod } from './pod.js';

type Obj = Record<string, JSONValue>;

export const podTemplateSpec = (n: SchemaNames, d: string): Schema =>
  obj(d, {
    metadata: ref(n.meta('ObjectMeta'), 'Metadata of the pods created from this template.'),
    spec: ref(n.core('PodSpec'), 'Desired behaviour of the pods.'),
  });

export const labelSelector = (n: SchemaNames, d: string): Schema => ref(n.meta('LabelSelector'), d);

export const replicas = (d = 'Number of desired pods; defaults to 1.'): Schema => int32(d, { minimum: 0 });

export const conditions = (d: string): Schema =>
  listMap(d, obj('One observed condition.', {
    type: str('Type of the condition.'),
    status: str('True, False or Unknown.'),
    lastUpdateTime: time('Last time the condition was updated.'),
    lastTransitionTime: time('Last time the condition changed status.'),
    reason: str('Machine-readable reason of the last transition.'),
    message: str('Human-readable details.'),
  }, ['type', 'status']), ['type'], 'type');

export const observedGeneration = (): Schema => int64('The generation observed by the controller.');

/** `labelSelector` object matching (matchLabels and matchExpressions) */
export function selectorMatches(sel: unknown, labels: Record<string, string> | undefined): boolean {
  const s = (sel ?? {}) as { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] };
  const l = labels ?? {};
  for (const [k, v] of Object.entries(s.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const e of s.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(l, e.key);
    if (e.operator === 'In' && !(has && (e.values ?? []).includes(l[e.key]!))) return false;
    if (e.operator === 'NotIn' && has && (e.values ?? []).includes(l[e.key]!)) return false;
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

const isEmptySelector = (sel: unknown): boolean => {
  const s = (sel ?? {}) as { matchLabels?: object; matchExpressions?: unknown[] };
  return Object.keys(s.matchLabels ?? {}).length === 0 && (s.matchExpressions ?? []).length === 0;
};

/** defaults of the pod template at `path` (image pull policy and the like, as for Pods) */
export function defaultTemplate(o: ApiObject, ...path: string[]): void {
  const t = getObject(o, ...path);
  if (t && getObject(t, 'spec')) defaultPod(t as ApiObject);
  const spec = getObject(t, 'spec');
  if (spec) {
    spec.restartPolicy ??= 'Always';
    spec.dnsPolicy ??= 'ClusterFirst';
    spec.schedulerName ??= 'default-scheduler';
    spec.terminationGracePeriodSeconds ??= 30;
    spec.securityContext ??= {};
  }
}

/** the pod template at `path` is a valid pod, its field paths prefixed with `path` */
export function validateTemplate(o: ApiObject, ...path: string[]): FieldError[] {
  const t = getObject(o, ...path);
  const prefix = path.join('.');
  if (!t) return [{ field: prefix, type: 'FieldValueRequired', message: 'Required value' }];
  return validatePod(t as ApiObject).map((e) => ({ ...e, field: `${prefix}.${e.field}` }));
}

/** apps/v1: a selector is required, not empty, and must select the template's labels */
export function validateSelector(o: ApiObject, selectorPath: string[], templatePath: string[]): FieldError[] {
  const sel = get(o, ...selectorPath);
  const field = selectorPath.join('.');
  if (sel === undefined || sel === null) return [{ field, type: 'FieldValueRequired', message: 'Required value' }];
  if (isEmptySelector(sel)) return [{ field, type: 'FieldValueInvalid', message: 'Invalid value: "null": empty selector is invalid for deployment' }];
  const labels = getObject(o, ...templatePath, 'metadata', 'labels') as Record<string, string> | undefined;
  if (!selectorMatches(sel, labels)) {
    return [{ field: `${templatePath.join('.')}.metadata.labels`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(labels ?? {})}: \`selector\` does not match template \`labels\`` }];
  }
  return [];
}

/** a field kube makes immutable (e.g. apps/v1 `spec.selector`) */
export function immutable(o: ApiObject, old: ApiObject, ...path: string[]): FieldError[] {
  const a = JSON.stringify(get(o, ...path) ?? null);
  const b = JSON.stringify(get(old, ...path) ?? null);
  return a === b ? [] : [{ field: path.join('.'), type: 'FieldValueInvalid', message: `Invalid value: ${a}: field is immutable` }];
}

export function nonNegative(o: ApiObject, ...path: string[]): FieldError[] {
  const v = get(o, ...path);
  return typeof v === 'number' && v < 0 ? [{ field: path.join('.'), type: 'FieldValueInvalid', message: `Invalid value: ${v}: must be greater than or equal to 0` }] : [];
}

export function setDefault(o: ApiObject, value: JSONValue, ...path: string[]): void {
  let cur = o as Obj;
  for (const p of path.slice(0, -1)) {
    const next = cur[p];
    if (next === undefined || next === null || typeof next !== 'object' || Array.isArray(next)) cur[p] = {};
    cur = cur[p] as Obj;
  }
  const last = path[path.length - 1]!;
  if (cur[last] === undefined) cur[last] = value;
}

/** `a/b` for a ready/desired column */
export const ratio = (o: ApiObject, a: string[], b: string[]): string => `${Number(get(o, ...a) ?? 0)}/${Number(get(o, ...b) ?? 0)}`;

/** `a,b` of the template's container names or images */
export function containersCell(o: ApiObject, field: 'name' | 'image', ...templatePath: string[]): string {
  const cs = get(o, ...templatePath, 'spec', 'containers');
  return Array.isArray(cs) ? cs.map((c) => String((c as Obj)[field] ?? '')).join(',') : '';
}
