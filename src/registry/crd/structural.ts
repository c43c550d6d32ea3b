// Structural schema rules for a CRD's openAPIV3Schema (apiextensions v1; spec
// 000 §9.3 CRD row: "openAPIV3Schema required and structural"), with the field
// paths and messages Kubernetes prints, plus the marker rules of §4.9, CEL rule
// compilation (x-<domain>-validations) and default values checked against
// their own schema. Every problem is reported; nothing stops at the first.

import { validateRuleSyntax, validateRules } from '../../machinery/schema/cel-rules.js';
import { compileSchema } from '../../machinery/schema/compile.js';
import { undefinedField, usesOldSelf, validFieldPath } from './cel-fields.js';
import { validateAgainstSchema } from '../../machinery/schema/validate.js';
import { patternError } from '../../machinery/schema/regex.js';
import type { FieldError } from '../types.js';
import { toSchema } from './convert.js';

type J = Record<string, unknown>;

const TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const FORBIDDEN_KEYS: Record<string, string> = {
  $ref: '$ref is not supported',
  patternProperties: 'patternProperties is not supported',
  dependencies: 'dependencies is not supported',
  additionalItems: 'additionalItems is not supported',
  definitions: 'definitions is not supported',
  id: 'id is not supported',
  $schema: '$schema is not supported',
};

const isObj = (v: unknown): v is J => v !== null && typeof v === 'object' && !Array.isArray(v);

class Checker {
  readonly errors: FieldError[] = [];
  constructor(private readonly prefixes: string[]) {}

  private err(field: string, type: string, message: string): void {
    this.errors.push({ field, type, message });
  }

  /** the marker as written (its key, for error paths) */
  private marker(j: J, name: string): { key: string; value: unknown } | undefined {
    for (const p of this.prefixes) if (j[`${p}${name}`] !== undefined) return { key: `${p}${name}`, value: j[`${p}${name}`] };
    return undefined;
  }

  root(j: unknown, path: string): void {
    if (!isObj(j)) {
      this.err(path, 'FieldValueRequired', 'Required value: schemas are required');
      return;
    }
    // an absent type is reported by node() (kube: "must not be empty at the root")
    if (j.type !== undefined && j.type !== '' && j.type !== 'object') this.err(`${path}.type`, 'FieldValueInvalid', `Invalid value: ${JSON.stringify(j.type)}: must be object at the root`);
    if (j.nullable === true) this.err(`${path}.nullable`, 'FieldValueForbidden', 'Forbidden: nullable cannot be true at the root');
    const props = isObj(j.properties) ? j.properties : {};
    if (props.metadata !== undefined) this.metadata(props.metadata, `${path}.properties[metadata]`);
    for (const k of ['apiVersion', 'kind']) {
      const p = props[k];
      if (isObj(p) && p.type !== undefined && p.type !== 'string') this.err(`${path}.properties[${k}].type`, 'FieldValueInvalid', `Invalid value: ${JSON.stringify(p.type)}: must be string`);
    }
    this.node(j, path, { inAlternative: false, isRoot: true });
  }

  /** only restrictions of name and generateName (they are implicitly specified otherwise) */
  private metadata(m: unknown, path: string): void {
    if (!isObj(m)) return;
    const allowed = new Set(['type', 'properties', 'description']);
    const props = isObj(m.properties) ? Object.keys(m.properties) : [];
    if (Object.keys(m).some((k) => !allowed.has(k)) || props.some((p) => p !== 'name' && p !== 'generateName') || (m.type !== undefined && m.type !== 'object')) {
      this.err(path, 'FieldValueForbidden', 'Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified');
    }
  }

  /**
   * `uncorrelatable`: the highest enclosing path below which old values cannot be correlated
   * (items of lists other than `map`, properties of atomic maps; kube's withForbidOldSelfValidations)
   */
  private node(j: unknown, path: string, o: { inAlternative: boolean; isRoot?: boolean; isItems?: boolean; uncorrelatable?: string }): void {
    if (!isObj(j)) {
      this.err(path, 'FieldValueInvalid', `Invalid value: ${JSON.stringify(j)}: must be a schema object`);
      return;
    }
    for (const [k, why] of Object.entries(FORBIDDEN_KEYS)) if (j[k] !== undefined) this.err(`${path}.${k}`, 'FieldValueForbidden', `Forbidden: ${why}`);
    if (j.uniqueItems === true) this.err(`${path}.uniqueItems`, 'FieldValueForbidden', 'Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic');
    const pres = this.marker(j, 'preserve-unknown-fields');
    const ios = this.marker(j, 'int-or-string');
    const emb = this.marker(j, 'embedded-resource');
    for (const m of [pres, ios, emb]) if (m && m.value !== true) this.err(`${path}.${m.key}`, 'FieldValueInvalid', `Invalid value: ${JSON.stringify(m.value)}: must be true or undefined`);
    const type = j.type;
    if (o.inAlternative) {
      for (const k of ['type', 'description', 'default', 'nullable', 'additionalProperties']) {
        if (j[k] !== undefined) this.err(`${path}.${k}`, 'FieldValueForbidden', 'Forbidden: must be empty to be structural');
      }
      if (pres || emb) this.err(`${path}.${(pres ?? emb)!.key}`, 'FieldValueForbidden', 'Forbidden: must be false to be structural');
    } else if (type === undefined || type === '') {
      if (ios?.value !== true && pres?.value !== true) {
        const where = o.isRoot ? 'at the root' : o.isItems ? 'for specified array items' : 'for specified object fields';
        this.err(`${path}.type`, 'FieldValueRequired', `Required value: must not be empty ${where}`);
      }
    } else if (typeof type !== 'string' || !TYPES.includes(type)) {
      this.err(`${path}.type`, 'FieldValueNotSupported', `Unsupported value: ${JSON.stringify(type)}: supported values: ${TYPES.map((t) => `"${t}"`).join(', ')}`);
    } else if (ios?.value === true) {
      this.err(`${path}.type`, 'FieldValueInvalid', `Invalid value: ${JSON.stringify(type)}: must be empty if ${ios.key} is true`);
    }
    if (emb?.value === true && !o.inAlternative) {
      if (type !== 'object') this.err(`${path}.type`, 'FieldValueInvalid', `Invalid value: ${JSON.stringify(type ?? '')}: must be object if ${emb.key} is true`);
      if (!isObj(j.properties) && pres?.value !== true) this.err(`${path}.properties`, 'FieldValueRequired', `Required value: must not be empty if ${emb.key} is true without x-kubernetes-preserve-unknown-fields`);
    }
    // kube forbids a map schema (or false) beside properties; `additionalProperties: true` may sit with them
    if (isObj(j.properties) && Object.keys(j.properties).length > 0 && (j.additionalProperties === false || isObj(j.additionalProperties))) {
      this.err(`${path}.additionalProperties`, 'FieldValueForbidden', 'Forbidden: additionalProperties and properties are mutual exclusive');
    }
    if (j.additionalProperties === false && !o.inAlternative) this.err(`${path}.additionalProperties`, 'FieldValueForbidden', 'Forbidden: must not be false (the default is pruning unknown fields)');
    if ((type === 'object' || type === undefined) && j.items !== undefined && !o.inAlternative && type === 'object') {
      this.err(`${path}.items`, 'FieldValueForbidden', 'Forbidden: must be empty for type object');
    }
    if (type === 'array' && j.items === undefined && !o.inAlternative) this.err(`${path}.items`, 'FieldValueRequired', 'Required value: must be specified for type array');
    if (Array.isArray(j.items)) this.err(`${path}.items`, 'FieldValueForbidden', 'Forbidden: items must be a schema object and not an array');
    if (j.required !== undefined && (!Array.isArray(j.required) || j.required.some((r) => typeof r !== 'string'))) this.err(`${path}.required`, 'FieldValueInvalid', 'Invalid value: must be a list of property names');
    // kube compiles with Go's regexp (apiserver/schema/validation.go validateValueValidation)
    const patternErr = typeof j.pattern === 'string' && j.pattern !== '' ? patternError(j.pattern) : undefined;
    if (patternErr !== undefined) {
      this.err(`${path}.pattern`, 'FieldValueInvalid', `Invalid value: ${JSON.stringify(j.pattern)}: must be a valid regular expression, but isn't: ${patternErr}`);
    }
    this.markers(j, path, type);
    this.rules(j, path, o.isRoot === true, o.inAlternative ? undefined : (o.uncorrelatable ?? null));
    const inAlternative = o.inAlternative;
    const atomicMap = this.marker(j, 'map-type')?.value === 'atomic';
    const propsUnc = o.uncorrelatable ?? (atomicMap ? path : undefined);
    if (isObj(j.properties)) for (const [k, v] of Object.entries(j.properties)) this.node(v, `${path}.properties[${k}]`, { inAlternative, uncorrelatable: propsUnc });
    if (isObj(j.additionalProperties)) this.node(j.additionalProperties, `${path}.additionalProperties`, { inAlternative, uncorrelatable: o.uncorrelatable });
    const itemsUnc = o.uncorrelatable ?? (this.marker(j, 'list-type')?.value !== 'map' ? path : undefined);
    if (isObj(j.items)) this.node(j.items, `${path}.items`, { inAlternative, isItems: true, uncorrelatable: itemsUnc });
    for (const k of ['allOf', 'anyOf', 'oneOf']) {
      if (j[k] === undefined) continue;
      if (!Array.isArray(j[k])) {
        this.err(`${path}.${k}`, 'FieldValueInvalid', 'Invalid value: must be a list of schemas');
        continue;
      }
      (j[k] as unknown[]).forEach((b, i) => this.node(b, `${path}.${k}[${i}]`, { inAlternative: true }));
    }
    if (j.not !== undefined) this.node(j.not, `${path}.not`, { inAlternative: true });
    if (j.default !== undefined && !o.inAlternative) this.defaultValue(j, path);
  }

  private markers(j: J, path: string, type: unknown): void {
    const lt = this.marker(j, 'list-type');
    const keys = this.marker(j, 'list-map-keys');
    const mt = this.marker(j, 'map-type');
    if (lt) {
      if (type !== 'array') this.err(`${path}.${lt.key}`, 'FieldValueInvalid', `Invalid value: ${JSON.stringify(lt.value)}: must only be used if type is array`);
      if (!['atomic', 'set', 'map'].includes(lt.value as string)) this.err(`${path}.${lt.key}`, 'FieldValueNotSupported', `Unsupported value: ${JSON.stringify(lt.value)}: supported values: "atomic", "set", "map"`);
      const items = isObj(j.items) ? j.items : undefined;
      if (lt.value === 'map') {
        if (!keys || !Array.isArray(keys.value) || keys.value.length === 0) this.err(`${path}.${keys?.key ?? lt.key.replace('list-type', 'list-map-keys')}`, 'FieldValueRequired', `Required value: must not be empty if ${lt.key} is map`);
        if (items && items.type !== 'object') this.err(`${path}.items.type`, 'FieldValueInvalid', `Invalid value: ${JSON.stringify(items.type ?? '')}: must be object if parent array's ${lt.key} is map`);
        if (items && keys && Array.isArray(keys.value)) {
          const props = isObj(items.properties) ? items.properties : {};
          const req = Array.isArray(items.required) ? items.required : [];
          keys.value.forEach((k, i) => {
            const p = props[String(k)];
            if (!isObj(p)) this.err(`${path}.${keys.key}[${i}]`, 'FieldValueInvalid', `Invalid value: ${JSON.stringify(k)}: entries must all be names of item properties`);
            else if (!['string', 'integer', 'number', 'boolean'].includes(String(p.type))) this.err(`${path}.items.properties[${String(k)}].type`, 'FieldValueInvalid', `Invalid value: ${JSON.stringify(p.type ?? '')}: must be a scalar type if parent array's ${lt.key} is map`);
            if (!isObj(p)) return;
            // kube's words (validateMapListKeysMapSet)
            if (!req.includes(k) && p.default === undefined) {
              this.err(`${path}.items.properties[${String(k)}].default`, 'FieldValueRequired', `Required value: this property is in ${keys.key}, so it must have a default or be a required property`);
            }
            if (p.nullable === true) this.err(`${path}.items.properties[${String(k)}].nullable`, 'FieldValueForbidden', `Forbidden: this property is in ${keys.key}, so it cannot be nullable`);
          });
        }
      } else if (keys) {
        this.err(`${path}.${keys.key}`, 'FieldValueForbidden', `Forbidden: must not be set if ${lt.key} is not map`);
      }
      if (lt.value === 'set' && items && (items.type === 'object' || items.type === 'array')) {
        const atomic = this.marker(items, items.type === 'object' ? 'map-type' : 'list-type')?.value === 'atomic';
        if (!atomic) this.err(`${path}.items.type`, 'FieldValueInvalid', `Invalid value: ${JSON.stringify(items.type)}: must be a scalar or atomic as the item of a list with ${lt.key} set`);
      }
    } else if (keys) {
      this.err(`${path}.${keys.key}`, 'FieldValueForbidden', 'Forbidden: must not be set if x-kubernetes-list-type is not map');
    }
    if (mt) {
      if (type !== 'object') this.err(`${path}.${mt.key}`, 'FieldValueInvalid', `Invalid value: ${JSON.stringify(mt.value)}: must only be used if type is object`);
      if (mt.value !== 'atomic' && mt.value !== 'granular') this.err(`${path}.${mt.key}`, 'FieldValueNotSupported', `Unsupported value: ${JSON.stringify(mt.value)}: supported values: "atomic", "granular"`);
    }
  }

  /** `uncorrelatable`: see node(); null where oldSelf may be used, undefined where CEL is not compiled (alternatives) */
  private rules(j: J, path: string, isRoot: boolean, uncorrelatable: string | null | undefined): void {
    const m = this.marker(j, 'validations');
    if (!m) return;
    if (!Array.isArray(m.value)) {
      this.err(`${path}.${m.key}`, 'FieldValueInvalid', 'Invalid value: must be a list of rules');
      return;
    }
    m.value.forEach((r, i) => {
      const at = `${path}.${m.key}[${i}]`;
      if (!isObj(r) || typeof r.rule !== 'string') {
        this.err(`${at}.rule`, 'FieldValueRequired', 'Required value: rule is not specified');
        return;
      }
      // kube's checks of a rule's text (ValidateCustomResourceDefinitionOpenAPISchema)
      const rule = r.rule.trim();
      const msg = typeof r.message === 'string' ? r.message.trim() : '';
      const newline = /[\n\r]/;
      if (rule === '') this.err(`${at}.rule`, 'FieldValueRequired', 'Required value: rule is not specified');
      else if (typeof r.message === 'string' && r.message !== '' && msg === '') this.err(`${at}.message`, 'FieldValueInvalid', `Invalid value: ${JSON.stringify(r.message)}: must be non-empty if specified`);
      else if (newline.test(msg)) this.err(`${at}.message`, 'FieldValueInvalid', `Invalid value: ${JSON.stringify(r.message)}: must not contain line breaks`);
      else if (newline.test(rule) && msg === '') this.err(`${at}.message`, 'FieldValueRequired', 'Required value: message must be specified if rule contains line breaks');
      const blankExpr = typeof r.messageExpression === 'string' && r.messageExpression !== '' && r.messageExpression.trim() === '';
      if (blankExpr) this.err(`${at}.messageExpression`, 'FieldValueRequired', 'Required value: messageExpression must be non-empty if specified');
      if (rule === '') return;
      const syntax = validateRuleSyntax({ rule: r.rule, messageExpression: blankExpr ? undefined : (r.messageExpression as string | undefined) });
      for (const e of syntax) this.err(`${at}.${e.field}`, 'FieldValueInvalid', `Invalid value: ${JSON.stringify(r[e.field])}: ${e.message}`);
      // oldSelf needs values that correlate with the stored ones (kube: only once the rule compiles)
      if (uncorrelatable !== undefined && !syntax.some((e) => e.field === 'rule')) {
        if (usesOldSelf(r.rule)) {
          if (uncorrelatable !== null) this.err(`${at}.rule`, 'FieldValueInvalid', `Invalid value: ${JSON.stringify(r.rule)}: oldSelf cannot be used on the uncorrelatable portion of the schema within ${uncorrelatable}`);
        } else if (r.optionalOldSelf !== undefined && r.optionalOldSelf !== null) {
          this.err(`${at}.optionalOldSelf`, 'FieldValueInvalid', `Invalid value: ${JSON.stringify(r.optionalOldSelf)}: may not be set if oldSelf is not used in rule`);
        }
      }
      for (const f of ['rule', 'messageExpression'] as const) {
        const src = r[f];
        if (typeof src !== 'string' || syntax.some((e) => e.field === f)) continue;
        const undef = undefinedField(src, j, isRoot, (x, name) => this.marker(x, name)?.value);
        if (undef) this.err(`${at}.${f}`, 'FieldValueInvalid', `Invalid value: ${JSON.stringify(src)}: ${undef}`);
      }
      if (r.reason !== undefined && !['FieldValueInvalid', 'FieldValueForbidden', 'FieldValueRequired', 'FieldValueDuplicate'].includes(String(r.reason))) {
        this.err(`${at}.reason`, 'FieldValueNotSupported', `Unsupported value: ${JSON.stringify(r.reason)}: supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`);
      }
      // kube: non-blank, one line, and a path to a field the node's schema declares (cel.ValidFieldPath)
      const fp = r.fieldPath;
      if (fp !== undefined && fp !== null && fp !== '') {
        if (typeof fp !== 'string') this.err(`${at}.fieldPath`, 'FieldValueInvalid', `Invalid value: ${JSON.stringify(fp)}: must be a valid path`);
        else {
          if (fp.trim() === '') this.err(`${at}.fieldPath`, 'FieldValueInvalid', `Invalid value: ${JSON.stringify(fp)}: must be non-empty if specified`);
          if (/[\n\r]/.test(fp)) this.err(`${at}.fieldPath`, 'FieldValueInvalid', `Invalid value: ${JSON.stringify(fp)}: must not contain line breaks`);
          if (!validFieldPath(fp, j)) this.err(`${at}.fieldPath`, 'FieldValueInvalid', `Invalid value: ${JSON.stringify(fp)}: must be a valid path`);
        }
      }
    });
  }

  /** a default must itself be valid for its schema (and survive pruning) */
  private defaultValue(j: J, path: string): void {
    let s;
    try {
      s = toSchema(j, this.prefixes);
    } catch {
      return;
    }
    const { default: d, ...rest } = s;
    const copy = structuredClone(d);
    const r = validateAgainstSchema(copy, rest, {}, { prune: true, enumBesideTypeError: true });
    const at = (f: string): string => `${path}.default${f === '' ? '' : f.startsWith('[') ? f : `.${f}`}`;
    for (const e of r.errors) this.err(at(e.field), e.type, e.message);
    if (r.unknownFields.length > 0) this.err(`${path}.default`, 'FieldValueInvalid', `Invalid value: ${JSON.stringify(d)}: must not have unknown fields (${r.unknownFields.join(', ')})`);
    if (r.errors.length > 0) return;
    // kube's defaulting.ValidateDefaults: the CEL rules of the subtree, as an update from the default
    // to itself (transition rules see oldSelf = the default), then, with ratcheting, as a create
    const compiled = compileSchema(rest, {});
    if (!compiled.subtreeHasRules) return;
    let cel = validateRules(d, d, compiled);
    if (cel.length === 0) cel = validateRules(d, undefined, compiled);
    for (const e of cel) this.err(at(e.field), e.type, e.message);
  }
}

/** every structural problem of `schema` (an openAPIV3Schema), paths under `path` */
export function structuralErrors(schema: unknown, path: string, prefixes: string[]): FieldError[] {
  const c = new Checker(prefixes);
  c.root(schema, path);
  return c.errors;
}

/** kube's allowedFieldsAtRootSchema (Go field names, printed as kube prints the list) */
const ROOT_WITH_STATUS = ['Description', 'Type', 'Format', 'Title', 'Maximum', 'ExclusiveMaximum', 'Minimum', 'ExclusiveMinimum', 'MaxLength', 'MinLength', 'Pattern', 'MaxItems', 'MinItems', 'UniqueItems', 'MultipleOf', 'Required', 'Items', 'Properties', 'ExternalDocs', 'Example', 'XPreserveUnknownFields', 'XValidations'];
/** JSONSchemaProps' fields in Go order: JSON key (markers without prefix), Go name; zero values are skipped */
const SCHEMA_FIELDS: [string, string][] = [
  ['id', 'ID'], ['$schema', 'Schema'], ['$ref', 'Ref'], ['description', 'Description'], ['type', 'Type'], ['nullable', 'Nullable'], ['format', 'Format'], ['title', 'Title'],
  ['default', 'Default'], ['maximum', 'Maximum'], ['exclusiveMaximum', 'ExclusiveMaximum'], ['minimum', 'Minimum'], ['exclusiveMinimum', 'ExclusiveMinimum'], ['maxLength', 'MaxLength'],
  ['minLength', 'MinLength'], ['pattern', 'Pattern'], ['maxItems', 'MaxItems'], ['minItems', 'MinItems'], ['uniqueItems', 'UniqueItems'], ['multipleOf', 'MultipleOf'], ['enum', 'Enum'],
  ['maxProperties', 'MaxProperties'], ['minProperties', 'MinProperties'], ['required', 'Required'], ['items', 'Items'], ['allOf', 'AllOf'], ['oneOf', 'OneOf'], ['anyOf', 'AnyOf'], ['not', 'Not'],
  ['properties', 'Properties'], ['additionalProperties', 'AdditionalProperties'], ['patternProperties', 'PatternProperties'], ['dependencies', 'Dependencies'], ['additionalItems', 'AdditionalItems'],
  ['definitions', 'Definitions'], ['externalDocs', 'ExternalDocs'], ['example', 'Example'], ['*preserve-unknown-fields', 'XPreserveUnknownFields'], ['*embedded-resource', 'XEmbeddedResource'],
  ['*int-or-string', 'XIntOrString'], ['*list-map-keys', 'XListMapKeys'], ['*list-type', 'XListType'], ['*map-type', 'XMapType'], ['*validations', 'XValidations'],
];
/** Go value fields (not pointers): false and "" are their zero values */
const GO_VALUES = new Set(['ID', 'Schema', 'Description', 'Type', 'Format', 'Title', 'Nullable', 'UniqueItems', 'XEmbeddedResource', 'XIntOrString']);

/**
 * kube's check of the root schema when the status sub-resource is enabled
 * (validateCustomResourceDefinitionValidation): the type must be object and only
 * ROOT_WITH_STATUS may be set; the first offending field (in Go order) is reported
 */
export function statusRootErrors(schema: unknown, path: string, prefixes: string[]): FieldError[] {
  if (!isObj(schema)) return [];
  for (const [key, goName] of SCHEMA_FIELDS) {
    const v = key.startsWith('*') ? prefixes.map((p) => schema[`${p}${key.slice(1)}`]).find((x) => x !== undefined) : schema[key];
    if (v === undefined || v === null || (GO_VALUES.has(goName) && (v === false || v === ''))) continue;
    if (goName === 'Type') {
      if (v !== 'object') return [{ field: `${path}.type`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(v)}: only "object" is allowed as the type at the root of the schema if the status subresource is enabled` }];
      continue;
    }
    if (!ROOT_WITH_STATUS.includes(goName)) {
      // kube prints the Go dump of the schema as the value
      return [{ field: path, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(schema)}: only [${ROOT_WITH_STATUS.join(' ')}] fields are allowed at the root of the schema if the status subresource is enabled` }];
    }
  }
  return [];
}
