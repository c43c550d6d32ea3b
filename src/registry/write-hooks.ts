// Several sets of write hooks run as one, in order (the server's own hooks,
// then each enabled admission plugin: src/server/admission-plugins.ts chooses
// them, spec 001 §5.15; then the webhook and policy chain). The hooks run in
// the generic store's write path.
//
// A set that declares `appliesTo` is left out for every other resource: most
// plugins act on pods or one other kind, and calling each of them only to
// return at once cost a ConfigMap create some 17 awaited calls, each a
// promise and a copy of the call (docs/architecture.md "Write path cost").
// The sets that apply are worked out once per resource definition.

import type { ResourceDefinition } from './types.js';
import type { WriteHooks } from './write-options.js';

type Sequenced = Required<Pick<WriteHooks, 'recordFields' | 'beforeWrite' | 'beforeDelete' | 'mutatesInPlace'>> & Pick<WriteHooks, 'mutate' | 'validateAdmission'>;

/** an `appliesTo` for core (group "") resources of these names */
export function coreResources(...resources: string[]): (def: ResourceDefinition) => boolean {
  return (def) => def.group === '' && resources.includes(def.resource);
}

interface Applicable {
  recordFields: WriteHooks[];
  beforeWrite: WriteHooks[];
  beforeDelete: WriteHooks[];
  mutate: WriteHooks[];
  validateAdmission: WriteHooks[];
  inPlace: boolean;
}

export function sequenceHooks(all: WriteHooks[]): Sequenced {
  // a CRD's definition is replaced when the CRD changes: the old one's entry goes with it
  const byDef = new WeakMap<ResourceDefinition, Applicable>();
  const applicable = (def: ResourceDefinition): Applicable => {
    let a = byDef.get(def);
    if (!a) {
      const sets = all.filter((h) => !h.appliesTo || h.appliesTo(def));
      a = {
        recordFields: sets.filter((h) => h.recordFields),
        beforeWrite: sets.filter((h) => h.beforeWrite),
        beforeDelete: sets.filter((h) => h.beforeDelete),
        mutate: sets.filter((h) => h.mutate),
        validateAdmission: sets.filter((h) => h.validateAdmission),
        inPlace: sets.some((h) => h.mutate && !h.mutatesCopy),
      };
      byDef.set(def, a);
    }
    return a;
  };
  const out: Sequenced = {
    recordFields(def, obj, old, opts) {
      const sets = applicable(def).recordFields;
      // one set (managedFields) on every write: no arrays for it
      if (sets.length <= 1) return sets[0]?.recordFields!(def, obj, old, opts);
      const puts = sets.map((h) => h.recordFields!(def, obj, old, opts)).filter((p) => p !== undefined);
      if (puts.length <= 1) return puts[0];
      return (written) => {
        for (const put of puts) put(written);
      };
    },
    beforeWrite(def, obj, old, opts) {
      for (const h of applicable(def).beforeWrite) h.beforeWrite!(def, obj, old, opts);
    },
    beforeDelete(def, obj, opts) {
      for (const h of applicable(def).beforeDelete) h.beforeDelete!(def, obj, opts);
    },
    mutatesInPlace: (def) => applicable(def).inPlace,
  };
  // asynchronous admission only when some set has it: a store without it skips the step
  if (all.some((h) => h.mutate)) {
    out.mutate = async (call) => {
      const sets = applicable(call.def).mutate;
      let object = call.object;
      for (const h of sets) {
        const next = await h.mutate!(object === call.object ? call : { ...call, object });
        if (next) object = next;
      }
      return object;
    };
  }
  if (all.some((h) => h.validateAdmission)) {
    out.validateAdmission = async (call) => {
      for (const h of applicable(call.def).validateAdmission) await h.validateAdmission!(call);
    };
  }
  return out;
}
