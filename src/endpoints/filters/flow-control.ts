// Overload protection (issue #15, kube's WithPriorityAndFairness) before any
// further work; long-running requests and health checks are not counted.
// The seat is released when the work is done, also when the deadline
// answered earlier (the timeout filter is further out).

import type { UserInfo } from '../../auth/types.js';
import { HEALTH_PATH } from './non-resource.js';
import { type Filter, infoOf, userOf } from './state.js';
import { isLongRunning } from './timeout.js';

/** the gateway's FlowControl (src/gateway/flowcontrol/), as this filter uses it */
export interface FlowAdmission {
  admit(r: { user: UserInfo; isResourceRequest: boolean; verb: string; apiGroup: string; resource: string; namespace: string }):
    | { release(): void }
    | Promise<{ release(): void }>;
}

export function flowControlFilter(flow: FlowAdmission): Filter {
  return async (s, next) => {
    const info = infoOf(s);
    if (isLongRunning(info) || HEALTH_PATH.test(s.http.path)) return next(s);
    const seat = flow.admit({ user: userOf(s), isResourceRequest: info.isResourceRequest, verb: info.verb, apiGroup: info.group, resource: info.resource, namespace: info.namespace });
    // a free seat is given at once: no await for it (one promise less per request)
    const admitted = seat instanceof Promise ? await seat : seat;
    try {
      return await next(s);
    } finally {
      admitted.release();
    }
  };
}
