// ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding
// (admissionregistration.<domain>/v1): defaults, validation of the objects
// (422 Invalid, CEL compile errors named by field), and the compiled form
// the in-process policy plugin evaluates (every expression planned once).

import type { LabelSelector } from '../../machinery/selectors/labels.js';
import type { ApiObject, FieldError } from '../types.js';
import { type AdmissionExpression, compileAdmissionCel } from './cel.js';
import { type Rule, toLabelSelector, validateLabelSelector, validateRules } from './matching.js';
import { celErrors, validateMatchConditions } from './webhook-config.js';

/** CEL variables of validations, messageExpressions, auditAnnotations and variables */
export const POLICY_VARIABLES = ['object', 'oldObject', 'request', 'params', 'namespaceObject', 'variables'] as const;
/** matchConditions of a policy see the same variables but `variables` */
export const POLICY_MATCH_VARIABLES = ['object', 'oldObject', 'request', 'params', 'namespaceObject'] as const;

const REASONS = ['Unauthorized', 'Forbidden', 'Invalid', 'RequestEntityTooLarge'];
const ACTIONS = ['Deny', 'Warn', 'Audit'];

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const spec = (o: ApiObject): Obj => (isObj(o.spec) ? o.spec : {});

export interface MatchResources {
  rules: Rule[];
  exclude: Rule[];
  namespaceSelector: LabelSelector;
  objectSelector: LabelSelector;
  matchPolicy: 'Exact' | 'Equivalent';
}

export interface CompiledPolicy {
  name: string;
  failurePolicy: 'Fail' | 'Ignore';
  paramKind?: { apiVersion: string; kind: string };
  match: MatchResources;
  matchConditions: { name: string; expr: AdmissionExpression }[];
  variables: { name: string; expr: AdmissionExpression }[];
  validations: { expr: AdmissionExpression; message?: string; messageExpr?: AdmissionExpression; reason: string }[];
  auditAnnotations: { key: string; expr: AdmissionExpression }[];
  broken?: string;
}

export interface CompiledBinding {
  name: string;
  policyName: string;
  paramRef?: { name?: string; namespace?: string; selector?: LabelSelector; parameterNotFoundAction: 'Allow' | 'Deny' };
  match?: MatchResources;
  actions: string[];
}

function defaultMatch(m: unknown): void {
  if (!isObj(m)) return;
  m.matchPolicy ??= 'Equivalent';
  m.namespaceSelector ??= {};
  m.objectSelector ??= {};
  for (const list of [m.resourceRules, m.excludeResourceRules]) for (const r of Array.isArray(list) ? list : []) if (isObj(r)) r.scope ??= '*';
}

export function defaultPolicy(o: ApiObject): void {
  const s = spec(o);
  s.failurePolicy ??= 'Fail';
  defaultMatch(s.matchConstraints);
}

export function defaultBinding(o: ApiObject): void {
  defaultMatch(spec(o).matchResources);
}

function validateMatch(m: unknown, f: string, required: boolean): FieldError[] {
  if (m === undefined || m === null) return required ? [{ field: f, type: 'FieldValueRequired', message: 'Required value' }] : [];
  if (!isObj(m)) return [{ field: f, type: 'FieldValueInvalid', message: 'Invalid value: must be an object' }];
  const errs: FieldError[] = [];
  if (required && (!Array.isArray(m.resourceRules) || m.resourceRules.length === 0)) {
    errs.push({ field: `${f}.resourceRules`, type: 'FieldValueRequired', message: 'Required value' });
  }
  errs.push(...validateRules(m.resourceRules, `${f}.resourceRules`, { resourceNames: true }));
  errs.push(...validateRules(m.excludeResourceRules, `${f}.excludeResourceRules`, { resourceNames: true }));
  errs.push(...validateLabelSelector(m.namespaceSelector, `${f}.namespaceSelector`));
  errs.push(...validateLabelSelector(m.objectSelector, `${f}.objectSelector`));
  if (m.matchPolicy !== undefined && m.matchPolicy !== 'Exact' && m.matchPolicy !== 'Equivalent') {
    errs.push({ field: `${f}.matchPolicy`, type: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(m.matchPolicy)}: supported values: "Equivalent", "Exact"` });
  }
  return errs;
}

export function validatePolicy(o: ApiObject): FieldError[] {
  const s = spec(o);
  const errs: FieldError[] = [];
  if (s.failurePolicy !== undefined && s.failurePolicy !== 'Fail' && s.failurePolicy !== 'Ignore') {
    errs.push({ field: 'spec.failurePolicy', type: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(s.failurePolicy)}: supported values: "Fail", "Ignore"` });
  }
  if (s.paramKind !== undefined) {
    const pk = isObj(s.paramKind) ? s.paramKind : {};
    if (!pk.apiVersion) errs.push({ field: 'spec.paramKind.apiVersion', type: 'FieldValueRequired', message: 'Required value' });
    else if (String(pk.apiVersion).split('/').length > 2) errs.push({ field: 'spec.paramKind.apiVersion', type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(pk.apiVersion)}: must be a group/version or a core version` });
    if (!pk.kind) errs.push({ field: 'spec.paramKind.kind', type: 'FieldValueRequired', message: 'Required value' });
  }
  errs.push(...validateMatch(s.matchConstraints, 'spec.matchConstraints', true));
  const validations = Array.isArray(s.validations) ? s.validations : [];
  const audits = Array.isArray(s.auditAnnotations) ? s.auditAnnotations : [];
  if (validations.length === 0 && audits.length === 0) {
    errs.push({ field: 'spec.validations', type: 'FieldValueRequired', message: 'Required value: validations or auditAnnotations must contain at least one item' });
  }
  validations.forEach((v: Obj, i) => {
    const f = `spec.validations[${i}]`;
    errs.push(...celErrors(v?.expression, `${f}.expression`, POLICY_VARIABLES));
    if (v?.messageExpression !== undefined) errs.push(...celErrors(v.messageExpression, `${f}.messageExpression`, POLICY_VARIABLES));
    if (typeof v?.message === 'string' && /[\r\n]/.test(v.message)) errs.push({ field: `${f}.message`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(v.message)}: message must not contain line breaks` });
    if (v?.reason !== undefined && !REASONS.includes(String(v.reason))) {
      errs.push({ field: `${f}.reason`, type: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(v.reason)}: supported values: ${REASONS.map((r) => `"${r}"`).join(', ')}` });
    }
  });
  audits.forEach((a: Obj, i) => {
    const f = `spec.auditAnnotations[${i}]`;
    if (!a?.key) errs.push({ field: `${f}.key`, type: 'FieldValueRequired', message: 'Required value' });
    errs.push(...celErrors(a?.valueExpression, `${f}.valueExpression`, POLICY_VARIABLES));
  });
  const varNames = new Set<string>();
  (Array.isArray(s.variables) ? s.variables : []).forEach((v: Obj, i) => {
    const f = `spec.variables[${i}]`;
    const name = v?.name;
    if (typeof name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) errs.push({ field: `${f}.name`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(name ?? '')}: name is not a valid CEL identifier` });
    else if (varNames.has(name)) errs.push({ field: `${f}.name`, type: 'FieldValueDuplicate', message: `Duplicate value: ${JSON.stringify(name)}` });
    else varNames.add(name);
    errs.push(...celErrors(v?.expression, `${f}.expression`, POLICY_VARIABLES));
  });
  errs.push(...validateMatchConditions(s.matchConditions, 'spec.matchConditions', POLICY_MATCH_VARIABLES));
  return errs;
}

export function validateBinding(o: ApiObject): FieldError[] {
  const s = spec(o);
  const errs: FieldError[] = [];
  if (!s.policyName) errs.push({ field: 'spec.policyName', type: 'FieldValueRequired', message: 'Required value' });
  const actions = Array.isArray(s.validationActions) ? s.validationActions : [];
  if (actions.length === 0) errs.push({ field: 'spec.validationActions', type: 'FieldValueRequired', message: 'Required value' });
  const seen = new Set<unknown>();
  actions.forEach((a, i) => {
    if (!ACTIONS.includes(String(a))) errs.push({ field: `spec.validationActions[${i}]`, type: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(a)}: supported values: "Audit", "Deny", "Warn"` });
    if (seen.has(a)) errs.push({ field: `spec.validationActions[${i}]`, type: 'FieldValueDuplicate', message: `Duplicate value: ${JSON.stringify(a)}` });
    seen.add(a);
  });
  if (actions.includes('Deny') && actions.includes('Warn')) {
    errs.push({ field: 'spec.validationActions', type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(actions)}: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)` });
  }
  if (s.paramRef !== undefined) {
    const pr = isObj(s.paramRef) ? s.paramRef : {};
    const hasName = typeof pr.name === 'string' && pr.name !== '';
    const hasSel = pr.selector !== undefined && pr.selector !== null;
    if (hasName === hasSel) errs.push({ field: 'spec.paramRef', type: 'FieldValueInvalid', message: 'Invalid value: one of `name` or `selector` must be set' });
    if (hasSel) errs.push(...validateLabelSelector(pr.selector, 'spec.paramRef.selector'));
    if (pr.parameterNotFoundAction === undefined) errs.push({ field: 'spec.paramRef.parameterNotFoundAction', type: 'FieldValueRequired', message: 'Required value' });
    else if (pr.parameterNotFoundAction !== 'Allow' && pr.parameterNotFoundAction !== 'Deny') {
      errs.push({ field: 'spec.paramRef.parameterNotFoundAction', type: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(pr.parameterNotFoundAction)}: supported values: "Allow", "Deny"` });
    }
  }
  errs.push(...validateMatch(s.matchResources, 'spec.matchResources', false));
  return errs;
}

function compileMatch(m: unknown): MatchResources {
  const x = isObj(m) ? m : {};
  return {
    rules: (Array.isArray(x.resourceRules) ? x.resourceRules : []) as Rule[],
    exclude: (Array.isArray(x.excludeResourceRules) ? x.excludeResourceRules : []) as Rule[],
    namespaceSelector: toLabelSelector(x.namespaceSelector),
    objectSelector: toLabelSelector(x.objectSelector),
    matchPolicy: x.matchPolicy === 'Exact' ? 'Exact' : 'Equivalent',
  };
}

export function compilePolicy(o: ApiObject): CompiledPolicy {
  const copy = JSON.parse(JSON.stringify(o)) as ApiObject;
  defaultPolicy(copy);
  const s = spec(copy);
  const problems: string[] = [];
  const compile = (src: unknown, what: string, vars: readonly string[]): AdmissionExpression | undefined => {
    try {
      return compileAdmissionCel(src, vars);
    } catch (e) {
      problems.push(`${what}: ${(e as Error).message}`);
      return undefined;
    }
  };
  const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);
  const pk = isObj(s.paramKind) ? s.paramKind : undefined;
  return {
    name: copy.metadata?.name ?? '',
    failurePolicy: s.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
    ...(pk ? { paramKind: { apiVersion: String(pk.apiVersion ?? ''), kind: String(pk.kind ?? '') } } : {}),
    match: compileMatch(s.matchConstraints),
    matchConditions: list(s.matchConditions).flatMap((c) => {
      const expr = compile(c.expression, `matchCondition ${JSON.stringify(c.name)}`, POLICY_MATCH_VARIABLES);
      return expr ? [{ name: String(c.name), expr }] : [];
    }),
    variables: list(s.variables).flatMap((v) => {
      const expr = compile(v.expression, `variable ${JSON.stringify(v.name)}`, POLICY_VARIABLES);
      return expr ? [{ name: String(v.name), expr }] : [];
    }),
    validations: list(s.validations).flatMap((v, i) => {
      const expr = compile(v.expression, `validations[${i}]`, POLICY_VARIABLES);
      const messageExpr = v.messageExpression === undefined ? undefined : compile(v.messageExpression, `validations[${i}].messageExpression`, POLICY_VARIABLES);
      return expr ? [{ expr, message: typeof v.message === 'string' ? v.message : undefined, messageExpr, reason: typeof v.reason === 'string' ? v.reason : 'Invalid' }] : [];
    }),
    auditAnnotations: list(s.auditAnnotations).flatMap((a) => {
      const expr = compile(a.valueExpression, `auditAnnotations ${JSON.stringify(a.key)}`, POLICY_VARIABLES);
      return expr ? [{ key: String(a.key), expr }] : [];
    }),
    ...(problems.length > 0 ? { broken: problems.join('; ') } : {}),
  };
}

export function compileBinding(o: ApiObject): CompiledBinding {
  const copy = JSON.parse(JSON.stringify(o)) as ApiObject;
  defaultBinding(copy);
  const s = spec(copy);
  const pr = isObj(s.paramRef) ? s.paramRef : undefined;
  return {
    name: copy.metadata?.name ?? '',
    policyName: String(s.policyName ?? ''),
    ...(pr
      ? {
          paramRef: {
            name: typeof pr.name === 'string' && pr.name !== '' ? pr.name : undefined,
            namespace: typeof pr.namespace === 'string' && pr.namespace !== '' ? pr.namespace : undefined,
            selector: pr.selector !== undefined && pr.selector !== null ? toLabelSelector(pr.selector) : undefined,
            parameterNotFoundAction: pr.parameterNotFoundAction === 'Allow' ? 'Allow' : 'Deny',
          },
        }
      : {}),
    ...(isObj(s.matchResources) ? { match: compileMatch(s.matchResources) } : {}),
    actions: (Array.isArray(s.validationActions) ? s.validationActions : []).map(String),
  };
}
