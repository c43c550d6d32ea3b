// Capability interfaces (issue #9 item 1; Kubernetes' rest.Creater, rest.Getter,
// rest.Updater): how a virtual kind (TokenReview, the access reviews) or a
// sub-resource with behaviour of its own (ServiceAccount `token`, Namespace
// `finalize`, `scale`) serves a verb on DECODED objects. The endpoint layer
// (src/endpoints/handlers/capability.ts) decodes the body — JSON, YAML or
// protobuf, type meta, dryRun — calls the capability and encodes what it
// returns, so the kinds never see a request and need no handler import.

import type { Authorizer } from '../auth/authz/types.js';
import type { UserInfo } from '../auth/types.js';
import type { ApiObject } from '../core/object.js';

/**
 * The store of the definition the request addressed, as far as capabilities
 * use it (the generic store satisfies it; declared structurally so this
 * contracts file imports no store code).
 */
export interface CapabilityStore {
  /** the object, or a 404 StatusError */
  get(namespace: string, name: string): Promise<ApiObject>;
  /** read-modify-write with conflict retries; `update` gets the current object (undefined when absent) */
  guaranteedUpdate(
    namespace: string,
    name: string,
    opts: CapabilityWriteOptions,
    update: (current: ApiObject | undefined) => ApiObject,
  ): Promise<{ object: ApiObject }>;
  /**
   * the deletion machine's delete (graceful for a bound pod, finalizers,
   * preconditions); a 404 or 409 StatusError when it cannot (spec 000 §3.1)
   */
  delete(namespace: string, name: string, opts: CapabilityDeleteOptions): Promise<{ object: ApiObject; deleted: boolean }>;
  /** the objects of one namespace ('' = all), read consistently; undecodable ones are left out */
  list(namespace: string): Promise<ApiObject[]>;
}

/** the delete options a capability may pass (DeleteOptions a request carried, spec 000 §2.6) */
export interface CapabilityDeleteOptions {
  dryRun: boolean;
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  orphanDependents?: boolean;
  user?: UserInfo;
  requester?: UserInfo;
  warnings?: string[];
}

/** the write options a capability may pass to its store (a subset of the generic store's WriteOptions) */
export interface CapabilityWriteOptions {
  dryRun: boolean;
  fieldValidation?: FieldValidation;
  manager?: string;
  /** the sub-resource written, for admission (spec 000 §5) */
  subresource?: string;
  user?: UserInfo;
  requester?: UserInfo;
  /** admission warnings are pushed here */
  warnings?: string[];
}

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

/** what a capability knows of the request: who asks, about which object, and the server's services */
export interface CapabilityContext {
  user: UserInfo;
  /** '' for cluster-scoped kinds */
  namespace: string;
  /** '' on a collection path (a virtual kind's create) */
  name: string;
  /** `?dryRun=All` (spec 000 §4.7) */
  dryRun: boolean;
  /** the server's API domain: the `meta.<domain>` group an options kind's 422 names (absent: orch.io) */
  apiDomain?: string;
  /** the store of the addressed definition (created on first use: virtual kinds never need one) */
  store(): CapabilityStore;
  /**
   * the store of another served resource (pods/eviction reads and updates
   * PodDisruptionBudgets); undefined when the server does not serve it
   */
  storeOf(group: string, version: string, resource: string): CapabilityStore | undefined;
  /** the server's clock (src/core/clock.ts), ms since the epoch: timestamps a capability writes */
  now(): number;
  /**
   * CREATE admission (webhooks, policies) of the decoded body as `kind` on this
   * sub-resource: resolves with the admitted object, throws the refusal;
   * warnings go to `warnings`. The object as given when no admission is configured.
   */
  admitCreate(obj: ApiObject, kind: { group: string; version: string; kind: string }, warnings: string[]): Promise<ApiObject>;
  /** the server's authorizer chain; absent = none configured (the access reviews then deny) */
  authorizer?: Authorizer;
  /** `?fieldValidation` (spec 000 §4.8, default Warn); a bad value throws 400, so ask only when writing */
  fieldValidation(): FieldValidation;
  /**
   * the manager recorded in managedFields (spec 000 §4.9): `?fieldManager`, else
   * the User-Agent's product; a bad one throws 422 on `optionsKind`, so ask only when writing
   */
  fieldManager(optionsKind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions'): string;
}

/** the answer: the HTTP status and the object to encode in the negotiated format */
export interface CapabilityResult {
  status: number;
  object: Record<string, unknown>;
  /** `Warning` headers (spec 000 §4.8) */
  warnings?: string[];
}

/** POST: the decoded body in, an answer out (rest.Creater) */
export interface Creater {
  create(ctx: CapabilityContext, obj: ApiObject): Promise<CapabilityResult>;
}

/** GET of a named object (rest.Getter) */
export interface Getter {
  get(ctx: CapabilityContext): Promise<CapabilityResult>;
}

/** PUT of a named object (rest.Updater) */
export interface Updater {
  update(ctx: CapabilityContext, obj: ApiObject): Promise<CapabilityResult>;
}

/**
 * GET of a collection (rest.Lister) of a computed, read-only kind
 * (ComponentStatus, metrics' NodeMetrics and PodMetrics): the objects as they
 * are now. The endpoint layer applies
 * the label and field selectors, and answers a `<Kind>List` or a Table with
 * the definition's columns; such a kind keeps nothing in the store, so the
 * list has no resourceVersion and cannot be watched.
 */
export interface Lister {
  list(ctx: CapabilityContext): Promise<{ items: ApiObject[] }>;
}

/**
 * PATCH of a named object: the endpoint decoded the patch; `apply` applies it
 * to the capability's view of the current object (a Scale for `scale`) and
 * throws a StatusError when it cannot (Kubernetes' rest.UpdatedObjectInfo)
 */
export interface Patcher {
  patch(ctx: CapabilityContext, apply: (current: ApiObject) => ApiObject): Promise<CapabilityResult>;
}

/**
 * How the endpoint layer decodes the body for a capability. Default: an object
 * of the definition's own kind (type meta checked against the definition,
 * then filled in).
 */
export interface BodyDecoding {
  /**
   * a sub-resource's own kind (TokenRequest on `serviceaccounts/token`):
   * the body must be a `kind` object in one of `apiVersions` (the first is
   * the expected one named in errors and filled in when absent); no
   * `apiVersions` = any (a Scale of autoscaling/v1 or another group)
   */
  kind?: { kind: string; apiVersions?: string[] };
  /** an empty body stands for an empty object (SelfSubjectReview carries only type meta) */
  optional?: boolean;
}

/** the verbs one resource or sub-resource serves through capabilities */
export interface Capabilities extends Partial<Creater>, Partial<Getter>, Partial<Lister>, Partial<Updater>, Partial<Patcher> {
  body?: BodyDecoding;
}
