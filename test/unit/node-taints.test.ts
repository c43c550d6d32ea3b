// Toleration matching, eviction deadlines, zone rules and the
// DefaultTolerationSeconds admission plugin (issue 13).

import { describe, expect, it } from 'vitest';
import { defaultTolerationHooks } from '../../src/registry/default-tolerations.js';
import type { ApiObject, ResourceDefinition } from '../../src/registry/types.js';
import type { AdmissionCall } from '../../src/registry/write-options.js';
import { evictionDue, tolerates } from '../../src/controllers/node-lifecycle/taints.js';
import { TokenBucket, zoneOf, zoneRate, zoneState, DEFAULT_ZONE_RULES } from '../../src/controllers/node-lifecycle/zones.js';

const U = { key: 'node.orch.io/unreachable', effect: 'NoExecute' };
const N = { key: 'node.orch.io/not-ready', effect: 'NoExecute' };

describe('tolerations', () => {
  it('match as kube matches them', () => {
    expect(tolerates({ operator: 'Exists' }, U)).toBe(true);
    expect(tolerates({ key: U.key, operator: 'Exists' }, U)).toBe(true);
    expect(tolerates({ key: U.key, operator: 'Exists', effect: 'NoSchedule' }, U)).toBe(false);
    expect(tolerates({ key: N.key, operator: 'Exists' }, U)).toBe(false);
    expect(tolerates({ key: 'k', value: 'v' }, { key: 'k', value: 'v', effect: 'NoExecute' })).toBe(true);
    expect(tolerates({ key: 'k', operator: 'Equal', value: 'v' }, { key: 'k', value: 'w', effect: 'NoExecute' })).toBe(false);
    expect(tolerates({ operator: 'Equal', value: '' }, U)).toBe(false);
  });

  it('give the eviction deadline from the taint time and the first matching toleration', () => {
    const at = () => 1_000_000;
    expect(evictionDue([U], [], at)).toBe(-Infinity);
    expect(evictionDue([{ key: 'x', effect: 'NoSchedule' }], [], at)).toBeUndefined();
    expect(evictionDue([U], [{ operator: 'Exists' }], at)).toBeUndefined();
    expect(evictionDue([U], [{ key: U.key, operator: 'Exists', tolerationSeconds: 30 }], at)).toBe(1_030_000);
    expect(evictionDue([U], [{ key: U.key, operator: 'Exists', tolerationSeconds: -5 }], at)).toBe(1_000_000);
    // the first toleration that matches a taint is the one used (kube's GetMatchingTolerations)
    expect(evictionDue([U], [{ key: U.key, operator: 'Exists', tolerationSeconds: 60 }, { operator: 'Exists' }], at)).toBe(1_060_000);
    // every NoExecute taint must be tolerated; the earliest deadline wins
    expect(evictionDue([U, N], [{ key: U.key, operator: 'Exists', tolerationSeconds: 60 }], at)).toBe(-Infinity);
    expect(evictionDue([U, N], [{ key: U.key, operator: 'Exists', tolerationSeconds: 60 }, { key: N.key, operator: 'Exists', tolerationSeconds: 10 }], at)).toBe(1_010_000);
  });
});

describe('zones', () => {
  it('classify zones and pick their rate', () => {
    expect(zoneState(10, 2, 0.55)).toBe('Normal');
    expect(zoneState(10, 6, 0.55)).toBe('PartialDisruption');
    expect(zoneState(4, 3, 0.55)).toBe('PartialDisruption');
    expect(zoneState(10, 10, 0.55)).toBe('FullDisruption');
    expect(zoneState(1, 1, 0.55)).toBe('FullDisruption');
    expect(zoneRate('PartialDisruption', 10, DEFAULT_ZONE_RULES)).toBe(0);
    expect(zoneRate('PartialDisruption', 51, DEFAULT_ZONE_RULES)).toBe(0.01);
    expect(zoneRate('FullDisruption', 10, DEFAULT_ZONE_RULES)).toBe(0.1);
    expect(zoneOf({ 'topology.kubernetes.io/zone': 'a', 'topology.kubernetes.io/region': 'r' })).toBe('r:a');
    expect(zoneOf({})).toBe('');
  });

  it('token bucket: burst 1, refilled at the rate; rate 0 drops the saved token', () => {
    const b = new TokenBucket(0.1, 0);
    expect(b.tryTake(0)).toBe(true);
    expect(b.tryTake(5_000)).toBe(false);
    expect(b.waitMs(5_000)).toBe(5_000);
    expect(b.tryTake(10_000)).toBe(true);
    expect(b.tryTake(100_000)).toBe(true);
    expect(b.tryTake(100_000)).toBe(false);
    b.setRate(0, 200_000);
    expect(b.tryTake(200_000)).toBe(false);
    expect(b.waitMs(300_000)).toBe(Infinity);
  });
});

describe('DefaultTolerationSeconds', () => {
  const PODS = { group: '', resource: 'pods' } as ResourceDefinition;
  const pod = (tolerations?: unknown[]): ApiObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [], ...(tolerations ? { tolerations } : {}) } }) as ApiObject;
  const tols = (o: ApiObject | undefined) => (o?.spec as { tolerations?: unknown[] } | undefined)?.tolerations;
  const h = defaultTolerationHooks('orch.io', { unreachableSeconds: 60 });
  /** the plugin's mutating step as the admission chain calls it */
  const admit = (hooks: ReturnType<typeof defaultTolerationHooks>, object: ApiObject, over: Partial<AdmissionCall> = {}) =>
    hooks.mutate({ operation: 'CREATE', def: PODS, namespace: 'default', name: 'p', object, oldObject: undefined, opts: { dryRun: false }, ...over });

  it('adds not-ready and unreachable tolerations to new pods that have neither', async () => {
    const p = await admit(h, pod([{ key: 'x', operator: 'Exists', effect: 'NoSchedule' }]));
    expect(tols(p)).toEqual([
      { key: 'x', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'node.orch.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 },
    ]);
  });

  it('with --api-domain k8s.io uses kube\'s own keys, node.kubernetes.io/… (groups under k8s.io, taints under kubernetes.io)', async () => {
    const p = await admit(defaultTolerationHooks('k8s.io'), pod());
    expect((tols(p) as { key: string }[]).map((t) => t.key)).toEqual(['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']);
  });

  it('adds them on updates too (kube: NewHandler(Create, Update)), so a PUT of the original manifest keeps them', async () => {
    expect((tols(await admit(h, pod(), { operation: 'UPDATE', oldObject: pod() })) as { key: string }[]).map((t) => t.key)).toEqual(['node.orch.io/not-ready', 'node.orch.io/unreachable']);
    expect(tols(await admit(h, pod(), { operation: 'DELETE', oldObject: pod() }))).toBeUndefined();
  });

  it('leaves pods that tolerate them, sub-resources and other kinds alone', async () => {
    expect(tols(await admit(h, pod([{ operator: 'Exists' }])))).toEqual([{ operator: 'Exists' }]);
    expect(tols(await admit(h, pod([{ key: 'node.orch.io/unreachable', operator: 'Exists', effect: 'NoExecute' }])))).toHaveLength(2);
    // a create on a pod's sub-resource (binding, eviction) carries another object
    expect(tols(await admit(h, pod(), { opts: { dryRun: false, subresource: 'eviction' } }))).toBeUndefined();
    expect(tols(await admit(h, pod(), { def: { group: '', resource: 'configmaps' } as ResourceDefinition }))).toBeUndefined();
  });
});
