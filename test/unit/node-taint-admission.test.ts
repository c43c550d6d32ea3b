// The TaintNodesByCondition admission plugin (kube's plugin/pkg/admission/nodetaint):
// every new Node gets the not-ready NoSchedule taint unless it carries one.
import { describe, expect, it } from 'vitest';
import type { AdmissionCall } from '../../src/registry/write-options.js';
import type { ApiObject, ResourceDefinition } from '../../src/registry/types.js';
import { nodeTaintAdmission } from '../../src/registry/node-taint-admission.js';

const NODES = { group: '', resource: 'nodes' } as ResourceDefinition;
type Taint = { key: string; value?: string; effect: string };

const node = (spec?: Record<string, unknown>, status?: Record<string, unknown>): ApiObject =>
  ({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' }, ...(spec ? { spec } : {}), ...(status ? { status } : {}) }) as unknown as ApiObject;
const create = (object: ApiObject, o: Partial<AdmissionCall> = {}): AdmissionCall => ({
  operation: 'CREATE', def: NODES, namespace: '', name: 'n1', object, oldObject: undefined, opts: { dryRun: false }, ...o,
});
async function taintsAfter(c: AdmissionCall, apiDomain = 'orch.io'): Promise<Taint[] | undefined> {
  const out = await nodeTaintAdmission(apiDomain).mutate(c);
  return (out?.spec as { taints?: Taint[] } | undefined)?.taints;
}

describe('TaintNodesByCondition admission', () => {
  it('adds the not-ready NoSchedule taint to a new Node, after the taints it has', async () => {
    expect(await taintsAfter(create(node()))).toEqual([{ key: 'node.orch.io/not-ready', effect: 'NoSchedule' }]);
    expect(await taintsAfter(create(node({ taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoExecute' }] })))).toEqual([
      { key: 'dedicated', value: 'gpu', effect: 'NoExecute' },
      { key: 'node.orch.io/not-ready', effect: 'NoSchedule' },
    ]);
    // kube's key with kube's API domain
    expect(await taintsAfter(create(node()), 'k8s.io')).toEqual([{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]);
  });

  it('adds it even to a Node created Ready (the node lifecycle controller removes it)', async () => {
    expect(await taintsAfter(create(node(undefined, { conditions: [{ type: 'Ready', status: 'True' }] })))).toEqual([{ key: 'node.orch.io/not-ready', effect: 'NoSchedule' }]);
  });

  it('does not add a second one when the key and effect are there, whatever the value', async () => {
    expect(await taintsAfter(create(node({ taints: [{ key: 'node.orch.io/not-ready', effect: 'NoSchedule' }] })))).toEqual([{ key: 'node.orch.io/not-ready', effect: 'NoSchedule' }]);
    expect(await taintsAfter(create(node({ taints: [{ key: 'node.orch.io/not-ready', value: 'x', effect: 'NoSchedule' }] })))).toEqual([{ key: 'node.orch.io/not-ready', value: 'x', effect: 'NoSchedule' }]);
    // the NoExecute one is another taint
    expect(await taintsAfter(create(node({ taints: [{ key: 'node.orch.io/not-ready', effect: 'NoExecute' }] })))).toEqual([
      { key: 'node.orch.io/not-ready', effect: 'NoExecute' },
      { key: 'node.orch.io/not-ready', effect: 'NoSchedule' },
    ]);
  });

  it('leaves updates, sub-resources and other kinds alone', async () => {
    expect(await taintsAfter(create(node(), { operation: 'UPDATE', oldObject: node() }))).toBeUndefined();
    expect(await taintsAfter(create(node(), { opts: { dryRun: false, subresource: 'status' } }))).toBeUndefined();
    expect(await taintsAfter(create(node(), { def: { group: '', resource: 'pods' } as ResourceDefinition }))).toBeUndefined();
  });
});
