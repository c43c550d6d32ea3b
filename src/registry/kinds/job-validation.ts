// kube's Job spec validation (pkg/apis/batch/validation, 1.32) for the
// failure and success fields: backoffLimitPerIndex / maxFailedIndexes
// (KEP-3850), podFailurePolicy, podReplacementPolicy and successPolicy
// (KEP-3998), with kube's field paths and messages; and the fields kube makes
// immutable on update.

import type { FieldError, JSONValue } from '../types.js';

type Obj = Record<string, JSONValue>;

// kube's limits (validation.go)
const MAX_PARALLELISM_INDEXED = 100_000;
const MAX_FAILED_INDEXES = 100_000;
const COMPLETIONS_SOFT_LIMIT = 100_000;
const PARALLELISM_HIGH_COMPLETIONS = 10_000;
const MAX_FAILED_INDEXES_HIGH_COMPLETIONS = 10_000;
const MAX_POLICY_RULES = 20;
const MAX_ON_POD_CONDITIONS = 20;
const MAX_EXIT_CODES = 255;
const MAX_SUCCESS_RULES = 20;
const MAX_SUCCEEDED_INDEXES_LEN = 64 * 1024;

const show = (v: unknown): string => (typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v ?? null));
const invalid = (field: string, v: unknown, m: string): FieldError => ({ field, type: 'FieldValueInvalid', message: `Invalid value: ${show(v)}: ${m}` });
const required = (field: string, m: string): FieldError => ({ field, type: 'FieldValueRequired', message: `Required value: ${m}` });
const notSupported = (field: string, v: unknown, ok: string[]): FieldError => ({
  field, type: 'FieldValueNotSupported', message: `Unsupported value: ${show(v)}: supported values: ${ok.map((x) => JSON.stringify(x)).join(', ')}`,
});
const tooMany = (field: string, n: number, max: number): FieldError => ({ field, type: 'FieldValueTooMany', message: `Too many: ${n}: must have at most ${max} items` });
const nonNegative = (field: string, v: unknown): FieldError[] => (typeof v === 'number' && v < 0 ? [invalid(field, v, 'must be greater than or equal to 0')] : []);
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/**
 * kube's validateIndexesFormat: ascending, non-overlapping `a` or `a-b`
 * (a < b) below `completions`; the number of indexes, or an error.
 */
export function indexesFormat(s: string, completions: number): number | string {
  if (s === '') return 0;
  let total = 0;
  let prev = -1;
  for (const part of s.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) return `cannot convert string to integer for index: ${JSON.stringify(part)}`;
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (m[2] !== undefined && lo >= hi) return `the fragment ${JSON.stringify(part)} violates the requirement that first index must be smaller than the second index`;
    if (hi >= completions) return `too large index: ${JSON.stringify(part)}`;
    if (lo <= prev) return `non-increasing order, previous: ${prev}, current: ${lo}`;
    prev = hi;
    total += hi - lo + 1;
  }
  return total;
}

function containerNames(spec: Obj): Set<string> {
  const pod = ((spec.template as Obj | undefined)?.spec ?? {}) as Obj;
  const names = new Set<string>();
  for (const c of [...list(pod.containers), ...list(pod.initContainers)]) if (isObj(c) && typeof c.name === 'string') names.add(c.name);
  return names;
}

function validateFailurePolicy(spec: Obj, at: string): FieldError[] {
  const errs: FieldError[] = [];
  const rules = list((spec.podFailurePolicy as Obj | undefined)?.rules);
  if (rules.length > MAX_POLICY_RULES) errs.push(tooMany(`${at}.rules`, rules.length, MAX_POLICY_RULES));
  const names = containerNames(spec);
  for (const [i, r0] of rules.entries()) {
    const r = isObj(r0) ? r0 : {};
    const p = `${at}.rules[${i}]`;
    const action = r.action;
    if (action === undefined || action === '') errs.push(required(`${p}.action`, 'valid values: ["Count" "FailIndex" "FailJob" "Ignore"]'));
    else if (action === 'FailIndex') {
      if (spec.backoffLimitPerIndex === undefined) errs.push(invalid(`${p}.action`, action, 'requires the backoffLimitPerIndex to be set'));
    } else if (!['Count', 'FailJob', 'Ignore'].includes(String(action))) errs.push(notSupported(`${p}.action`, action, ['Count', 'FailIndex', 'FailJob', 'Ignore']));
    const codes = r.onExitCodes;
    const conds = list(r.onPodConditions);
    if (isObj(codes)) {
      const cp = `${p}.onExitCodes`;
      if (codes.operator === undefined || codes.operator === '') errs.push(required(`${cp}.operator`, 'valid values: ["In" "NotIn"]'));
      else if (codes.operator !== 'In' && codes.operator !== 'NotIn') errs.push(notSupported(`${cp}.operator`, codes.operator, ['In', 'NotIn']));
      if (codes.containerName !== undefined && !names.has(String(codes.containerName))) {
        errs.push(invalid(`${cp}.containerName`, codes.containerName, 'must be one of the container or initContainer names in the pod template'));
      }
      const values = list(codes.values);
      if (values.length === 0) errs.push(invalid(`${cp}.values`, values, 'at least one value is required'));
      else if (values.length > MAX_EXIT_CODES) errs.push(tooMany(`${cp}.values`, values.length, MAX_EXIT_CODES));
      const seen = new Set<unknown>();
      let ordered = true;
      for (const [j, v] of values.entries()) {
        if (codes.operator === 'In' && v === 0) errs.push(invalid(`${cp}.values[${j}]`, v, 'must not be 0 for the In operator'));
        if (seen.has(v)) errs.push({ field: `${cp}.values[${j}]`, type: 'FieldValueDuplicate', message: `Duplicate value: ${show(v)}` });
        seen.add(v);
        if (j > 0 && Number(values[j - 1]) > Number(v)) ordered = false;
      }
      if (!ordered) errs.push(invalid(`${cp}.values`, values, 'must be ordered'));
    }
    if (conds.length > MAX_ON_POD_CONDITIONS) errs.push(tooMany(`${p}.onPodConditions`, conds.length, MAX_ON_POD_CONDITIONS));
    for (const [j, c0] of conds.entries()) {
      const c = isObj(c0) ? c0 : {};
      const sp = `${p}.onPodConditions[${j}].status`;
      if (c.status === undefined || c.status === '') errs.push(required(sp, 'valid values: ["False" "True" "Unknown"]'));
      else if (!['False', 'True', 'Unknown'].includes(String(c.status))) errs.push(notSupported(sp, c.status, ['False', 'True', 'Unknown']));
    }
    if (codes !== undefined && conds.length > 0) errs.push({ field: p, type: 'FieldValueInvalid', message: 'Invalid value: specifying both OnExitCodes and OnPodConditions is not supported' });
    if (codes === undefined && conds.length === 0) errs.push({ field: p, type: 'FieldValueInvalid', message: 'Invalid value: specifying one of OnExitCodes and OnPodConditions is required' });
  }
  return errs;
}

function validateSuccessPolicy(spec: Obj, at: string): FieldError[] {
  const errs: FieldError[] = [];
  const rules = list((spec.successPolicy as Obj | undefined)?.rules);
  if (rules.length === 0) errs.push(required(`${at}.rules`, 'at least one rules must be specified when the successPolicy is specified'));
  if (rules.length > MAX_SUCCESS_RULES) errs.push(tooMany(`${at}.rules`, rules.length, MAX_SUCCESS_RULES));
  const completions = typeof spec.completions === 'number' ? spec.completions : 0;
  for (const [i, r0] of rules.entries()) {
    const r = isObj(r0) ? r0 : {};
    const p = `${at}.rules[${i}]`;
    if (r.succeededCount === undefined && r.succeededIndexes === undefined) errs.push(required(p, 'at least one of succeededCount or succeededIndexes must be specified'));
    let total = 0;
    if (r.succeededIndexes !== undefined) {
      const s = String(r.succeededIndexes);
      if (s.length > MAX_SUCCEEDED_INDEXES_LEN) {
        errs.push({ field: `${p}.succeededIndexes`, type: 'FieldValueTooLong', message: `Too long: may not be more than ${MAX_SUCCEEDED_INDEXES_LEN} bytes` });
      }
      const got = indexesFormat(s, completions);
      if (typeof got === 'string') errs.push(invalid(`${p}.succeededIndexes`, s, `error parsing succeededIndexes: ${got}`));
      else total = got;
    }
    if (typeof r.succeededCount === 'number') {
      const cp = `${p}.succeededCount`;
      errs.push(...nonNegative(cp, r.succeededCount));
      if (r.succeededCount > completions) errs.push(invalid(cp, r.succeededCount, `must be less than or equal to ${completions} (the number of specified completions)`));
      if (r.succeededIndexes !== undefined && r.succeededCount > total) {
        errs.push(invalid(cp, r.succeededCount, `must be less than or equal to ${total} (the number of indexes in the specified succeededIndexes field)`));
      }
    }
  }
  return errs;
}

/** the checks kube adds around the failure and success fields of a Job spec at `at` */
export function validateJobPolicies(spec: Obj, at: string): FieldError[] {
  const errs: FieldError[] = [];
  const perIndex = spec.backoffLimitPerIndex;
  const maxFailed = spec.maxFailedIndexes;
  errs.push(...nonNegative(`${at}.backoffLimitPerIndex`, perIndex), ...nonNegative(`${at}.ttlSecondsAfterFinished`, spec.ttlSecondsAfterFinished));
  if (maxFailed !== undefined) {
    errs.push(...nonNegative(`${at}.maxFailedIndexes`, maxFailed));
    if (perIndex === undefined) errs.push(required(`${at}.backoffLimitPerIndex`, 'when maxFailedIndexes is specified'));
  }
  const indexed = spec.completionMode === 'Indexed';
  const completions = spec.completions;
  const parallelism = spec.parallelism;
  if (indexed) {
    if (completions === undefined) errs.push(required(`${at}.completions`, 'when completion mode is Indexed'));
    if (typeof parallelism === 'number' && parallelism > MAX_PARALLELISM_INDEXED) {
      errs.push(invalid(`${at}.parallelism`, parallelism, `must be less than or equal to ${MAX_PARALLELISM_INDEXED} when completion mode is Indexed`));
    }
    if (typeof completions === 'number' && typeof maxFailed === 'number' && maxFailed > completions) errs.push(invalid(`${at}.maxFailedIndexes`, maxFailed, 'must be less than or equal to completions'));
    if (typeof maxFailed === 'number' && maxFailed > MAX_FAILED_INDEXES) errs.push(invalid(`${at}.maxFailedIndexes`, maxFailed, `must be less than or equal to ${MAX_FAILED_INDEXES}`));
    if (typeof completions === 'number' && completions > COMPLETIONS_SOFT_LIMIT && perIndex !== undefined) {
      const why = `when completions are above ${COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index`;
      if (maxFailed === undefined) errs.push(required(`${at}.maxFailedIndexes`, `must be specified when completions is above ${COMPLETIONS_SOFT_LIMIT}`));
      if (typeof parallelism === 'number' && parallelism > PARALLELISM_HIGH_COMPLETIONS) errs.push(invalid(`${at}.parallelism`, parallelism, `must be less than or equal to ${PARALLELISM_HIGH_COMPLETIONS} ${why}`));
      if (typeof maxFailed === 'number' && maxFailed > MAX_FAILED_INDEXES_HIGH_COMPLETIONS) errs.push(invalid(`${at}.maxFailedIndexes`, maxFailed, `must be less than or equal to ${MAX_FAILED_INDEXES_HIGH_COMPLETIONS} ${why}`));
    }
  } else {
    if (perIndex !== undefined) errs.push(invalid(`${at}.backoffLimitPerIndex`, perIndex, 'requires indexed completion mode'));
    if (maxFailed !== undefined) errs.push(invalid(`${at}.maxFailedIndexes`, maxFailed, 'requires indexed completion mode'));
  }
  if (spec.podFailurePolicy !== undefined) errs.push(...validateFailurePolicy(spec, `${at}.podFailurePolicy`));
  if (spec.successPolicy !== undefined) {
    if (!indexed) errs.push(invalid(`${at}.successPolicy`, spec.successPolicy, 'requires indexed completion mode'));
    else errs.push(...validateSuccessPolicy(spec, `${at}.successPolicy`));
  }
  // a podFailurePolicy needs pods to reach Failed before they are replaced (kube's validatePodReplacementPolicy)
  if (spec.podFailurePolicy !== undefined && spec.podReplacementPolicy !== undefined && spec.podReplacementPolicy !== 'Failed') {
    errs.push(notSupported(`${at}.podReplacementPolicy`, spec.podReplacementPolicy, ['Failed']));
  }
  const rp = ((spec.template as Obj | undefined)?.spec as Obj | undefined)?.restartPolicy;
  if (spec.podFailurePolicy !== undefined && rp === 'OnFailure') {
    errs.push(invalid(`${at}.template.spec.restartPolicy`, rp, 'only "Never" is supported when podFailurePolicy is specified'));
  }
  return errs;
}

/**
 * kube's validatePodTemplateUpdate: a Job's template is immutable, but for a
 * suspended Job that never started its scheduling directives (node affinity,
 * nodeSelector, tolerations, labels, annotations, schedulingGates) may change
 */
function templateUnchanged(spec: Obj, old: Obj, schedulingMutable: boolean): boolean {
  const t = structuredClone((spec.template ?? {}) as Obj);
  const o = structuredClone((old.template ?? {}) as Obj);
  if (schedulingMutable) {
    const strip = (x: Obj) => {
      const meta = (x.metadata ?? {}) as Obj;
      delete meta.labels;
      delete meta.annotations;
      const ps = (x.spec ?? {}) as Obj;
      for (const k of ['nodeSelector', 'tolerations', 'schedulingGates']) delete ps[k];
      const aff = ps.affinity as Obj | undefined;
      if (aff) {
        delete aff.nodeAffinity;
        if (Object.keys(aff).length === 0) delete ps.affinity;
      }
    };
    strip(t);
    strip(o);
  }
  return JSON.stringify(sortKeys(t)) === JSON.stringify(sortKeys(o));
}

function sortKeys(v: JSONValue): JSONValue {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys((v as Obj)[k]!)]));
}

/**
 * the spec fields kube's ValidateJobSpecUpdate keeps as they were.
 * `schedulingMutable`: the Job is suspended and has not started (kube's
 * AllowMutableSchedulingDirectives)
 */
export function validateJobImmutable(spec: Obj, old: Obj, at: string, schedulingMutable = false): FieldError[] {
  const errs: FieldError[] = [];
  // completions: immutable unless Indexed, where it may change in tandem with parallelism (elastic Indexed Jobs)
  if (JSON.stringify(spec.completions ?? null) !== JSON.stringify(old.completions ?? null)) {
    if (spec.completionMode !== 'Indexed') errs.push(invalid(`${at}.completions`, spec.completions ?? null, 'field is immutable'));
    else if (typeof spec.completions === 'number' && spec.completions !== spec.parallelism) {
      errs.push(invalid(`${at}.completions`, spec.completions, 'can only be modified in tandem with spec.parallelism'));
    }
  }
  if (!templateUnchanged(spec, old, schedulingMutable)) errs.push(invalid(`${at}.template`, spec.template ?? null, 'field is immutable'));
  for (const f of ['completionMode', 'podFailurePolicy', 'backoffLimitPerIndex', 'successPolicy', 'managedBy']) {
    if (JSON.stringify(spec[f] ?? null) !== JSON.stringify(old[f] ?? null)) errs.push(invalid(`${at}.${f}`, spec[f] ?? null, 'field is immutable'));
  }
  return errs;
}
