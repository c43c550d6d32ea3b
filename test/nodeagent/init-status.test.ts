// kubelet's reporting of init containers (src/nodeagent/init-status.ts): the
// default waiting reason, init container readiness, the Initialized condition.

import { describe, expect, it } from 'vitest';
import { defaultWaitingReason, initContainerReady, initializedCondition } from '../../src/nodeagent/init-status.js';

const waiting = (name: string, reason = 'PodInitializing') => ({ name, state: { waiting: { reason } } });
const exited = (name: string, exitCode: number) => ({ name, state: { terminated: { exitCode } } });
const running = (name: string) => ({ name, state: { running: { startedAt: 'x' } } });

describe('init container status', () => {
  it('containers not created wait with PodInitializing in a pod with init containers, else ContainerCreating', () => {
    expect(defaultWaitingReason(true)).toBe('PodInitializing');
    expect(defaultWaitingReason(false)).toBe('ContainerCreating');
  });

  it('an init container is ready once it exited 0', () => {
    expect(initContainerReady(exited('a', 0))).toBe(true);
    expect(initContainerReady(exited('a', 1))).toBe(false);
    expect(initContainerReady(running('a'))).toBe(false);
    expect(initContainerReady(waiting('a'))).toBe(false);
  });

  it('Initialized: incomplete init containers named in order, True once all exited 0', () => {
    expect(initializedCondition([waiting('init1', 'CrashLoopBackOff'), waiting('init2')], [waiting('run1')], 'Pending')).toEqual({
      type: 'Initialized', status: 'False', reason: 'ContainersNotInitialized', message: 'containers with incomplete status: [init1 init2]',
    });
    expect(initializedCondition([exited('init1', 0), exited('init2', 1)], [waiting('run1')], 'Failed')).toMatchObject({ status: 'False', message: 'containers with incomplete status: [init2]' });
    expect(initializedCondition([exited('init1', 0)], [waiting('run1')], 'Pending')).toEqual({ type: 'Initialized', status: 'True' });
    expect(initializedCondition([], [waiting('run1')], 'Pending')).toEqual({ type: 'Initialized', status: 'True' });
  });

  it('Initialized: PodCompleted for a Succeeded pod; True once an app container started', () => {
    expect(initializedCondition([exited('init1', 0)], [exited('run1', 0)], 'Succeeded')).toEqual({ type: 'Initialized', status: 'True', reason: 'PodCompleted' });
    // the init container's own record is gone (a restarted runtime), the app container ran
    expect(initializedCondition([waiting('init1')], [running('run1')], 'Running')).toEqual({ type: 'Initialized', status: 'True' });
  });
});
