// kube's ControllerRefManager, as a decision: what a controller does with
// each object of its namespace. It owns the objects whose controller
// reference carries its uid and still match its selector; it releases the
// ones that stopped matching (unless it is being deleted); it adopts
// orphans that match and are not being deleted (unless it is being deleted);
// objects controlled by someone else are not its business.

import type { ApiObject } from '../../registry/types.js';
import { controllerRefOf } from './pods.js';

export type Claim = 'own' | 'adopt' | 'release' | 'ignore';

export function claim(owner: ApiObject, o: ApiObject, matches: boolean): Claim {
  const ref = controllerRefOf(o);
  const ownerDeleting = Boolean(owner.metadata?.deletionTimestamp);
  if (ref) {
    if (ref.uid !== owner.metadata?.uid) return 'ignore';
    if (matches) return 'own';
    return ownerDeleting ? 'ignore' : 'release';
  }
  if (!matches || ownerDeleting || o.metadata?.deletionTimestamp) return 'ignore';
  return 'adopt';
}
