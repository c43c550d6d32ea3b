// The shapes of API objects as they travel through every layer (decoded
// request bodies, stored objects, field errors). Shared contracts: this file
// imports nothing (docs/architecture.md), so the pure machinery (src/machinery/)
// and the Status errors (src/core/errors.ts) use them without knowing the registry.

/** A JSON object as it travels through the API (decoded request body or stored object). */
export type JSONValue = string | number | boolean | null | JSONValue[] | { [key: string]: JSONValue };
export type JSONObject = { [key: string]: JSONValue };

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: JSONObject[];
  managedFields?: JSONObject[];
  [key: string]: JSONValue | undefined;
}

/** Any API object: type meta + object meta + the rest. */
export interface ApiObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [key: string]: JSONValue | ObjectMeta | undefined;
}

export interface FieldError {
  /** JSON-path-like field path, e.g. `metadata.name`, `spec.containers[0].image` */
  field: string;
  /** Kubernetes cause types: FieldValueRequired, FieldValueInvalid, FieldValueNotSupported, FieldValueDuplicate, FieldValueTooLong, FieldValueForbidden, FieldValueTypeInvalid */
  type: string;
  message: string;
  /** of a FieldValueTypeInvalid: what kube's unstructured converter says of the value (a strategic merge patch's error) */
  converter?: string;
}

/** metadata.name syntax (Kubernetes' per-kind NameFn); ResourceDefinition.nameValidation */
export type NameValidation = 'DNS1123Subdomain' | 'DNS1123Label' | 'DNS1035Label' | 'PathSegment';
