// Validation of a CustomResourceDefinition itself (issue #16; spec 000 §9.3
// CRD row): names, scope, versions (exactly one storage version), conversion
// (None or Webhook), printer columns, sub-resources and the structural schema of
// every version. Problems are 422 Invalid with Kubernetes' field paths.

import { isDNS1035Label, isDNS1123Subdomain } from '../../machinery/schema/object-meta.js';
import { deepEqual } from '../../machinery/meta.js';
import type { ApiObject, FieldError } from '../types.js';
import { markerPrefixes } from './convert.js';
import { JsonPathError, parseJsonPath } from './jsonpath.js';
import { statusRootErrors, structuralErrors } from './structural.js';
import { validateClientConfig } from '../admission/webhook-config.js';
import { CONVERSION_REVIEW_VERSIONS } from './conversion-webhook.js';
import { labelDomainOf } from '../../machinery/node-taints.js';

type J = Record<string, unknown>;
const isObj = (v: unknown): v is J => v !== null && typeof v === 'object' && !Array.isArray(v);

export interface CrdValidationContext {
  apiDomain: string;
  reservedGroups: () => ReadonlySet<string>;
}

const COLUMN_TYPES = ['integer', 'number', 'string', 'boolean', 'date'];
// kube's customResourceColumnDefinitionFormats (no `name`, which only kube's own Table columns use)
const COLUMN_FORMATS = ['int32', 'int64', 'float', 'double', 'byte', 'date', 'date-time', 'password'];
/** kube lists a set's members sorted, joined by commas */
const oneOf = (list: string[]): string => `must be one of ${[...list].sort().join(',')}`;

function required(field: string): FieldError {
  return { field, type: 'FieldValueRequired', message: 'Required value' };
}

function invalidValue(field: string, v: unknown, why: string): FieldError {
  return { field, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(v)}: ${why}` };
}

export function validateCrd(c: ApiObject, ctx: CrdValidationContext, old?: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  const spec = c.spec;
  if (!isObj(spec)) return [required('spec')];
  const group = spec.group;
  if (typeof group !== 'string' || group === '') errs.push(required('spec.group'));
  else {
    for (const m of isDNS1123Subdomain(group)) errs.push(invalidValue('spec.group', group, m));
    if (!group.includes('.')) errs.push(invalidValue('spec.group', group, 'should be a domain with at least one dot'));
    if (ctx.reservedGroups().has(group)) errs.push(invalidValue('spec.group', group, 'the group is served by built-in kinds and cannot hold custom resources'));
  }
  const names = spec.names;
  if (!isObj(names)) errs.push(required('spec.names'));
  else {
    errs.push(...validateNames(names, 'spec.names'));
    const expected = `${String(names.plural)}.${String(group)}`;
    if (c.metadata?.name !== expected) errs.push(invalidValue('metadata.name', c.metadata?.name ?? '', 'must be spec.names.plural+"."+spec.group'));
  }
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') {
    errs.push(spec.scope === undefined ? required('spec.scope') : { field: 'spec.scope', type: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(spec.scope)}: supported values: "Cluster", "Namespaced"` });
  }
  if (spec.preserveUnknownFields === true) {
    // kube: "must be false…" only when a schema has defaults (validateCustomResourceDefinitionSpec)
    if (Array.isArray(spec.versions) && spec.versions.some((v) => isObj(v) && hasDefault(isObj(v.schema) ? v.schema.openAPIV3Schema : undefined))) {
      errs.push(invalidValue('spec.preserveUnknownFields', true, 'must be false in order to use defaults in the schema'));
    }
  }
  if (isObj(spec.conversion)) errs.push(...validateConversion(spec.conversion, spec.preserveUnknownFields === true));
  errs.push(...validateVersions(spec.versions, ctx));
  errs.push(...validateApiApproval(c, old, ctx));
  errs.push(...validatePreserveUnknownFields(spec, isObj(old?.spec) ? old.spec : undefined));
  return errs;
}

/** kube's validatePreserveUnknownFields: never true again (a CRD stored with true may stay so) */
function validatePreserveUnknownFields(spec: J, oldSpec: J | undefined): FieldError[] {
  if (oldSpec?.preserveUnknownFields === true || spec.preserveUnknownFields !== true) return [];
  return [invalidValue('spec.preserveUnknownFields', true, 'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead')];
}

function hasDefault(s: unknown): boolean {
  if (Array.isArray(s)) return s.some(hasDefault);
  if (!isObj(s)) return false;
  if (s.default !== undefined) return true;
  return Object.entries(s).some(([k, v]) => (k === 'properties' && isObj(v) ? Object.values(v).some(hasDefault) : ['items', 'additionalProperties', 'not', 'allOf', 'anyOf', 'oneOf'].includes(k) && hasDefault(v)));
}

export const API_APPROVAL_ANNOTATION = 'api-approved.kubernetes.io';
const KEP_1111 = 'see https://github.com/kubernetes/enhancements/pull/1111';

/**
 * kube's IsProtectedCommunityGroup: k8s.io, kubernetes.io and their subdomains; with orch's
 * convention that the API domain stands for k8s.io (and the label domain for kubernetes.io),
 * `<domain>` and `*.<domain>` too (docs/crds.md)
 */
export function isProtectedGroup(group: string, apiDomain: string): boolean {
  return [...new Set(['k8s.io', 'kubernetes.io', apiDomain, labelDomainOf(apiDomain)])].some((d) => group === d || group.endsWith(`.${d}`));
}

type Approval = 'missing' | 'bypassed' | 'approved' | 'invalid';

/** kube's GetAPIApprovalState: a URL with scheme and host approves, `unapproved…` bypasses */
function approvalState(annotations: unknown): Approval {
  const a = isObj(annotations) ? annotations[API_APPROVAL_ANNOTATION] : undefined;
  if (typeof a !== 'string' || a === '') return 'missing';
  if (a.startsWith('unapproved')) return 'bypassed';
  try {
    const u = new URL(a);
    if (u.host !== '') return 'approved';
  } catch {
    // not a URL
  }
  return 'invalid';
}

/** kube's validateAPIApproval: a protected group needs the annotation; an unchanged state never fails */
function validateApiApproval(c: ApiObject, old: ApiObject | undefined, ctx: CrdValidationContext): FieldError[] {
  const group = isObj(c.spec) ? c.spec.group : undefined;
  if (typeof group !== 'string' || !isProtectedGroup(group, ctx.apiDomain)) return [];
  const state = approvalState(c.metadata?.annotations);
  if (old && approvalState(old.metadata?.annotations) === state) return [];
  const field = `metadata.annotations[${API_APPROVAL_ANNOTATION}]`;
  if (state === 'missing') return [{ field, type: 'FieldValueRequired', message: `Required value: protected groups must have approval annotation "${API_APPROVAL_ANNOTATION}", ${KEP_1111}` }];
  if (state === 'invalid') {
    return [invalidValue(field, c.metadata?.annotations?.[API_APPROVAL_ANNOTATION], `protected groups must have approval annotation "${API_APPROVAL_ANNOTATION}" with either a URL or a reason starting with "unapproved", ${KEP_1111}`)];
  }
  return [];
}

/**
 * kube's validateCustomResourceConversion. Kube validates the internal form, in which
 * `webhook.clientConfig` is `webhookClientConfig` and `webhook.conversionReviewVersions`
 * is `conversionReviewVersions` right under `spec.conversion`: its errors name those paths.
 */
function validateConversion(conv: J, preserveUnknownFields: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const at = 'spec.conversion';
  const webhook = isObj(conv.webhook) ? conv.webhook : undefined;
  if (conv.strategy !== 'None' && conv.strategy !== 'Webhook') {
    errs.push({ field: `${at}.strategy`, type: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(conv.strategy)}: supported values: "None", "Webhook"` });
  }
  if (conv.strategy !== 'Webhook') {
    const forbidden = (f: string): FieldError => ({ field: `${at}.${f}`, type: 'FieldValueForbidden', message: 'Forbidden: should not be set when strategy is not set to Webhook' });
    if (webhook?.clientConfig !== undefined && webhook.clientConfig !== null) errs.push(forbidden('webhookClientConfig'));
    if (Array.isArray(webhook?.conversionReviewVersions) && webhook.conversionReviewVersions.length > 0) errs.push(forbidden('conversionReviewVersions'));
    return errs;
  }
  if (preserveUnknownFields) errs.push(invalidValue(`${at}.strategy`, conv.strategy, 'must be None if spec.preserveUnknownFields is true'));
  if (webhook?.clientConfig === undefined || webhook.clientConfig === null) {
    errs.push({ field: `${at}.webhookClientConfig`, type: 'FieldValueRequired', message: 'Required value: required when strategy is set to Webhook' });
  } else {
    errs.push(...validateClientConfig(webhook.clientConfig, `${at}.webhookClientConfig`));
  }
  errs.push(...validateReviewVersions(webhook?.conversionReviewVersions, `${at}.conversionReviewVersions`));
  return errs;
}

/** kube's validateConversionReviewVersions: at least one, no duplicates, DNS-1035 labels, one this server speaks */
function validateReviewVersions(versions: unknown, at: string): FieldError[] {
  if (!Array.isArray(versions) || versions.length === 0) return [required(at)];
  const errs: FieldError[] = [];
  const seen = new Set<unknown>();
  let understood = false;
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      errs.push(invalidValue(`${at}[${i}]`, v, 'duplicate version'));
      return;
    }
    seen.add(v);
    if (typeof v !== 'string') {
      errs.push(invalidValue(`${at}[${i}]`, v, 'must be a string'));
      return;
    }
    for (const m of isDNS1035Label(v)) errs.push(invalidValue(`${at}[${i}]`, v, m));
    if (CONVERSION_REVIEW_VERSIONS.includes(v)) understood = true;
  });
  if (!understood) {
    // kube prints the Go value of the list: []string{"v3"}
    const shown = `[]string{${versions.map((v) => JSON.stringify(String(v))).join(', ')}}`;
    errs.push({ field: at, type: 'FieldValueInvalid', message: `Invalid value: ${shown}: must include at least one of ${CONVERSION_REVIEW_VERSIONS.join(', ')}` });
  }
  return errs;
}

export function validateNames(names: J, path: string): FieldError[] {
  const errs: FieldError[] = [];
  // kube: every name is a DNS-1035 label (kinds lower-cased), its messages joined in one error
  const label = (field: string, v: unknown, mixedCase = false): void => {
    if (typeof v !== 'string') {
      errs.push(invalidValue(field, v, 'must be a string'));
      return;
    }
    const msgs = isDNS1035Label(mixedCase ? v.toLowerCase() : v);
    if (msgs.length > 0) errs.push(invalidValue(field, v, `${mixedCase ? 'may have mixed case, but should otherwise match: ' : ''}${msgs.join(',')}`));
  };
  for (const k of ['plural', 'singular', 'kind', 'listKind']) {
    const v = names[k];
    if (v === undefined || v === '') {
      // singular and listKind are defaulted (from kind) before validation
      if (k === 'plural' || k === 'kind') errs.push(required(`${path}.${k}`));
      continue;
    }
    label(`${path}.${k}`, v, k === 'kind' || k === 'listKind');
  }
  if (typeof names.kind === 'string' && names.kind === names.listKind) errs.push(invalidValue(`${path}.listKind`, names.listKind, 'kind and listKind may not be the same'));
  for (const k of ['shortNames', 'categories']) {
    const list = names[k];
    if (list === undefined) continue;
    if (!Array.isArray(list)) {
      errs.push(invalidValue(`${path}.${k}`, list, 'must be a list of strings'));
      continue;
    }
    list.forEach((v, i) => label(`${path}.${k}[${i}]`, v));
  }
  return errs;
}

/**
 * kube validates the internal form of a CRD, in which a schema, sub-resources or
 * printer columns that are identical in every version (so also those of a
 * single version) live at the top: its errors name `spec.validation.openAPIV3Schema`,
 * `spec.subresources` and `spec.additionalPrinterColumns[i]` then.
 */
function sharedByAll(versions: unknown[], pick: (v: J) => unknown, present: (x: unknown) => boolean): boolean {
  const first = isObj(versions[0]) ? pick(versions[0]) : undefined;
  return versions.every((v) => isObj(v) && present(pick(v)) && deepEqual(pick(v), first));
}

function validateVersions(versions: unknown, ctx: CrdValidationContext): FieldError[] {
  const errs: FieldError[] = [];
  if (!Array.isArray(versions) || versions.length === 0) return [{ field: 'spec.versions', type: 'FieldValueInvalid', message: 'Invalid value: null: must have exactly one version marked as storage version' }];
  const prefixes = markerPrefixes(ctx.apiDomain);
  const schemaOf = (v: J): unknown => (isObj(v.schema) ? v.schema.openAPIV3Schema : undefined);
  const topSchema = sharedByAll(versions, schemaOf, (x) => x !== undefined);
  const topSubresources = sharedByAll(versions, (v) => v.subresources, (x) => x !== undefined);
  const topColumns = sharedByAll(versions, (v) => v.additionalPrinterColumns, (x) => Array.isArray(x) && x.length > 0);
  const seen = new Set<string>();
  let unique = true;
  let storage = 0;
  // kube's status flag: a version's own sub-resources, any version's for the shared (top) schema
  const hasStatus = (v: unknown): boolean => isObj(v) && isObj(v.subresources) && v.subresources.status !== undefined && v.subresources.status !== null;
  versions.forEach((v, i) => {
    const at = `spec.versions[${i}]`;
    if (!isObj(v)) {
      errs.push(invalidValue(at, v, 'must be an object'));
      return;
    }
    if (typeof v.name !== 'string' || v.name === '') errs.push(required(`${at}.name`));
    else {
      const msgs = isDNS1035Label(v.name);
      if (msgs.length > 0) errs.push(invalidValue(`${at}.name`, v.name, msgs.join(',')));
      if (seen.has(v.name)) unique = false;
      seen.add(v.name);
    }
    errs.push(...validateDeprecationWarning(v, `${at}.deprecationWarning`));
    if (typeof v.served !== 'boolean') errs.push(required(`${at}.served`));
    if (typeof v.storage !== 'boolean') errs.push(required(`${at}.storage`));
    if (v.storage === true) storage++;
    const schema = schemaOf(v);
    if (schema === undefined) errs.push({ field: `${at}.schema.openAPIV3Schema`, type: 'FieldValueRequired', message: 'Required value: schemas are required' });
    else if (!topSchema) {
      if (hasStatus(v)) errs.push(...statusRootErrors(schema, `${at}.schema.openAPIV3Schema`, prefixes));
      errs.push(...structuralErrors(schema, `${at}.schema.openAPIV3Schema`, prefixes));
    }
    if (!topColumns) errs.push(...validateColumns(v.additionalPrinterColumns, `${at}.additionalPrinterColumns`));
    if (!topSubresources) errs.push(...validateSubresources(v.subresources, `${at}.subresources`));
    errs.push(...validateSelectable(v.selectableFields, `${at}.selectableFields`, schema));
  });
  // kube prints the Go dump of spec.versions as the value; we print the names
  if (!unique) errs.push(invalidValue('spec.versions', versions.map((v) => (isObj(v) ? v.name : v)), 'must contain unique version names'));
  if (storage !== 1) errs.push({ field: 'spec.versions', type: 'FieldValueInvalid', message: `Invalid value: ${storage}: must have exactly one version marked as storage version` });
  // no check of served versions: kube accepts a CRD whose versions are all served: false
  const first = versions[0] as J;
  if (topSchema) {
    if (versions.some(hasStatus)) errs.push(...statusRootErrors(schemaOf(first), 'spec.validation.openAPIV3Schema', prefixes));
    errs.push(...structuralErrors(schemaOf(first), 'spec.validation.openAPIV3Schema', prefixes));
  }
  if (topSubresources) errs.push(...validateSubresources(first.subresources, 'spec.subresources'));
  if (topColumns) errs.push(...validateColumns(first.additionalPrinterColumns, 'spec.additionalPrinterColumns'));
  return errs;
}

/** kube's validateDeprecationWarning: only on a deprecated version, 1–256 printable characters */
function validateDeprecationWarning(v: J, at: string): FieldError[] {
  const w = v.deprecationWarning;
  if (w === undefined || w === null) return [];
  if (v.deprecated !== true) return [invalidValue(at, w, 'can only be set for deprecated versions')];
  if (typeof w !== 'string') return [invalidValue(at, w, 'must be a string')];
  const errs: FieldError[] = [];
  if (Buffer.byteLength(w) > 256) errs.push(invalidValue(at, w, 'must be <= 256 characters long'));
  if (w.length === 0) errs.push(invalidValue(at, w, 'must not be an empty string'));
  const bad = w.search(/[\u0000-\u001f\u007f-\u009f]/);
  if (bad >= 0) errs.push(invalidValue(at, w, `must only contain printable UTF-8 characters; control character found at index ${Buffer.byteLength(w.slice(0, bad))}`));
  return errs;
}

function validateColumns(cols: unknown, path: string): FieldError[] {
  if (cols === undefined) return [];
  if (!Array.isArray(cols)) return [invalidValue(path, cols, 'must be a list')];
  const errs: FieldError[] = [];
  cols.forEach((c, i) => {
    const at = `${path}[${i}]`;
    if (!isObj(c)) {
      errs.push(invalidValue(at, c, 'must be an object'));
      return;
    }
    if (typeof c.name !== 'string' || c.name === '') errs.push(required(`${at}.name`));
    if (c.type === undefined || c.type === '') errs.push({ field: `${at}.type`, type: 'FieldValueRequired', message: `Required value: ${oneOf(COLUMN_TYPES)}` });
    else if (!COLUMN_TYPES.includes(c.type as string)) errs.push(invalidValue(`${at}.type`, c.type, oneOf(COLUMN_TYPES)));
    if (c.format !== undefined && c.format !== '' && !COLUMN_FORMATS.includes(c.format as string)) errs.push(invalidValue(`${at}.format`, c.format, oneOf(COLUMN_FORMATS)));
    // kube's path names the internal Go field (JSONPath)
    if (typeof c.jsonPath !== 'string' || c.jsonPath === '') errs.push(required(`${at}.JSONPath`));
    else if (!c.jsonPath.startsWith('.')) errs.push(invalidValue(`${at}.JSONPath`, c.jsonPath, 'must be a simple json path starting with .'));
    else {
      // beyond kube's check: cells are computed by our own JSONPath subset, refuse what it cannot read
      try {
        parseJsonPath(c.jsonPath);
      } catch (e) {
        if (!(e instanceof JsonPathError)) throw e;
        errs.push(invalidValue(`${at}.JSONPath`, c.jsonPath, `must be a simple json path: ${e.message}`));
      }
    }
  });
  return errs;
}

/**
 * selectable fields are simple paths without indexes, at most 8, no duplicates, to a string,
 * boolean or integer field of the version's schema (kube's validateSelectableFields)
 */
function validateSelectable(fields: unknown, path: string, schema: unknown): FieldError[] {
  if (fields === undefined) return [];
  if (!Array.isArray(fields)) return [invalidValue(path, fields, 'must be a list')];
  const errs: FieldError[] = [];
  if (fields.length > 8) errs.push({ field: path, type: 'FieldValueTooMany', message: `Too many: ${fields.length}: must have at most 8 items` });
  const seen = new Set<string>();
  fields.forEach((f, i) => {
    const jp = isObj(f) ? f.jsonPath : undefined;
    if (typeof jp !== 'string' || jp === '') {
      errs.push(required(`${path}[${i}].jsonPath`));
      return;
    }
    if (!/^(\.[A-Za-z_][A-Za-z0-9_-]*)+$/.test(jp) || jp.startsWith('.metadata.')) errs.push(invalidValue(`${path}[${i}].jsonPath`, jp, 'must be a simple path to a field (not under metadata), such as .spec.color'));
    else if (isObj(schema)) {
      const type = fieldType(schema, jp.slice(1).split('.'));
      if (type === undefined) errs.push(invalidValue(`${path}[${i}].jsonPath`, jp, 'is an invalid path: does not refer to a valid field'));
      else if (type !== 'string' && type !== 'boolean' && type !== 'integer') {
        errs.push(invalidValue(`${path}[${i}].jsonPath`, jp, 'must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.'));
      }
    }
    if (seen.has(jp)) errs.push({ field: `${path}[${i}].jsonPath`, type: 'FieldValueDuplicate', message: `Duplicate value: ${JSON.stringify(jp)}` });
    seen.add(jp);
  });
  return errs;
}

/** the declared type of the field at `segments` under an openAPIV3Schema ('' when untyped); undefined when not declared */
function fieldType(schema: J, segments: string[]): string | undefined {
  let cur: unknown = schema;
  for (const seg of segments) {
    const props = isObj(cur) && isObj(cur.properties) ? cur.properties : undefined;
    cur = props?.[seg];
    if (!isObj(cur)) return undefined;
  }
  return isObj(cur) && typeof cur.type === 'string' ? cur.type : '';
}

function validateSubresources(sub: unknown, path: string): FieldError[] {
  if (sub === undefined) return [];
  if (!isObj(sub)) return [invalidValue(path, sub, 'must be an object')];
  const scale = sub.scale;
  if (scale === undefined) return [];
  if (!isObj(scale)) return [invalidValue(`${path}.scale`, scale, 'must be an object')];
  const errs: FieldError[] = [];
  const check = (k: string, prefixes: string[], req: boolean): void => {
    const v = scale[k];
    const at = `${path}.scale.${k}`;
    if (v === undefined || v === '') {
      if (req) errs.push(required(at));
      return;
    }
    if (typeof v !== 'string' || !v.startsWith('.')) errs.push(invalidValue(at, v, 'must be a simple json path starting with .'));
    else if (!prefixes.some((p) => v.startsWith(p))) errs.push(invalidValue(at, v, `should be a json path under ${prefixes.length > 1 ? `either ${prefixes.map((p) => p.slice(0, -1)).join(' or ')}` : prefixes[0]!.slice(0, -1)}`));
    // beyond kube's check (which accepts paths it then cannot read): no indexes
    else if (!/^(\.[A-Za-z_][A-Za-z0-9_-]*)+$/.test(v)) errs.push(invalidValue(at, v, `should be a json path under ${prefixes.join(' or ')} without array indexes`));
  };
  check('specReplicasPath', ['.spec.'], true);
  check('statusReplicasPath', ['.status.'], true);
  check('labelSelectorPath', ['.spec.', '.status.'], false);
  return errs;
}

export function validateCrdUpdate(c: ApiObject, old: ApiObject, ctx: CrdValidationContext): FieldError[] {
  const errs = validateCrd(c, ctx, old);
  const spec = isObj(c.spec) ? c.spec : {};
  const oldSpec = isObj(old.spec) ? old.spec : {};
  if (oldSpec.scope !== undefined && spec.scope !== oldSpec.scope) errs.push(invalidValue('spec.scope', spec.scope, 'field is immutable'));
  if (oldSpec.group !== undefined && spec.group !== oldSpec.group) errs.push(invalidValue('spec.group', spec.group, 'field is immutable'));
  const names = isObj(spec.names) ? spec.names : {};
  const oldNames = isObj(oldSpec.names) ? oldSpec.names : {};
  if (oldNames.plural !== undefined && names.plural !== oldNames.plural) errs.push(invalidValue('spec.names.plural', names.plural, 'field is immutable'));
  // the kind is fixed once the CRD is Established (kube: it names the stored objects)
  const oldConds = isObj(old.status) && Array.isArray(old.status.conditions) ? old.status.conditions : [];
  const established = oldConds.some((c) => isObj(c) && c.type === 'Established' && c.status === 'True');
  if (established && oldNames.kind !== undefined && names.kind !== oldNames.kind) errs.push(invalidValue('spec.names.kind', names.kind, 'field is immutable'));
  // versions objects were stored in must stay declared (conversion None reads them as any version)
  const stored = isObj(c.status) && Array.isArray(c.status.storedVersions) ? c.status.storedVersions : [];
  const declared = new Set(Array.isArray(spec.versions) ? spec.versions.map((v) => (isObj(v) ? v.name : undefined)) : []);
  stored.forEach((v, i) => {
    if (!declared.has(v)) {
      errs.push(
        invalidValue(
          `status.storedVersions[${i}]`,
          v,
          `missing from spec.versions; ${String(v)} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in ${String(v)} and removes ${String(v)} from status.storedVersions`,
        ),
      );
    }
  });
  return errs;
}
