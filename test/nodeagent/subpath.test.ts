// A volume mount's sub-path as kubelet's makeMounts computes it
// (src/nodeagent/subpath.ts): subPathExpr expansion and kubelet's errors.

import { describe, expect, it } from 'vitest';
import { resolveSubPath } from '../../src/nodeagent/subpath.js';

const env = [{ key: 'POD', value: 'p-1' }, { key: 'EMPTY', value: '' }, { key: 'UP', value: '..' }];

describe('resolveSubPath', () => {
  it('expands subPathExpr with the container env; a plain subPath stays', () => {
    expect(resolveSubPath({ subPathExpr: 'logs/$(POD)' }, env)).toBe('logs/p-1');
    expect(resolveSubPath({ subPath: 'a/b' }, env)).toBe('a/b');
    expect(resolveSubPath({}, env)).toBe('');
    // `$$` is a literal `$`, as in env values
    expect(resolveSubPath({ subPathExpr: 'x$$(POD)' }, env)).toBe('x$(POD)');
  });

  it("a missing or empty variable, an absolute path or `..` is kubelet's error", () => {
    expect(() => resolveSubPath({ subPathExpr: '$(NOPE)/$(EMPTY)/$(POD)' }, env)).toThrow('missing value for EMPTY, NOPE');
    expect(() => resolveSubPath({ subPathExpr: '$(EMPTY)/$(POD)' }, [{ key: 'POD', value: 'x' }])).toThrow('missing value for EMPTY');
    expect(() => resolveSubPath({ subPathExpr: '/$(POD)' }, env)).toThrow('error SubPath `/p-1` must not be an absolute path');
    expect(() => resolveSubPath({ subPathExpr: 'a/$(UP)/b' }, env)).toThrow("unable to provision SubPath `a/../b`: must not contain '..'");
    // `..` inside a name is not a back-step
    expect(resolveSubPath({ subPath: 'a..b' }, env)).toBe('a..b');
  });
});
