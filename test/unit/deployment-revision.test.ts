// Deployment revisions as kube reads them (deployment/util Revision and
// MaxRevision: strconv.ParseInt base 10, 64 bits): exact beyond 2^53, and
// what does not parse counts as no revision.

import { describe, expect, it } from 'vitest';
import { maxRevision, parseRevision, revisionOf } from '../../src/controllers/workloads/deployment-plan.js';
import type { ApiObject } from '../../src/registry/types.js';

const rs = (revision?: string): ApiObject => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'x', ...(revision === undefined ? {} : { annotations: { 'deployment.kubernetes.io/revision': revision } }) } });

describe('deployment revisions', () => {
  it('a revision beyond 2^53 is followed by exactly the next one (the adopted set of the RollingUpdateDeployment e2e)', () => {
    expect(String(maxRevision([rs('1'), rs('3546343826724305832'), rs()]) + 1n)).toBe('3546343826724305833');
  });

  it('int64 bounds: the largest parses, one more or a malformed value is 0', () => {
    expect(parseRevision('9223372036854775807')).toBe(9223372036854775807n);
    expect(parseRevision('9223372036854775808')).toBe(0n);
    expect(parseRevision('-9223372036854775808')).toBe(-9223372036854775808n);
    expect(parseRevision('1.5')).toBe(0n);
    expect(parseRevision('')).toBe(0n);
    expect(revisionOf(rs('+7'))).toBe(7n);
  });

  it('no set: revision 0, so the first new set gets 1', () => {
    expect(maxRevision([])).toBe(0n);
    expect(maxRevision([rs('abc')])).toBe(0n);
  });
});
