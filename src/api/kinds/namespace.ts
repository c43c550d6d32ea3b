// core/v1 Namespace: cluster-scoped, named by a DNS label; status.phase
// defaults to Active (Terminating once deletion starts).

import type { SchemaNames } from '../schema/naming.js';
import type { ResourceDefinition } from '../types.js';
import { column, fieldOf, getString } from './columns.js';
import { atomicList, enumOf, listMap, obj, proto, str, time } from './dsl.js';
import { kindSchema } from './meta.js';

export function namespaceDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: '',
    version: 'v1',
    kind: 'Namespace',
    resource: 'namespaces',
    singular: 'namespace',
    scope: 'Cluster',
    shortNames: ['ns'],
    subresources: ['status', 'finalize'],
    nameValidation: 'DNS1123Label',
    schema: kindSchema(n, 'Namespace provides a scope for names of namespaced objects.', proto({ spec: 2, status: 3 }, {
      spec: obj('Desired behaviour of the namespace.', proto({ finalizers: 1 }, {
        finalizers: atomicList('Opaque values that must be emptied before the namespace is removed from storage.', { type: 'string' }),
      })),
      status: obj('Observed status of the namespace.', proto({ phase: 1, conditions: 2 }, {
        phase: enumOf('Current lifecycle phase.', ['Active', 'Terminating'], { default: 'Active' }),
        conditions: listMap(
          'Latest observations of the namespace state.',
          obj('One namespace condition.', proto({ type: 1, status: 2, lastTransitionTime: 4, reason: 5, message: 6 }, {
            type: str('Condition type.'),
            status: str('True, False or Unknown.'),
            lastTransitionTime: time('Last status change.'),
            reason: str('Machine-readable reason.'),
            message: str('Human-readable details.'),
          }), ['type', 'status']),
          ['type'],
          'type',
        ),
      }), undefined, { default: {} }),
    })),
    strategy: {
      columns: [column('Status', 'string', (o) => getString(o, 'status', 'phase') ?? '', { description: 'The status of the namespace' })],
      selectableFields: { 'status.phase': fieldOf('status', 'phase') },
    },
  };
}
