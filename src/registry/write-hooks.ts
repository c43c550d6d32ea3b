// Several sets of write hooks run as one, in order (the server's own hooks,
// then each enabled admission plugin: src/server/admission-plugins.ts chooses
// them, spec 001 §5.15). The hooks run in the generic store's write path.

import type { WriteHooks } from './generic-store.js';

export function sequenceHooks(all: WriteHooks[]): Required<Pick<WriteHooks, 'beforeWrite' | 'beforeDelete'>> {
  return {
    beforeWrite(def, obj, old, opts) {
      for (const h of all) h.beforeWrite?.(def, obj, old, opts);
    },
    beforeDelete(def, obj, opts) {
      for (const h of all) h.beforeDelete?.(def, obj, opts);
    },
  };
}
