// The checks every create and update of the generic store runs before it
// writes: schema and metadata validation with the strategy's rules, strict
// field validation, and whether the object's namespace takes the write.

import { NAMESPACE_TERMINATING_CAUSE, type StatusError, badRequest, forbidden, invalid, notFound, qualifiedResource } from '../core/errors.js';
import { goFormat } from '../machinery/schema/go-decode.js';
import { strictDecodingErrors } from '../machinery/schema/strict-decoding.js';
import type { ApiObject, FieldError, ResourceDefinition } from './types.js';
import type { ObjectAdmission, WriteOptions } from './write-options.js';

/** what schema admission found in an object: its errors, and the unknown fields it pruned */
export interface Admitted {
  errors: FieldError[];
  unknownFields: string[];
}

/**
 * Decoding's share of a create or update, before admission (kube decodes the body
 * into its Go type first): schema defaults and pruning; a value of the wrong type,
 * and with Strict field validation an unknown or duplicate field, is a 400 here.
 * The other errors are kept for `validateWrite`.
 */
export function decodeWrite(def: ResourceDefinition, admission: ObjectAdmission, obj: ApiObject, old: ApiObject | undefined, opts: WriteOptions): Admitted {
  const admitted = admission.admit(def, obj, old);
  throwTypeError(def, admitted.errors, opts);
  if (opts.fieldValidation === 'Strict') {
    const problems = strictDecodingErrors(opts.bodyFindings, admitted.unknownFields, true);
    if (problems.length > 0) {
      const msg = `strict decoding error: ${problems.join(', ')}`;
      // a decoded body's error names the kind (kube's transformDecodeError); a patched object's does not
      throw badRequest(opts.patched ? msg : `${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: ${msg}`);
    }
  }
  return admitted;
}

/**
 * An object mutating admission changed, admitted again: what a plugin or webhook added is
 * defaulted and validated as the request was; the unknown fields stay the request's.
 */
export function admitAgain(def: ResourceDefinition, admission: ObjectAdmission, obj: ApiObject, old: ApiObject | undefined, opts: WriteOptions, first: Admitted): Admitted {
  const { errors } = admission.admit(def, obj, old);
  throwTypeError(def, errors, opts);
  return { errors, unknownFields: first.unknownFields };
}

/** type errors are decoding errors: 400 naming only the first, whatever the validation level, as a decoder stops there (spec 000 §4.8, §7) */
function throwTypeError(def: ResourceDefinition, errors: FieldError[], opts: WriteOptions): void {
  // custom resources decode as unstructured JSON, so theirs are 422 Invalid with the rest (docs/crds.md)
  const typeError = def.customResource ? undefined : errors.find((e) => e.type === 'FieldValueTypeInvalid');
  if (typeError) throw opts.strategicPatch !== undefined && typeError.converter ? patchTypeError(opts.strategicPatch, typeError.converter) : decodeError(def, typeError);
}

/** validation shared by create and update, after admission: schema, metadata and the strategy's rules; throws 422 Invalid */
export function validateWrite(def: ResourceDefinition, admission: ObjectAdmission, obj: ApiObject, old: ApiObject | undefined, name: string, opts: WriteOptions, admitted: Admitted): void {
  const metaErrors = admission.validateMeta(def, obj);
  const strategyErrors = old
    ? (def.strategy.validateUpdate?.(obj, old, opts.subresource) ?? def.strategy.validate?.(obj) ?? [])
    : (def.strategy.validate?.(obj) ?? []);
  const all = [...metaErrors, ...admitted.errors, ...strategyErrors];
  if (all.length > 0) throw invalid(def.kind, def.group, name, all);
}

/** the 400 for a value of the wrong type: the object cannot be decoded (spec 000 §4.8) */
export function decodeError(def: ResourceDefinition, e: FieldError): StatusError {
  // Go's json decoder saves a base64 error as it is (base64.CorruptInputError), naming no field
  const what = e.message.startsWith('illegal base64 data') ? e.message : `${e.field}: ${e.message}`;
  return badRequest(`${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: ${what}`, [
    { reason: e.type, message: e.message, field: e.field },
  ]);
}

/**
 * a strategic merge patch's result of the wrong type: kube converts the merged map
 * straight into the typed object and names the patch and the converter's error; its
 * 422 is the spec's 400 here (spec 000 §4.8: a type error is 400), with kube's wording
 */
function patchTypeError(patch: unknown, converter: string): StatusError {
  const message = `Invalid value: ${JSON.stringify(goFormat(patch))}: ${converter}`;
  return badRequest(`patch: ${message}`, [{ reason: 'FieldValueInvalid', message, field: 'patch' }]);
}

/** the namespace of a namespaced object must exist; a Terminating one takes no new objects */
export async function checkNamespaceForCreate(
  def: ResourceDefinition,
  namespaceExists: (ns: string) => 'Active' | 'Terminating' | undefined,
  namespace: string,
  name: string,
): Promise<void> {
  if (def.scope !== 'Namespaced') return;
  const state = namespaceExists(namespace);
  if (state === undefined) throw notFound('namespaces', '', namespace);
  if (state === 'Terminating') {
    // kube names the object refused, not the namespace (issue #11 item 7)
    // the NamespaceTerminating cause tells controllers that no create will succeed (kube's NamespaceLifecycle admission)
    throw forbidden(`${qualifiedResource(def.resource, def.group)} "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`, {
      name,
      ...(def.group ? { group: def.group } : {}),
      kind: def.resource,
      causes: [{ reason: NAMESPACE_TERMINATING_CAUSE, message: `namespace ${namespace} is being terminated`, field: 'metadata.namespace' }],
    });
  }
}

/** an update needs the namespace to exist (a Terminating one still takes updates) */
export async function checkNamespaceForUpdate(
  def: ResourceDefinition,
  namespaceExists: (ns: string) => 'Active' | 'Terminating' | undefined,
  namespace: string,
): Promise<void> {
  if (def.scope !== 'Namespaced') return;
  if (namespaceExists(namespace) === undefined) throw notFound('namespaces', '', namespace);
}
