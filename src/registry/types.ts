import type { Schema } from '../machinery/schema/types.js';
import type { ApiObject, FieldError, NameValidation } from '../core/object.js';
import type { UserInfo } from '../auth/types.js';
import type { Capabilities } from './capabilities.js';
import type { ZeroShape } from './zero-shape.js';

// the object shapes are shared contracts (src/core/object.ts); re-exported for the registry's users
export type { ApiObject, FieldError, JSONObject, JSONValue, NameValidation, ObjectMeta } from '../core/object.js';

export interface TableColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  description?: string;
  priority?: number;
  /** the cell for one object; `now` (ms, the server's clock) for ages */
  cell: (obj: ApiObject, now: number) => string | number | boolean | null;
}

/**
 * Per-kind behaviour (the Kubernetes "strategy"): small, optional hooks
 * around the generic store. Everything else comes from the schema.
 */
export interface Strategy {
  /** fill defaults not expressible as schema `default`s */
  default?(obj: ApiObject): void;
  /** extra validation beyond the schema */
  validate?(obj: ApiObject): FieldError[];
  /** `subresource`: the sub-resource written ('' or undefined for the main resource) */
  validateUpdate?(obj: ApiObject, old: ApiObject, subresource?: string): FieldError[];
  /** `user`: who asks (absent for the server's own writes), for kinds that record it (CSR requester) */
  prepareForCreate?(obj: ApiObject, user?: UserInfo): void;
  /**
   * a create keeps the status it is sent (a Node: the node agent registers with its status); on every
   * other kind with a `status` sub-resource a create starts from an empty status, as kube's
   * PrepareForCreate strategies reset it before `prepareForCreate` sets the kind's initial one
   */
  keepsStatusOnCreate?: boolean;
  /**
   * `now`: the store's clock (ms), for kinds that date what an update changed (CSR conditions);
   * `subresource`: the sub-resource written ('' or undefined for the main resource)
   */
  prepareForUpdate?(obj: ApiObject, old: ApiObject, now: number, subresource?: string): void;
  /** extra Table columns after Name (Age is added last by the table printer) */
  columns?: TableColumn[];
  /** the columns are the whole table after Name (a CRD's additionalPrinterColumns): no Age is added */
  exactColumns?: boolean;
  /** Name is the last column, shown with -o wide (kube's Event table), not the first */
  nameColumnLast?: boolean;
  /**
   * finalizers the kind keeps outside metadata.finalizers (a Namespace's
   * spec.finalizers): the object stays until these are gone too (spec 000 §3.1)
   */
  extraFinalizers?(obj: ApiObject): string[];
  /**
   * the propagation of a delete that sets none (kube's DefaultGarbageCollectionPolicy; Background when
   * absent) and the warning it answers with, if any — batch/v1 Jobs and core/v1 ReplicationControllers
   * orphan their pods, for compatibility
   */
  defaultDeletePropagation?: { policy: 'Orphan'; warning?: string };
  /** changes made when a delete marks the object (e.g. Namespace phase Terminating) */
  prepareForDelete?(obj: ApiObject): void;
  /**
   * `metadata.generation` counts changes to the desired state (1 at create,
   * +1 when anything but metadata and status changes): set for kinds whose
   * spec/status split uses it (Deployments, Jobs, custom resources…), not for
   * ConfigMaps, Secrets, Nodes and the like, as in Kubernetes (issue #11)
   */
  tracksGeneration?: boolean;
  /** per-kind field selector fields, e.g. `spec.nodeName` on pods */
  selectableFields?: Record<string, (obj: ApiObject) => string | undefined>;
  /**
   * the fields kube's Go type always encodes (non-pointer structs, scalars
   * without `omitempty`) with their zero values: filled in on every write and
   * as stored objects are served (src/registry/zero-shape.ts); built-in kinds only
   */
  zeroShape?: ZeroShape;
}

export type Scope = 'Namespaced' | 'Cluster';

/** One kind as served at one group/version. */
export interface ResourceDefinition {
  /** '' for the core group */
  group: string;
  version: string;
  kind: string;
  /** plural resource name used in URLs */
  resource: string;
  singular: string;
  scope: Scope;
  shortNames?: string[];
  categories?: string[];
  /** verbs served; defaults to the full CRUD set */
  verbs?: string[];
  /** OpenAPI v3 schema of the kind (type meta and metadata included) */
  schema: Schema;
  strategy: Strategy;
  /** sub-resources served (e.g. `status`, `token`) */
  subresources?: string[];
  /**
   * Verbs served by capability interfaces (src/registry/capabilities.ts) on
   * decoded objects instead of the generic store, keyed by sub-resource
   * ('' = the resource itself): virtual kinds (TokenReview: a `create` that
   * stores nothing), `token` on ServiceAccounts, `finalize` on Namespaces.
   * The endpoint layer decodes the body and encodes the answer.
   */
  capabilities?: Record<string, Capabilities>;
  /**
   * Raw verb handlers that replace the generic ones, keyed by verb or by
   * `<subresource>/<verb>`, for what needs the whole request rather than a
   * decoded object: the CertificateSigningRequest `approval` sub-resource,
   * served by the generic update/patch handlers of `status`. Prefer `capabilities`.
   */
  handlers?: Record<string, VerbHandler>;
  /**
   * A deprecated version (spec 000 §6, §9.2): requests get a `Warning`
   * header and count in `apiserver_requested_deprecated_apis`.
   */
  deprecated?: { deprecatedRelease?: string; removedRelease?: string; replacement?: string; warning?: string };
  /**
   * true for kinds defined by custom resource definitions: strategic merge
   * patch is refused for them with 415 (spec 000 §4.3).
   */
  customResource?: boolean;
  /** the kind of a list of these (a CRD's `names.listKind`); `<kind>List` when absent (listKindOf) */
  listKind?: string;
  /**
   * a DELETE that removes the object answers the object (Kubernetes' ReturnDeletedObject:
   * pods, services, namespaces, service accounts, storage classes); otherwise a `Success`
   * Status naming it, as kube-apiserver's finalizeDelete does
   */
  returnDeletedObject?: boolean;
  /**
   * metadata.name syntax (Kubernetes' per-kind NameFn); default DNS1123Subdomain.
   * Namespaces use DNS1123Label, Services DNS1035Label, RBAC objects PathSegment.
   */
  nameValidation?: NameValidation;
  /**
   * the `scale` sub-resource (autoscaling/v1 Scale) and where its fields
   * live in the object, as a CRD's `subresources.scale` declares them
   */
  scale?: ScaleSubresource;
  /**
   * several served versions of one stored kind (src/registry/conversion.ts): where
   * the objects live and how this version converts to the stored one; absent =
   * stored under this definition's own group/resource, as written
   */
  storage?: StorageBinding;
  /**
   * defaults applied to a stored object as it is read (get, list, watch), as kube's custom
   * resource codec defaults on decoding: a default added to a CRD's schema shows on objects
   * stored before it; returns a copy, the stored object stays as it is
   */
  readDefaults?: (obj: ApiObject) => ApiObject;
}

/** JSON paths (`.spec.replicas`) of the fields a Scale reads and writes */
export interface ScaleSubresource {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}


/**
 * What verb handlers take and give (context, request, response). Declared
 * empty here and filled in by `handlers/context.ts` and `request.ts` through
 * declaration merging, so this contracts file imports neither (those imports
 * closed type-level circles through the generic store, issue 9).
 */
export interface VerbHandlerTypes {}

/** a handler for one verb of one kind, with the server's HandlerContext */
export type VerbHandler = (
  ctx: VerbHandlerTypes extends { ctx: infer C } ? C : never,
  req: VerbHandlerTypes extends { req: infer R } ? R : never,
) => Promise<VerbHandlerTypes extends { res: infer S } ? S : never>;

/** converters between one served version and the hub (storage) version; both take and return copies */
export interface VersionConverter {
  toHub(obj: ApiObject): ApiObject;
  fromHub(obj: ApiObject): ApiObject;
}

export interface StorageBinding {
  /** group of the storage keys ('' = core) */
  group: string;
  /** resource of the storage keys */
  resource: string;
  /** the apiVersion objects are written in (the hub), e.g. `v1` or `autoscaling/v2` */
  storageVersion: string;
  /** converters of the other served versions, by apiVersion */
  versions: Record<string, VersionConverter>;
  /**
   * a CRD's conversion webhook: objects crossing versions are converted by it, asynchronously
   * (src/registry/conversion.ts `convertObjects`); absent = the synchronous converters above
   */
  webhook?: AsyncConverter;
}

/** conversion by an outside party (a CRD's conversion webhook), a batch per call */
export interface AsyncConverter {
  /**
   * `objects` (each in the apiVersion it carries) as `to`, in order; rejects with a ConversionWebhookError.
   * `list`: the objects of a list (kube's messages name the list kind); default: more than one object
   */
  convert(objects: readonly ApiObject[], to: string, list?: boolean): Promise<ApiObject[]>;
}

/** the kind of a list of `def`'s objects, as list and deletecollection answer and OpenAPI names it */
export function listKindOf(def: Pick<ResourceDefinition, 'kind' | 'listKind'>): string {
  return def.listKind ?? `${def.kind}List`;
}
