// The Endpoints and EndpointSlice planning (src/controllers/endpoints/)
// against a simple reference: for random pods (ready or not, terminal,
// deleting, without an IP, with or without the named port) and a Service
// (publishNotReadyAddresses or not), the Endpoints list exactly the
// (address, port, ready) pairs the reference lists, each address once per
// subset, sorted; and the slices planned from any earlier state hold exactly
// the reference's endpoints, none over the limit, and planning again on the
// result writes nothing.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ApiObject } from '../../src/registry/types.js';
import { computeSubsets } from '../../src/controllers/endpoints/endpoints-plan.js';
import { desiredGroups, planSlices, type EndpointSlice } from '../../src/controllers/endpoints/slice-plan.js';
import { API, apply, pod, svc } from '../helpers/endpoints-fixtures.js';

interface PodSpec {
  ready: boolean;
  phase: 'Running' | 'Pending' | 'Succeeded' | 'Failed';
  deleting: boolean;
  hasIp: boolean;
  hasWebPort: boolean;
}

const podSpec: fc.Arbitrary<PodSpec> = fc.record({
  ready: fc.boolean(),
  phase: fc.constantFrom('Running', 'Running', 'Pending', 'Succeeded', 'Failed'),
  deleting: fc.boolean(),
  hasIp: fc.boolean(),
  hasWebPort: fc.boolean(),
});

const SERVICE_PORTS = [
  { name: 'http', port: 80, targetPort: 'web', protocol: 'TCP' },
  { name: 'metrics', port: 9000, targetPort: 9000, protocol: 'TCP' },
];

const ipOf = (i: number): string => `10.9.${i >> 8}.${i & 255}`;

function makePods(specs: PodSpec[]): ApiObject[] {
  return specs.map((s, i) =>
    pod(`p${i}`, s.hasIp ? ipOf(i) : undefined, { ready: s.ready, phase: s.phase, deleting: s.deleting, ...(s.hasWebPort ? { ports: [{ name: 'web', containerPort: 8080 }] } : {}) }),
  );
}

/** the reference: which pods count, each port it has, ready or not */
function referencePairs(specs: PodSpec[], pnr: boolean, includeTerminating: boolean): string[] {
  const out: string[] = [];
  specs.forEach((s, i) => {
    if (!s.hasIp || s.phase === 'Succeeded' || s.phase === 'Failed' || (s.deleting && !includeTerminating)) return;
    const ready = pnr || s.ready;
    if (s.hasWebPort) out.push(`${ipOf(i)}|http:8080|${ready}`);
    out.push(`${ipOf(i)}|metrics:9000|${ready}`);
  });
  return out.sort();
}

describe('Endpoints subsets against the reference', () => {
  it('exactly the reference pairs; each address once per subset; sorted by IP', () => {
    fc.assert(
      fc.property(fc.array(podSpec, { maxLength: 40 }), fc.boolean(), (specs, pnr) => {
        const subsets = computeSubsets(svc({ ports: SERVICE_PORTS, publishNotReadyAddresses: pnr }), makePods(specs));
        const pairs: string[] = [];
        for (const s of subsets) {
          const all = [...(s.addresses ?? []).map((a) => [a, true] as const), ...(s.notReadyAddresses ?? []).map((a) => [a, false] as const)];
          expect(new Set(all.map(([a]) => a.ip)).size).toBe(all.length);
          for (const list of [s.addresses ?? [], s.notReadyAddresses ?? []]) expect(list.map((a) => a.ip)).toEqual(list.map((a) => a.ip).sort());
          for (const p of s.ports ?? []) for (const [a, ready] of all) pairs.push(`${a.ip}|${p.name}:${p.port}|${ready}`);
        }
        expect(pairs.sort()).toEqual(referencePairs(specs, pnr, pnr));
        // the repacking is exact: no two subsets share a port
        const ports = subsets.flatMap((s) => (s.ports ?? []).map((p) => p.name));
        expect(new Set(ports).size).toBe(ports.length);
      }),
      { numRuns: 200 },
    );
  });
});

describe('EndpointSlices against the reference', () => {
  it('any earlier state → the reference endpoints, at most max per slice, then a fixed point', () => {
    fc.assert(
      fc.property(fc.array(podSpec, { maxLength: 30 }), fc.array(podSpec, { maxLength: 30 }), fc.boolean(), fc.integer({ min: 1, max: 6 }), (before, after, pnr, max) => {
        const s = svc({ ports: SERVICE_PORTS, publishNotReadyAddresses: pnr });
        const planFor = (pods: ApiObject[], existing: EndpointSlice[]) => planSlices(s, existing, desiredGroups(s, pods, () => undefined), undefined, { apiVersion: API, max });
        const first = apply([], planFor(makePods(before), []));
        const pods = makePods(after);
        const slices = apply(first, planFor(pods, first));
        const pairs: string[] = [];
        for (const sl of slices) {
          expect(sl.endpoints.length).toBeLessThanOrEqual(max);
          for (const e of sl.endpoints) {
            expect(e.conditions.terminating).toBe(after[Number(e.targetRef.name.slice(1))]!.deleting);
            for (const p of sl.ports) pairs.push(`${e.addresses[0]}|${p.name}:${p.port}|${e.conditions.ready}`);
          }
        }
        // ready in a slice is serving and not terminating; the reference's "ready" for a terminating pod is false unless pnr
        const ref = referencePairs(after.map((p) => ({ ...p, ready: p.ready && !p.deleting })), pnr, true);
        expect(pairs.sort()).toEqual(ref);
        // no endpoints at all (every counted pod serves the numeric port): exactly one placeholder
        if (ref.length === 0) {
          expect(slices.map((x) => [x.endpoints.length, x.ports.length])).toEqual([[0, 0]]);
        }
        expect(planFor(pods, slices)).toEqual({ create: [], update: [], delete: [] });
      }),
      { numRuns: 200 },
    );
  });
});
