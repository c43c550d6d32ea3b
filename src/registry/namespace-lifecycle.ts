// Namespace lifecycle in the registry's write path (kube's NamespaceLifecycle
// admission plugin, spec 000 §4.10): a namespaced create needs an Active
// namespace (a Terminating one refuses new objects), an update needs the
// namespace to exist, and the built-in namespaces cannot be deleted (403).

import { forbidden } from '../core/errors.js';
import type { RevisionedStore } from '../store/types.js';
import { type WriteHooks, decodeObject, storageKey } from './generic-store.js';
import type { ApiObject, ResourceDefinition } from './types.js';

export type NamespacePhase = 'Active' | 'Terminating';

export class NamespaceLifecycle {
  /** every namespaced write asks: the namespace is decoded once per revision of it, not per write */
  private readonly known = new Map<string, { modRevision: number; state: NamespacePhase }>();

  constructor(
    private readonly store: Pick<RevisionedStore, 'range'>,
    private readonly nsDef: ResourceDefinition,
    /** namespaces that may not be deleted (docs/architecture.md: default, <system>, <public>, <node-lease>) */
    private readonly immortal: readonly string[],
  ) {}

  /** the namespace's phase; undefined when it does not exist (GenericStore's namespace check) */
  readonly state = (ns: string): NamespacePhase | undefined => {
    const kv = this.store.range({ key: storageKey(this.nsDef, '', ns) }).kvs[0];
    if (!kv) {
      this.known.delete(ns);
      return undefined;
    }
    const known = this.known.get(ns);
    if (known?.modRevision === kv.modRevision) return known.state;
    const state: NamespacePhase = decodeObject(kv).metadata?.deletionTimestamp ? 'Terminating' : 'Active';
    this.known.set(ns, { modRevision: kv.modRevision, state });
    return state;
  };

  /** the delete guard of the built-in namespaces */
  hooks(): Required<Pick<WriteHooks, 'beforeDelete'>> {
    return {
      beforeDelete: (def: ResourceDefinition, obj: ApiObject) => {
        if (def === this.nsDef && this.immortal.includes(obj.metadata?.name ?? '')) {
          throw forbidden(`namespaces "${obj.metadata?.name}" is forbidden: this namespace may not be deleted`, {
            name: obj.metadata?.name,
            kind: 'namespaces',
          });
        }
      },
    };
  }
}
