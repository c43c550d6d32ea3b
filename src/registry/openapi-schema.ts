// Schemas as a served OpenAPI document shows them: refs rewritten for the
// document's version, every `x-orch-*` marker with its `x-kubernetes-*` twin
// (kubectl reads only the latter; docs/schemas.md), and the group-version-kind
// extension.

import type { Schema } from '../machinery/schema/types.js';
import { customResourceDefinitionName, definitionName } from '../machinery/schema/naming.js';
import { type ResourceDefinition, listKindOf } from './types.js';

export type Json = Record<string, unknown>;
export type Version = 2 | 3;

export interface GVK {
  group: string;
  version: string;
  kind: string;
}

/** the name of a served kind's definition in the documents */
export function kindDefinitionName(apiDomain: string, def: Pick<ResourceDefinition, 'group' | 'version' | 'kind' | 'customResource'>): string {
  return def.customResource ? customResourceDefinitionName(def.group, def.version, def.kind) : definitionName(apiDomain, def.group, def.version, def.kind);
}

/** the name of the definition of a list of a served kind (a CRD's `listKind`, else `<Kind>List`) */
export function listDefinitionName(apiDomain: string, def: Pick<ResourceDefinition, 'group' | 'version' | 'kind' | 'listKind' | 'customResource'>): string {
  return kindDefinitionName(apiDomain, { ...def, kind: listKindOf(def) });
}

export function gvkExtension(gvk: GVK): Json {
  const list = [{ group: gvk.group, kind: gvk.kind, version: gvk.version }];
  return { 'x-kubernetes-group-version-kind': list, 'x-orch-group-version-kind': list };
}

/**
 * a CRD version's selectableFields as kube publishes them on the kind's definition (v2 and v3), in the
 * declared order, without the leading dot: `x-kubernetes-selectable-fields: [{fieldPath: spec.color}]`
 */
export function selectableFieldsExtension(def: Pick<ResourceDefinition, 'customResource' | 'strategy'>): Json {
  const paths = def.customResource ? Object.keys(def.strategy.selectableFields ?? {}) : [];
  if (paths.length === 0) return {};
  const list = paths.map((fieldPath) => ({ fieldPath }));
  return { 'x-kubernetes-selectable-fields': list, 'x-orch-selectable-fields': list };
}

const MARKER_TWINS: [string, string][] = [
  ['x-orch-list-type', 'x-kubernetes-list-type'],
  ['x-orch-list-map-keys', 'x-kubernetes-list-map-keys'],
  ['x-orch-map-type', 'x-kubernetes-map-type'],
  ['x-orch-patch-strategy', 'x-kubernetes-patch-strategy'],
  ['x-orch-patch-merge-key', 'x-kubernetes-patch-merge-key'],
  ['x-orch-preserve-unknown-fields', 'x-kubernetes-preserve-unknown-fields'],
  ['x-orch-int-or-string', 'x-kubernetes-int-or-string'],
  ['x-orch-embedded-resource', 'x-kubernetes-embedded-resource'],
];

const PLAIN_KEYS = [
  'description', 'format', 'enum', 'nullable', 'required', 'minimum', 'maximum', 'maxLength', 'minLength', 'maxItems', 'pattern',
  // declared by CRD schemas only (built-in kinds use none of them); kube publishes them as given
  'minItems', 'minProperties', 'maxProperties', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'uniqueItems',
] as const;

export function refPath(name: string, v: Version): string {
  return v === 2 ? `#/definitions/${name}` : `#/components/schemas/${name}`;
}

/** a Schema as it appears in a served document (refs rewritten, markers twinned) */
export function toOpenAPISchema(s: Schema, v: Version, refs?: Set<string>): Json {
  if (s.$ref !== undefined) {
    refs?.add(s.$ref);
    const $ref = refPath(s.$ref, v);
    if (v === 2) return s.description !== undefined ? { $ref, description: s.description } : { $ref };
    if (s.description === undefined && s.default === undefined) return { $ref };
    const out: Json = { allOf: [{ $ref }] };
    if (s.description !== undefined) out.description = s.description;
    if (s.default !== undefined) out.default = s.default;
    return out;
  }
  const out: Json = {};
  if (s['x-orch-int-or-string']) {
    // Kubernetes' own spelling: v2 has a string type (format int-or-string), v3 a union
    if (v === 2) {
      out.type = 'string';
      if (s.format !== 'quantity') out.format = 'int-or-string';
    } else {
      out.anyOf = s.format === 'quantity' ? [{ type: 'string' }, { type: 'number' }] : [{ type: 'integer' }, { type: 'string' }];
    }
  } else if (s.type !== undefined) out.type = s.type;
  for (const k of PLAIN_KEYS) {
    if (s[k] === undefined) continue;
    if (k === 'format' && (s.format === 'quantity' || out.format !== undefined || s['x-orch-int-or-string'])) continue;
    if (k === 'nullable' && v === 2) continue;
    out[k] = s[k];
  }
  if (s.default !== undefined) out.default = s.default;
  if (s.properties) {
    const props: Json = {};
    for (const [k, child] of Object.entries(s.properties)) props[k] = toOpenAPISchema(child, v, refs);
    out.properties = props;
  }
  if (s.additionalProperties !== undefined) {
    out.additionalProperties = typeof s.additionalProperties === 'boolean' ? s.additionalProperties : toOpenAPISchema(s.additionalProperties, v, refs);
  }
  if (s.items) out.items = toOpenAPISchema(s.items, v, refs);
  if (v === 3) {
    // a CRD's value alternatives and CEL rules, as kube's v3 document carries them (kubectl-validate and
    // other clients read x-kubernetes-validations from it); v2 has no place for them
    for (const k of ['allOf', 'anyOf', 'oneOf'] as const) {
      const alts = s[k];
      if (alts && !(k === 'anyOf' && s['x-orch-int-or-string'])) out[k] = alts.map((a) => toOpenAPISchema(a, v, refs));
    }
    if (s.not) out.not = toOpenAPISchema(s.not, v, refs);
    const rules = s['x-orch-validations'];
    if (rules) {
      out['x-orch-validations'] = rules;
      out['x-kubernetes-validations'] = rules;
    }
  }
  for (const [orch, kube] of MARKER_TWINS) {
    const val = s[orch as keyof Schema];
    if (val === undefined) continue;
    out[orch] = val;
    out[kube] = val;
  }
  return out;
}

/** values that are data, not schemas or extensions: never walked */
const DATA_KEYS = new Set(['default', 'enum', 'example']);

/**
 * With kube's own API domain (`--api-domain k8s.io`) the documents are kube-apiserver's: only the
 * `x-kubernetes-*` extensions, no `x-orch-*` twins (clients compare published schemas with what a
 * CRD declared, e.g. kube's CustomResourcePublishOpenAPI e2e: definition = schema + GVK). Removes
 * every `x-orch-*` key of a built document in place; names in `properties` are fields, not
 * extensions, and stay.
 */
export function dropOrchExtensions(node: unknown, names = false): void {
  if (Array.isArray(node)) {
    for (const x of node) dropOrchExtensions(x);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const o = node as Json;
  for (const k of Object.keys(o)) {
    if (!names && k.startsWith('x-orch-')) delete o[k];
    else if (!names && (DATA_KEYS.has(k) || k.startsWith('x-'))) continue;
    else dropOrchExtensions(o[k], !names && k === 'properties');
  }
}
