// managedFields bookkeeping for non-apply writes (spec 000 §4.9): create,
// update and non-apply patch record an `Update` entry for the writer, never
// a conflict. Server-side apply computes its own entries.

import { recordUpdate } from '../api/apply/apply.js';
import type { WriteHooks } from '../api/generic-store.js';
import { nowTimestamp } from '../api/meta.js';
import { apiVersionOf } from '../api/registry.js';
import type { Definitions } from '../api/schema/types.js';

export function managedFieldsHooks(defs: Definitions): Pick<WriteHooks, 'beforeWrite'> {
  return {
    beforeWrite(def, obj, old, opts) {
      if (opts.operation === 'Apply' || !opts.manager) return;
      const updated = recordUpdate({
        live: old,
        updated: obj,
        manager: opts.manager,
        apiVersion: apiVersionOf(def),
        now: nowTimestamp(),
        schema: def.schema,
        defs,
      });
      const mf = updated.metadata?.managedFields;
      if (mf === undefined) delete obj.metadata!.managedFields;
      else obj.metadata!.managedFields = mf;
    },
  };
}
