// The PATCH media types (spec 000 §4.3), in the order kube-apiserver lists
// them in its 415 message. One list for the PATCH handler, the scale
// sub-resource, the served OpenAPI and the Status table.

export const JSON_PATCH = 'application/json-patch+json';
export const MERGE_PATCH = 'application/merge-patch+json';
export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';
export const APPLY_PATCH = 'application/apply-patch+yaml';

export const PATCH_MEDIA_TYPES: readonly string[] = [JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH];

/** custom resources take no strategic merge patch: they have no patch strategies (spec 000 §4.3) */
export function patchMediaTypes(customResource: boolean): string[] {
  return PATCH_MEDIA_TYPES.filter((t) => !customResource || t !== STRATEGIC_MERGE_PATCH);
}
