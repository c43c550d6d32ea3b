// One container's API status from the runtime and what was reported before (kubelet 1.32's
// convertToAPIContainerStatuses): a Running container the runtime lost.
import { describe, expect, it } from 'vitest';
import { apiContainerStatus, type ContainerStatusInput } from '../../src/nodeagent/container-status.js';

const input = (reported: Record<string, unknown> | undefined, over: Partial<ContainerStatusInput> = {}): ContainerStatusInput => ({
  spec: { name: 'c', image: 'busybox' },
  message: () => undefined,
  runtimeName: 'orch-runtime-sim',
  defaultWaiting: 'ContainerCreating',
  reported,
  restarts: true,
  ...over,
});
const running = { name: 'c', restartCount: 2, lastState: {}, state: { running: { startedAt: '2026-01-01T00:00:00Z' } } };
const LOST = { exitCode: 137, reason: 'ContainerStatusUnknown', message: 'The container could not be located when the pod was deleted.  The container used to be Running' };

describe('a Running container the runtime no longer knows', () => {
  it('waits with lastState.terminated ContainerStatusUnknown (137) and one restart more', () => {
    const s = apiContainerStatus(input(running));
    expect(s).toMatchObject({ state: { waiting: { reason: 'ContainerCreating' } }, lastState: { terminated: LOST }, restartCount: 3, ready: false });
    // the next status (reported waiting) does not count it again
    expect(apiContainerStatus(input(s))).toMatchObject({ lastState: { terminated: LOST }, restartCount: 3 });
  });
  it('no restart counted while the pod is being deleted; nothing changed when a termination is already known', () => {
    expect(apiContainerStatus(input(running, { deleting: true }))).toMatchObject({ lastState: { terminated: LOST }, restartCount: 2 });
    const known = { ...running, lastState: { terminated: { exitCode: 1, reason: 'Error' } } };
    expect(apiContainerStatus(input(known))).toMatchObject({ lastState: { terminated: { exitCode: 1, reason: 'Error' } }, restartCount: 2 });
    // a container that was waiting, not running: waits as before
    expect(apiContainerStatus(input({ name: 'c', restartCount: 0, lastState: {}, state: { waiting: { reason: 'ContainerCreating' } } }))).toMatchObject({ lastState: {}, restartCount: 0 });
  });
});
