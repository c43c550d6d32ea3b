// Discovery documents (spec 000 §4.1, §9.1), pure functions of the served
// definitions: /api (APIVersions), /api/v1 and /apis/<g>/<v> (APIResourceList),
// /apis (APIGroupList) and /apis/<g> (APIGroup).

import { createHash } from 'node:crypto';
import type { ResourceDefinition } from './types.js';
import { byGroupPriority, CUSTOM_PRIORITY, groupPriority } from './group-priorities.js';

export const DEFAULT_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export interface ServerAddressByClientCIDR {
  clientCIDR: string;
  serverAddress: string;
}

export interface GroupVersionForDiscovery {
  groupVersion: string;
  version: string;
}

export interface APIGroup {
  kind?: 'APIGroup';
  apiVersion?: 'v1';
  name: string;
  versions: GroupVersionForDiscovery[];
  preferredVersion: GroupVersionForDiscovery;
  serverAddressByClientCIDRs?: ServerAddressByClientCIDR[];
}

export interface APIResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  group?: string;
  version?: string;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  storageVersionHash?: string;
}

export interface APIResourceList {
  kind: 'APIResourceList';
  apiVersion: 'v1';
  groupVersion: string;
  resources: APIResource[];
}

/**
 * verbs served on each well-known sub-resource, and the kind it answers as kube's discovery names it
 * (`kindOf` from the parent's kind; `groupOf`: the group serving that kind, which follows the API domain)
 */
interface SubresourceInfo {
  verbs: string[];
  kind?: string;
  kindOf?: (parent: string) => string;
  group?: string;
  groupOf?: string;
  version?: string;
}
const SUBRESOURCE_VERBS: Record<string, SubresourceInfo> = {
  status: { verbs: ['get', 'patch', 'update'] },
  finalize: { verbs: ['update'] },
  approval: { verbs: ['get', 'patch', 'update'] },
  scale: { verbs: ['get', 'patch', 'update'], kind: 'Scale', group: 'autoscaling', version: 'v1' },
  binding: { verbs: ['create'], kind: 'Binding' },
  eviction: { verbs: ['create'], kind: 'Eviction', group: 'policy', version: 'v1' },
  ephemeralcontainers: { verbs: ['get', 'patch', 'update'] },
  log: { verbs: ['get'] },
  exec: { verbs: ['create', 'get'], kind: 'PodExecOptions' },
  attach: { verbs: ['create', 'get'], kind: 'PodAttachOptions' },
  portforward: { verbs: ['create', 'get'], kind: 'PodPortForwardOptions' },
  // kube's proxy REST answers as PodProxyOptions, NodeProxyOptions, ServiceProxyOptions
  proxy: { verbs: ['create', 'delete', 'get', 'patch', 'update'], kindOf: (parent) => `${parent}ProxyOptions` },
  // TokenRequest is an authentication.k8s.io/v1 kind served under core ServiceAccounts
  token: { verbs: ['create'], kind: 'TokenRequest', groupOf: 'TokenReview', version: 'v1' },
};

/**
 * Kubernetes' storage version hash: base64 of the first 8 bytes of
 * sha256("<group>/<version>/<kind>") of the storage version; clients compare it
 * only for equality (a change means stored objects need migration).
 */
export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256').update(`${group}/${version}/${kind}`).digest().subarray(0, 8).toString('base64');
}

/** whether the generic store keeps the kind's objects: some verb of the resource is not a capability's */
function stored(d: ResourceDefinition): boolean {
  const cap = d.capabilities?.[''];
  if (!cap) return true;
  return (d.verbs ?? DEFAULT_VERBS).some((v) => !(v === 'create' || v === 'get' || v === 'list' || v === 'update' || v === 'patch') || cap[v] === undefined);
}

function splitStorageVersion(apiVersion: string): [string, string] {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? ['', apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
}

export function groupVersionString(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

/** `/api`: the core group's versions */
export function apiVersions(defs: ResourceDefinition[], serverAddress: string): object {
  const versions = sortVersions(unique(defs.filter((d) => d.group === '').map((d) => d.version)));
  return {
    kind: 'APIVersions',
    versions,
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

/** `/api/v1` or `/apis/<g>/<v>`; undefined when the group-version is not served */
export function apiResourceList(defs: ResourceDefinition[], group: string, version: string): APIResourceList | undefined {
  const served = defs.filter((d) => d.group === group && d.version === version);
  if (served.length === 0) return undefined;
  const resources: APIResource[] = [];
  for (const d of [...served].sort((a, b) => a.resource.localeCompare(b.resource))) {
    const r: APIResource = {
      name: d.resource,
      singularName: d.singular,
      namespaced: d.scope === 'Namespaced',
      kind: d.kind,
      verbs: [...(d.verbs ?? DEFAULT_VERBS)].sort(),
    };
    // keys in the order of kube's APIResource fields: clients (and kubectl's own tests) match the JSON text
    if (d.shortNames && d.shortNames.length > 0) r.shortNames = [...d.shortNames];
    if (d.categories && d.categories.length > 0) r.categories = [...d.categories];
    // every version served over one storage has the storage version's hash (src/registry/conversion.ts);
    // a kind that stores nothing (reviews, bindings, component statuses) has none, as in kube
    if (stored(d)) {
      r.storageVersionHash = d.storage ? storageVersionHash(...splitStorageVersion(d.storage.storageVersion), d.kind) : storageVersionHash(d.group, d.version, d.kind);
    }
    resources.push(r);
    // kube's installer registers the sorted paths (`pods`, `pods/attach`, …, `pods/status`): sub-resources in name order
    for (const sub of [...(d.subresources ?? [])].sort()) {
      const info: SubresourceInfo = SUBRESOURCE_VERBS[sub] ?? { verbs: ['get'] };
      const gv: Pick<APIResource, 'group' | 'version'> = {};
      const subGroup = info.groupOf !== undefined ? defs.find((o) => o.kind === info.groupOf)?.group : info.group;
      if (subGroup !== undefined) gv.group = subGroup;
      if (info.version !== undefined && subGroup !== undefined) gv.version = info.version;
      const kind = info.kindOf?.(d.kind) ?? info.kind ?? d.kind;
      resources.push({ name: `${d.resource}/${sub}`, singularName: '', namespaced: d.scope === 'Namespaced', ...gv, kind, verbs: [...info.verbs] });
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: groupVersionString(group, version), resources };
}

/** `/apis/<g>`; undefined when the group is not served */
export function apiGroup(defs: ResourceDefinition[], group: string): APIGroup | undefined {
  if (group === '') return undefined;
  const versions = sortVersions(unique(defs.filter((d) => d.group === group).map((d) => d.version)));
  const gvs = versions.map((v) => ({ groupVersion: `${group}/${v}`, version: v }));
  const preferredVersion = gvs[0];
  if (preferredVersion === undefined) return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', name: group, versions: gvs, preferredVersion };
}

/** the served groups in kube's discovery order (src/registry/group-priorities.ts); without a domain, in registration order */
export function orderedGroups(defs: ResourceDefinition[], apiDomain?: string): string[] {
  const groups = unique(defs.map((d) => d.group));
  return apiDomain === undefined ? groups : groups.sort(byGroupPriority(groupPriorityOf(defs, apiDomain)));
}

/** a served group's discovery priority: kube's for its own groups, a custom resource group's otherwise */
export function groupPriorityOf(defs: ResourceDefinition[], apiDomain: string): (group: string) => number {
  const custom = new Set(defs.filter((d) => d.customResource).map((d) => d.group));
  return (g) => (custom.has(g) ? CUSTOM_PRIORITY.group : groupPriority(g, apiDomain));
}

/** `/apis`: every named group (the core group is not listed), highest priority first */
export function apiGroupList(defs: ResourceDefinition[], apiDomain?: string): object {
  const groups: APIGroup[] = [];
  for (const g of orderedGroups(defs, apiDomain)) {
    if (g === '') continue;
    const grp = apiGroup(defs, g)!;
    groups.push({ name: grp.name, versions: grp.versions, preferredVersion: grp.preferredVersion });
  }
  return { kind: 'APIGroupList', apiVersion: 'v1', groups };
}

function unique<T>(xs: T[]): T[] {
  return [...new Set(xs)];
}

/**
 * Kubernetes version priority: GA before beta before alpha, higher major and
 * minor numbers first; anything unparseable last, alphabetically.
 */
export function compareVersions(a: string, b: string): number {
  const pa = parseVersion(a);
  const pb = parseVersion(b);
  if (pa.rank !== pb.rank) return pb.rank - pa.rank;
  if (pa.rank === 0) return a.localeCompare(b);
  if (pa.major !== pb.major) return pb.major - pa.major;
  return pb.minor - pa.minor;
}

function parseVersion(v: string): { rank: number; major: number; minor: number } {
  const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
  if (!m) return { rank: 0, major: 0, minor: 0 };
  const rank = m[2] === undefined ? 3 : m[2] === 'beta' ? 2 : 1;
  return { rank, major: Number(m[1]), minor: m[3] ? Number(m[3]) : 0 };
}

export function sortVersions(versions: string[]): string[] {
  return [...versions].sort(compareVersions);
}

/** anything that lists the served definitions (the Registry does) */
export interface DiscoverySource {
  all(): ResourceDefinition[];
  /** the API domain, for kube's group order (the Registry has it) */
  readonly apiDomain?: string;
  /** when present, answers are memoised per version */
  readonly version?: number;
}

const memo = new WeakMap<DiscoverySource, { version: number; answers: Map<string, object | undefined> }>();

/**
 * The discovery document for a request path (`/api`, `/api/v1`, `/apis`,
 * `/apis/<g>`, `/apis/<g>/<v>`), or undefined when the path is not discovery
 * or names nothing served.
 */
export function serveDiscovery(src: DiscoverySource, path: string, serverAddress = ''): object | undefined {
  const version = src.version;
  let cache = version === undefined ? undefined : memo.get(src);
  if (cache && cache.version !== version) cache = undefined;
  if (!cache && version !== undefined) {
    cache = { version, answers: new Map() };
    memo.set(src, cache);
  }
  const key = `${path}\u0000${serverAddress}`;
  if (cache?.answers.has(key)) return cache.answers.get(key);
  const answer = computeDiscovery(src.all(), path, serverAddress, src.apiDomain);
  cache?.answers.set(key, answer);
  return answer;
}

function computeDiscovery(defs: ResourceDefinition[], path: string, serverAddress: string, apiDomain?: string): object | undefined {
  const [root, first, second, ...rest] = path.split('/').filter((s) => s !== '');
  if (root === 'api') {
    if (first === undefined) return apiVersions(defs, serverAddress);
    if (second === undefined) return apiResourceList(defs, '', first);
    return undefined;
  }
  if (root === 'apis') {
    if (first === undefined) return apiGroupList(defs, apiDomain);
    if (second === undefined) return apiGroup(defs, first);
    if (rest.length === 0) return apiResourceList(defs, first, second);
  }
  return undefined;
}

/** the aggregated discovery versions clients ask for (`apidiscovery.k8s.io`) */
export type AggregatedVersion = 'v2' | 'v2beta1';

/**
 * Aggregated discovery (kube-apiserver 1.30+, what client-go 1.32 asks for first):
 * `/api` or `/apis` as one APIGroupDiscoveryList, every group with its versions
 * (preferred first) and each version's resources with their sub-resources, the same
 * facts as the APIResourceLists above; client-go splits it back into them.
 */
export function aggregatedDiscovery(defs: ResourceDefinition[], root: 'api' | 'apis', version: AggregatedVersion, apiDomain?: string): object {
  const groups = orderedGroups(defs, apiDomain).filter((g) => (root === 'api' ? g === '' : g !== ''));
  const items = groups.map((group) => {
    const versions = sortVersions(unique(defs.filter((d) => d.group === group).map((d) => d.version)));
    return {
      metadata: group === '' ? { creationTimestamp: null } : { name: group, creationTimestamp: null },
      versions: versions.map((v) => ({ version: v, resources: discoveryResources(apiResourceList(defs, group, v)?.resources ?? []), freshness: 'Current' })),
    };
  });
  return { kind: 'APIGroupDiscoveryList', apiVersion: `apidiscovery.k8s.io/${version}`, metadata: {}, items };
}

/** one version's resources as aggregated discovery lists them (sub-resources under their resource) */
export function discoveryResources(list: APIResource[]): object[] {
  const out: Record<string, unknown>[] = [];
  const byName = new Map<string, Record<string, unknown>>();
  for (const r of list) {
    const slash = r.name.indexOf('/');
    const responseKind = { group: r.group ?? '', version: r.version ?? '', kind: r.kind };
    if (slash < 0) {
      const d: Record<string, unknown> = {
        resource: r.name,
        responseKind,
        scope: r.namespaced ? 'Namespaced' : 'Cluster',
        singularResource: r.singularName,
        verbs: r.verbs,
      };
      if (r.shortNames) d.shortNames = r.shortNames;
      if (r.categories) d.categories = r.categories;
      byName.set(r.name, d);
      out.push(d);
      continue;
    }
    const parent = byName.get(r.name.slice(0, slash));
    if (!parent) continue;
    const subs = (parent.subresources ??= []) as object[];
    subs.push({ subresource: r.name.slice(slash + 1), responseKind, verbs: r.verbs });
  }
  return out;
}

/** the aggregated discovery version an Accept header asks for first, if any */
export function acceptsAggregated(accept: string | undefined): AggregatedVersion | undefined {
  if (!accept) return undefined;
  for (const part of accept.split(',')) {
    const [type = '', ...params] = part.split(';').map((x) => x.trim());
    const p = new Map(params.map((x) => [x.slice(0, x.indexOf('=')).toLowerCase(), x.slice(x.indexOf('=') + 1)]));
    if (type.toLowerCase() === 'application/json' && p.get('g') === 'apidiscovery.k8s.io' && p.get('as') === 'APIGroupDiscoveryList') {
      const v = p.get('v');
      if (v === 'v2' || v === 'v2beta1') return v;
      continue;
    }
    // an earlier plain type wins (client-go lists the aggregated types first)
    if (type === 'application/json' || type === '*/*' || type === 'application/*') return undefined;
  }
  return undefined;
}
