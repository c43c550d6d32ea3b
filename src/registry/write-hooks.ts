// Several sets of write hooks run as one, in order (the server's own hooks,
// then each enabled admission plugin: src/server/admission-plugins.ts chooses
// them, spec 001 §5.15; then the webhook and policy chain). The hooks run in
// the generic store's write path.

import type { WriteHooks } from './generic-store.js';

type Sequenced = Required<Pick<WriteHooks, 'beforeWrite' | 'beforeDelete'>> & Pick<WriteHooks, 'mutate' | 'validateAdmission'>;

export function sequenceHooks(all: WriteHooks[]): Sequenced {
  const out: Sequenced = {
    beforeWrite(def, obj, old, opts) {
      for (const h of all) h.beforeWrite?.(def, obj, old, opts);
    },
    beforeDelete(def, obj, opts) {
      for (const h of all) h.beforeDelete?.(def, obj, opts);
    },
  };
  // asynchronous admission only when some set has it: a store without it skips the step
  const mutating = all.filter((h) => h.mutate);
  if (mutating.length > 0) {
    out.mutate = async (call) => {
      let object = call.object;
      for (const h of mutating) {
        const next = await h.mutate!({ ...call, object });
        if (next) object = next;
      }
      return object;
    };
  }
  const validating = all.filter((h) => h.validateAdmission);
  if (validating.length > 0) {
    out.validateAdmission = async (call) => {
      for (const h of validating) await h.validateAdmission!(call);
    };
  }
  return out;
}
