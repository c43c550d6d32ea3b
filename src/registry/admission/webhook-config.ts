// MutatingWebhookConfiguration and ValidatingWebhookConfiguration
// (admissionregistration.<domain>/v1, spec 000 §9.3 row 1.22): defaults,
// validation of the configuration itself (422 Invalid, one cause per field),
// and the compiled form the dispatcher uses (CEL planned once per object).

import type { LabelSelector } from '../../machinery/selectors/labels.js';
import type { ApiObject, FieldError } from '../types.js';
import { AdmissionCelError, type AdmissionExpression, compileAdmissionCel } from './cel.js';
import { type Rule, toLabelSelector, validateLabelSelector, validateRules } from './matching.js';

export const DEFAULT_TIMEOUT_SECONDS = 10;
export const MAX_TIMEOUT_SECONDS = 30;
export const MAX_MATCH_CONDITIONS = 64;
/** the CEL variables of a webhook's matchConditions (kube also has `authorizer`; not offered here) */
export const MATCH_CONDITION_VARIABLES = ['object', 'oldObject', 'request'] as const;

export interface ClientConfig {
  url?: string;
  service?: { namespace: string; name: string; path?: string; port: number };
  /** PEM, decoded from caBundle; absent = the host's roots */
  caPem?: string;
}

export interface CompiledWebhook {
  /** `<configuration>/<webhook>` for messages and metrics */
  configName: string;
  name: string;
  mutating: boolean;
  rules: Rule[];
  matchPolicy: 'Exact' | 'Equivalent';
  namespaceSelector: LabelSelector;
  objectSelector: LabelSelector;
  matchConditions: { name: string; expr: AdmissionExpression }[];
  failurePolicy: 'Fail' | 'Ignore';
  timeoutMs: number;
  sideEffects: string;
  reinvocationPolicy: 'Never' | 'IfNeeded';
  clientConfig: ClientConfig;
  /** set when the stored configuration cannot be used (written by an older version): calls fail per failurePolicy */
  broken?: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** kube's SetDefaults_*Webhook */
export function defaultWebhookConfiguration(o: ApiObject, mutating: boolean): void {
  const hooks = Array.isArray(o.webhooks) ? o.webhooks : [];
  for (const h of hooks) {
    if (!isObj(h)) continue;
    h.failurePolicy ??= 'Fail';
    h.matchPolicy ??= 'Equivalent';
    h.timeoutSeconds ??= DEFAULT_TIMEOUT_SECONDS;
    h.namespaceSelector ??= {};
    h.objectSelector ??= {};
    if (mutating) h.reinvocationPolicy ??= 'Never';
    for (const r of Array.isArray(h.rules) ? h.rules : []) if (isObj(r)) r.scope ??= '*';
    const cc = h.clientConfig;
    if (isObj(cc) && isObj(cc.service)) cc.service.port ??= 443;
  }
}

const QUALIFIED = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function enumCheck(errs: FieldError[], field: string, v: unknown, allowed: string[]): void {
  if (v === undefined) return;
  if (typeof v !== 'string' || !allowed.includes(v)) {
    errs.push({ field, type: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(v)}: supported values: ${allowed.map((a) => `"${a}"`).join(', ')}` });
  }
}

/**
 * Kubernetes' ValidateMutating/ValidatingWebhookConfiguration. `old` lets an
 * update keep a sideEffects value v1 no longer accepts (ratcheting, as kube).
 */
export function validateWebhookConfiguration(o: ApiObject, mutating: boolean, old?: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  const hooks = o.webhooks;
  if (hooks === undefined || hooks === null) return errs;
  if (!Array.isArray(hooks)) return [{ field: 'webhooks', type: 'FieldValueInvalid', message: 'Invalid value: must be a list' }];
  const oldSideEffects = new Map<string, unknown>();
  for (const h of Array.isArray(old?.webhooks) ? old.webhooks : []) if (isObj(h)) oldSideEffects.set(String(h.name), h.sideEffects);
  const names = new Set<string>();
  hooks.forEach((h, i) => {
    const f = `webhooks[${i}]`;
    if (!isObj(h)) {
      errs.push({ field: f, type: 'FieldValueInvalid', message: 'Invalid value: must be an object' });
      return;
    }
    const name = h.name;
    if (typeof name !== 'string' || name === '') errs.push({ field: `${f}.name`, type: 'FieldValueRequired', message: 'Required value' });
    else {
      if (!DNS_SUBDOMAIN.test(name) || name.split('.').length < 3) {
        errs.push({ field: `${f}.name`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(name)}: should be a domain with at least three segments separated by dots` });
      }
      if (names.has(name)) errs.push({ field: `${f}.name`, type: 'FieldValueDuplicate', message: `Duplicate value: ${JSON.stringify(name)}` });
      names.add(name);
    }
    const versions = h.admissionReviewVersions;
    if (!Array.isArray(versions) || versions.length === 0) {
      errs.push({ field: `${f}.admissionReviewVersions`, type: 'FieldValueRequired', message: 'Required value: must specify one of v1, v1beta1' });
    } else if (!versions.includes('v1')) {
      // we speak AdmissionReview v1 only (docs/admission.md)
      errs.push({ field: `${f}.admissionReviewVersions`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(versions)}: must include at least one of v1` });
    }
    const se = h.sideEffects;
    const ratchet = oldSideEffects.get(String(name)) === se && (se === 'Unknown' || se === 'Some');
    if (se === undefined || se === '') errs.push({ field: `${f}.sideEffects`, type: 'FieldValueRequired', message: 'Required value: must specify one of None, NoneOnDryRun' });
    else if (!ratchet) enumCheck(errs, `${f}.sideEffects`, se, ['None', 'NoneOnDryRun']);
    enumCheck(errs, `${f}.failurePolicy`, h.failurePolicy, ['Fail', 'Ignore']);
    enumCheck(errs, `${f}.matchPolicy`, h.matchPolicy, ['Equivalent', 'Exact']);
    if (mutating) enumCheck(errs, `${f}.reinvocationPolicy`, h.reinvocationPolicy, ['IfNeeded', 'Never']);
    else if (h.reinvocationPolicy !== undefined) errs.push({ field: `${f}.reinvocationPolicy`, type: 'FieldValueForbidden', message: 'Forbidden: only for mutating webhooks' });
    const t = h.timeoutSeconds;
    if (t !== undefined && (typeof t !== 'number' || !Number.isInteger(t) || t < 1 || t > MAX_TIMEOUT_SECONDS)) {
      errs.push({ field: `${f}.timeoutSeconds`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(t)}: the timeout value must be between 1 and ${MAX_TIMEOUT_SECONDS} seconds` });
    }
    errs.push(...validateRules(h.rules, `${f}.rules`));
    errs.push(...validateLabelSelector(h.namespaceSelector, `${f}.namespaceSelector`));
    errs.push(...validateLabelSelector(h.objectSelector, `${f}.objectSelector`));
    errs.push(...validateClientConfig(h.clientConfig, `${f}.clientConfig`));
    errs.push(...validateMatchConditions(h.matchConditions, `${f}.matchConditions`, MATCH_CONDITION_VARIABLES));
  });
  return errs;
}

/** kube's webhook client config checks (ValidateWebhookURL / ValidateWebhookService), at `f`; also a CRD's conversion webhook */
export function validateClientConfig(cc: unknown, f: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!isObj(cc)) return [{ field: f, type: 'FieldValueRequired', message: 'Required value: exactly one of url or service is required' }];
  const hasUrl = cc.url !== undefined && cc.url !== '';
  const hasSvc = cc.service !== undefined && cc.service !== null;
  if (hasUrl === hasSvc) errs.push({ field: f, type: 'FieldValueRequired', message: 'Required value: exactly one of url or service is required' });
  if (hasUrl) {
    let u: URL | undefined;
    try {
      u = new URL(String(cc.url));
    } catch {
      errs.push({ field: `${f}.url`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(cc.url)}: url must be a valid URL` });
    }
    if (u) {
      if (u.protocol !== 'https:') errs.push({ field: `${f}.url`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(cc.url)}: 'https' is the only allowed URL scheme` });
      if (u.hostname === '') errs.push({ field: `${f}.url`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(cc.url)}: host must be specified` });
      if (u.username || u.password) errs.push({ field: `${f}.url`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(cc.url)}: user information is not permitted in the URL` });
      if (u.hash) errs.push({ field: `${f}.url`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(cc.url)}: fragments are not permitted in the URL` });
      if (u.search) errs.push({ field: `${f}.url`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(cc.url)}: query parameters are not permitted in the URL` });
    }
  }
  if (hasSvc) {
    const s = cc.service as Obj;
    if (!isObj(s)) errs.push({ field: `${f}.service`, type: 'FieldValueInvalid', message: 'Invalid value: must be an object' });
    else {
      if (!s.name) errs.push({ field: `${f}.service.name`, type: 'FieldValueRequired', message: 'Required value: service name is required' });
      if (!s.namespace) errs.push({ field: `${f}.service.namespace`, type: 'FieldValueRequired', message: 'Required value: service namespace is required' });
      errs.push(...servicePathErrors(s.path, `${f}.service.path`));
      const p = s.port;
      if (p !== undefined && (typeof p !== 'number' || !Number.isInteger(p) || p < 1 || p > 65535)) {
        errs.push({ field: `${f}.service.port`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(p)}: port is not valid: must be between 1 and 65535, inclusive` });
      }
    }
  }
  if (cc.caBundle !== undefined) {
    const pem = decodeCaBundle(cc.caBundle);
    if (pem === undefined) errs.push({ field: `${f}.caBundle`, type: 'FieldValueInvalid', message: 'Invalid value: "<bytes>": must be base64 of one or more PEM CERTIFICATE blocks' });
  }
  return errs;
}

/**
 * kube's validateWebhookService for `path`: empty and "/" are the root (kube's e2e
 * registers webhooks with `path: ""`); otherwise it starts with '/' and has no
 * empty segment
 */
function servicePathErrors(path: unknown, field: string): FieldError[] {
  if (path === undefined || path === '' || path === '/') return [];
  const invalid = (why: string): FieldError[] => [{ field, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(path)}: ${why}` }];
  if (typeof path !== 'string') return invalid('must be a string');
  if (path === '//') return invalid('segment[0] may not be empty');
  if (!path.startsWith('/')) return invalid("must start with a '/'");
  const steps = path.slice(1).replace(/\/$/, '').split('/');
  const empty = steps.findIndex((step) => step === '');
  return empty < 0 ? [] : invalid(`segment[${empty}] may not be empty`);
}

/** base64 → PEM text holding at least one certificate; undefined when it is not */
export function decodeCaBundle(v: unknown): string | undefined {
  if (typeof v !== 'string' || v === '') return undefined;
  if (!/^[A-Za-z0-9+/\s]*={0,2}\s*$/.test(v)) return undefined;
  const text = Buffer.from(v, 'base64').toString('utf8');
  return text.includes('-----BEGIN CERTIFICATE-----') ? text : undefined;
}

export function validateMatchConditions(mc: unknown, f: string, variables: readonly string[]): FieldError[] {
  const errs: FieldError[] = [];
  if (mc === undefined || mc === null) return errs;
  if (!Array.isArray(mc)) return [{ field: f, type: 'FieldValueInvalid', message: 'Invalid value: must be a list' }];
  if (mc.length > MAX_MATCH_CONDITIONS) errs.push({ field: f, type: 'FieldValueTooMany', message: `Too many: ${mc.length}: must have at most ${MAX_MATCH_CONDITIONS} items` });
  const names = new Set<string>();
  mc.forEach((c: Obj, i) => {
    const cf = `${f}[${i}]`;
    const name = c?.name;
    if (typeof name !== 'string' || name === '') errs.push({ field: `${cf}.name`, type: 'FieldValueRequired', message: 'Required value' });
    else {
      if (!QUALIFIED.test(name.split('/').pop() ?? '') || name.length > 316) {
        errs.push({ field: `${cf}.name`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(name)}: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character` });
      }
      if (names.has(name)) errs.push({ field: `${cf}.name`, type: 'FieldValueDuplicate', message: `Duplicate value: ${JSON.stringify(name)}` });
      names.add(name);
    }
    errs.push(...celErrors(c?.expression, `${cf}.expression`, variables));
  });
  return errs;
}

/** a compile error of one expression as a 422 cause */
export function celErrors(expression: unknown, field: string, variables: readonly string[]): FieldError[] {
  if (expression === undefined || expression === '') return [{ field, type: 'FieldValueRequired', message: 'Required value' }];
  try {
    compileAdmissionCel(expression, variables);
    return [];
  } catch (e) {
    if (e instanceof AdmissionCelError) return [{ field, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(expression)}: ${e.message}` }];
    throw e;
  }
}

/** the runtime form of every webhook of a stored configuration */
export function compileWebhookConfiguration(o: ApiObject, mutating: boolean): CompiledWebhook[] {
  const copy = JSON.parse(JSON.stringify(o)) as ApiObject;
  defaultWebhookConfiguration(copy, mutating);
  const cfgName = copy.metadata?.name ?? '';
  const out: CompiledWebhook[] = [];
  for (const h of (Array.isArray(copy.webhooks) ? copy.webhooks : []) as Obj[]) {
    if (!isObj(h)) continue;
    const cc = isObj(h.clientConfig) ? h.clientConfig : {};
    const problems: string[] = [];
    const conditions: CompiledWebhook['matchConditions'] = [];
    for (const c of (Array.isArray(h.matchConditions) ? h.matchConditions : []) as Obj[]) {
      try {
        conditions.push({ name: String(c.name), expr: compileAdmissionCel(c.expression, MATCH_CONDITION_VARIABLES) });
      } catch (e) {
        problems.push(`matchCondition ${JSON.stringify(c?.name)}: ${(e as Error).message}`);
      }
    }
    const svc = isObj(cc.service) ? cc.service : undefined;
    const caPem = cc.caBundle === undefined ? undefined : decodeCaBundle(cc.caBundle);
    if (cc.caBundle !== undefined && caPem === undefined) problems.push('caBundle is not base64 of PEM certificates');
    if (!cc.url && !svc) problems.push('clientConfig names neither a url nor a service');
    const timeout = typeof h.timeoutSeconds === 'number' ? Math.min(Math.max(h.timeoutSeconds, 1), MAX_TIMEOUT_SECONDS) : DEFAULT_TIMEOUT_SECONDS;
    out.push({
      configName: cfgName,
      name: String(h.name ?? ''),
      mutating,
      rules: (Array.isArray(h.rules) ? h.rules : []) as Rule[],
      matchPolicy: h.matchPolicy === 'Exact' ? 'Exact' : 'Equivalent',
      namespaceSelector: toLabelSelector(h.namespaceSelector),
      objectSelector: toLabelSelector(h.objectSelector),
      matchConditions: conditions,
      failurePolicy: h.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
      timeoutMs: timeout * 1000,
      sideEffects: String(h.sideEffects ?? 'Unknown'),
      reinvocationPolicy: h.reinvocationPolicy === 'IfNeeded' ? 'IfNeeded' : 'Never',
      clientConfig: {
        url: typeof cc.url === 'string' && cc.url !== '' ? cc.url : undefined,
        service: svc ? { namespace: String(svc.namespace ?? ''), name: String(svc.name ?? ''), path: typeof svc.path === 'string' ? svc.path : undefined, port: typeof svc.port === 'number' ? svc.port : 443 } : undefined,
        caPem,
      },
      ...(problems.length > 0 ? { broken: problems.join('; ') } : {}),
    });
  }
  return out;
}
