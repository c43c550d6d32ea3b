// A CustomResourceDefinition as served kinds: one ResourceDefinition per
// served version, through the same schema machinery as built-in kinds
// (docs/architecture.md "one generic store"): the version's openAPIV3Schema
// becomes a Schema (markers read as `x-kubernetes-*`, `x-orch-*` or
// `x-<first label of the API domain>-*`), wrapped with apiVersion, kind and
// the shared ObjectMeta; printer columns become Table columns; the status and
// scale sub-resources are the generic ones.

import { compileSchema } from '../../machinery/schema/compile.js';
import { applyCompiledDefaults } from '../../machinery/schema/defaults.js';
import { SchemaNames } from '../../machinery/schema/naming.js';
import type { Schema, SchemaType, ValidationRule } from '../../machinery/schema/types.js';
import type { ApiObject, AsyncConverter, ResourceDefinition, Scope, TableColumn } from '../types.js';
import type { ConversionSpec } from './conversion-webhook.js';
import { humanDuration } from '../table.js';
import { evalJsonPath, parseJsonPath } from './jsonpath.js';

type J = Record<string, unknown>;

const MARKERS = ['list-type', 'list-map-keys', 'map-type', 'preserve-unknown-fields', 'int-or-string', 'embedded-resource', 'validations'] as const;

/** the extension prefixes a CRD schema may use for the markers of spec 000 §4.9 */
export function markerPrefixes(apiDomain: string): string[] {
  const own = `x-${apiDomain.split('.')[0]}-`;
  return [...new Set(['x-kubernetes-', 'x-orch-', own])];
}

function marker(j: J, name: (typeof MARKERS)[number], prefixes: string[]): unknown {
  for (const p of prefixes) if (j[`${p}${name}`] !== undefined) return j[`${p}${name}`];
  return undefined;
}

const COPY = ['description', 'format', 'enum', 'default', 'nullable', 'required', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'maxLength', 'minLength', 'maxItems', 'minItems', 'maxProperties', 'minProperties', 'uniqueItems', 'pattern'] as const;

/** a CRD's JSONSchemaProps (already checked structural) as the internal Schema */
export function toSchema(j: J, prefixes: string[]): Schema {
  const s: Schema = {};
  if (typeof j.type === 'string' && j.type !== '') s.type = j.type as SchemaType;
  const w = s as Record<string, unknown>;
  for (const k of COPY) if (j[k] !== undefined) w[k] = j[k];
  if (j.properties && typeof j.properties === 'object') {
    s.properties = {};
    for (const [k, v] of Object.entries(j.properties as J)) s.properties[k] = toSchema(v as J, prefixes);
  }
  if (j.additionalProperties !== undefined) {
    s.additionalProperties = typeof j.additionalProperties === 'boolean' ? j.additionalProperties : toSchema(j.additionalProperties as J, prefixes);
  }
  if (j.items && typeof j.items === 'object' && !Array.isArray(j.items)) s.items = toSchema(j.items as J, prefixes);
  for (const k of ['allOf', 'anyOf', 'oneOf'] as const) if (Array.isArray(j[k])) s[k] = (j[k] as J[]).map((x) => toSchema(x, prefixes));
  if (j.not && typeof j.not === 'object') s.not = toSchema(j.not as J, prefixes);
  const lt = marker(j, 'list-type', prefixes);
  if (lt !== undefined) s['x-orch-list-type'] = lt as 'atomic' | 'set' | 'map';
  const keys = marker(j, 'list-map-keys', prefixes);
  if (keys !== undefined) s['x-orch-list-map-keys'] = keys as string[];
  const mt = marker(j, 'map-type', prefixes);
  if (mt !== undefined) s['x-orch-map-type'] = mt as 'atomic' | 'granular';
  if (marker(j, 'preserve-unknown-fields', prefixes) === true) s['x-orch-preserve-unknown-fields'] = true;
  if (marker(j, 'int-or-string', prefixes) === true) s['x-orch-int-or-string'] = true;
  if (marker(j, 'embedded-resource', prefixes) === true) s['x-orch-embedded-resource'] = true;
  const rules = marker(j, 'validations', prefixes);
  if (Array.isArray(rules) && rules.length > 0) s['x-orch-validations'] = rules as ValidationRule[];
  return s;
}

/**
 * an object's metadata is the shared ObjectMeta: the restrictions of name / generateName (the
 * only ones a CRD may declare) apply on top of it (the root, and every embedded resource)
 */
function withObjectMeta(s: Schema, n: SchemaNames): Schema {
  const declared = s.properties?.metadata?.properties;
  const out: Schema = { ...s, properties: { ...(s.properties ?? {}), metadata: { $ref: n.meta('ObjectMeta'), description: "Standard object's metadata." } } };
  if (declared && Object.keys(declared).length > 0) {
    out.allOf = [...(s.allOf ?? []), { properties: { metadata: { type: 'object', properties: declared } } }];
  }
  return out;
}

/**
 * embedded resources below the root keep every ObjectMeta field in their metadata and drop
 * (report) the others, as kube's pruning does with objectmeta
 */
function embeddedMeta(s: Schema, n: SchemaNames): Schema {
  let out = s;
  if (s.properties) {
    const props: Record<string, Schema> = {};
    for (const [k, v] of Object.entries(s.properties)) props[k] = embeddedMeta(v, n);
    out = { ...out, properties: props };
  }
  if (s.items) out = { ...out, items: embeddedMeta(s.items, n) };
  if (s.additionalProperties && typeof s.additionalProperties === 'object') out = { ...out, additionalProperties: embeddedMeta(s.additionalProperties, n) };
  return out['x-orch-embedded-resource'] === true ? withObjectMeta(out, n) : out;
}

/** the kind's top-level schema: type meta and the shared ObjectMeta around the CRD's properties */
function kindSchema(root: Schema, n: SchemaNames): Schema {
  const inner = embeddedMeta(root, n);
  const props = { ...(inner.properties ?? {}) };
  props.apiVersion = { type: 'string', description: 'APIVersion defines the versioned schema of this representation of an object.' };
  props.kind = { type: 'string', description: 'Kind is a string value representing the REST resource this object represents.' };
  const out = withObjectMeta({ ...inner, type: 'object', properties: props }, n);
  if (out.required) out.required = out.required.filter((r) => r !== 'metadata' && r !== 'apiVersion' && r !== 'kind');
  return out;
}

export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: { openAPIV3Schema?: J };
  subresources?: { status?: J; scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string } };
  additionalPrinterColumns?: { name: string; type: string; format?: string; description?: string; priority?: number; jsonPath: string }[];
  selectableFields?: { jsonPath: string }[];
}

export interface CrdSpec {
  group: string;
  names: { plural: string; singular?: string; kind: string; listKind?: string; shortNames?: string[]; categories?: string[] };
  scope: Scope;
  versions: CrdVersion[];
  conversion?: ConversionSpec;
}

/** the storage version's name, or undefined when the CRD has none (invalid) */
export function storageVersionOf(spec: CrdSpec): string | undefined {
  return spec.versions.find((v) => v.storage)?.name;
}

/** what metav1.Time accepts */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** Table cells of a printer column (Kubernetes' CRD table convertor; `date` shown as an age) */
function printerColumn(c: NonNullable<CrdVersion['additionalPrinterColumns']>[number]): TableColumn {
  const steps = parseJsonPath(c.jsonPath);
  const type = (['integer', 'number', 'boolean', 'date', 'string'].includes(c.type) ? c.type : 'string') as TableColumn['type'];
  return {
    name: c.name,
    type,
    format: c.format,
    description: c.description,
    priority: c.priority ?? 0,
    cell: (o: ApiObject, now: number) => {
      const v = evalJsonPath(steps, o)[0];
      if (v === undefined || v === null) return null;
      // kube's tableconvertor: a string column prints any value (JSON for objects and lists);
      // the others keep only a value of their type (cellForJSONValue), else the cell is empty
      switch (type) {
        case 'string':
          return typeof v === 'object' ? JSON.stringify(v) : String(v);
        case 'integer':
          return typeof v === 'number' ? Math.trunc(v) : null;
        case 'number':
          return typeof v === 'number' ? v : null;
        case 'boolean':
          return typeof v === 'boolean' ? v : null;
        case 'date': {
          if (typeof v !== 'string') return null;
          const t = Date.parse(v);
          return Number.isNaN(t) || !RFC3339.test(v) ? '<invalid>' : humanDuration(now - t);
        }
      }
      return null;
    },
  };
}

/** `selectableFields` (`.spec.color` → field selector `spec.color`): scalar values as strings */
function selectable(fields: CrdVersion['selectableFields']): Record<string, (o: ApiObject) => string | undefined> | undefined {
  if (!fields || fields.length === 0) return undefined;
  const out: Record<string, (o: ApiObject) => string | undefined> = {};
  for (const f of fields) {
    const steps = parseJsonPath(f.jsonPath);
    out[f.jsonPath.replace(/^\./, '')] = (o) => {
      const v = evalJsonPath(steps, o)[0];
      return v === undefined || v === null || typeof v === 'object' ? undefined : String(v);
    };
  }
  return out;
}

const AGE_COLUMN = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'CreationTimestamp is a timestamp representing the server time when this object was created.' };

/**
 * The served kinds of a (valid, names-accepted) CRD: one per served version.
 * `acceptedNames` are the names the CRD holds (short names and categories
 * may be withheld on conflicts, docs/crds.md).
 */
export function customDefinitions(spec: CrdSpec, apiDomain: string, accepted: CrdSpec['names'], webhook?: AsyncConverter): ResourceDefinition[] {
  const n = new SchemaNames(apiDomain);
  const prefixes = markerPrefixes(apiDomain);
  const storageVersion = storageVersionOf(spec);
  const out: ResourceDefinition[] = [];
  for (const v of spec.versions) {
    if (!v.served) continue;
    const raw = v.schema?.openAPIV3Schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
    const own = toSchema(raw, prefixes);
    const schema = kindSchema(own, n);
    // without declared columns Kubernetes shows Name and Age
    const cols = (v.additionalPrinterColumns && v.additionalPrinterColumns.length > 0 ? v.additionalPrinterColumns : [AGE_COLUMN]).map(printerColumn);
    const subresources: string[] = [];
    if (v.subresources?.status) subresources.push('status');
    if (v.subresources?.scale) subresources.push('scale');
    const def: ResourceDefinition = {
      group: spec.group,
      version: v.name,
      kind: accepted.kind,
      resource: accepted.plural,
      singular: accepted.singular ?? accepted.kind.toLowerCase(),
      scope: spec.scope,
      shortNames: accepted.shortNames,
      categories: accepted.categories,
      schema,
      strategy: { tracksGeneration: true, columns: cols, exactColumns: true, selectableFields: selectable(v.selectableFields) },
      subresources,
      customResource: true,
      ...(accepted.listKind ? { listKind: accepted.listKind } : {}),
    };
    // every served version shares the stored objects; conversion None rewrites only apiVersion,
    // a conversion webhook converts (docs/crds.md)
    if (storageVersion !== undefined) {
      def.storage = { group: spec.group, resource: accepted.plural, storageVersion: `${spec.group}/${storageVersion}`, versions: {}, ...(webhook ? { webhook } : {}) };
    }
    if (v.subresources?.scale) def.scale = { ...v.subresources.scale };
    // kube defaults custom resources as they are decoded from storage, too
    const compiled = compileSchema(own, {});
    if (compiled.subtreeHasDefaults) {
      def.readDefaults = (o) => {
        const copy = structuredClone(o);
        applyCompiledDefaults(copy, compiled);
        return copy;
      };
    }
    if (v.deprecated) def.deprecated = { warning: v.deprecationWarning ?? `${spec.group}/${v.name} ${accepted.kind} is deprecated` };
    out.push(def);
  }
  return out;
}
