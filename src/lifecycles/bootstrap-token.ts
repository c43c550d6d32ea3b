// The lifecycle of a bootstrap token (spec 001 §3, §5.4) as an XState v5
// machine: valid --time reaches expiration--> expired, and either --the
// Secret is being deleted--> deleted. The authenticator, the token cleaner and
// the bootstrap signer all ask `lifecycleState`, so all three agree on when a
// token stops counting. Time is an input (the TICK event carries `now` from
// the caller's clock), so the machine is tested through pure transitions.

import { getInitialSnapshot, getNextSnapshot, setup } from 'xstate';

type LifecycleEvent = { type: 'TICK'; now: number } | { type: 'DELETE' };

export const bootstrapTokenMachine = setup({
  types: {
    context: {} as { expiresAt: number | undefined },
    input: {} as { expiresAt: number | undefined },
    events: {} as LifecycleEvent,
  },
  guards: {
    reachedExpiration: ({ context, event }) => event.type === 'TICK' && context.expiresAt !== undefined && event.now >= context.expiresAt,
  },
}).createMachine({
  id: 'bootstrapToken',
  context: ({ input }) => ({ expiresAt: input.expiresAt }),
  initial: 'valid',
  states: {
    // authenticates (with usage-bootstrap-authentication) and signs (with usage-bootstrap-signing)
    valid: { on: { TICK: { guard: 'reachedExpiration', target: 'expired' }, DELETE: 'deleted' } },
    // rejected for authentication, ignored for signing, deleted by the token cleaner
    expired: { on: { DELETE: 'deleted' } },
    deleted: { type: 'final' },
  },
});

export type TokenLifecycleState = 'valid' | 'expired' | 'deleted';

/** where a token stands at `now` */
export function lifecycleState(token: { expiresAt?: number; deleting: boolean }, now: number): TokenLifecycleState {
  let snap = getInitialSnapshot(bootstrapTokenMachine, { expiresAt: token.expiresAt });
  snap = getNextSnapshot(bootstrapTokenMachine, snap, { type: 'TICK', now });
  if (token.deleting) snap = getNextSnapshot(bootstrapTokenMachine, snap, { type: 'DELETE' });
  return snap.value as TokenLifecycleState;
}
