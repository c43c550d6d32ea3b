// Protobuf messages that are request or response bodies without being served
// kinds of their own, with their Kubernetes field numbers (authentication/v1,
// policy/v1 and core/v1 generated.proto). TokenRequest is the body of
// `serviceaccounts/{name}/token` (spec 001 §5.5), Eviction of `pods/{name}/eviction`,
// Binding of `pods/{name}/binding`; their capabilities read plain JSON values,
// so the schemas live here, used only by the protobuf codec. So are the
// autoscaling/v1 Scale of `{kind}/{name}/scale` and meta/v1
// PartialObjectMetadata(List), the metadata client's representation.

import { int32, int64, obj, ref, str, time } from '../schema/dsl.js';
import type { SchemaNames } from '../schema/naming.js';
import type { Schema } from '../schema/types.js';

const f = (n: number, s: Schema): Schema => ({ ...s, 'x-orch-proto-field': n });

/** a top-level message: type meta, ObjectMeta = 1, then its own fields */
function message(n: SchemaNames, kind: string, description: string, fields: Record<string, Schema>): Schema {
  return obj(description, {
    apiVersion: str('APIVersion of this representation.'),
    kind: str(`Always ${kind}.`),
    metadata: f(1, ref(n.meta('ObjectMeta'))),
    ...fields,
  });
}

export function tokenRequestSchema(n: SchemaNames): Schema {
  return message(n, 'TokenRequest', 'TokenRequest requests a token for a given service account.', {
    spec: f(
      2,
      obj('The requested token.', {
        audiences: f(1, { type: 'array', items: { type: 'string' } }),
        boundObjectRef: f(
          3,
          obj('The object the token is bound to.', {
            kind: f(1, str('Pod or Secret.')),
            apiVersion: f(2, str('API version of the referent.')),
            name: f(3, str('Name of the referent.')),
            uid: f(4, str('UID of the referent.')),
          }),
        ),
        expirationSeconds: f(4, int64('Requested lifetime.')),
      }),
    ),
    status: f(
      3,
      obj('The issued token.', {
        token: f(1, str('The opaque bearer token.')),
        expirationTimestamp: f(2, time('Expiry of the token.')),
      }),
    ),
  });
}


/** policy/v1 (and v1beta1) Eviction, the body of `pods/{name}/eviction` */
export function evictionSchema(n: SchemaNames): Schema {
  return message(n, 'Eviction', 'Eviction evicts a pod from its node subject to certain policies and safety constraints.', {
    deleteOptions: f(2, ref(n.meta('DeleteOptions'))),
  });
}

/** core/v1 Binding, the body of `pods/{name}/binding` (target: an ObjectReference) */
export function bindingSchema(n: SchemaNames): Schema {
  return message(n, 'Binding', 'Binding ties one object to another; for example, a pod is bound to a node by a scheduler.', {
    target: f(
      2,
      obj('The target object to bind to.', {
        kind: f(1, str('Kind of the referent.')),
        namespace: f(2, str('Namespace of the referent.')),
        name: f(3, str('Name of the referent.')),
        uid: f(4, str('UID of the referent.')),
        apiVersion: f(5, str('API version of the referent.')),
        resourceVersion: f(6, str('Specific resourceVersion the reference is to.')),
        fieldPath: f(7, str('A piece of the object instead of the whole.')),
      }),
    ),
  });
}

/** autoscaling/v1 Scale, the body of `{kind}/{name}/scale` (autoscaling/v1 generated.proto) */
export function scaleSchema(n: SchemaNames): Schema {
  return message(n, 'Scale', 'Scale represents a scaling request for a resource.', {
    spec: f(2, obj('The desired state.', { replicas: f(1, int32('Desired number of instances.')) })),
    status: f(
      3,
      obj('The current state.', {
        replicas: f(1, int32('Actual number of observed instances.')),
        selector: f(2, str('Label query over the pods, in the string form of a label selector.')),
      }),
    ),
  });
}

/** meta/v1 PartialObjectMetadata { ObjectMeta metadata = 1 } */
export function partialObjectMetadataSchema(n: SchemaNames): Schema {
  return message(n, 'PartialObjectMetadata', 'PartialObjectMetadata is a generic representation of any object with ObjectMeta.', {});
}

/** meta/v1 PartialObjectMetadataList { ListMeta metadata = 1; repeated PartialObjectMetadata items = 2 } */
export function partialObjectMetadataListSchema(n: SchemaNames): Schema {
  return obj('PartialObjectMetadataList contains a list of objects containing only their metadata.', {
    apiVersion: str('APIVersion of this representation.'),
    kind: str('Always PartialObjectMetadataList.'),
    metadata: f(1, ref(n.meta('ListMeta'))),
    items: f(2, { type: 'array', items: partialObjectMetadataSchema(n) }),
  });
}
