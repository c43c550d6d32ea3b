// The deletion lifecycle of an object (spec 000 §3.1, §4.10) as an XState v5
// machine: Present → Terminating → Removed. This is the single place the
// rules live; the generic store asks it what a delete request or an update
// does to an object and carries the answer out (the store, not the machine,
// talks to storage).
//
// The machine is built once at module load. Callers never run an actor: they
// resolve a snapshot from the object's lifecycle facts and evaluate one
// transition with the pure `transition` helper, so the hot path is one
// guarded transition and no timers, subscriptions or allocations of actors.
//
// Rows of the §3.1 table and where they are here:
//   Present     + first delete request           → Terminating (finalizers exist) or Removed
//   Terminating + removal of a finalizer          → Terminating   (UPDATE, finalizers remain)
//   Terminating + removal of the last finalizer   → Removed       (UPDATE, list empty)
// Added where the specification is silent (docs/deletion.md):
//   propagationPolicy / orphanDependents choose the garbage-collector
//   finalizers (`orphan`, `foregroundDeletion`) a delete adds or removes;
//   graceful deletion (pods bound to a node) marks with a future
//   deletionTimestamp and waits for a zero-grace delete;
//   no finalizer may be added to a Terminating object.

import { assign, setup, transition } from 'xstate';

export type PropagationPolicy = 'Orphan' | 'Background' | 'Foreground';

/** the garbage collector's finalizers (spec 000 §2.6 propagationPolicy; names as Kubernetes) */
export const ORPHAN_FINALIZER = 'orphan';
export const FOREGROUND_FINALIZER = 'foregroundDeletion';

export type LifecycleState = 'Present' | 'Terminating' | 'Removed';

/** what the lifecycle depends on, taken from the object's metadata */
export interface LifecycleFacts {
  /** metadata.finalizers */
  finalizers: string[];
  /** finalizers the kind keeps elsewhere (a Namespace's spec.finalizers); they hold the object as well */
  extraFinalizers: string[];
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  generation?: number;
}

export type DeletionEvent =
  | {
      type: 'DELETE';
      policy?: PropagationPolicy;
      /** legacy form of the policy: true = Orphan, false = Foreground-capable cascade (Background here) */
      orphanDependents?: boolean;
      /**
       * the grace period that applies, already resolved for the kind (see
       * graceful.ts): undefined or 0 = the kind is not deleted gracefully
       */
      gracePeriodSeconds?: number;
      /** wall-clock ms of the request (deletionTimestamp) */
      now: number;
    }
  | {
      type: 'UPDATE';
      /** metadata.finalizers of the object the update would store */
      finalizers: string[];
      extraFinalizers: string[];
    };

export type DeletionOutcome =
  /** store the object with `meta` applied (first mark, or a change while Terminating) */
  | 'write'
  /** remove the key from the store */
  | 'remove'
  /** nothing to store (a repeated delete that changes nothing) */
  | 'unchanged'
  /** refuse the request (422) */
  | 'reject';

export interface DeletionDecision {
  outcome: DeletionOutcome;
  /** the state after the event */
  state: LifecycleState;
  /** metadata values to set when outcome is `write` (undefined members are removed) */
  meta: {
    finalizers: string[];
    deletionTimestamp?: string;
    deletionGracePeriodSeconds?: number;
    generation?: number;
  };
  /** set on the first delete request (Present → Terminating): the kind's prepareForDelete runs */
  firstMark: boolean;
  /** why a request was rejected */
  reason?: string;
}

interface Ctx {
  facts: LifecycleFacts;
  decision?: DeletionDecision;
}

/** RFC 3339 UTC, second precision (metav1.Time) */
function timestamp(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/**
 * The finalizers a delete leaves on the object given the propagation choice
 * (Kubernetes' deletionFinalizersForGarbageCollection): an explicit option
 * wins; without one an existing GC finalizer stays; the default for every
 * kind here is Background, which adds none.
 */
export function finalizersForPolicy(current: string[], policy: PropagationPolicy | undefined, orphanDependents: boolean | undefined): string[] {
  let orphan: boolean;
  let foreground: boolean;
  if (orphanDependents !== undefined) {
    orphan = orphanDependents;
    foreground = false;
  } else if (policy !== undefined) {
    orphan = policy === 'Orphan';
    foreground = policy === 'Foreground';
  } else {
    const o = current.indexOf(ORPHAN_FINALIZER);
    const f = current.indexOf(FOREGROUND_FINALIZER);
    // the first GC finalizer found decides, as validation keeps them exclusive
    orphan = o >= 0 && (f < 0 || o < f);
    foreground = f >= 0 && !orphan;
  }
  const out = current.filter((x) => x !== ORPHAN_FINALIZER && x !== FOREGROUND_FINALIZER);
  if (orphan) out.push(ORPHAN_FINALIZER);
  if (foreground) out.push(FOREGROUND_FINALIZER);
  return out;
}

function sameSet(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  const s = new Set(a);
  return b.every((x) => s.has(x));
}

type DeleteEvent = Extract<DeletionEvent, { type: 'DELETE' }>;
type UpdateEvent = Extract<DeletionEvent, { type: 'UPDATE' }>;

/** the effect of a delete request on a Terminating object (the second and later requests) */
function redelete(f: LifecycleFacts, e: DeleteEvent): { finalizers: string[]; grace?: number; deletionTimestamp?: string; changed: boolean; removes: boolean } {
  const finalizers = finalizersForPolicy(f.finalizers, e.policy, e.orphanDependents);
  let grace = f.deletionGracePeriodSeconds;
  let ts = f.deletionTimestamp;
  // a graceful deletion may only be shortened (Kubernetes: a later request with a smaller period)
  if (grace !== undefined && grace > 0 && e.gracePeriodSeconds !== undefined && e.gracePeriodSeconds < grace) {
    grace = e.gracePeriodSeconds;
    ts = timestamp(e.now + grace * 1000);
  }
  const changed = !sameSet(finalizers, f.finalizers) || grace !== f.deletionGracePeriodSeconds;
  const removes = finalizers.length === 0 && f.extraFinalizers.length === 0 && (grace ?? 0) === 0;
  return { finalizers, grace, deletionTimestamp: ts, changed, removes };
}

function unchanged(f: LifecycleFacts, state: LifecycleState): DeletionDecision {
  return {
    outcome: 'unchanged',
    state,
    meta: {
      finalizers: f.finalizers,
      deletionTimestamp: f.deletionTimestamp,
      deletionGracePeriodSeconds: f.deletionGracePeriodSeconds,
      generation: f.generation,
    },
    firstMark: false,
  };
}

function bumped(generation: number | undefined): number | undefined {
  // spec changes count in generation; so does the start of deletion (Kubernetes markAsDeleting)
  return generation !== undefined && generation > 0 ? generation + 1 : generation;
}

export const deletionMachine = setup({
  types: {
    context: {} as Ctx,
    events: {} as DeletionEvent,
    input: {} as LifecycleFacts,
  },
  guards: {
    /** a kind with graceful semantics and a positive period: Terminating until the period is confirmed */
    graceful: ({ event }) => event.type === 'DELETE' && (event.gracePeriodSeconds ?? 0) > 0,
    /** finalizers exist after the propagation policy is applied (§3.1 row 1 condition) */
    finalizersExist: ({ context, event }) =>
      event.type === 'DELETE' &&
      (finalizersForPolicy(context.facts.finalizers, event.policy, event.orphanDependents).length > 0 ||
        context.facts.extraFinalizers.length > 0),
    repeatRemoves: ({ context, event }) => event.type === 'DELETE' && redelete(context.facts, event).removes,
    repeatChanges: ({ context, event }) => event.type === 'DELETE' && redelete(context.facts, event).changed,
    /** no finalizer may be added to a Terminating object (Kubernetes ValidateNoNewFinalizers) */
    addsFinalizer: ({ context, event }) => {
      if (event.type !== 'UPDATE') return false;
      const old = new Set([...context.facts.finalizers, ...context.facts.extraFinalizers]);
      return [...event.finalizers, ...event.extraFinalizers].some((x) => !old.has(x));
    },
    /** §3.1 row 3: the finalizers list is empty (and no graceful period is pending) */
    lastFinalizerRemoved: ({ context, event }) =>
      event.type === 'UPDATE' &&
      event.finalizers.length === 0 &&
      event.extraFinalizers.length === 0 &&
      (context.facts.deletionGracePeriodSeconds ?? 0) === 0,
  },
  actions: {
    markGraceful: assign({ decision: ({ context, event }): DeletionDecision => {
      const e = event as DeleteEvent;
      const grace = e.gracePeriodSeconds ?? 0;
      return {
        outcome: 'write',
        state: 'Terminating',
        meta: {
          finalizers: finalizersForPolicy(context.facts.finalizers, e.policy, e.orphanDependents),
          deletionTimestamp: timestamp(e.now + grace * 1000),
          deletionGracePeriodSeconds: grace,
          generation: bumped(context.facts.generation),
        },
        firstMark: true,
      };
    } }),
    mark: assign({ decision: ({ context, event }): DeletionDecision => {
      const e = event as DeleteEvent;
      return {
        outcome: 'write',
        state: 'Terminating',
        meta: {
          finalizers: finalizersForPolicy(context.facts.finalizers, e.policy, e.orphanDependents),
          deletionTimestamp: timestamp(e.now),
          deletionGracePeriodSeconds: 0,
          generation: bumped(context.facts.generation),
        },
        firstMark: true,
      };
    } }),
    removeNow: assign({ decision: ({ context }): DeletionDecision => {
      return { ...unchanged(context.facts, 'Removed'), outcome: 'remove' };
    } }),
    rewrite: assign({ decision: ({ context, event }): DeletionDecision => {
      const r = redelete(context.facts, event as DeleteEvent);
      return {
        outcome: 'write',
        state: 'Terminating',
        meta: {
          finalizers: r.finalizers,
          deletionTimestamp: r.deletionTimestamp,
          deletionGracePeriodSeconds: r.grace,
          generation: context.facts.generation,
        },
        firstMark: false,
      };
    } }),
    keep: assign({ decision: ({ context }): DeletionDecision => {
      return unchanged(context.facts, context.facts.deletionTimestamp ? 'Terminating' : 'Present');
    } }),
    writeUpdate: assign({ decision: ({ context, event }): DeletionDecision => {
      const e = event as UpdateEvent;
      return {
        ...unchanged(context.facts, context.facts.deletionTimestamp ? 'Terminating' : 'Present'),
        outcome: 'write',
        meta: { ...unchanged(context.facts, 'Present').meta, finalizers: e.finalizers },
      };
    } }),
    rejectNewFinalizer: assign({ decision: ({ context, event }): DeletionDecision => {
      const e = event as UpdateEvent;
      const old = new Set([...context.facts.finalizers, ...context.facts.extraFinalizers]);
      const added = [...e.finalizers, ...e.extraFinalizers].filter((x) => !old.has(x));
      return {
        ...unchanged(context.facts, 'Terminating'),
        outcome: 'reject',
        reason: `no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
      };
    } }),
  },
}).createMachine({
  id: 'deletion',
  context: ({ input }) => ({ facts: input }),
  initial: 'Present',
  states: {
    Present: {
      on: {
        DELETE: [
          { guard: 'graceful', target: 'Terminating', actions: 'markGraceful' },
          { guard: 'finalizersExist', target: 'Terminating', actions: 'mark' },
          { target: 'Removed', actions: 'removeNow' },
        ],
        UPDATE: { actions: 'writeUpdate' },
      },
    },
    Terminating: {
      on: {
        DELETE: [
          { guard: 'repeatRemoves', target: 'Removed', actions: 'removeNow' },
          { guard: 'repeatChanges', actions: 'rewrite' },
          { actions: 'keep' },
        ],
        UPDATE: [
          { guard: 'addsFinalizer', actions: 'rejectNewFinalizer' },
          { guard: 'lastFinalizerRemoved', target: 'Removed', actions: 'removeNow' },
          // §3.1 row 2: a finalizer removed (or any other change) while others remain
          { actions: 'writeUpdate' },
        ],
      },
    },
    Removed: { type: 'final' },
  },
});

/** the state an object with these facts is in */
export function stateOf(facts: LifecycleFacts): LifecycleState {
  return facts.deletionTimestamp ? 'Terminating' : 'Present';
}

/** evaluates one event against an object's facts; pure */
export function decide(facts: LifecycleFacts, event: DeletionEvent): DeletionDecision {
  // the actions mutate the context they are given; give them a copy
  const snapshot = deletionMachine.resolveState({ value: stateOf(facts), context: { facts: { ...facts } } });
  const [next] = transition(deletionMachine, snapshot, event);
  const d = next.context.decision;
  if (!d) throw new Error(`deletion machine: no decision for ${event.type} in ${String(snapshot.value)}`);
  return { ...d, state: next.value as LifecycleState };
}
