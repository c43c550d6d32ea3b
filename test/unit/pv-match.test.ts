// The persistent volume controller's choice of volume
// (src/controllers/volume/pv-match.ts, kube's findBestMatchForClaim): examples
// of each rule, and a fast-check property over random volumes and claims: the
// chosen volume meets every constraint, and no volume that meets them is a
// better pick (fewer access modes first, then smaller); nothing is chosen only
// when no volume fits.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { capacityBytes, findBestMatch, isBoundToClaim, modesKey, volumeMismatch } from '../../src/controllers/volume/pv-match.js';
import type { ApiObject } from '../../src/registry/types.js';

interface PvIn {
  name: string;
  size: string;
  modes?: string[];
  cls?: string;
  mode?: string;
  labels?: Record<string, string>;
  phase?: string;
  claimRef?: { namespace: string; name: string; uid?: string };
  deleting?: boolean;
}

const mkPv = (p: PvIn): ApiObject => ({
  apiVersion: 'v1', kind: 'PersistentVolume',
  metadata: { name: p.name, uid: `uid-${p.name}`, labels: p.labels ?? {}, ...(p.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  spec: { capacity: { storage: p.size }, accessModes: p.modes ?? ['ReadWriteOnce'], storageClassName: p.cls ?? '', volumeMode: p.mode ?? 'Filesystem', ...(p.claimRef ? { claimRef: p.claimRef } : {}) },
  status: { phase: p.phase ?? 'Available' },
}) as ApiObject;

const mkClaim = (size: string, spec: Record<string, unknown> = {}): ApiObject => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim',
  metadata: { name: 'data', namespace: 'ns', uid: 'claim-uid' },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } }, volumeMode: 'Filesystem', ...spec },
}) as ApiObject;

const pick = (claim: ApiObject, pvs: PvIn[], delay = false): string | undefined => findBestMatch(claim, pvs.map(mkPv), delay)?.metadata?.name;

describe('findBestMatch', () => {
  it('takes the smallest Available volume large enough, in the claim class only', () => {
    const pvs = [{ name: 'a', size: '10Gi' }, { name: 'b', size: '2Gi' }, { name: 'c', size: '1Gi' }, { name: 'd', size: '2Gi', cls: 'fast' }, { name: 'e', size: '1500Mi', phase: 'Released' }];
    expect(pick(mkClaim('1500Mi'), pvs)).toBe('b');
    expect(pick(mkClaim('1500Mi', { storageClassName: 'fast' }), pvs)).toBe('d');
    expect(pick(mkClaim('20Gi'), pvs)).toBeUndefined();
    // an unset class is "" (orch has no DefaultStorageClass admission)
    expect(pick(mkClaim('1Gi', { storageClassName: undefined }), pvs)).toBe('c');
  });

  it('prefers the set with the fewest access modes over a smaller volume with more', () => {
    const pvs = [{ name: 'many', size: '1Gi', modes: ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany'] }, { name: 'one', size: '5Gi' }, { name: 'rox', size: '1Gi', modes: ['ReadOnlyMany'] }];
    expect(pick(mkClaim('1Gi'), pvs)).toBe('one');
    expect(pick(mkClaim('1Gi', { accessModes: ['ReadWriteMany'] }), pvs)).toBe('many');
    expect(modesKey(['ReadWriteMany', 'ReadWriteOnce'])).toBe('ReadWriteOnce,ReadWriteMany');
  });

  it('matches volumeMode, selector, and skips volumes reserved for others or being deleted', () => {
    const pvs: PvIn[] = [
      { name: 'block', size: '1Gi', mode: 'Block' },
      { name: 'other', size: '1Gi', claimRef: { namespace: 'ns', name: 'someone' } },
      { name: 'gone', size: '1Gi', deleting: true },
      { name: 'gold', size: '4Gi', labels: { tier: 'gold' } },
      { name: 'plain', size: '2Gi' },
    ];
    expect(pick(mkClaim('1Gi'), pvs)).toBe('plain');
    expect(pick(mkClaim('1Gi', { volumeMode: 'Block' }), pvs)).toBe('block');
    expect(pick(mkClaim('1Gi', { selector: { matchLabels: { tier: 'gold' } } }), pvs)).toBe('gold');
    expect(pick(mkClaim('1Gi', { selector: { matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] } }), pvs)).toBe('plain');
  });

  it('returns a volume pre-bound to the claim whatever its class, phase or selector, if large enough; never under WaitForFirstConsumer otherwise', () => {
    const pvs: PvIn[] = [{ name: 'free', size: '1Gi' }, { name: 'mine', size: '9Gi', cls: 'x', phase: 'Pending', claimRef: { namespace: 'ns', name: 'data' } }];
    expect(pick(mkClaim('1Gi'), pvs)).toBe('mine');
    expect(pick(mkClaim('1Gi'), pvs, true)).toBe('mine');
    expect(pick(mkClaim('10Gi'), pvs)).toBeUndefined();
    expect(pick(mkClaim('1Gi'), [{ name: 'free', size: '1Gi' }], true)).toBeUndefined();
    // a uid in the claimRef must be the claim's
    expect(pick(mkClaim('1Gi'), [{ name: 'old', size: '1Gi', claimRef: { namespace: 'ns', name: 'data', uid: 'gone-uid' } }])).toBeUndefined();
  });

  it('says why a volume the claim names cannot be bound (kube checkVolumeSatisfyClaim)', () => {
    expect(volumeMismatch(mkPv({ name: 'v', size: '1Gi' }), mkClaim('2Gi'))).toBe('requested PV is too small');
    expect(volumeMismatch(mkPv({ name: 'v', size: '1Gi', cls: 'a' }), mkClaim('1Gi'))).toBe('storageClassName does not match');
    expect(volumeMismatch(mkPv({ name: 'v', size: '1Gi', mode: 'Block' }), mkClaim('1Gi'))).toBe('incompatible volumeMode');
    expect(volumeMismatch(mkPv({ name: 'v', size: '1Gi', modes: ['ReadOnlyMany'] }), mkClaim('1Gi'))).toBe('incompatible accessMode');
    expect(volumeMismatch(mkPv({ name: 'v', size: '1Gi' }), mkClaim('1Gi'))).toBeUndefined();
  });
});

// biased so that several volumes fit most claims and the choice among them is tested
const modesArb: fc.Arbitrary<string[]> = fc.oneof(
  { weight: 3, arbitrary: fc.constant<string[]>(['ReadWriteOnce']) },
  { weight: 2, arbitrary: fc.constant<string[]>(['ReadWriteOnce', 'ReadWriteMany']) },
  { weight: 1, arbitrary: fc.subarray(['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'], { minLength: 1 }) },
);
const pvArb = fc.record({
  size: fc.integer({ min: 1, max: 12 }),
  modes: modesArb,
  cls: fc.constantFrom('', '', 'a'),
  mode: fc.constantFrom('Filesystem', 'Filesystem', 'Filesystem', 'Block'),
  tier: fc.option(fc.constantFrom('gold', 'silver'), { nil: undefined }),
  phase: fc.constantFrom('Available', 'Available', 'Available', 'Bound', 'Released', 'Pending'),
  ref: fc.constantFrom('none', 'none', 'none', 'none', 'none', 'other', 'me', 'me-uid', 'me-old-uid'),
  deleting: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
});
const claimArb = fc.record({
  size: fc.integer({ min: 1, max: 8 }),
  modes: fc.oneof({ weight: 4, arbitrary: fc.constant<string[]>(['ReadWriteOnce']) }, { weight: 1, arbitrary: modesArb }),
  cls: fc.constantFrom('', '', '', 'a'),
  mode: fc.constantFrom('Filesystem', 'Filesystem', 'Filesystem', 'Block'),
  tier: fc.constantFrom(undefined, undefined, undefined, 'gold'),
});

describe('findBestMatch property', () => {
  it('the chosen volume meets every constraint and no fitting volume is a better pick', () => {
    let choices = 0;
    fc.assert(
      fc.property(fc.array(pvArb, { minLength: 3, maxLength: 20 }), claimArb, fc.boolean(), (raw, c, delay) => {
        const pvs = raw.map((p, i) => mkPv({
          name: `pv${String(i).padStart(2, '0')}`, size: `${p.size}Gi`, modes: p.modes, cls: p.cls, mode: p.mode, phase: p.phase, deleting: p.deleting,
          labels: p.tier ? { tier: p.tier } : {},
          ...(p.ref === 'other' ? { claimRef: { namespace: 'ns', name: 'other' } } : {}),
          ...(p.ref === 'me' ? { claimRef: { namespace: 'ns', name: 'data' } } : {}),
          ...(p.ref === 'me-uid' ? { claimRef: { namespace: 'ns', name: 'data', uid: 'claim-uid' } } : {}),
          ...(p.ref === 'me-old-uid' ? { claimRef: { namespace: 'ns', name: 'data', uid: 'old' } } : {}),
        }));
        const claim = mkClaim(`${c.size}Gi`, { accessModes: c.modes, storageClassName: c.cls, volumeMode: c.mode, ...(c.tier ? { selector: { matchLabels: { tier: c.tier } } } : {}) });
        // the rules read plainly from kube's FindMatchingVolume
        const base = (v: ApiObject): boolean => {
          const s = v.spec as { accessModes: string[]; volumeMode: string; storageClassName: string };
          return c.modes.every((m) => s.accessModes.includes(m)) && capacityBytes(v) >= c.size * 2 ** 30 && s.volumeMode === c.mode && !v.metadata?.deletionTimestamp;
        };
        const prebound = (v: ApiObject): boolean => base(v) && isBoundToClaim(v, claim);
        const free = (v: ApiObject): boolean => {
          const s = v.spec as { storageClassName: string; claimRef?: unknown };
          return base(v) && !delay && !s.claimRef && (v.status as { phase: string }).phase === 'Available' && s.storageClassName === c.cls
            && (!c.tier || v.metadata?.labels?.tier === c.tier);
        };
        const fits = (v: ApiObject): boolean => prebound(v) || free(v);
        const modeCount = (v: ApiObject): number => (v.spec as { accessModes: string[] }).accessModes.length;
        const got = findBestMatch(claim, pvs, delay);
        if (!got) {
          expect(pvs.filter(fits)).toEqual([]);
          return;
        }
        expect(fits(got)).toBe(true);
        if (pvs.filter(fits).length > 1) choices++;
        for (const v of pvs.filter(fits)) {
          // a set of fewer access modes is searched first
          expect(modeCount(v)).toBeGreaterThanOrEqual(modeCount(got));
          if (modesKey((v.spec as { accessModes: string[] }).accessModes) !== modesKey((got.spec as { accessModes: string[] }).accessModes)) continue;
          // in the same set a pre-bound volume wins, else the smallest
          if (prebound(v)) expect(prebound(got)).toBe(true);
          else if (!prebound(got)) expect(capacityBytes(v)).toBeGreaterThanOrEqual(capacityBytes(got));
        }
      }),
      { numRuns: 400 },
    );
    // the runs where more than one volume fitted, so the pick among them was checked
    expect(choices).toBeGreaterThan(60);
  });
});
