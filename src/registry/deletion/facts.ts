// Between API objects and the deletion machine's plain facts (machine.ts).

import type { ApiObject, ObjectMeta } from '../types.js';
import type { DeletionDecision, LifecycleFacts } from './machine.js';

export function factsOf(obj: ApiObject, extraFinalizers: string[]): LifecycleFacts {
  const m = obj.metadata ?? {};
  return {
    finalizers: Array.isArray(m.finalizers) ? m.finalizers : [],
    extraFinalizers,
    deletionTimestamp: m.deletionTimestamp ?? undefined,
    deletionGracePeriodSeconds: m.deletionGracePeriodSeconds ?? undefined,
    generation: m.generation ?? undefined,
  };
}

/** writes a `write` decision's metadata onto the object that will be stored */
export function applyDecision(meta: ObjectMeta, d: DeletionDecision): void {
  if (d.meta.finalizers.length > 0) meta.finalizers = d.meta.finalizers;
  else delete meta.finalizers;
  set(meta, 'deletionTimestamp', d.meta.deletionTimestamp);
  set(meta, 'deletionGracePeriodSeconds', d.meta.deletionGracePeriodSeconds);
  set(meta, 'generation', d.meta.generation);
}

function set<K extends 'deletionTimestamp' | 'deletionGracePeriodSeconds' | 'generation'>(meta: ObjectMeta, k: K, v: ObjectMeta[K]): void {
  if (v === undefined) delete meta[k];
  else meta[k] = v;
}

export function isTerminating(obj: ApiObject | undefined): boolean {
  return typeof obj?.metadata?.deletionTimestamp === 'string' && obj.metadata.deletionTimestamp !== '';
}
