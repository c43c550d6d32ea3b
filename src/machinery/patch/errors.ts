// Typed failures of the patch engines (spec 000 §4.3). The PATCH handler maps
// them onto Status errors: a failed JSON Patch `test` is a conflict with the
// current state, a malformed body is a bad request, anything else is an
// invalid patch, and a strategic merge patch on a kind without a schema
// (custom resources) is an unsupported media type (415).

/**
 * - `TestFailed`: a JSON Patch `test` operation did not match (RFC 6902 §4.6)
 * - `Invalid`: the patch is well-formed JSON but not a valid patch for this document
 * - `Malformed`: the patch body could not be decoded at all
 */
export type PatchErrorReason = 'TestFailed' | 'Invalid' | 'Malformed';

export class PatchError extends Error {
  constructor(
    readonly reason: PatchErrorReason,
    message: string,
  ) {
    super(message);
    this.name = 'PatchError';
  }
}

/** The patch media type is not supported for this resource (e.g. strategic merge on a custom resource). */
export class UnsupportedPatchType extends Error {
  constructor(readonly contentType: string, message?: string) {
    super(message ?? `patch type ${contentType} is not supported for this resource`);
    this.name = 'UnsupportedPatchType';
  }
}

export function invalidPatch(message: string): PatchError {
  return new PatchError('Invalid', message);
}
