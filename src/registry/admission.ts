// Schema-driven admission of an object (spec 000 §4.8): defaults from the
// schema, then structural validation that prunes unknown fields, then the
// object-metadata rules. The per-kind strategy runs after this in the store.

import type { ObjectAdmission } from './generic-store.js';
import { compileSchema } from '../machinery/schema/compile.js';
import { applyCompiledDefaults } from '../machinery/schema/defaults.js';
import { validateObjectMeta } from '../machinery/schema/object-meta.js';
import { dropEmptyMetadata } from '../machinery/meta.js';
import type { Definitions } from '../machinery/schema/types.js';
import { validateCompiled } from '../machinery/schema/validate.js';
import { needsGoValues } from '../machinery/schema/go-values.js';
import type { CompiledSchema } from '../machinery/schema/compile.js';
import { crdUnknownOrder } from '../machinery/schema/strict-decoding.js';
import { validateRules } from '../machinery/schema/cel-rules.js';
import { ratchetErrors } from '../machinery/schema/ratchet.js';
import type { ApiObject, FieldError, ResourceDefinition } from './types.js';

/** error types after which kube does not run a custom resource's CEL rules (strategy.go hasBlockingErr) */
const BLOCKING_CEL = new Set(['FieldValueNotSupported', 'FieldValueRequired', 'FieldValueTooLong', 'FieldValueTooMany', 'FieldValueTypeInvalid']);

/** kube's field.Invalid(nil, nil, …): a nil path prints `<nil>`, a nil value `"null"` */
const RULES_NOT_CHECKED: FieldError = {
  field: '<nil>',
  type: 'FieldValueInvalid',
  message: 'Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
};

export class SchemaAdmission implements ObjectAdmission {
  /** `standardFinalizers`: single-word finalizer names accepted on any object (the CRD cleanup finalizer) */
  constructor(
    private readonly defs: Definitions,
    private readonly standardFinalizers: readonly string[] = [],
  ) {}

  admit(def: ResourceDefinition, obj: ApiObject, old?: ApiObject): { errors: FieldError[]; unknownFields: string[] } {
    const compiled = compileSchema(def.schema, this.defs);
    applyCompiledDefaults(obj, compiled);
    const r = validateCompiled(obj, compiled, { listUniqueness: def.customResource === true, enumBesideTypeError: def.customResource === true, dropEmptyMaps: def.customResource !== true, goValues: def.customResource !== true, goIntRanges: def.customResource !== true });
    dropEmptyMetadata(obj);
    // a custom resource's unknown fields in the order kube's handler finds them (kube's field_validation_test.go)
    if (def.customResource && r.unknownFields.length > 1) r.unknownFields = crdUnknownOrder(r.unknownFields, r.embeddedMetaUnknown ?? []);
    // ratcheting (custom resources, kube 1.30+): compared with the stored object as kube reads it,
    // defaulted by today's schema; copied only when it is needed
    let stored = old;
    if (old !== undefined && def.customResource && (r.errors.length > 0 || compiled.subtreeHasRules)) {
      stored = structuredClone(old);
      applyCompiledDefaults(stored, compiled);
      if (r.errors.length > 0) r.errors = ratchetErrors(r.errors, obj, stored, compiled);
    }
    // CEL rules (x-orch-validations) see the pruned, defaulted object; as in kube they are
    // skipped, with one error saying so, when a type, required, enum or size error means the
    // object lacks the shape the rules were written for (other errors, e.g. pattern, do not block)
    if (compiled.subtreeHasRules) {
      if (r.errors.some((e) => BLOCKING_CEL.has(e.type))) r.errors.push({ ...RULES_NOT_CHECKED });
      else r.errors.push(...validateRules(obj, stored, compiled));
    }
    return r;
  }

  asDecoded(def: ResourceDefinition, obj: ApiObject): ApiObject {
    return def.customResource ? obj : withGoValues(obj, compileSchema(def.schema, this.defs));
  }

  validateMeta(def: ResourceDefinition, obj: ApiObject): FieldError[] {
    return validateObjectMeta(obj.metadata ?? {}, {
      namespaced: def.scope === 'Namespaced',
      nameValidation: def.nameValidation,
      nameIsDNSLabel: def.group === '' && def.resource === 'namespaces',
      standardFinalizers: this.standardFinalizers,
    });
  }
}

/**
 * `obj` as kube decodes it from storage: its quantities and times in Go's form (goValues). The
 * same object when they are (what orch has written since it writes them so), else a normalized
 * copy: an object stored before compares with an update as kube's would (a pod's `cpu: 2` is
 * `"2"` on both sides)
 */
export function withGoValues<T>(obj: T, compiled: CompiledSchema): T {
  if (!needsGoValues(obj, compiled)) return obj;
  const copy = structuredClone(obj);
  validateCompiled(copy, compiled, { prune: false, dropNulls: false, goValues: true });
  return copy;
}
