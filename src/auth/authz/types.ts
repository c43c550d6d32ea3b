import type { UserInfo } from '../types.js';

/** Attributes of a request as the authorizers see them (spec 001 §6). */
export interface RequestAttributes {
  user: UserInfo;
  verb: string;
  isResourceRequest: boolean;
  path: string;
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  /** parsed `labelSelector` requirements of list/watch/deletecollection (AuthorizeWithSelectors, §5.16) */
  labelSelector?: SelectorRequirement[];
  /** parsed `fieldSelector` requirements (AuthorizeWithSelectors, §5.15, §5.16) */
  fieldSelector?: SelectorRequirement[];
}

/** One selector requirement as SubjectAccessReview carries it (spec 001 §2.3). */
export interface SelectorRequirement {
  key: string;
  /** label: In, NotIn, Exists, DoesNotExist; field: In, NotIn (= and != map to them) */
  operator: string;
  values?: string[];
}

/**
 * An authorizer's answer: kube's (decision, reason, error). `errors` are
 * evaluation errors (a webhook that could not be asked, spec 001 §5.16): a
 * request no authorizer allowed is then a 500, not a 403, and the access
 * reviews report them in `status.evaluationError` (§5.12). Absent or empty
 * means no error; each message is one error, aggregated where it is shown
 * (`aggregateErrors`, kube's utilerrors.Aggregate).
 */
export interface Decision {
  decision: 'allow' | 'deny' | 'noOpinion';
  reason?: string;
  errors?: readonly string[];
}

/** An allowed action on resources, as SelfSubjectRulesReview reports it (spec 001 §2.3); `*` means all. */
export interface ResourceRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  /** empty or absent = every name */
  resourceNames?: string[];
}

/** An allowed action on non-resource URLs; a trailing `*` matches a prefix. */
export interface NonResourceRule {
  verbs: string[];
  nonResourceURLs?: string[];
}

export interface RulesResult {
  resourceRules: ResourceRule[];
  nonResourceRules: NonResourceRule[];
  /** true when the authorizer cannot list everything it would allow */
  incomplete: boolean;
  /** errors met while listing (kube's RulesFor error); shown aggregated in `status.evaluationError` */
  errors?: readonly string[];
}

export interface Authorizer {
  authorize(attrs: RequestAttributes): Promise<Decision>;
  /**
   * The rules `user` is allowed in `namespace` (SelfSubjectRulesReview, spec
   * 001 §4). Optional: without it the review answers `incomplete: true`.
   */
  rulesFor?(user: UserInfo, namespace: string): Promise<RulesResult>;
}


/** A stored object as an authorizer sees it (decoded JSON; read-only by convention). */
export interface SourceObject {
  metadata?: { name?: string; namespace?: string; uid?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

/** A change to one object; `DELETED` carries the last state. */
export interface SourceEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: SourceObject;
}

/**
 * The objects of one resource and every change to them, in commit order
 * (injected by the composition root, src/server/object-sources.ts, so the
 * authorizers need not know the store). `subscribe` first replays the
 * current objects as ADDED, synchronously, then delivers changes.
 */
export interface ObjectSource {
  subscribe(handler: (e: SourceEvent) => void): () => void;
}

/** Gives the source of a resource, e.g. `('rbac.authorization.orch.io', 'rolebindings')`; group '' is core. */
export type ObjectSources = (group: string, resource: string) => ObjectSource;
