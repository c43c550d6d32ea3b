// The deletion lifecycle machine (spec 000 §3.1, §2.6): pure decisions.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  FOREGROUND_FINALIZER,
  type LifecycleFacts,
  ORPHAN_FINALIZER,
  decide,
  deletionMachine,
  finalizersForPolicy,
} from '../../src/lifecycles/deletion.js';
import { gracePeriodFor } from '../../src/registry/deletion/graceful.js';
import { deleteGracePeriod, deleteOptionsErrors } from '../../src/registry/deletion/delete-options.js';
import { checkDeletePreconditions } from '../../src/registry/preconditions.js';
import type { StatusError } from '../../src/core/errors.js';
import type { ResourceDefinition } from '../../src/registry/types.js';

const NOW = Date.parse('2025-01-02T03:04:05Z');
const present = (finalizers: string[] = [], extra: string[] = [], generation?: number): LifecycleFacts => ({
  finalizers,
  extraFinalizers: extra,
  generation,
});
const terminating = (finalizers: string[], grace = 0): LifecycleFacts => ({
  finalizers,
  extraFinalizers: [],
  deletionTimestamp: '2025-01-01T00:00:00Z',
  deletionGracePeriodSeconds: grace,
});

describe('deletion machine: spec 000 §3.1 table', () => {
  it('has the three states of §3.1', () => {
    expect(Object.keys(deletionMachine.states).sort()).toEqual(['Present', 'Removed', 'Terminating']);
  });

  it('Present + first delete, no finalizers → Removed', () => {
    const d = decide(present(), { type: 'DELETE', now: NOW });
    expect(d.state).toBe('Removed');
    expect(d.outcome).toBe('remove');
  });

  it('Present + first delete with finalizers → Terminating, deletionTimestamp = now, grace 0, generation bumped', () => {
    const d = decide(present(['example.com/hold'], [], 3), { type: 'DELETE', now: NOW });
    expect(d.state).toBe('Terminating');
    expect(d.outcome).toBe('write');
    expect(d.firstMark).toBe(true);
    expect(d.meta).toEqual({
      finalizers: ['example.com/hold'],
      deletionTimestamp: '2025-01-02T03:04:05Z',
      deletionGracePeriodSeconds: 0,
      generation: 4,
    });
  });

  it('kind-held finalizers (namespace spec.finalizers) also keep the object', () => {
    const d = decide(present([], ['kubernetes']), { type: 'DELETE', now: NOW });
    expect(d.state).toBe('Terminating');
  });

  it('Terminating + removal of a finalizer while others remain → Terminating', () => {
    const d = decide(terminating(['a', 'b']), { type: 'UPDATE', finalizers: ['b'], extraFinalizers: [] });
    expect(d.state).toBe('Terminating');
    expect(d.outcome).toBe('write');
  });

  it('Terminating + removal of the last finalizer → Removed', () => {
    const d = decide(terminating(['a']), { type: 'UPDATE', finalizers: [], extraFinalizers: [] });
    expect(d.state).toBe('Removed');
    expect(d.outcome).toBe('remove');
  });

  it('Terminating refuses new finalizers', () => {
    const d = decide(terminating(['a']), { type: 'UPDATE', finalizers: ['a', 'b'], extraFinalizers: [] });
    expect(d.outcome).toBe('reject');
    expect(d.reason).toContain('"b"');
  });

  it('Present + update is a plain write', () => {
    const d = decide(present(['a']), { type: 'UPDATE', finalizers: ['a', 'b'], extraFinalizers: [] });
    expect(d).toMatchObject({ state: 'Present', outcome: 'write' });
  });

  it('a repeated delete changes nothing (deletionTimestamp is kept)', () => {
    const d = decide(terminating(['a']), { type: 'DELETE', now: NOW });
    expect(d.outcome).toBe('unchanged');
    expect(d.meta.deletionTimestamp).toBe('2025-01-01T00:00:00Z');
  });
});

describe('deletion machine: propagation policy', () => {
  it('Foreground adds foregroundDeletion and keeps the object', () => {
    const d = decide(present(), { type: 'DELETE', policy: 'Foreground', now: NOW });
    expect(d.state).toBe('Terminating');
    expect(d.meta.finalizers).toEqual([FOREGROUND_FINALIZER]);
  });

  it('Orphan (and orphanDependents=true) adds orphan', () => {
    expect(decide(present(), { type: 'DELETE', policy: 'Orphan', now: NOW }).meta.finalizers).toEqual([ORPHAN_FINALIZER]);
    expect(decide(present(), { type: 'DELETE', orphanDependents: true, now: NOW }).meta.finalizers).toEqual([ORPHAN_FINALIZER]);
  });

  it('Background removes at once', () => {
    expect(decide(present(), { type: 'DELETE', policy: 'Background', now: NOW }).state).toBe('Removed');
  });

  it('a later delete may switch the policy of a Terminating object', () => {
    const d = decide(terminating(['x', FOREGROUND_FINALIZER]), { type: 'DELETE', policy: 'Orphan', now: NOW });
    expect(d).toMatchObject({ state: 'Terminating', outcome: 'write' });
    expect(d.meta.finalizers).toEqual(['x', ORPHAN_FINALIZER]);
  });

  it('Background on an object held only by a GC finalizer removes it', () => {
    const d = decide(terminating([ORPHAN_FINALIZER]), { type: 'DELETE', policy: 'Background', now: NOW });
    expect(d.state).toBe('Removed');
  });

  it('without an explicit policy an existing GC finalizer stays', () => {
    expect(finalizersForPolicy(['a', ORPHAN_FINALIZER], undefined, undefined)).toEqual(['a', ORPHAN_FINALIZER]);
    expect(finalizersForPolicy(['a', ORPHAN_FINALIZER], 'Foreground', undefined)).toEqual(['a', FOREGROUND_FINALIZER]);
  });

  it('property: the result never holds both GC finalizers and keeps every other finalizer', () => {
    const name = fc.constantFrom('a', 'b', ORPHAN_FINALIZER, FOREGROUND_FINALIZER);
    fc.assert(
      fc.property(
        fc.uniqueArray(name),
        fc.option(fc.constantFrom('Orphan' as const, 'Background' as const, 'Foreground' as const), { nil: undefined }),
        fc.option(fc.boolean(), { nil: undefined }),
        (fins, policy, orphanDeps) => {
          const out = finalizersForPolicy(fins, policy, orphanDeps);
          expect(out.includes(ORPHAN_FINALIZER) && out.includes(FOREGROUND_FINALIZER)).toBe(false);
          for (const f of fins) if (f !== ORPHAN_FINALIZER && f !== FOREGROUND_FINALIZER) expect(out).toContain(f);
        },
      ),
    );
  });

  it('property: a first delete is Removed exactly when no finalizer holds the object', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.constantFrom('a', 'b')), fc.constantFrom('Orphan' as const, 'Background' as const, 'Foreground' as const), (fins, policy) => {
        const d = decide(present(fins), { type: 'DELETE', policy, now: NOW });
        expect(d.state === 'Removed').toBe(fins.length === 0 && policy === 'Background');
      }),
    );
  });
});

describe('graceful deletion (pods bound to a node)', () => {
  const pods = { group: '', resource: 'pods' } as ResourceDefinition;
  const cms = { group: '', resource: 'configmaps' } as ResourceDefinition;

  it('only pods on a node are graceful; the period comes from the request or the pod', () => {
    expect(gracePeriodFor(cms, {}, 30)).toBeUndefined();
    expect(gracePeriodFor(pods, { spec: {} }, 30)).toBe(0);
    expect(gracePeriodFor(pods, { spec: { nodeName: 'n1' } }, undefined)).toBe(30);
    expect(gracePeriodFor(pods, { spec: { nodeName: 'n1', terminationGracePeriodSeconds: 5 } }, undefined)).toBe(5);
    expect(gracePeriodFor(pods, { spec: { nodeName: 'n1' } }, 0)).toBe(0);
    expect(gracePeriodFor(pods, { spec: { nodeName: 'n1' }, status: { phase: 'Succeeded' } }, 10)).toBe(0);
  });

  it('a graceful delete marks with a future deletionTimestamp and waits', () => {
    const d = decide(present(), { type: 'DELETE', gracePeriodSeconds: 30, now: NOW });
    expect(d).toMatchObject({ state: 'Terminating', outcome: 'write' });
    expect(d.meta.deletionTimestamp).toBe('2025-01-02T03:04:35Z');
    expect(d.meta.deletionGracePeriodSeconds).toBe(30);
  });

  it('the period can only shrink, and a zero-grace delete removes the object', () => {
    const f = terminating([], 30);
    expect(decide(f, { type: 'DELETE', gracePeriodSeconds: 60, now: NOW }).outcome).toBe('unchanged');
    const shorter = decide(f, { type: 'DELETE', gracePeriodSeconds: 10, now: NOW });
    expect(shorter.meta.deletionGracePeriodSeconds).toBe(10);
    expect(decide(f, { type: 'DELETE', gracePeriodSeconds: 0, now: NOW }).state).toBe('Removed');
  });

  it('removing the last finalizer does not remove a pod whose grace period is pending', () => {
    const d = decide(terminating(['a'], 30), { type: 'UPDATE', finalizers: [], extraFinalizers: [] });
    expect(d.state).toBe('Terminating');
  });
});

describe('delete options and preconditions (kube ValidateDeleteOptions, rest.BeforeDelete)', () => {
  it('a known policy alone is valid; both options or an unknown policy are errors on propagationPolicy', () => {
    for (const p of [undefined, 'Orphan', 'Background', 'Foreground']) expect(deleteOptionsErrors(p, undefined)).toEqual([]);
    expect(deleteOptionsErrors(undefined, true)).toEqual([]);
    expect(deleteOptionsErrors('Orphan', false).map((e) => `${e.type} ${e.field}: ${e.message}`)).toEqual([
      'FieldValueInvalid propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set',
    ]);
    expect(deleteOptionsErrors('orphan', undefined).map((e) => `${e.type} ${e.field}: ${e.message}`)).toEqual([
      'FieldValueNotSupported propagationPolicy: Unsupported value: "orphan": supported values: "Foreground", "Background", "Orphan", "nil"',
    ]);
  });

  it('a negative grace period is one second; others are kept', () => {
    fc.assert(fc.property(fc.integer(), (n) => deleteGracePeriod(n) === (n < 0 ? 1 : n)));
  });

  it('preconditions that do not hold are a Conflict on the kind and group', () => {
    const obj = { metadata: { name: 'd', uid: 'u1', resourceVersion: '7' } };
    const def = { kind: 'Deployment', group: 'apps' };
    expect(() => checkDeletePreconditions(def, obj, { uid: 'u1', resourceVersion: '7' })).not.toThrow();
    expect(() => checkDeletePreconditions(def, obj, undefined)).not.toThrow();
    const err = (pre: { uid?: string; resourceVersion?: string }) => {
      try {
        checkDeletePreconditions(def, obj, pre);
      } catch (e) {
        return (e as StatusError).toStatus();
      }
      throw new Error('no conflict');
    };
    expect(err({ uid: 'u0' })).toMatchObject({
      code: 409, reason: 'Conflict', details: { name: 'd', group: 'apps', kind: 'Deployment' },
      message: 'Operation cannot be fulfilled on Deployment.apps "d": the UID in the precondition (u0) does not match the UID in record (u1). The object might have been deleted and then recreated',
    });
    expect(err({ resourceVersion: '6' }).message).toBe(
      'Operation cannot be fulfilled on Deployment.apps "d": the ResourceVersion in the precondition (6) does not match the ResourceVersion in record (7). The object might have been modified',
    );
  });
});
