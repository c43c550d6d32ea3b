// Which requests a webhook or policy is about (Kubernetes' admission rules):
// `rules` (operations, apiGroups, apiVersions, resources with sub-resource
// forms and wildcards, scope), `namespaceSelector` and `objectSelector`.

import type { LabelRequirement, LabelSelector } from '../../machinery/selectors/labels.js';
import { matchesLabels } from '../../machinery/selectors/labels.js';
import { isQualifiedName, isValidLabelValue, validateLabelsAndAnnotations } from '../../machinery/schema/object-meta.js';
import type { FieldError } from '../types.js';
import type { AdmissionRequest } from './types.js';

export interface Rule {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  scope?: string;
  /** ValidatingAdmissionPolicy resourceRules only */
  resourceNames?: string[];
}

const has = (list: string[] | undefined, v: string): boolean => Array.isArray(list) && (list.includes('*') || list.includes(v));

/** `resources` entries: `pods`, `pods/status`, `*` (every main resource), `*\/*` (everything), `pods/*`, `*\/status` */
function resourceMatches(list: string[] | undefined, resource: string, sub: string): boolean {
  if (!Array.isArray(list)) return false;
  for (const r of list) {
    if (r === '*/*') return true;
    const slash = r.indexOf('/');
    if (slash < 0) {
      if (sub === '' && (r === '*' || r === resource)) return true;
      continue;
    }
    const rr = r.slice(0, slash);
    const rs = r.slice(slash + 1);
    if (sub === '') continue;
    if ((rr === '*' || rr === resource) && (rs === '*' || rs === sub)) return true;
  }
  return false;
}

/**
 * One rule against a request. `versions` are the versions to try: the
 * request's own, plus (matchPolicy Equivalent) every other served version of
 * the same group and resource — objects are stored per group and resource,
 * so those are the same objects.
 */
export function ruleMatches(rule: Rule, req: AdmissionRequest, versions: readonly string[]): boolean {
  if (!has(rule.operations, req.operation)) return false;
  if (!has(rule.apiGroups, req.def.group)) return false;
  if (!versions.some((v) => has(rule.apiVersions, v))) return false;
  if (!resourceMatches(rule.resources, req.def.resource, req.subresource)) return false;
  const scope = rule.scope ?? '*';
  if (scope === 'Cluster' && req.def.scope === 'Namespaced') return false;
  if (scope === 'Namespaced' && req.def.scope !== 'Namespaced') return false;
  if (rule.resourceNames && rule.resourceNames.length > 0 && !rule.resourceNames.includes(req.name)) return false;
  return true;
}

/** metav1.LabelSelector → requirements; an absent selector matches everything */
export function toLabelSelector(sel: unknown): LabelSelector {
  const out: LabelRequirement[] = [];
  if (sel === null || typeof sel !== 'object') return out;
  const s = sel as { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] };
  for (const [key, value] of Object.entries(s.matchLabels ?? {})) out.push({ key, op: '=', values: [value] });
  for (const e of s.matchExpressions ?? []) {
    const op = ({ In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' } as const)[e.operator as 'In'];
    out.push({ key: e.key, op: op ?? 'in', values: e.values ?? [] });
  }
  return out;
}

export function labelsMatch(sel: LabelSelector, labels: Record<string, string> | undefined): boolean {
  return sel.length === 0 || matchesLabels(sel, labels ?? {});
}

/**
 * structural checks of a metav1.LabelSelector at `field` (422 causes), as
 * apimachinery's ValidateLabelSelector: matchLabels as labels, each
 * expression's operator and values, its key a label name, its values label values
 */
export function validateLabelSelector(sel: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  if (sel === undefined || sel === null) return errs;
  const s = sel as { matchLabels?: Record<string, unknown>; matchExpressions?: { key?: string; operator?: string; values?: unknown[] }[] };
  const labels = Object.fromEntries(Object.entries(s.matchLabels ?? {}).map(([k, v]) => [k, typeof v === 'string' ? v : String(v)]));
  errs.push(...validateLabelsAndAnnotations({ labels }, field).map((e) => ({ ...e, field: `${field}.matchLabels` })));
  (s.matchExpressions ?? []).forEach((e, i) => {
    const f = `${field}.matchExpressions[${i}]`;
    const values = e.values ?? [];
    if (e.operator === 'In' || e.operator === 'NotIn') {
      if (values.length === 0) errs.push({ field: `${f}.values`, type: 'FieldValueRequired', message: 'Required value: must be specified when `operator` is \'In\' or \'NotIn\'' });
    } else if (e.operator === 'Exists' || e.operator === 'DoesNotExist') {
      if (values.length > 0) errs.push({ field: `${f}.values`, type: 'FieldValueForbidden', message: 'Forbidden: may not be specified when `operator` is \'Exists\' or \'DoesNotExist\'' });
    } else {
      errs.push({ field: `${f}.operator`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(e.operator ?? '')}: not a valid selector operator` });
    }
    for (const m of isQualifiedName(e.key ?? '')) errs.push({ field: `${f}.key`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(e.key ?? '')}: ${m}` });
    values.forEach((v, j) => {
      for (const m of isValidLabelValue(String(v))) errs.push({ field: `${f}.values[${j}]`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(v)}: ${m}` });
    });
  });
  return errs;
}

/**
 * namespaceSelector: a namespaced request is matched by its namespace's
 * labels; a Namespace by its own; other cluster-scoped requests always match.
 */
export function namespaceSelectorMatches(
  sel: LabelSelector,
  req: AdmissionRequest,
  namespaceLabels: (name: string) => Record<string, string> | undefined,
): boolean {
  if (sel.length === 0) return true;
  if (req.def.group === '' && req.def.resource === 'namespaces') {
    const o = req.object ?? req.oldObject;
    return labelsMatch(sel, o?.metadata?.labels ?? namespaceLabels(req.name));
  }
  if (req.def.scope !== 'Namespaced') return true;
  return labelsMatch(sel, namespaceLabels(req.namespace));
}

/** objectSelector: the new or the old object's labels match (kube: either) */
export function objectSelectorMatches(sel: LabelSelector, req: AdmissionRequest): boolean {
  if (sel.length === 0) return true;
  if (req.operation === 'CONNECT') return false;
  const a = req.object?.metadata?.labels;
  const b = req.oldObject?.metadata?.labels;
  return (req.object !== undefined && labelsMatch(sel, a)) || (req.oldObject !== undefined && labelsMatch(sel, b));
}

/** structural checks of rules at `field` (422 causes); `ops` the allowed operations */
export function validateRules(rules: unknown, field: string, opts: { resourceNames?: boolean } = {}): FieldError[] {
  const errs: FieldError[] = [];
  if (rules === undefined) return errs;
  if (!Array.isArray(rules)) return [{ field, type: 'FieldValueInvalid', message: 'Invalid value: must be a list' }];
  rules.forEach((r: Rule, i) => {
    const f = `${field}[${i}]`;
    const ops = r.operations ?? [];
    if (ops.length === 0) errs.push({ field: `${f}.operations`, type: 'FieldValueRequired', message: 'Required value' });
    if (ops.length > 1 && ops.includes('*')) errs.push({ field: `${f}.operations`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(ops)}: if '*' is present, must not specify other operations` });
    for (const op of ops) {
      if (!['*', 'CREATE', 'UPDATE', 'DELETE', 'CONNECT'].includes(op)) {
        errs.push({ field: `${f}.operations`, type: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(op)}: supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"` });
      }
    }
    for (const [k, label] of [['apiGroups', 'apiGroups'], ['apiVersions', 'apiVersions']] as const) {
      const list = r[k] ?? [];
      if (list.length === 0) errs.push({ field: `${f}.${label}`, type: 'FieldValueRequired', message: 'Required value' });
      if (list.length > 1 && list.includes('*')) errs.push({ field: `${f}.${label}`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(list)}: if '*' is present, must not specify other ${label}` });
      if (k === 'apiVersions' && list.includes('')) errs.push({ field: `${f}.apiVersions`, type: 'FieldValueRequired', message: 'Required value: version must not be empty' });
    }
    const res = r.resources ?? [];
    if (res.length === 0) errs.push({ field: `${f}.resources`, type: 'FieldValueRequired', message: 'Required value' });
    for (const x of res) {
      if (x === '') errs.push({ field: `${f}.resources`, type: 'FieldValueRequired', message: 'Required value: resource must not be empty' });
      const parts = x.split('/');
      if (parts.length > 2 || parts.some((p) => p === '')) errs.push({ field: `${f}.resources`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(x)}: must be "resource", "resource/subresource" or a wildcard form` });
    }
    if (res.includes('*/*') && res.length > 1) errs.push({ field: `${f}.resources`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(res)}: if '*/*' is present, must not specify other resources` });
    if (r.scope !== undefined && !['*', 'Cluster', 'Namespaced'].includes(r.scope)) {
      errs.push({ field: `${f}.scope`, type: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(r.scope)}: supported values: "*", "Cluster", "Namespaced"` });
    }
    if (!opts.resourceNames && r.resourceNames !== undefined) errs.push({ field: `${f}.resourceNames`, type: 'FieldValueForbidden', message: 'Forbidden: not allowed here' });
  });
  return errs;
}
