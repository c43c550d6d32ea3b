// The DefaultTolerationSeconds admission plugin (kube-apiserver's, on by
// default): a new pod that tolerates neither `node.<label domain>/not-ready` nor
// `node.<label domain>/unreachable` with effect NoExecute gets a toleration of
// each for 300 s (`--default-not-ready-toleration-seconds`,
// `--default-unreachable-toleration-seconds`), so a short node outage does
// not evict it at once (spec 002 §3; the taint eviction controller,
// src/controllers/node-lifecycle/eviction.ts, honours the seconds).
// Runs on pod creates and updates (not sub-resources: kube's handler is
// NewHandler(Create, Update)), so a PUT of a pod without the defaults (kubectl
// replace of the manifest it was created from) gets them back instead of being
// refused for removing tolerations; a mutating step in kube's plugin order:
// after Priority, before RuntimeClass's toleration merge and the mutating
// webhooks, which see the defaults as they do in kube.

import { nodeTaintKeys } from '../machinery/node-taints.js';
import type { WriteHooks } from './generic-store.js';
import type { AdmissionCall } from './write-options.js';
import { coreResources } from './write-hooks.js';

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

export function defaultTolerationHooks(apiDomain: string, o: DefaultTolerationOptions = {}): Required<Pick<WriteHooks, 'mutate' | 'appliesTo'>> {
  const { notReady, unreachable } = nodeTaintKeys(apiDomain);
  // kube's test: a toleration with this key (or no key) and NoExecute (or no effect) counts
  const covers = (t: Tol, key: string) => (t.key === key || !t.key) && (t.effect === 'NoExecute' || !t.effect);
  return {
    appliesTo: coreResources('pods'),
    async mutate(c: AdmissionCall) {
      const obj = c.object;
      if (!obj || (c.operation !== 'CREATE' && c.operation !== 'UPDATE') || c.opts.subresource || c.def.group !== '' || c.def.resource !== 'pods') return obj;
      const spec = (obj.spec ?? {}) as { tolerations?: Tol[] };
      const list = Array.isArray(spec.tolerations) ? [...spec.tolerations] : [];
      const add: Tol[] = [];
      if (!list.some((t) => covers(t, notReady))) add.push({ key: notReady, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: o.notReadySeconds ?? 300 });
      if (!list.some((t) => covers(t, unreachable))) add.push({ key: unreachable, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: o.unreachableSeconds ?? 300 });
      if (add.length === 0) return obj;
      spec.tolerations = [...list, ...add] as typeof spec.tolerations;
      (obj as { spec?: unknown }).spec = spec;
      return obj;
    },
  };
}
