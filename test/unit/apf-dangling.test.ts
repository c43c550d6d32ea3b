// The Dangling condition kube-apiserver's APF configuration consumer writes on
// a FlowSchema (src/controllers/apf-dangling.ts): kube's status, reason and
// message for a priority level found or missing; unchanged when already so;
// other conditions kept in place.

import { describe, expect, it } from 'vitest';
import { withDanglingCondition } from '../../src/controllers/apf-dangling.js';
import type { ApiObject } from '../../src/registry/types.js';

const schema = (conditions?: Record<string, unknown>[]): ApiObject =>
  ({ apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'FlowSchema', metadata: { name: 'fs' }, spec: { priorityLevelConfiguration: { name: 'pl' } }, ...(conditions ? { status: { conditions } } : {}) }) as unknown as ApiObject;
const NOW = '2026-01-02T03:04:05Z';

describe('withDanglingCondition', () => {
  it("writes kube's condition for a level found and for one missing", () => {
    expect(withDanglingCondition(schema(), true, NOW)).toEqual([
      { type: 'Dangling', status: 'False', reason: 'Found', message: 'This FlowSchema references the PriorityLevelConfiguration object named "pl" and it exists', lastTransitionTime: NOW },
    ]);
    expect(withDanglingCondition(schema(), false, NOW)).toEqual([
      { type: 'Dangling', status: 'True', reason: 'NotFound', message: 'This FlowSchema references the PriorityLevelConfiguration object named "pl" but there is no such object', lastTransitionTime: NOW },
    ]);
  });

  it('leaves a current condition alone and replaces a stale one in place, keeping the others', () => {
    const current = withDanglingCondition(schema(), true, '2020-01-01T00:00:00Z')!;
    expect(withDanglingCondition(schema(current), true, NOW)).toBeUndefined();
    const other = { type: 'Other', status: 'True' };
    const next = withDanglingCondition(schema([other, ...current]), false, NOW)!;
    expect(next.map((c) => [c.type, c.status, c.lastTransitionTime ?? null])).toEqual([['Other', 'True', null], ['Dangling', 'True', NOW]]);
  });
});
