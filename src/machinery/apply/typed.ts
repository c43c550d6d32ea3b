// Objects seen through their schema (spec 000 §4.9): which fields an object
// sets, how two objects differ, how an applied configuration merges into the
// live object and how items are removed. Everything here is a pure function
// over plain JSON; inputs are never mutated.
//
// Merge markers, read the way Kubernetes' structured-merge-diff reads them:
//   x-orch-list-type atomic | set | map (+ x-orch-list-map-keys)
//   without a list type, x-orch-patch-strategy "merge" is a map list keyed by
//     x-orch-patch-merge-key (a set when the items are scalars and no key is given)
//   other lists are atomic
//   x-orch-map-type atomic | granular (objects default to granular)
// Unstructured parts (no schema, x-orch-preserve-unknown-fields, or keys the
// schema does not declare) are "deduced": every key is a separately owned
// field and every list is atomic.
//
// The parts: schema nodes (schema-nodes.ts), field sets of objects and their
// comparison (object-fields.ts), applied configurations (config-merge.ts),
// JSON helpers (json-values.ts). Importers keep this one entry point.

export { type Node, type TypeContext, OBJECT_META_SCHEMA, classify, fieldSchema, itemPEOrIndex, resolveSchema, rootSchema } from './schema-nodes.js';
export { type Comparison, changedFields, compareObjects, reconcileWithSchema, removeItems, toFieldSet, toNodeSet } from './object-fields.js';
export { ApplyShapeError, mergeObjects, validateConfig } from './config-merge.js';
export { clone, deepEqual, isObject, withoutManagedFields } from './json-values.js';
