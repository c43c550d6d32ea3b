// core/v1 ServiceAccount: an identity for processes in pods.

import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { ResourceDefinition } from '../types.js';
import { column, getArray } from './columns.js';
import { atomicList, bool, mergeList, proto, ref } from '../../machinery/schema/dsl.js';
import { kindSchema } from './meta.js';

export function serviceAccountDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: '',
    version: 'v1',
    kind: 'ServiceAccount',
    resource: 'serviceaccounts',
    returnDeletedObject: true,
    singular: 'serviceaccount',
    scope: 'Namespaced',
    shortNames: ['sa'],
    subresources: ['token'],
    schema: kindSchema(n, 'ServiceAccount binds together a name understood by users and systems, and a set of secrets.', proto({ secrets: 2, imagePullSecrets: 3, automountServiceAccountToken: 4 }, {
      secrets: mergeList('Secrets in the namespace pods running as this account may use (deprecated for tokens).', ref(n.core('ObjectReference')), 'name'),
      imagePullSecrets: atomicList('Secrets used to pull images of pods referencing this account.', ref(n.core('LocalObjectReference'))),
      automountServiceAccountToken: bool('Whether pods running as this account mount an API token automatically.'),
    })),
    strategy: {
      columns: [column('Secrets', 'integer', (o) => getArray(o, 'secrets').length)],
    },
  };
}
