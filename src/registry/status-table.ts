// The one table that turns the errors of the layers below the API into
// Kubernetes `Status` errors (spec 000 §7). It lives in the registry because
// that is the lowest layer that can see every class it maps: the machinery's
// (selectors, patch, apply, protobuf), the store's (compaction, future
// revisions) and core's (StatusError, StoreUnavailableError). The watch cacher
// and the endpoint layer import it downward; the machinery and the store stay
// free of HTTP semantics and throw their own typed errors. A registration API
// in core was the alternative; it would hide the mapping behind load order,
// so the table is written out here instead.
//
// Errors the table does not know (StoreClosedError, InvalidTxnError, plain
// Errors) stay unmapped: the Status filter answers them 500 InternalError.
// Context-specific wording stays with the caller: a FutureRevisionError names
// the resourceVersion as the client wrote it (`storeErrorToStatus`), webhook
// failures name the webhook (admission/webhooks.ts), and the PATCH handler
// reports other failures of a patch engine as "the patch could not be applied".

import {
  StatusError,
  badRequest,
  gone,
  toStatusError,
  tooLargeResourceVersion,
  unsupportedMediaType,
} from '../core/errors.js';
import { ApplyShapeError } from '../machinery/apply/typed.js';
import { PatchError, UnsupportedPatchType } from '../machinery/patch/errors.js';
import { patchMediaTypes } from '../machinery/patch/media-types.js';
import { ProtobufError } from '../machinery/protobuf/errors.js';
import { SelectorParseError } from '../machinery/selectors/labels.js';
import { CompactedError, FutureRevisionError } from '../store/types.js';

/** one row: an error class and the Status it becomes */
interface Row<E extends Error> {
  type: abstract new (...args: never[]) => E;
  toStatus: (e: E) => StatusError;
}

const row = <E extends Error>(r: Row<E>): Row<Error> => r as unknown as Row<Error>;

const TABLE: readonly Row<Error>[] = [
  // an unparsable label or field selector, or a field the kind does not select on
  row({ type: SelectorParseError, toStatus: (e) => badRequest(e.message) }),
  // a resourceVersion older than the compaction window (spec 000 §3.3)
  row({ type: CompactedError, toStatus: () => gone(`The resourceVersion for the provided list is too old.`) }),
  // a resourceVersion the store has not reached (kube's "Too large resource version", 504)
  row({ type: FutureRevisionError, toStatus: (e) => tooLargeResourceVersion(String(e.requested), e.current) }),
  // protobuf bodies: 415 for kinds or encodings without protobuf, 400 for malformed data (spec 000 §2.7)
  row({
    type: ProtobufError,
    toStatus: (e) => (e.reason === 'Unsupported' ? unsupportedMediaType(e.message) : badRequest(`the protobuf body could not be decoded: ${e.message}`)),
  }),
  // strategic merge on a custom resource (spec 000 §4.3)
  row({
    type: UnsupportedPatchType,
    toStatus: () => unsupportedMediaType(`the body of the request was in an unknown format - accepted media types include: ${patchMediaTypes(true).join(', ')}`),
  }),
  // a malformed patch is 400; one that does not apply (a failed JSON Patch `test` too) is 422 Invalid, as kube answers it (issue #11)
  row({
    type: PatchError,
    toStatus: (e) =>
      e.reason === 'Malformed'
        ? badRequest(`the patch body could not be decoded: ${e.message}`)
        : new StatusError(422, 'Invalid', `the server rejected our request due to an error in our request: ${e.message}`),
  }),
  // an apply configuration that does not fit the schema (spec 000 §4.9)
  row({ type: ApplyShapeError, toStatus: (e) => badRequest(`failed to create typed patch object: ${e.message}`) }),
];

/**
 * The Status for an error raised anywhere below the API, or undefined for an
 * unexpected one (answered 500). StatusError (CorruptObjectError among them)
 * passes through; StoreUnavailableError is 503/504 with Retry-After.
 */
export function statusFor(e: unknown): StatusError | undefined {
  const direct = toStatusError(e);
  if (direct) return direct;
  for (const r of TABLE) if (e instanceof r.type) return r.toStatus(e);
  return undefined;
}

/** rethrows `e` as its Status when the table knows it, as itself otherwise */
export function throwAsStatus(e: unknown): never {
  throw statusFor(e) ?? e;
}
