// Which priority level a request runs at, and which flow it belongs to, in
// the spirit of Kubernetes' API Priority and Fairness default FlowSchemas
// (docs/reliability.md "Overload protection"). First match wins.

import type { UserInfo } from '../../auth/types.js';

export type PriorityLevelName =
  | 'exempt'
  | 'system'
  | 'leader-election'
  | 'node-high'
  | 'workload-high'
  | 'workload-low'
  | 'global-default'
  | 'catch-all';

/** What classification looks at: who asks, and for what. */
export interface FlowRequest {
  user: UserInfo;
  isResourceRequest: boolean;
  verb: string;
  apiGroup: string;
  resource: string;
  namespace: string;
}

export interface Classification {
  /** the FlowSchema-like rule that matched (response header, metrics) */
  schema: string;
  level: PriorityLevelName;
  /** requests of one flow share fairness: here the user */
  flow: string;
}

export interface ClassifierOptions {
  /** the system namespace (`orch-system`) whose service accounts and leases are the control plane's */
  systemNamespace: string;
  /** the namespace of node heartbeats (`orch-node-lease`) */
  nodeLeaseNamespace: string;
}

export function classifier(o: ClassifierOptions): (r: FlowRequest) => Classification {
  const systemSAGroup = `system:serviceaccounts:${o.systemNamespace}`;
  const isLeases = (r: FlowRequest): boolean => r.isResourceRequest && r.resource === 'leases' && r.apiGroup.startsWith('coordination.');
  return (r) => {
    const groups = r.user.groups;
    const flow = r.user.username;
    const is = (schema: string, level: PriorityLevelName): Classification => ({ schema, level, flow });
    // the admin identity is never queued or refused (issue #15)
    if (groups.includes('system:masters')) return is('exempt', 'exempt');
    if (isLeases(r) && r.namespace === o.systemNamespace && (groups.includes(systemSAGroup) || r.user.username.startsWith('system:'))) {
      return is('system-leader-election', 'leader-election');
    }
    if (groups.includes('system:nodes')) {
      // heartbeats: the node's Lease and its status
      if ((isLeases(r) && r.namespace === o.nodeLeaseNamespace) || (r.resource === 'nodes' && r.apiGroup === '')) return is('system-node-high', 'node-high');
      return is('system-nodes', 'system');
    }
    if (groups.includes(systemSAGroup)) return is('system-service-accounts', 'workload-high');
    if (groups.includes('system:serviceaccounts')) return is('service-accounts', 'workload-low');
    if (groups.includes('system:authenticated')) return is('global-default', 'global-default');
    return is('catch-all', 'catch-all');
  };
}
