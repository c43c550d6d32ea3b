// coordination.<domain>/v1 Lease: leader election and node heartbeats.

import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { ResourceDefinition } from '../types.js';
import { column, getString } from './columns.js';
import { int32, obj, proto, str, time } from '../../machinery/schema/dsl.js';
import { kindSchema } from './meta.js';

export function leaseDefinition(n: SchemaNames): ResourceDefinition {
  const micro = (d: string) => ({ ...time(d), description: `${d} Microsecond precision.`, 'x-orch-proto-type': 'MicroTime' as const });
  return {
    group: n.group('coordination'),
    version: 'v1',
    kind: 'Lease',
    resource: 'leases',
    singular: 'lease',
    scope: 'Namespaced',
    schema: kindSchema(n, 'Lease defines a lease concept.', proto({ spec: 2 }, {
      spec: obj('Specification of the lease.', proto({
        holderIdentity: 1, leaseDurationSeconds: 2, acquireTime: 3, renewTime: 4, leaseTransitions: 5, strategy: 6, preferredHolder: 7,
      }, {
        holderIdentity: str('Identity of the current holder of the lease.'),
        leaseDurationSeconds: int32('Duration candidates wait before forcefully acquiring the lease, measured from the last renewTime.', { minimum: 0 }),
        acquireTime: micro('When the current lease was acquired.'),
        renewTime: micro('When the current holder last renewed the lease.'),
        leaseTransitions: int32('Number of transitions of the lease between holders.', { minimum: 0 }),
        strategy: str('Strategy for picking the leader in coordinated leader election.'),
        preferredHolder: str('Signals the current holder to release the lease in favour of this identity.'),
      })),
    })),
    strategy: {
      columns: [column('Holder', 'string', (o) => getString(o, 'spec', 'holderIdentity') ?? '', { description: 'The holder of the lease' })],
    },
  };
}
