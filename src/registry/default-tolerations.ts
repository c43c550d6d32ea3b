// The DefaultTolerationSeconds admission plugin (kube-apiserver's, on by
// default): a new pod that tolerates neither `node.<label domain>/not-ready` nor
// `node.<label domain>/unreachable` with effect NoExecute gets a toleration of
// each for 300 s (`--default-not-ready-toleration-seconds`,
// `--default-unreachable-toleration-seconds`), so a short node outage does
// not evict it at once (spec 002 §3; the taint eviction controller,
// src/controllers/node-lifecycle/eviction.ts, honours the seconds).
// Runs on create only, as a write hook of the generic store.

import { nodeTaintKeys } from '../machinery/node-taints.js';
import type { WriteHooks } from './generic-store.js';
import type { ApiObject, ResourceDefinition } from './types.js';

export const DEFAULT_TOLERATION_SECONDS = 'DefaultTolerationSeconds';

export interface DefaultTolerationOptions {
  notReadySeconds?: number;
  unreachableSeconds?: number;
}

interface Tol {
  key?: string;
  operator?: string;
  effect?: string;
  tolerationSeconds?: number;
}

export function defaultTolerationHooks(apiDomain: string, o: DefaultTolerationOptions = {}): Pick<WriteHooks, 'beforeWrite'> {
  const { notReady, unreachable } = nodeTaintKeys(apiDomain);
  // kube's test: a toleration with this key (or no key) and NoExecute (or no effect) counts
  const covers = (t: Tol, key: string) => (t.key === key || !t.key) && (t.effect === 'NoExecute' || !t.effect);
  return {
    beforeWrite(def: ResourceDefinition, obj: ApiObject, old: ApiObject | undefined) {
      if (old || def.group !== '' || def.resource !== 'pods') return;
      const spec = (obj.spec ?? {}) as { tolerations?: Tol[] };
      const list = Array.isArray(spec.tolerations) ? [...spec.tolerations] : [];
      const add: Tol[] = [];
      if (!list.some((t) => covers(t, notReady))) add.push({ key: notReady, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: o.notReadySeconds ?? 300 });
      if (!list.some((t) => covers(t, unreachable))) add.push({ key: unreachable, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: o.unreachableSeconds ?? 300 });
      if (add.length === 0) return;
      spec.tolerations = [...list, ...add] as typeof spec.tolerations;
      (obj as { spec?: unknown }).spec = spec;
    },
  };
}
