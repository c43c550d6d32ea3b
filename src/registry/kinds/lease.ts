// coordination.<domain>/v1 Lease: leader election and node heartbeats.

import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { ApiObject, FieldError, ResourceDefinition } from '../types.js';
import { column, get, getString } from './columns.js';
import { invalid } from './field-errors.js';
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
        leaseDurationSeconds: int32('Duration candidates wait before forcefully acquiring the lease, measured from the last renewTime.'),
        acquireTime: micro('When the current lease was acquired.'),
        renewTime: micro('When the current holder last renewed the lease.'),
        leaseTransitions: int32('Number of transitions of the lease between holders.'),
        strategy: str('Strategy for picking the leader in coordinated leader election.'),
        preferredHolder: str('Signals the current holder to release the lease in favour of this identity.'),
      })),
    })),
    strategy: {
      zeroShape: { spec: {} },
      validate: validateLease,
      validateUpdate: (o) => validateLease(o),
      columns: [column('Holder', 'string', (o) => getString(o, 'spec', 'holderIdentity') ?? '', { description: 'The holder of the lease' })],
    },
  };
}

/** kube's ValidateLeaseSpec (handwritten messages; its OpenAPI has no minimum) */
function validateLease(o: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  const d = get(o, 'spec', 'leaseDurationSeconds');
  if (typeof d === 'number' && d <= 0) errs.push(invalid('spec.leaseDurationSeconds', d, 'must be greater than 0'));
  const t = get(o, 'spec', 'leaseTransitions');
  if (typeof t === 'number' && t < 0) errs.push(invalid('spec.leaseTransitions', t, 'must be greater than or equal to 0'));
  return errs;
}
