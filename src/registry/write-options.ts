// What a write through the generic store takes from its caller and from the
// composition root: the request's options and the hooks that run inside every
// write (admission, managedFields, authorization of the written object). Types
// only; generic-store.ts acts on them.

import type { UserInfo } from '../auth/types.js';
import type { PropagationPolicy } from '../lifecycles/deletion.js';
import type { ApiObject, FieldError, ResourceDefinition } from './types.js';
import type { BodyFindings } from '../machinery/schema/strict-decoding.js';

export interface WriteOptions {
  dryRun: boolean;
  /** spec 000 §4.8; defaults to Warn */
  fieldValidation?: 'Ignore' | 'Warn' | 'Strict';
  /** what decoding the request body found besides the object's unknown fields (duplicates; ordered with them as kube does) */
  bodyFindings?: BodyFindings;
  /** the object is a patch's result, not a decoded body: a strict error does not name the kind (kube's patch handler) */
  patched?: boolean;
  /** the decoded strategic merge patch that produced the object: a type error names it (kube's applyPatchToObject) */
  strategicPatch?: unknown;
  /** field manager for managedFields (spec 000 §4.9) */
  manager?: string;
  /** `Apply` when server-side apply computed managedFields itself */
  operation?: 'Apply' | 'Update';
  /** the sub-resource written (`status`), recorded in managedFields entries */
  subresource?: string;
  /** the requesting user (absent for the server's own writes); read by `WriteHooks.authorizeWrite` */
  user?: UserInfo;
  /** who asks, for admission plugins that depend on the requester (NodeRestriction, spec 001 §5.15) */
  requester?: { username: string; groups?: string[] };
  /**
   * Warnings admission adds (webhook `warnings`, ValidatingAdmissionPolicy
   * `Warn`): the handler returns them as `Warning` headers. Absent = dropped.
   */
  warnings?: string[];
  /** audit annotations admission adds (policy `Audit` actions, fail-open webhooks), key → value */
  auditAnnotations?: Record<string, string>;
  /** the request's options object (CreateOptions/UpdateOptions/PatchOptions/DeleteOptions) for AdmissionReview `options` */
  admissionOptions?: Record<string, unknown>;
  /**
   * The written object belongs to this request alone (decoded from its body)
   * and nobody modifies it after the write: the watch caches and the garbage
   * collector may share it instead of decoding the stored bytes (decodeShared).
   */
  shareWritten?: boolean;
}

/** what `guaranteedUpdate` takes beyond a write's options */
export interface UpdateOptions {
  /** an absent object is created (PUT); otherwise it is 404 */
  createIfAbsent?: boolean;
  /**
   * The transform neither changes `current` nor puts any part of it into its
   * result, so it is handed the stored object without a deep copy (a Lease
   * renewal's PUT: the copy was ~4 % of a member's busy time at 1,000 nodes,
   * docs/scale.md).
   */
  transformReadsOnly?: boolean;
  /**
   * the `metadata.uid` of a PUT body: a precondition on the stored object, checked before the
   * transform (kube's DefaultUpdatedObjectInfo.Preconditions and storage Preconditions.Check)
   */
  uidPrecondition?: string;
}

/**
 * One object write as admission sees it (src/registry/admission/): the operation,
 * the new object (absent for DELETE) and the stored one (absent for CREATE).
 */
export interface AdmissionCall {
  operation: 'CREATE' | 'UPDATE' | 'DELETE';
  def: ResourceDefinition;
  namespace: string;
  name: string;
  object: ApiObject | undefined;
  oldObject: ApiObject | undefined;
  opts: WriteOptions;
}

/** Schema-driven admission steps, provided by the schema engine. */
export interface ObjectAdmission {
  /** prune unknown fields (returned as paths), apply defaults, check types and required fields */
  admit(def: ResourceDefinition, obj: ApiObject, old?: ApiObject): { errors: FieldError[]; unknownFields: string[] };
  /** object metadata rules (name syntax, labels, annotations, namespace presence) */
  validateMeta(def: ResourceDefinition, obj: ApiObject): FieldError[];
  /**
   * a stored object as kube decodes it, for an update to compare with: a built-in kind's
   * quantities and times in Go's form (the same object when they are)
   */
  asDecoded?(def: ResourceDefinition, obj: ApiObject): ApiObject;
}

/** Hooks that run inside every write (managedFields bookkeeping lives here). */
export interface WriteHooks {
  /**
   * The resources this set acts on; absent: every resource. A sequence of
   * sets (write-hooks.ts sequenceHooks) calls a set only for these.
   */
  appliesTo?(def: ResourceDefinition): boolean;
  /** called for create and update with the final object before it is stored */
  beforeWrite?(def: ResourceDefinition, obj: ApiObject, old: ApiObject | undefined, opts: WriteOptions): void;
  /** may refuse a delete (e.g. the built-in namespaces) */
  beforeDelete?(def: ResourceDefinition, obj: ApiObject, opts?: WriteOptions): void;
  /**
   * May refuse a create or update for who asks it, after validation and
   * before the write (RBAC escalation prevention, spec 001 §5.14); throws a
   * StatusError. Injected by the composition root.
   */
  authorizeWrite?(def: ResourceDefinition, obj: ApiObject, old: ApiObject | undefined, opts: WriteOptions): Promise<void>;
  /**
   * Values the object claims with its write (a Service's cluster IP and node
   * ports, src/registry/allocators/): may fill them into the object; the returned
   * keys are created in the same transaction, each only if absent, so no two
   * objects get the same value. Called again when a key was taken meanwhile.
   */
  reserve?(def: ResourceDefinition, obj: ApiObject, old: ApiObject | undefined): { keys: { key: string; value: Uint8Array }[] } | undefined;
  /**
   * Mutating admission (webhooks with JSON patches): runs after defaulting and
   * before schema validation, so what it changes is validated like the
   * request itself; returns the object to continue with. Throws a StatusError
   * to refuse.
   */
  mutate?(call: AdmissionCall): Promise<ApiObject | undefined>;
  /** `mutate` never changes the object it is given (it returns a changed copy) */
  mutatesCopy?: boolean;
  /**
   * whether some `mutate` of a sequence may change the object in place for this resource
   * (sequenceHooks): the store then admits (defaults and validates) the object again after it
   */
  mutatesInPlace?(def: ResourceDefinition): boolean;
  /**
   * The writer's managedFields entry (spec 000 §4.9), computed from the decoded and
   * defaulted object before mutating admission: kube-apiserver's field manager runs before
   * admission, so what a plugin or webhook adds (a pod's token volume, tolerations,
   * priority) belongs to no manager and a later apply cannot remove it. Returns what puts
   * the entries on the object that is written (after validation, before `beforeWrite`).
   */
  recordFields?(def: ResourceDefinition, obj: ApiObject, old: ApiObject | undefined, opts: WriteOptions): ((written: ApiObject) => void) | undefined;
  /** Validating admission (webhooks, ValidatingAdmissionPolicy): after validation, before the write */
  validateAdmission?(call: AdmissionCall): Promise<void>;
  /**
   * May refuse a create (throws a StatusError) and returns keys whose mod
   * revision must be unchanged when the create commits: a custom resource is
   * created only while its CRD is the one that was checked and not being
   * deleted (docs/crds.md). A mismatch re-runs the check.
   */
  guardCreate?(def: ResourceDefinition): { key: string; modRevision: number }[];
}

/** the delete options the store acts on (spec 000 §2.6; parsed in handlers/delete.ts) */
export interface DeleteRequestOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  gracePeriodSeconds?: number;
  propagationPolicy?: PropagationPolicy;
  orphanDependents?: boolean;
}
