// The pure rules behind sidecar containers: kubelet 1.32's getPhase (pod-phase.ts) and
// computeInitContainerActions (sidecars.ts), case by case.

import { describe, expect, it } from 'vitest';
import { podPhase, type PhaseStatus } from '../../src/nodeagent/pod-phase.js';
import type { PodSpec } from '../../src/nodeagent/pod-spec.js';
import type { ContainerStatus } from '../../src/nodeagent/runtime/types.js';
import { initActions } from '../../src/nodeagent/sidecars.js';

const spec = (restartPolicy: PodSpec['restartPolicy'], inits: string[], mains: string[]): PodSpec => ({
  restartPolicy,
  initContainers: inits.map((n) => ({ name: n.replace('*', ''), image: 'x', ...(n.endsWith('*') ? { restartPolicy: 'Always' as const } : {}) })),
  containers: mains.map((name) => ({ name, image: 'x' })),
});
const running = (name: string, started = true): PhaseStatus => ({ name, started, state: { running: {} } });
const done = (name: string, exitCode = 0): PhaseStatus => ({ name, state: { terminated: { exitCode } } });
const waiting = (name: string, lastExit?: number): PhaseStatus => ({ name, state: { waiting: {} }, ...(lastExit === undefined ? {} : { lastState: { terminated: { exitCode: lastExit } } }) });

describe('podPhase (kubelet getPhase) with sidecars', () => {
  const s = spec('Never', ['init', 'side*'], ['main']);
  it.each([
    ['a sidecar not started yet keeps the pod Pending', [done('init'), running('side', false)], [waiting('main')], 'Pending'],
    ['a started sidecar and a running main container: Running', [done('init'), running('side')], [running('main')], 'Running'],
    ['the main container finished but the sidecar still runs: Running until it is stopped', [done('init'), running('side')], [done('main')], 'Running'],
    ['main finished 0, sidecar stopped: Succeeded (the sidecar\'s exit code does not count)', [done('init'), done('side', 143)], [done('main')], 'Succeeded'],
    ['main failed, sidecar stopped: Failed', [done('init'), done('side', 0)], [done('main', 2)], 'Failed'],
    ['a sidecar waiting to be restarted does not hold the pod back', [done('init'), waiting('side', 1)], [running('main')], 'Running'],
    ['a regular init container failed under Never: Failed', [done('init', 1), waiting('side')], [waiting('main')], 'Failed'],
  ] as const)('%s', (_t, inits, mains, want) => {
    expect(podPhase(s, inits, mains)).toBe(want);
  });

  it('a main container finished under OnFailure with exit 1 restarts: Running; Always: Running', () => {
    expect(podPhase(spec('OnFailure', ['side*'], ['main']), [done('side')], [waiting('main', 1)])).toBe('Running');
    expect(podPhase(spec('Always', ['side*'], ['main']), [done('side')], [done('main', 0)])).toBe('Running');
  });
});

describe('initActions (kubelet computeInitContainerActions)', () => {
  let id = 0;
  const st = (name: string, state: ContainerStatus['state'], exitCode = 0): [string, ContainerStatus] => [name, { id: `${name}-${++id}`, state, exitCode, metadata: { name, attempt: 0 } } as ContainerStatus];
  const s = spec('Never', ['init-1', 'side*', 'init-2'], ['main']);
  const started = () => ({ started: true });

  it('nothing ran yet: the first init container starts', () => {
    expect(initActions(s.initContainers!, s.containers, new Map(), 'Never', started)).toMatchObject({ start: [0], initialized: false, failed: false });
  });
  it('after a regular init container exits 0 the sidecar starts; the next waits until the sidecar has started', () => {
    const latest = new Map([st('init-1', 'CONTAINER_EXITED'), st('side', 'CONTAINER_RUNNING')]);
    expect(initActions(s.initContainers!, s.containers, new Map([st('init-1', 'CONTAINER_EXITED')]), 'Never', started).start).toEqual([1]);
    expect(initActions(s.initContainers!, s.containers, latest, 'Never', () => ({ started: false })).start).toEqual([]);
    expect(initActions(s.initContainers!, s.containers, latest, 'Never', started).start).toEqual([2]);
  });
  it('the last init container done: initialized; an exited sidecar is restarted, a failed startup probe kills it', () => {
    const latest = new Map([st('init-1', 'CONTAINER_EXITED'), st('side', 'CONTAINER_EXITED', 1), st('init-2', 'CONTAINER_EXITED')]);
    expect(initActions(s.initContainers!, s.containers, latest, 'Never', started)).toMatchObject({ start: [1], initialized: true });
    const probing = new Map([st('init-1', 'CONTAINER_EXITED'), st('side', 'CONTAINER_RUNNING')]);
    expect(initActions(s.initContainers!, s.containers, probing, 'Never', () => ({ started: false, kill: 'startup' }))).toMatchObject({ start: [1], kill: [{ index: 1, why: 'startup' }] });
  });
  it('once a main container runs, only sidecars are kept: a missing sidecar is started again, regular init containers are not', () => {
    const latest = new Map([st('main', 'CONTAINER_RUNNING')]);
    expect(initActions(s.initContainers!, s.containers, latest, 'Never', started)).toMatchObject({ start: [1], initialized: true });
  });
  it('a regular init container that failed: the pod fails under Never, the container restarts otherwise', () => {
    const latest = new Map([st('init-1', 'CONTAINER_EXITED'), st('side', 'CONTAINER_RUNNING'), st('init-2', 'CONTAINER_EXITED', 1)]);
    expect(initActions(s.initContainers!, s.containers, latest, 'Never', started)).toMatchObject({ failed: true, start: [] });
    expect(initActions(s.initContainers!, s.containers, latest, 'OnFailure', started)).toMatchObject({ failed: false, start: [2] });
  });
});
