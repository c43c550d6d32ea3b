// The schema language of every kind: a structural OpenAPI v3 subset plus the
// merge-strategy markers of spec 000 §4.9. One schema per kind drives
// validation, unknown-field detection, defaulting, strategic merge, server-side
// apply, Table columns and the served OpenAPI documents.

export type SchemaType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';

export interface Schema {
  type?: SchemaType;
  description?: string;
  format?: string;
  enum?: unknown[];
  default?: unknown;
  nullable?: boolean;
  properties?: Record<string, Schema>;
  /** a map with values of this schema (`true` = any value) */
  additionalProperties?: Schema | boolean;
  items?: Schema;
  required?: string[];
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  /** with `required`, a string shorter than this reports `Required value` (Kubernetes built-in validation treats "" as absent) */
  minLength?: number;
  maxItems?: number;
  minItems?: number;
  maxProperties?: number;
  minProperties?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  uniqueItems?: boolean;
  pattern?: string;
  /** value alternatives (CRD schemas; spec 000 §4.8): every branch is a value validation only */
  allOf?: Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  not?: Schema;
  /** reference to a shared definition by name (e.g. `io.orch.apimachinery.pkg.apis.meta.v1.ObjectMeta`) */
  $ref?: string;
  /** spec 000 §4.9 markers */
  'x-orch-list-type'?: 'atomic' | 'set' | 'map';
  'x-orch-list-map-keys'?: string[];
  'x-orch-map-type'?: 'atomic' | 'granular';
  /** strategic merge patch (Kubernetes patchStrategy / patchMergeKey) */
  'x-orch-patch-strategy'?: string;
  'x-orch-patch-merge-key'?: string;
  'x-orch-preserve-unknown-fields'?: boolean;
  'x-orch-int-or-string'?: boolean;
  'x-orch-embedded-resource'?: boolean;
  /** CEL validation rules (`x-<domain>-validations`, docs/crds.md): `self` is this value, `oldSelf` the stored one */
  'x-orch-validations'?: ValidationRule[];
  /**
   * protobuf field number of this property in its parent message (the
   * Kubernetes `generated.proto` number); absent = not encodable in protobuf
   * (spec 000 §2.7, §4.3; docs/protobuf.md)
   */
  'x-orch-proto-field'?: number;
  /**
   * the property lives inside an embedded (Go-inlined) message at this field
   * number of the parent, e.g. Volume's sources inside VolumeSource = 2; a
   * list is a path through inlined messages inlined in turn (admissionregistration
   * NamedRuleWithOperations: RuleWithOperations at 2, its Rule at 2 again)
   */
  'x-orch-proto-embedded'?: number | number[];
  /** a well-known protobuf message whose JSON form the schema alone does not tell apart */
  'x-orch-proto-type'?: 'MicroTime' | 'FieldsV1' | 'RawExtension' | 'JSONSchemaProps';
  /**
   * with `x-orch-proto-type: JSONSchemaProps`: the prefixes its `x-<prefix>-*`
   * markers may be written with (a CRD's markerPrefixes), first preferred
   */
  'x-orch-proto-marker-prefixes'?: string[];
  /**
   * a non-pointer Go number or bool whose JSON form omits 0/false (omitempty):
   * protobuf always carries it, so a decoded 0 or false means absent (e.g.
   * metadata.generation, a CRD version's `deprecated`)
   */
  'x-orch-proto-omit-zero'?: boolean;
  /**
   * a Go `metav1.Time` value (not a pointer) that kube's JSON writes `null`
   * when zero (an Event's `eventTime`, `firstTimestamp`): a `null` is kept
   * rather than dropped, as for a nullable field, but the served OpenAPI does
   * not call it nullable (kube's does not)
   */
  'x-orch-zero-null'?: boolean;
  /**
   * the kind's strategy checks this property's presence and values (kube's Go validation words
   * them otherwise, e.g. an EndpointSlice's `addressType`): the served OpenAPI keeps its place in
   * the parent's `required` and its `enum`, the schema validator checks only its type
   */
  'x-orch-strategy-checked'?: boolean;
}

/** Named shared definitions (`$ref` targets). */
export type Definitions = Record<string, Schema>;

/** one `x-<domain>-validations` entry (Kubernetes ValidationRule) */
export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  /** FieldValueInvalid (default), FieldValueForbidden, FieldValueRequired, FieldValueDuplicate */
  reason?: string;
  /** a JSON path below this node the error is reported at, e.g. `.spec.replicas` */
  fieldPath?: string;
  /** evaluate a transition rule also when there is no old value (oldSelf is then an absent optional) */
  optionalOldSelf?: boolean;
}
