// Shared meta/v1 definitions every kind references (spec 000 §2.1, §2.2, §2.4):
// ObjectMeta, ListMeta, OwnerReference, ManagedFieldsEntry, LabelSelector,
// Status, DeleteOptions, WatchEvent, Patch, plus the Quantity scalar.

import type { ResourceDefinition } from '../types.js';
import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { Definitions, Schema } from '../../machinery/schema/types.js';
import { atomicList, bool, int32, int64, listMap, obj, opaque, proto, ref, setList, str, strMap, time } from '../../machinery/schema/dsl.js';

export function metaDefinitions(n: SchemaNames): Definitions {
  return {
    // protobuf numbers: k8s.io/apimachinery meta/v1 generated.proto (spec 000 §2.7)
    [n.meta('ObjectMeta')]: obj('Metadata every persisted object carries (names, labels, bookkeeping set by the server).', proto({
      name: 1, generateName: 2, namespace: 3, selfLink: 4, uid: 5, resourceVersion: 6, generation: 7, creationTimestamp: 8,
      deletionTimestamp: 9, deletionGracePeriodSeconds: 10, labels: 11, annotations: 12, ownerReferences: 13, finalizers: 14, managedFields: 17,
    }, {
      name: str('Unique name within the namespace (or cluster, for cluster-scoped kinds). Required on create unless generateName is set. Cannot be updated.'),
      generateName: str('Prefix the server uses to generate a unique name when name is not given.'),
      namespace: str('Namespace the object lives in; empty for cluster-scoped kinds. Cannot be updated.'),
      selfLink: str('Deprecated; not set by the server.'),
      uid: str('Unique identifier assigned by the server on creation. Read-only.'),
      resourceVersion: str('Opaque version of the object, for optimistic concurrency and watches. Read-only; clients pass it back unmodified.'),
      generation: int64('Sequence number of a specific generation of the desired state. Set by the server. Read-only.', { 'x-orch-proto-omit-zero': true }),
      creationTimestamp: time('CreationTimestamp is a timestamp of when the server created the object, RFC 3339 UTC. Set by the server. Read-only.'),
      deletionTimestamp: time('Time after which the object will be deleted; set when deletion is requested. Read-only.'),
      deletionGracePeriodSeconds: int64('Seconds allowed for graceful termination before removal. Read-only.'),
      labels: strMap('Key/value pairs used to organize and select objects.'),
      annotations: strMap('Unstructured key/value data for tools and extensions; not queryable.'),
      ownerReferences: listMap(
        'Objects this object depends on; when all owners are gone the object is garbage collected.',
        ref(n.meta('OwnerReference')),
        ['uid'],
        'uid',
      ),
      finalizers: setList(
        'Names of cleanup steps that must finish before the object is removed from storage (spec 000 §3.1).',
        { type: 'string' },
        { 'x-orch-patch-strategy': 'merge' },
      ),
      managedFields: atomicList('Field ownership records maintained by the server (spec 000 §2.4).', ref(n.meta('ManagedFieldsEntry'))),
    })),
    [n.meta('OwnerReference')]: obj(
      'Identifies an owning object in the same namespace (or a cluster-scoped owner).',
      proto({ apiVersion: 5, kind: 1, name: 3, uid: 4, controller: 6, blockOwnerDeletion: 7 }, {
        apiVersion: str('API version of the owner.'),
        kind: str('Kind of the owner.'),
        name: str('Name of the owner.'),
        uid: str('UID of the owner.'),
        controller: bool('True if the owner is the managing controller.'),
        blockOwnerDeletion: bool('If true, the owner cannot be deleted before this object is removed (foreground deletion).'),
      }),
      ['apiVersion', 'kind', 'name', 'uid'],
      { 'x-orch-map-type': 'atomic' },
    ),
    [n.meta('ManagedFieldsEntry')]: obj('Fields one manager owns, and how it last changed them.', proto({
      manager: 1, operation: 2, apiVersion: 3, time: 4, fieldsType: 6, fieldsV1: 7, subresource: 8,
    }, {
      manager: str('Identity of the field manager.'),
      operation: str('Apply or Update.'),
      apiVersion: str('API version the field set is expressed in.'),
      time: time('Time of the last change by this manager.'),
      fieldsType: str('Format of fieldsV1; always FieldsV1.'),
      fieldsV1: { ...opaque('Tree of f:<name> keys whose leaves are empty objects, one per owned field.'), 'x-orch-proto-type': 'FieldsV1' },
      subresource: str('Sub-resource the change was made through, if any.'),
    })),
    [n.meta('ListMeta')]: obj('Metadata of a collection response (spec 000 §2.2).', proto({ selfLink: 1, resourceVersion: 2, continue: 3, remainingItemCount: 4 }, {
      selfLink: str('Deprecated; not set by the server.'),
      resourceVersion: str('Version at which the collection was built.'),
      continue: str('Token for the next chunk of a paged list; empty at the end of the list.'),
      remainingItemCount: int64('Number of items not included in this response.'),
    })),
    [n.meta('LabelSelector')]: obj(
      'A label query: all of matchLabels and matchExpressions must match; an empty selector matches everything.',
      proto({ matchLabels: 1, matchExpressions: 2 }, {
        matchLabels: strMap('Exact label matches.'),
        matchExpressions: atomicList(
          'Set-based requirements.',
          obj(
            'One selector requirement.',
            proto({ key: 1, operator: 2, values: 3 }, {
              key: str('Label key.'),
              operator: str('In, NotIn, Exists or DoesNotExist.'),
              values: atomicList('Values for In and NotIn.', { type: 'string' }),
            }),
            ['key', 'operator'],
          ),
        ),
      }),
      undefined,
      { 'x-orch-map-type': 'atomic' },
    ),
    [n.meta('Status')]: obj('Result of an operation that returns no object, and every error response.', proto({
      metadata: 1, status: 2, message: 3, reason: 4, details: 5, code: 6,
    }, {
      apiVersion: str('APIVersion of this representation.'),
      kind: str('Always Status.'),
      metadata: ref(n.meta('ListMeta'), 'Standard list metadata.'),
      status: str('Success or Failure.'),
      message: str('Human-readable description.'),
      reason: str('Machine-readable reason (e.g. NotFound, Invalid, Conflict).'),
      details: {
        ...obj('Extra data about the failure: name, group, kind, uid, causes, retryAfterSeconds.', proto({ name: 1, group: 2, kind: 3, uid: 6, causes: 4, retryAfterSeconds: 5 }, {
          name: str('Name of the object concerned.'),
          group: str('Group of the object concerned.'),
          kind: str('Kind (or resource) of the object concerned.'),
          uid: str('UID of the object concerned.'),
          causes: atomicList('Individual causes, e.g. one per invalid field.', obj('One cause.', proto({ reason: 1, message: 2, field: 3 }, {
            reason: str('Machine-readable cause, e.g. FieldValueInvalid.'),
            message: str('Human-readable description.'),
            field: str('Field path, e.g. metadata.name.'),
          }))),
          retryAfterSeconds: int32('Seconds after which the client may retry.'),
        })),
        'x-orch-preserve-unknown-fields': true,
      },
      code: int32('HTTP status code.'),
    })),
    [n.meta('DeleteOptions')]: obj('Options of a DELETE (spec 000 §2.6).', proto({
      gracePeriodSeconds: 1, preconditions: 2, orphanDependents: 3, propagationPolicy: 4, dryRun: 5, ignoreStoreReadErrorWithClusterBreakingPotential: 6,
    }, {
      apiVersion: str('APIVersion of this representation.'),
      kind: str('Always DeleteOptions.'),
      dryRun: atomicList('All, or empty.', { type: 'string' }),
      gracePeriodSeconds: int64('Seconds before the object should be deleted.'),
      orphanDependents: bool('Deprecated: use propagationPolicy.'),
      preconditions: obj('Conditions that must hold for the delete to proceed.', proto({ uid: 1, resourceVersion: 2 }, {
        uid: str('Target UID.'),
        resourceVersion: str('Target resourceVersion.'),
      })),
      propagationPolicy: str('Orphan, Background or Foreground.'),
      ignoreStoreReadErrorWithClusterBreakingPotential: bool('Force-delete a corrupt object (spec 000 §4.10).'),
    })),
    [n.meta('WatchEvent')]: obj(
      'One change in a watch stream (spec 000 §2.5).',
      {
        type: str('ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.'),
        object: { type: 'object', description: 'The object, or a Status for ERROR.', 'x-orch-embedded-resource': true, 'x-orch-preserve-unknown-fields': true },
      },
      ['type', 'object'],
    ),
    [n.meta('Patch')]: { type: 'object', description: 'A patch body; its form depends on the Content-Type (spec 000 §4.3).' },
    [n.intOrString]: {
      description: 'An integer or a string, e.g. a port number or a port name.',
      'x-orch-int-or-string': true,
    },
    [n.quantity]: {
      description:
        'A fixed-point quantity such as 100m, 1.5, 128Mi or 1G, written as a string or a number.',
      format: 'quantity',
      'x-orch-int-or-string': true,
    },
  };
}

/** apiVersion, kind and metadata: the first three properties of every kind's schema */
export function typeAndObjectMeta(n: SchemaNames): Record<string, Schema> {
  return {
    apiVersion: str('Versioned schema of this representation: `v1` for the core group, `<group>/<version>` otherwise.'),
    kind: str('Kind of this object, in CamelCase.'),
    metadata: ref(n.meta('ObjectMeta'), "Standard object's metadata.", { 'x-orch-proto-field': 1 }),
  };
}

/** a kind's top-level schema: type meta + object meta + the given fields */
export function kindSchema(n: SchemaNames, description: string, fields: Record<string, Schema>, required?: string[]): Schema {
  return obj(description, { ...typeAndObjectMeta(n), ...fields }, required);
}

/** the default verb set (spec 000 §1) */
export const CRUD_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export type KindFactory = (n: SchemaNames) => ResourceDefinition;
