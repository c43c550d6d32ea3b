// kube's ValidateResourceQuotaSpec (pkg/apis/core/validation): the names of
// `spec.hard` (standard quota names or qualified ones like
// `count/deployments.apps`), their amounts (non-negative, whole for counted
// names), the scopes and scope selector, and which scopes a name may carry.

import { isQualifiedName } from '../../machinery/schema/object-meta.js';
import { parseAmount } from '../quota/amount.js';
import type { ApiObject, FieldError } from '../types.js';
import { getObject } from './columns.js';
import { invalid, required } from './field-errors.js';

const STANDARD = new Set([
  'cpu', 'memory', 'ephemeral-storage', 'requests.cpu', 'requests.memory', 'requests.storage', 'requests.ephemeral-storage',
  'limits.cpu', 'limits.memory', 'limits.ephemeral-storage', 'pods', 'resourcequotas', 'services', 'replicationcontrollers',
  'secrets', 'persistentvolumeclaims', 'configmaps', 'services.nodeports', 'services.loadbalancers',
]);
/** kube's standardResources: what an unqualified resource name may be at all */
const STANDARD_RESOURCE = new Set([...STANDARD, 'storage']);
const INTEGER = new Set(['pods', 'resourcequotas', 'services', 'replicationcontrollers', 'secrets', 'configmaps', 'persistentvolumeclaims', 'services.nodeports', 'services.loadbalancers']);
const SCOPES = new Set(['Terminating', 'NotTerminating', 'BestEffort', 'NotBestEffort', 'PriorityClass', 'CrossNamespacePodAffinity']);
const POD_COMPUTE = new Set(['cpu', 'memory', 'limits.cpu', 'limits.memory', 'requests.cpu', 'requests.memory']);
const CONFLICTS = [['BestEffort', 'NotBestEffort'], ['Terminating', 'NotTerminating']];
const EXISTS_ONLY = new Set(['BestEffort', 'NotBestEffort', 'Terminating', 'NotTerminating']);

const hugePages = (n: string) => n.startsWith('hugepages-') || n.startsWith('requests.hugepages-');
const isStandardQuota = (n: string) => STANDARD.has(n) || hugePages(n);

/** kube's IsResourceQuotaScopeValidForResource */
function scopeAllows(scope: string, name: string): boolean {
  if (scope === 'BestEffort') return name === 'pods';
  if (SCOPES.has(scope)) return name === 'pods' || POD_COMPUTE.has(name);
  return true;
}

/** kube's IsExtendedResourceName: qualified, outside kubernetes.io, not `requests.`-prefixed */
function isExtended(name: string): boolean {
  if (!name.includes('/') || name.includes('kubernetes.io/') || name.startsWith('requests.')) return false;
  return isQualifiedName(`requests.${name}`).length === 0;
}

function validateName(name: string, at: string): FieldError[] {
  const msgs = isQualifiedName(name);
  if (msgs.length > 0) return msgs.map((m) => invalid(at, name, m));
  if (name.includes('/')) return [];
  if (!STANDARD_RESOURCE.has(name) && !hugePages(name)) return [invalid(at, name, 'must be a standard resource type or fully qualified')];
  if (!isStandardQuota(name)) return [invalid(at, name, 'must be a standard resource for quota')];
  return [];
}

export function validateResourceQuotaSpec(o: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  const hard = getObject(o, 'spec', 'hard') ?? {};
  const names = Object.keys(hard).sort();
  for (const name of names) {
    const at = `spec.hard[${name}]`;
    errs.push(...validateName(name, at));
    const v = parseAmount(hard[name]);
    if (!v) continue;
    if (v.nano < 0n) errs.push(invalid(at, String(hard[name]), 'must be greater than or equal to 0'));
    if ((INTEGER.has(name) || isExtended(name)) && v.nano % 1_000_000_000n !== 0n) errs.push(invalid(at, String(hard[name]), 'must be an integer'));
  }
  const spec = (o.spec ?? {}) as { scopes?: unknown; scopeSelector?: { matchExpressions?: unknown } };
  const scopes = Array.isArray(spec.scopes) ? spec.scopes.map(String) : [];
  for (const scope of scopes) {
    if (!SCOPES.has(scope)) errs.push(invalid('spec.scopes', scopes, 'unsupported scope'));
    for (const name of names) if (isStandardQuota(name) && !scopeAllows(scope, name)) errs.push(invalid('spec.scopes', scopes, 'unsupported scope applied to resource'));
  }
  for (const pair of CONFLICTS) if (pair.every((s) => scopes.includes(s))) errs.push(invalid('spec.scopes', scopes, 'conflicting scopes'));
  const exprs = Array.isArray(spec.scopeSelector?.matchExpressions) ? (spec.scopeSelector.matchExpressions as Record<string, unknown>[]) : undefined;
  if (exprs) errs.push(...validateScopeSelector(exprs, names, spec.scopeSelector as Record<string, unknown>));
  return errs;
}

function validateScopeSelector(exprs: Record<string, unknown>[], names: string[], selector: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = [];
  const at = 'spec.scopeSelector.matchExpressions';
  const seen = new Set<string>();
  for (const e of exprs) {
    const scope = String(e.scopeName ?? '');
    const op = String(e.operator ?? '');
    const values = Array.isArray(e.values) ? e.values : [];
    if (!SCOPES.has(scope)) errs.push(invalid(`${at}.scopeName`, scope, 'unsupported scope'));
    for (const name of names) if (isStandardQuota(name) && !scopeAllows(scope, name)) errs.push(invalid(at, selector, 'unsupported scope applied to resource'));
    if (EXISTS_ONLY.has(scope) && op !== 'Exists') {
      errs.push(invalid(`${at}.operator`, op, "must be 'Exist' only operator when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort and ResourceQuotaScopeNotBestEffort"));
    }
    if (op === 'In' || op === 'NotIn') {
      if (values.length === 0) errs.push(required(`${at}.values`, "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"));
    } else if (op === 'Exists' || op === 'DoesNotExist') {
      if (values.length > 0) errs.push(invalid(`${at}.values`, values, "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"));
    } else errs.push(invalid(`${at}.operator`, op, 'not a valid selector operator'));
    seen.add(scope);
  }
  for (const pair of CONFLICTS) if (pair.every((s) => seen.has(s))) errs.push(invalid(at, null, 'conflicting scopes'));
  return errs;
}
