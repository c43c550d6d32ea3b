// The node agent's pod conditions (src/nodeagent/pod-conditions.ts): which it
// owns, the readiness gates' verdict with kubelet's messages, and the status
// patch that merges its own conditions by type and never sends the others'.
import { describe, expect, it } from 'vitest';
import { readinessGatesUnready, statusPatch, withOthersConditions } from '../../src/nodeagent/pod-conditions.js';

const c = (type: string, status = 'True') => ({ type, status });

describe('pod conditions of the node agent', () => {
  it('readiness gates: missing and not-True conditions, in the gates\' order, joined as kubelet joins them', () => {
    const gates = [{ conditionType: 'a.io/one' }, { conditionType: 'a.io/two' }, { conditionType: 'a.io/three' }];
    expect(readinessGatesUnready(gates, [c('a.io/two', 'False'), c('a.io/three')])).toBe(
      'corresponding condition of pod readiness gate "a.io/one" does not exist., the status of pod readiness gate "a.io/two" is not "True", but False',
    );
    expect(readinessGatesUnready(gates, [c('a.io/one'), c('a.io/two'), c('a.io/three')])).toBeUndefined();
    expect(readinessGatesUnready(undefined, [])).toBeUndefined();
  });

  it('the status patch: own conditions by type, the others left out, unreported own ones deleted, addresses replaced', () => {
    const status = { phase: 'Running', message: null, conditions: [c('x.io/gate'), c('Ready'), c('PodScheduled')], podIPs: [{ ip: '10.0.0.2' }] };
    expect(statusPatch(status)).toEqual({
      phase: 'Running',
      message: null,
      podIPs: [{ $patch: 'replace' }, { ip: '10.0.0.2' }],
      conditions: [
        c('Ready'),
        c('PodScheduled'),
        ...['Initialized', 'ContainersReady', 'PodReadyToStartContainers'].map((type) => ({ type, $patch: 'delete' })),
      ],
    });
    // the agent's view itself is not changed
    expect(status.conditions).toHaveLength(3);
  });

  it("the agent's own conditions stand, the others' come from the newer API pod", () => {
    const own = { phase: 'Running', conditions: [c('old.io/gate', 'False'), c('Ready', 'False')] };
    const api = { phase: 'Pending', conditions: [c('Ready'), c('new.io/gate')] };
    expect(withOthersConditions(own, api)).toEqual({ phase: 'Running', conditions: [c('new.io/gate'), c('Ready', 'False')] });
    const plain = { phase: 'Running', conditions: [c('Ready')] };
    expect(withOthersConditions(plain, { conditions: [c('Ready', 'False')] })).toBe(plain);
  });
});
