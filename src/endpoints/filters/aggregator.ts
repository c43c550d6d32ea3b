// kube-aggregator's proxy handler: a request under `/apis/<group>/…` whose
// group an APIService with `spec.service` serves goes on to that Service once
// authentication, flow control and authorization have passed (kube's chain
// runs before the aggregator's handler). The check costs an ordinary request
// one `startsWith` and, under `/apis/`, one map lookup on the group (issue 14).

import { serviceUnavailable } from '../../core/errors.js';
import type { UserInfo } from '../../auth/types.js';
import type { HttpRequest, HttpResponse } from '../http.js';
import type { RequestInfo } from '../request.js';
import { type Filter, infoOf, userOf } from './state.js';

/** one APIService with a Service: where its group/version is served */
export interface AggregatedVersion {
  /** the APIService's name (`version.group`) */
  name: string;
  group: string;
  version: string;
  service: { namespace: string; name: string; port: number };
  caBundle?: string;
  insecureSkipTLSVerify: boolean;
  /** its Available condition is True */
  available: boolean;
}

/** the aggregated versions of one group, the preferred one (by the APIServices' priorities) first */
export interface AggregatedGroup {
  versions: Map<string, AggregatedVersion>;
  preferred: AggregatedVersion;
}

export interface ProxiedRequest {
  http: HttpRequest;
  info: RequestInfo;
  user: UserInfo;
  target: AggregatedVersion;
}

/** what the composition root provides: the index of aggregated groups and the proxy */
export interface AggregatedApis {
  /** undefined for every group this server serves itself */
  group(name: string): AggregatedGroup | undefined;
  proxy(r: ProxiedRequest): Promise<HttpResponse>;
}

export function aggregatorFilter(apis: AggregatedApis): Filter {
  return (s, next) => {
    const path = s.http.path;
    if (!path.startsWith('/apis/')) return next(s);
    const info = infoOf(s);
    // `/apis/<group>` and `/apis/<group>/<version>` are not resource requests: the group is the path's
    const groupName = info.isResourceRequest ? info.group : path.split('/', 3)[2]!;
    const group = apis.group(groupName);
    if (!group) return next(s);
    // `/apis/<group>` goes to the preferred version's server; a version no APIService names is not aggregated
    const version = info.isResourceRequest ? info.version : path.split('/', 4)[3];
    const target = version ? group.versions.get(version) : group.preferred;
    if (!target) return next(s);
    // kube's handler_proxy: an APIService that is not Available answers 503
    if (!target.available) return Promise.reject(serviceUnavailable('service unavailable'));
    return apis.proxy({ http: s.http, info, user: userOf(s), target });
  };
}
