// ResourceQuota enforcement (docs/controllers.md "Resource quota"): the
// admission plugin's access to the resourcequotas store, and the leader-only
// resourcequota controller that keeps each quota's status counted.

import { StatusError } from '../core/errors.js';
import type { GenericStore } from '../registry/generic-store.js';
import { namespaceObjects } from './admission-access.js';
import type { QuotaAccess } from '../registry/quota/admission.js';
import type { ApiObject } from '../registry/types.js';
import type { RevisionedStore } from '../store/types.js';
import { runWhileLeader } from '../controllers/leader-gate.js';
import { RESOURCE_QUOTA_CONTROLLER, ResourceQuotaController } from '../controllers/resourcequota/controller.js';
import { controllerEnabled } from './controllers-flag.js';
import type { LeaderControllerDeps } from './disruption-setup.js';
import type { WorkloadGate } from './workloads-setup.js';

/** the admission plugin reads the member's own state and charges through the store's optimistic update */
export function quotaAccess(quotas: () => GenericStore | undefined, store: Pick<RevisionedStore, 'range'>): QuotaAccess {
  return {
    list: namespaceObjects(quotas, store),
    async listFresh(namespace) {
      return (await quotas()?.list(namespace)) ?? [];
    },
    async writeUsed(quota: ApiObject, used: Record<string, string>) {
      const gs = quotas();
      const meta = quota.metadata ?? {};
      if (!gs) return;
      // pinned to the quota the check read: a charge made meanwhile is a 409 and the check repeats;
      // a quota deleted meanwhile limits nothing any more (returning an object here would re-create it)
      try {
        await gs.guaranteedUpdate(meta.namespace ?? '', meta.name ?? '', { dryRun: false, subresource: 'status', manager: 'kube-apiserver' }, (cur) => {
          if (!cur) throw new StatusError(404, 'NotFound', `resourcequotas "${meta.name ?? ''}" not found`);
          return { ...cur, metadata: { ...cur.metadata, resourceVersion: meta.resourceVersion }, status: { ...((cur.status ?? {}) as object), used } };
        });
      } catch (e) {
        if (!(e instanceof StatusError && e.code === 404)) throw e;
      }
    },
  };
}

/** the resourcequota controller behind the leader gate; `--controllers` names it as kube does (on by default) */
export function startResourceQuota(d: LeaderControllerDeps & { resyncMs?: number }): WorkloadGate[] {
  const quotas = d.registry.lookup('', 'v1', 'resourcequotas');
  if (!quotas || !controllerEnabled(d.controllers, RESOURCE_QUOTA_CONTROLLER, true)) return [];
  const controller = new ResourceQuotaController({
    store: d.store,
    quotas: () => d.storeFor(quotas),
    storeOf: (group, resource) => {
      const def = d.registry.all().find((x) => x.group === group && x.resource === resource && x.scope === 'Namespaced');
      return def ? d.storeFor(def) : undefined;
    },
    count: (gs, namespace) => d.store.range({ ...gs.rangeKeys(namespace), countOnly: true }).count,
    clock: d.clock,
    log: d.log,
    resyncMs: d.resyncMs,
  });
  return [{ name: 'resourcequota controller', gate: runWhileLeader(d.store, controller, { name: 'resourcequota controller', log: d.log }) }];
}
