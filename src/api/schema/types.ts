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
  pattern?: string;
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
}

/** Named shared definitions (`$ref` targets). */
export type Definitions = Record<string, Schema>;
