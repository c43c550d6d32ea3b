// managedFields bookkeeping for non-apply writes (spec 000 §4.9): create,
// update and non-apply patch record an `Update` entry for the writer, never
// a conflict. Server-side apply computes its own entries.

import { updateManagedFields } from '../machinery/apply/apply.js';
import type { WriteHooks, WriteOptions } from './generic-store.js';
import { nowTimestamp } from '../machinery/meta.js';
import type { Clock } from '../core/clock.js';
import { apiVersionOf } from './registry.js';
import type { Definitions } from '../machinery/schema/types.js';
import type { ApiObject, ResourceDefinition } from './types.js';

/** `clock` stamps the entries' `time` (the composition root's, src/core/clock.ts) */
export function managedFieldsHooks(defs: Definitions, clock: Clock): Pick<WriteHooks, 'recordFields'> {
  return {
    recordFields(def, obj, old, opts) {
      if (opts.operation === 'Apply' || !opts.manager) return undefined;
      // only the entries are needed: recordUpdate would clone the whole object
      const mf = updateManagedFields({
        live: old,
        updated: statusAsStored(def, obj, old, opts),
        manager: opts.manager,
        apiVersion: apiVersionOf(def),
        now: nowTimestamp(clock.now()),
        schema: def.schema,
        defs,
        subresource: opts.subresource,
      });
      return (written) => {
        if (mf === undefined) delete written.metadata!.managedFields;
        else written.metadata!.managedFields = mf;
      };
    },
  };
}

/**
 * On a kind with a `status` sub-resource the main resource does not own
 * status: what the server put there (e.g. a pod's initial phase) is nobody's
 * change, as with Kubernetes' reset-fields strategies.
 */
function statusAsStored(def: ResourceDefinition, obj: ApiObject, old: ApiObject | undefined, opts: WriteOptions): ApiObject {
  // a CSR's `approval` writes status too (its conditions)
  if (opts.subresource === 'status' || opts.subresource === 'approval' || !(def.subresources ?? []).includes('status')) return obj;
  const { status: _s, ...rest } = obj;
  return old?.status === undefined ? (rest as ApiObject) : { ...rest, status: old.status };
}
