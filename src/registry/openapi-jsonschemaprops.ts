// JSONSchemaProps as the served documents publish it (docs/schemas.md):
// a CRD's `spec.versions[].schema.openAPIV3Schema` is stored and validated as
// an opaque value (its own codec: machinery/protobuf/json-schema-props.ts), but
// kubectl's client-side apply computes a strategic merge patch from the
// published schema and warns `unable to find api field "properties"` on a
// field the schema does not describe. Kubernetes publishes the recursive
// definition, so this does too, with a field for each marker prefix a CRD may
// use (x-kubernetes-*, and the domain's own: crd/convert.ts markerPrefixes; only kube's with
// --api-domain k8s.io).

import type { Json, Version } from './openapi-schema.js';
import { refPath } from './openapi-schema.js';
import { markerPrefixes } from './crd/convert.js';

/** the package of JSONSchemaProps and its helpers, relative to the reversed domain */
export const JSON_SCHEMA_PROPS_PKG = 'apiextensions-apiserver.pkg.apis.apiextensions.v1';

export function jsonSchemaPropsDefinitions(v: Version, rev: string, apiDomain: string): Json {
  const name = (t: string): string => `${rev}.${JSON_SCHEMA_PROPS_PKG}.${t}`;
  const ref = (t: string, description: string): Json =>
    v === 2 ? { $ref: refPath(name(t), v), description } : { allOf: [{ $ref: refPath(name(t), v) }], description };
  const el = (t: string): Json => ({ $ref: refPath(name(t), v) });
  const str = (description: string): Json => ({ type: 'string', description });
  const bool = (description: string): Json => ({ type: 'boolean', description });
  const int = (description: string): Json => ({ type: 'integer', format: 'int64', description });
  const num = (description: string): Json => ({ type: 'number', format: 'double', description });
  const atomic = (description: string, items: Json): Json => ({ type: 'array', description, items, 'x-kubernetes-list-type': 'atomic' });
  const map = (description: string, t: string): Json => ({ type: 'object', description, additionalProperties: el(t) });
  const markers: Json = {};
  // with kube's own domain the definition is kube's: its x-kubernetes-* fields only
  for (const p of apiDomain === 'k8s.io' ? ['x-kubernetes-'] : markerPrefixes(apiDomain)) {
    Object.assign(markers, {
      [`${p}embedded-resource`]: bool('The value is an embedded object with apiVersion, kind and metadata.'),
      [`${p}int-or-string`]: bool('The value is an integer or a string.'),
      [`${p}list-map-keys`]: atomic('Keys identifying the items of a list of type map.', { type: 'string' }),
      [`${p}list-type`]: str('atomic, set or map: how apply merges the list.'),
      [`${p}map-type`]: str('granular or atomic: how apply merges the object.'),
      [`${p}preserve-unknown-fields`]: bool('Keep fields the schema does not declare.'),
      [`${p}validations`]: {
        type: 'array',
        description: 'CEL validation rules.',
        items: el('ValidationRule'),
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['rule'],
        'x-kubernetes-patch-strategy': 'merge',
        'x-kubernetes-patch-merge-key': 'rule',
      },
    });
  }
  const props: Json = {
    $ref: str('Reference to a definition (not allowed in CRD schemas).'),
    $schema: str('JSON Schema dialect.'),
    additionalItems: ref('JSONSchemaPropsOrBool', 'Schema of items past those described (not allowed in CRD schemas).'),
    additionalProperties: ref('JSONSchemaPropsOrBool', 'Schema of the values of a map; not with properties.'),
    allOf: atomic('Schemas the value must all satisfy.', el('JSONSchemaProps')),
    anyOf: atomic('Schemas of which the value must satisfy at least one.', el('JSONSchemaProps')),
    default: ref('JSON', 'Value set when the field is absent.'),
    definitions: map('Named schemas (not allowed in CRD schemas).', 'JSONSchemaProps'),
    dependencies: map('Schema dependencies (not allowed in CRD schemas).', 'JSONSchemaPropsOrStringArray'),
    description: str('Description of the value.'),
    enum: atomic('Values the value must be one of.', el('JSON')),
    example: ref('JSON', 'An example value.'),
    exclusiveMaximum: bool('Whether maximum is exclusive.'),
    exclusiveMinimum: bool('Whether minimum is exclusive.'),
    externalDocs: ref('ExternalDocumentation', 'Link to further documentation.'),
    format: str('Format of a string value (date-time, int-or-string, …).'),
    id: str('Schema identifier.'),
    items: ref('JSONSchemaPropsOrArray', 'Schema of the items of an array.'),
    maxItems: int('Most items of an array.'),
    maxLength: int('Longest string.'),
    maxProperties: int('Most properties of an object.'),
    maximum: num('Largest number.'),
    minItems: int('Fewest items of an array.'),
    minLength: int('Shortest string.'),
    minProperties: int('Fewest properties of an object.'),
    minimum: num('Smallest number.'),
    multipleOf: num('The number must be a multiple of this.'),
    not: ref('JSONSchemaProps', 'Schema the value must not satisfy.'),
    nullable: bool('Whether null is allowed (and dropped when the field has no default).'),
    oneOf: atomic('Schemas of which the value must satisfy exactly one.', el('JSONSchemaProps')),
    pattern: str('Regular expression a string must match.'),
    patternProperties: map('Schemas of properties whose names match a pattern (not allowed in CRD schemas).', 'JSONSchemaProps'),
    properties: map('Schemas of the properties of an object.', 'JSONSchemaProps'),
    required: atomic('Properties an object must have.', { type: 'string' }),
    title: str('Title of the schema.'),
    type: str('object, array, string, integer, number or boolean.'),
    uniqueItems: bool('Whether the items of an array must be unique.'),
    ...markers,
  };
  const opaque = (description: string): Json => ({ description });
  return {
    [name('JSONSchemaProps')]: { type: 'object', description: 'A JSON-Schema (OpenAPI v3) schema, as CRDs declare it.', properties: sortKeys(props) },
    [name('JSON')]: opaque('Any JSON value.'),
    [name('JSONSchemaPropsOrArray')]: opaque('A schema, or an array of schemas.'),
    [name('JSONSchemaPropsOrBool')]: opaque('A schema, or a boolean (true allows anything, false nothing).'),
    [name('JSONSchemaPropsOrStringArray')]: opaque('A schema, or an array of property names.'),
    [name('ExternalDocumentation')]: { type: 'object', description: 'A link to further documentation.', properties: { description: str('What the link is.'), url: str('The URL.') } },
    [name('ValidationRule')]: {
      type: 'object',
      description: 'A CEL validation rule.',
      required: ['rule'],
      properties: {
        fieldPath: str('Field the failure is reported at, relative to this schema.'),
        message: str('Message shown when the rule fails.'),
        messageExpression: str('CEL expression that yields the message.'),
        optionalOldSelf: bool('Evaluate the transition rule on create too, with oldSelf absent.'),
        reason: { type: 'string', description: 'Reason of the failure: FieldValueInvalid (default), FieldValueForbidden, FieldValueRequired or FieldValueDuplicate.', enum: ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'] },
        rule: str('The CEL expression; self is the value, oldSelf the previous one.'),
      },
    },
  };
}

function sortKeys(o: Json): Json {
  return Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]]));
}
