// The Node authorizer graph is incremental (spec 001 §5.15): after any
// sequence of pod adds, updates and deletes it equals a graph built from
// scratch from the final pods.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NodeGraph } from '../../src/auth/authz/node/graph.js';
import type { SourceObject } from '../../src/auth/authz/types.js';

const name = fc.constantFrom('a', 'b', 'c');
const podArb = fc.record({
  name: fc.constantFrom('p1', 'p2', 'p3', 'p4'),
  node: fc.option(fc.constantFrom('n1', 'n2'), { nil: undefined }),
  secrets: fc.array(name, { maxLength: 3 }),
  configMaps: fc.array(name, { maxLength: 2 }),
  claims: fc.array(name, { maxLength: 2 }),
  sa: fc.option(name, { nil: undefined }),
});
type P = typeof podArb extends fc.Arbitrary<infer T> ? T : never;
const op = fc.oneof(fc.record({ kind: fc.constant('put' as const), pod: podArb }), fc.record({ kind: fc.constant('del' as const), name: fc.constantFrom('p1', 'p2', 'p3', 'p4') }));

function toPod(p: P): SourceObject {
  return {
    metadata: { name: p.name, namespace: 'ns' },
    spec: {
      nodeName: p.node,
      serviceAccountName: p.sa,
      imagePullSecrets: p.secrets.map((s) => ({ name: s })),
      containers: [{ name: 'c', envFrom: p.configMaps.map((c) => ({ configMapRef: { name: c } })) }],
      volumes: p.claims.map((c, i) => ({ name: `v${i}`, persistentVolumeClaim: { claimName: c } })),
    },
  };
}

describe('NodeGraph', () => {
  it('incremental updates equal a rebuild from the final pods', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const g = new NodeGraph();
        const final = new Map<string, SourceObject>();
        for (const o of ops) {
          if (o.kind === 'put') {
            const pod = toPod(o.pod);
            g.setPod(pod);
            final.set(o.pod.name, pod);
          } else {
            const last = final.get(o.name);
            if (last) g.deletePod(last);
            final.delete(o.name);
          }
        }
        const fresh = new NodeGraph();
        for (const p of final.values()) fresh.setPod(p);
        expect(g.snapshot()).toEqual(fresh.snapshot());
        for (const n of ['n1', 'n2']) for (const s of ['a', 'b', 'c']) expect(g.hasRelationship(n, 'secret', 'ns', s)).toBe(fresh.hasRelationship(n, 'secret', 'ns', s));
      }),
      { numRuns: 300 },
    );
  });
});
