// The container's user as kubelet 1.32 computes it (src/nodeagent/run-as-user.ts): the effective
// runAsUser / runAsGroup / runAsNonRoot (container over pod), the image's user from ImageStatus,
// verifyRunAsNonRoot's messages, and the CRI security context's user fields.
import { describe, expect, it } from 'vitest';
import { effectiveUser, imageUser, type PodUserFields, runtimeUser, type UserPod, verifyRunAsNonRoot } from '../../src/nodeagent/run-as-user.js';
import type { Image } from '../../src/nodeagent/runtime/types.js';

const pod = (securityContext?: PodUserFields): UserPod => ({ metadata: { name: 'p', namespace: 'ns', uid: 'u-1' }, spec: { securityContext } });
const ROOT = { uid: 0, username: '' };
const who = '(pod: "p_ns(u-1)", container: c)';

describe('effective user (DetermineEffectiveSecurityContext)', () => {
  it('takes each field from the container, else from the pod', () => {
    expect(effectiveUser({ runAsUser: 1, runAsGroup: 2, runAsNonRoot: true }, { runAsUser: 3 })).toEqual({ runAsUser: 3, runAsGroup: 2, runAsNonRoot: true });
    expect(effectiveUser({ runAsNonRoot: true }, { runAsNonRoot: false, runAsGroup: 0 })).toEqual({ runAsNonRoot: false, runAsGroup: 0 });
    expect(effectiveUser(undefined, { runAsUser: null })).toEqual({});
    expect(effectiveUser({ runAsUser: 0 }, null)).toEqual({ runAsUser: 0 });
  });
});

describe("the image's user (getImageUser)", () => {
  const img = (over: Partial<Image>): Image => ({ id: 'sha256:x', repoTags: [], repoDigests: [], size: 1, ...over });
  it('is the numeric uid, else the name, else root', () => {
    expect(imageUser(img({ uid: { value: 1234 }, username: '' }))).toEqual({ uid: 1234, username: '' });
    expect(imageUser(img({ uid: { value: 0 } }))).toEqual(ROOT);
    expect(imageUser(img({ uid: null, username: 'nobody' }))).toEqual({ username: 'nobody' });
    expect(imageUser(img({ uid: null, username: '' }))).toEqual(ROOT);
    expect(imageUser(null)).toEqual(ROOT);
  });
});

describe('verifyRunAsNonRoot', () => {
  const c = (securityContext?: object) => ({ name: 'c', securityContext });
  it('lets anything run without runAsNonRoot: true', () => {
    expect(verifyRunAsNonRoot(pod(), c(), ROOT)).toBeUndefined();
    expect(verifyRunAsNonRoot(pod({ runAsNonRoot: true }), c({ runAsNonRoot: false }), ROOT)).toBeUndefined();
    expect(verifyRunAsNonRoot(pod({ runAsNonRoot: false, runAsUser: 0 }), c(), ROOT)).toBeUndefined();
  });
  it('refuses an explicit runAsUser 0, from the container or the pod', () => {
    expect(verifyRunAsNonRoot(pod(), c({ runAsNonRoot: true, runAsUser: 0 }), { uid: 1234, username: '' })).toBe(`container's runAsUser breaks non-root policy ${who}`);
    expect(verifyRunAsNonRoot(pod({ runAsNonRoot: true, runAsUser: 0 }), c(), ROOT)).toBe(`container's runAsUser breaks non-root policy ${who}`);
  });
  it("an explicit non-zero runAsUser wins over the image's user", () => {
    expect(verifyRunAsNonRoot(pod({ runAsNonRoot: true }), c({ runAsUser: 1000 }), ROOT)).toBeUndefined();
    expect(verifyRunAsNonRoot(pod({ runAsNonRoot: true, runAsUser: 0 }), c({ runAsUser: 1000 }), ROOT)).toBeUndefined();
  });
  it("checks the image's user without runAsUser: root (or none reported), a name, an invalid uid", () => {
    const p = pod({ runAsNonRoot: true });
    expect(verifyRunAsNonRoot(p, c(), ROOT)).toBe(`container has runAsNonRoot and image will run as root ${who}`);
    expect(verifyRunAsNonRoot(p, c(), imageUser(null))).toBe(`container has runAsNonRoot and image will run as root ${who}`);
    expect(verifyRunAsNonRoot(p, c(), { username: 'nobody' })).toBe(`container has runAsNonRoot and image has non-numeric user (nobody), cannot verify user is non-root ${who}`);
    expect(verifyRunAsNonRoot(p, c(), { uid: 4294967294, username: '' })).toBe(
      `container has runAsNonRoot and image has an invalid user id (4294967294). (Must be 1-(2147483647)): must be between 0 and 2147483647, inclusive ${who}`,
    );
    expect(verifyRunAsNonRoot(p, c(), { uid: 1234, username: '' })).toBeUndefined();
  });
});

describe("the runtime's user fields (determineEffectiveSecurityContext)", () => {
  const c = (securityContext?: object) => ({ name: 'c', securityContext });
  it("runAsUser, else the image's uid, else its name", () => {
    expect(runtimeUser(pod({ runAsUser: 1 }), c({ runAsUser: 2, runAsGroup: 3 }), { uid: 1234, username: '' })).toEqual({ runAsUser: { value: 2 }, runAsGroup: { value: 3 } });
    expect(runtimeUser(pod(), c(), { uid: 1234, username: '' })).toEqual({ runAsUser: { value: 1234 } });
    expect(runtimeUser(pod(), c(), ROOT)).toEqual({ runAsUser: { value: 0 } });
    expect(runtimeUser(pod(), c({ runAsGroup: 5 }), { username: 'www' })).toEqual({ runAsUsername: 'www', runAsGroup: { value: 5 } });
  });
  it("the pod's fsGroup then supplementalGroups as supplementary groups", () => {
    expect(runtimeUser(pod({ fsGroup: 7, supplementalGroups: [8, 9] }), c(), ROOT).supplementalGroups).toEqual([7, 8, 9]);
    expect(runtimeUser(pod({ supplementalGroups: [] }), c(), ROOT).supplementalGroups).toBeUndefined();
  });
});
