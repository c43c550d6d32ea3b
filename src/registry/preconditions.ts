// The two wordings kube-apiserver 1.32 gives a failed precondition (409 Conflict).

import { type StatusError, conflict } from '../core/errors.js';
import type { ApiObject, ResourceDefinition } from './types.js';

/**
 * A PUT body's `metadata.uid` that is not the stored object's (an absent one has none): kube's
 * storage Preconditions.Check fails with an invalid-object StorageError, which
 * InterpretUpdateError makes a Conflict on the resource carrying the StorageError's text.
 */
export function uidPreconditionFailed(def: ResourceDefinition, key: string, name: string, uid: string, stored: string | undefined): StatusError {
  return conflict(
    def.resource,
    def.group,
    name,
    `StorageError: invalid object, Code: 4, Key: ${key}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${uid}, UID in object meta: ${stored ?? ''}`,
  );
}

/**
 * DeleteOptions.preconditions that the object does not meet: kube's rest.BeforeDelete, a
 * Conflict naming the kind (not the resource) with the group, before anything is written.
 */
export function checkDeletePreconditions(def: Pick<ResourceDefinition, 'kind' | 'group'>, current: ApiObject, pre: { uid?: string; resourceVersion?: string } | undefined): void {
  if (!pre) return;
  const name = current.metadata?.name ?? '';
  if (pre.uid && pre.uid !== current.metadata?.uid) {
    throw conflict(
      def.kind,
      def.group,
      name,
      `the UID in the precondition (${pre.uid}) does not match the UID in record (${current.metadata?.uid ?? ''}). The object might have been deleted and then recreated`,
    );
  }
  if (pre.resourceVersion && pre.resourceVersion !== current.metadata?.resourceVersion) {
    throw conflict(
      def.kind,
      def.group,
      name,
      `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${current.metadata?.resourceVersion ?? ''}). The object might have been modified`,
    );
  }
}
