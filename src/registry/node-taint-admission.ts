// The TaintNodesByCondition admission plugin (kube-apiserver's, on by default;
// plugin/pkg/admission/nodetaint, kube 1.32): a Node created through the API
// gets the not-ready taint with effect NoSchedule, so the scheduler places
// nothing on it before its agent has reported Ready (without it a new node
// would be schedulable until the node lifecycle controller first tainted it).
// Kube adds it to every new Node, whatever conditions the object carries,
// unless a taint with the same key and effect is there already (the value is
// not compared, as in kube's MatchTaint). The node lifecycle controller
// removes it once the node reports Ready=True
// (src/controllers/node-lifecycle/plan.ts, kube's doNoScheduleTaintingPass).
// The key is the server's (`node.<label domain>/not-ready`, kube's
// `node.kubernetes.io/not-ready` with --api-domain k8s.io), the one the
// controller owns.

import { nodeTaintKeys } from '../machinery/node-taints.js';
import type { WriteHooks } from './write-options.js';
import { coreResources } from './write-hooks.js';

export const TAINT_NODES_BY_CONDITION = 'TaintNodesByCondition';

interface TaintLike {
  key?: unknown;
  effect?: unknown;
}

export function nodeTaintAdmission(apiDomain: string): Required<Pick<WriteHooks, 'mutate' | 'appliesTo'>> {
  const notReady = { key: nodeTaintKeys(apiDomain).notReady, effect: 'NoSchedule' };
  return {
    appliesTo: coreResources('nodes'),
    async mutate(c) {
      if (c.operation !== 'CREATE' || c.opts.subresource || c.def.group !== '' || c.def.resource !== 'nodes' || !c.object) return c.object;
      const spec = (c.object.spec ??= {}) as { taints?: TaintLike[] };
      const taints = Array.isArray(spec.taints) ? spec.taints : [];
      if (!taints.some((t) => t?.key === notReady.key && t?.effect === notReady.effect)) spec.taints = [...taints, { ...notReady }];
      return c.object;
    },
  };
}
