// kube's ControllerRefManager, as a decision: what a controller does with
// each object of its namespace. It owns the objects whose controller
// reference carries its uid and still match its selector; it releases the
// ones that stopped matching (unless it is being deleted); it adopts
// orphans that match and are not being deleted (unless it is being deleted);
// objects controlled by someone else are not its business.

import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject } from '../../registry/types.js';
import { type OwnerReference, controllerRefOf } from './pods.js';
import { adoptWrite, releaseWrite } from './writes.js';

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

/**
 * kube's ClaimObjects applied: adopts matching orphans and releases objects
 * that stopped matching (writes.ts), and returns what the owner controls
 * after it (adopted objects as the write left them).
 */
export async function claimAll(store: GenericStore, owner: ApiObject, objs: ApiObject[], matches: (o: ApiObject) => boolean, ref: OwnerReference): Promise<ApiObject[]> {
  const out: ApiObject[] = [];
  for (const o of objs) {
    const c = claim(owner, o, matches(o));
    if (c === 'adopt') {
      const adopted = await adoptWrite(store, o, ref, matches);
      if (adopted) out.push(adopted);
    } else if (c === 'release') await releaseWrite(store, o, owner.metadata?.uid ?? '');
    else if (c === 'own') out.push(o);
  }
  return out;
}
