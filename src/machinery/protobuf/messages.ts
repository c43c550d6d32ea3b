// Protobuf messages that are request or response bodies without being served
// kinds of their own, with their Kubernetes field numbers (authentication/v1
// generated.proto). TokenRequest is the body of `serviceaccounts/{name}/token`
// (spec 001 §5.5); its handler (src/auth/kinds/tokenrequest.ts) reads plain
// JSON values, so its schema lives here, used only by the protobuf codec.

import { int64, obj, ref, str, time } from '../schema/dsl.js';
import type { SchemaNames } from '../schema/naming.js';
import type { Schema } from '../schema/types.js';

const f = (n: number, s: Schema): Schema => ({ ...s, 'x-orch-proto-field': n });

export function tokenRequestSchema(n: SchemaNames): Schema {
  return obj('TokenRequest requests a token for a given service account.', {
    apiVersion: str('APIVersion of this representation.'),
    kind: str('Always TokenRequest.'),
    metadata: f(1, ref(n.meta('ObjectMeta'))),
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
  return obj('Eviction evicts a pod from its node subject to certain policies and safety constraints.', {
    apiVersion: str('APIVersion of this representation.'),
    kind: str('Always Eviction.'),
    metadata: f(1, ref(n.meta('ObjectMeta'))),
    deleteOptions: f(2, ref(n.meta('DeleteOptions'))),
  });
}

/** core/v1 Binding, the body of `pods/{name}/binding` (target: an ObjectReference) */
export function bindingSchema(n: SchemaNames): Schema {
  return obj('Binding ties one object to another; for example, a pod is bound to a node by a scheduler.', {
    apiVersion: str('APIVersion of this representation.'),
    kind: str('Always Binding.'),
    metadata: f(1, ref(n.meta('ObjectMeta'))),
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
