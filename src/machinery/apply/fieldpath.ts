// Field paths and field sets for server-side apply (spec 000 §2.4, §4.9).
//
// A field set is a set of paths stored as a trie, in the model Kubernetes'
// structured-merge-diff uses: every path element is one of
//   f:<name>          a struct field or map key
//   k:{"a":1,"b":"x"} a list-map item, identified by its key fields (sorted by name)
//   v:<json>          a set item, identified by its value
//   i:<n>             a list item identified by position (only where nothing else works)
// At each node a set holds "members" (paths that end there) and "children"
// (non-empty sub-sets). The FieldsV1 encoding writes members as `"<pe>":{}` and
// a path element that is both a member and has children as
// `"<pe>":{".":{}, ...children}` — the shape kubectl users see in
// `metadata.managedFields[].fieldsV1`.
//
// The parts: path elements and their order (path-element.ts), their text
// forms (path-encoding.ts), field sets and the cursor that builds them
// (field-set.ts). Importers keep this one entry point.

export { type Path, type PathElement, compareStrings, comparePathElements, compareValues, fieldPE, indexPE, keyPE, path, sortStrings, valuePE } from './path-element.js';
export { FieldPathError, goJSON, parsePathElement, pathElementToString, pathToString, serializePathElement } from './path-encoding.js';
export { FieldSet, PathCursor } from './field-set.js';
