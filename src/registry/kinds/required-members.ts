// kube 1.32's checks of structures whose required members orch's schema leaves
// optional: metav1.Condition lists (ValidateConditions), a StorageClass's
// allowedTopologies (ValidateTopologySelectorTerm), a claim's dataSourceRef
// (validateDataSourceRef) and an IngressClass's parameters
// (validateIngressClassParametersReference). kube decodes an absent member to
// its Go zero value and refuses it here, so what it stores always carries
// them; strict clients (Java, Rust) refuse an object without a required member.

import { isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidPathSegmentName, regexError } from '../../machinery/schema/object-meta.js';
import type { FieldError, JSONValue } from '../types.js';
import { duplicate, forbidden, invalid, notSupported, required, tooLong } from './field-errors.js';

type Obj = Record<string, JSONValue>;
const isObj = (v: JSONValue | undefined): v is Obj => v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v);
const objects = (v: JSONValue | undefined): Obj[] => (Array.isArray(v) ? v.map((x) => (isObj(x) ? x : {})) : []);
const str = (v: JSONValue | undefined): string => (typeof v === 'string' ? v : '');

const CONDITION_STATUSES = ['False', 'True', 'Unknown'];
const REASON = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;
const REASON_MSG = regexError(
  "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'",
  '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?', 'my_name', 'MY_NAME', 'MyName', 'ReasonA,ReasonB', 'ReasonA:ReasonB',
);

/**
 * apimachinery's ValidateConditions (a PodDisruptionBudget's and a ValidatingAdmissionPolicy's
 * status): each type once and a qualified name, a known status, a transition time and a reason
 * (the message may be empty: kube then writes `"message": ""`)
 */
export function validateMetaConditions(list: JSONValue | undefined, at: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  objects(list).forEach((c, i) => {
    const p = `${at}[${i}]`;
    const type = str(c.type);
    if (seen.has(type)) errs.push(duplicate(`${p}.type`, type));
    seen.add(type);
    for (const m of isQualifiedName(type)) errs.push(invalid(`${p}.type`, type, m));
    if (!CONDITION_STATUSES.includes(str(c.status))) errs.push(notSupported(`${p}.status`, str(c.status), CONDITION_STATUSES));
    if (typeof c.observedGeneration === 'number' && c.observedGeneration < 0) errs.push(invalid(`${p}.observedGeneration`, c.observedGeneration, 'must be greater than or equal to zero'));
    if (str(c.lastTransitionTime) === '') errs.push(required(`${p}.lastTransitionTime`, 'must be set'));
    const reason = str(c.reason);
    if (reason === '') errs.push(required(`${p}.reason`, 'must be set'));
    else {
      if (!REASON.test(reason)) errs.push(invalid(`${p}.reason`, reason, REASON_MSG));
      if (reason.length > 1024) errs.push(tooLong(`${p}.reason`, 1024));
    }
    if (str(c.message).length > 32 * 1024) errs.push(tooLong(`${p}.message`, 32 * 1024));
  });
  return errs;
}

/** validateAllowedTopologies: each term's label requirements with a key (once) and values (a set); no term twice */
export function validateAllowedTopologies(terms: JSONValue | undefined, at: string): FieldError[] {
  const errs: FieldError[] = [];
  const seenTerms: string[] = [];
  objects(terms).forEach((term, i) => {
    const exprs = new Map<string, string[]>();
    objects(term.matchLabelExpressions).forEach((r, j) => {
      const p = `${at}[${i}].matchLabelExpressions[${j}]`;
      const values = Array.isArray(r.values) ? r.values.map(String) : [];
      if (values.length === 0) errs.push(required(`${p}.values`));
      values.forEach((v, k) => {
        if (values.indexOf(v) < k) errs.push(duplicate(`${p}.values[${k}]`, v));
      });
      const key = str(r.key);
      for (const m of isQualifiedName(key)) errs.push(invalid(`${p}.key`, key, m));
      if (exprs.has(key)) errs.push(duplicate(`${p}.key`, key));
      exprs.set(key, [...new Set(values)].sort());
    });
    const canonical = JSON.stringify([...exprs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    if (seenTerms.includes(canonical)) errs.push(duplicate(`${at}[${i}].matchLabelExpressions`, ''));
    seenTerms.push(canonical);
  });
  return errs;
}

/** validateDataSourceRef of a claim spec at `at`: a kind and a name; the core group holds only PersistentVolumeClaim */
export function validateDataSourceRef(ref: JSONValue | undefined, at: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!isObj(ref)) return errs;
  if (str(ref.name) === '') errs.push(required(`${at}.name`));
  const kind = str(ref.kind);
  if (kind === '') errs.push(required(`${at}.kind`));
  const group = str(ref.apiGroup);
  if (group === '' && kind !== 'PersistentVolumeClaim') errs.push(invalid(at, kind, "must be 'PersistentVolumeClaim' when referencing the default apiGroup"));
  if (group !== '') for (const m of isDNS1123Subdomain(group)) errs.push(invalid(`${at}.apiGroup`, group, m));
  const ns = str(ref.namespace);
  if (ns !== '') for (const m of isDNS1123Label(ns)) errs.push(invalid(`${at}.namespace`, ns, m));
  return errs;
}

const PARAMETER_SCOPES = ['Cluster', 'Namespace'];

/** validateIngressClassParametersReference: group, kind and name as path segments; a scope, a namespace for Namespace only */
export function validateIngressClassParameters(params: JSONValue | undefined, at: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!isObj(params)) return errs;
  if (typeof params.apiGroup === 'string') for (const m of isDNS1123Subdomain(params.apiGroup)) errs.push(invalid(`${at}.apiGroup`, params.apiGroup, m));
  for (const f of ['kind', 'name'] as const) {
    const v = str(params[f]);
    if (v === '') errs.push(required(`${at}.${f}`, `${f} is required`));
    else for (const m of isValidPathSegmentName(v)) errs.push(invalid(`${at}.${f}`, v, m));
  }
  if (typeof params.scope !== 'string') {
    errs.push(required(`${at}.scope`));
    return errs;
  }
  if (!PARAMETER_SCOPES.includes(params.scope)) errs.push(notSupported(`${at}.scope`, params.scope, PARAMETER_SCOPES));
  else if (params.scope === 'Namespace') {
    if (typeof params.namespace !== 'string') errs.push(required(`${at}.namespace`, "`parameters.scope` is set to 'Namespace'"));
    else for (const m of isDNS1123Label(params.namespace)) errs.push(invalid(`${at}.namespace`, params.namespace, m));
  } else if (params.namespace !== undefined) errs.push(forbidden(`${at}.namespace`, "`parameters.scope` is set to 'Cluster'"));
  return errs;
}
