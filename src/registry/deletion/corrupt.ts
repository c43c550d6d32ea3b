// A stored value that does not decode (spec 000 §4.10: "a resource is
// corrupt if it cannot be retrieved because of a transformation or a
// decoding failure"). Reads report it as a 500 Status naming the key, so an
// operator can find it and remove it with the unsafe delete option.

import { StatusError } from '../../core/errors.js';

export const UNSAFE_DELETE_OPTION = 'ignoreStoreReadErrorWithClusterBreakingPotential';
export const UNSAFE_DELETE_GATE = 'AllowUnsafeMalformedObjectDeletion';

export class CorruptObjectError extends StatusError {
  constructor(
    readonly key: string,
    override readonly cause: unknown,
  ) {
    super(
      500,
      'InternalError',
      `Internal error occurred: corrupt object at key ${key}: the stored data cannot be decoded (${
        (cause as Error)?.message ?? String(cause)
      }); it can be removed with the delete option ${UNSAFE_DELETE_OPTION}=true when the feature gate ${UNSAFE_DELETE_GATE} is enabled`,
      { causes: [{ reason: 'CorruptObject', message: `corrupt object at key ${key}`, field: key }] },
    );
  }
}

export function isCorruptObjectError(e: unknown): e is CorruptObjectError {
  return e instanceof CorruptObjectError;
}
