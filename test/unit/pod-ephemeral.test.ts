// kube's ephemeral-container rules (pod-ephemeral.ts): allow list, subPath,
// target, create, add-only updates, static pods.

import { describe, expect, it } from 'vitest';
import type { ApiObject } from '../../src/registry/types.js';
import { validateEphemeralContainers, validateEphemeralContainersUpdate, validateNoEphemeralOnCreate } from '../../src/registry/kinds/pod-ephemeral.js';

const pod = (ephemeralContainers: unknown[], annotations?: Record<string, string>): ApiObject => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', ...(annotations ? { annotations } : {}) },
  spec: { containers: [{ name: 'app', image: 'x' }], initContainers: [{ name: 'init', image: 'x' }], ephemeralContainers } as ApiObject['spec'],
}) as ApiObject;
const fields = (errs: { field: string; message: string }[]) => errs.map((e) => `${e.field}: ${e.message}`);

describe('validateEphemeralContainers', () => {
  it('accepts the fields kubectl debug sets and a target that is a container or init container', () => {
    expect(validateEphemeralContainers(pod([
      { name: 'd1', image: 'busybox', stdin: true, tty: true, targetContainerName: 'app', terminationMessagePolicy: 'File', securityContext: { privileged: true } },
      { name: 'd2', image: 'busybox', targetContainerName: 'init', volumeMounts: [{ name: 'v', mountPath: '/v' }] },
    ]))).toEqual([]);
  });

  it('refuses each field outside the allow list, subPath and subPathExpr, an unknown or ephemeral target', () => {
    expect(fields(validateEphemeralContainers(pod([
      { name: 'd1', image: 'busybox', lifecycle: { preStop: { exec: { command: ['x'] } } }, startupProbe: { exec: { command: ['x'] } }, resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'NotRequired' }] },
      { name: 'd2', image: 'busybox', targetContainerName: 'd1', volumeMounts: [{ name: 'v', mountPath: '/v', subPath: 'a', subPathExpr: '$(X)' }] },
    ])))).toEqual([
      'spec.ephemeralContainers[0].lifecycle: Forbidden: cannot be set for an Ephemeral Container',
      'spec.ephemeralContainers[0].startupProbe: Forbidden: cannot be set for an Ephemeral Container',
      'spec.ephemeralContainers[0].resizePolicy: Forbidden: cannot be set for an Ephemeral Container',
      'spec.ephemeralContainers[1].volumeMounts[0].subPath: Forbidden: cannot be set for an Ephemeral Container',
      'spec.ephemeralContainers[1].volumeMounts[0].subPathExpr: Forbidden: cannot be set for an Ephemeral Container',
      'spec.ephemeralContainers[1].targetContainerName: Not found: "d1"',
    ]);
  });

  it('counts empty values as unset, as kube compares with the zero value', () => {
    expect(validateEphemeralContainers(pod([{ name: 'd', image: 'b', ports: [], resources: {}, lifecycle: null }]))).toEqual([]);
  });
});

describe('ephemeral containers on create and update', () => {
  it('none on create', () => {
    expect(validateNoEphemeralOnCreate(pod([]))).toEqual([]);
    expect(fields(validateNoEphemeralOnCreate(pod([{ name: 'd', image: 'b' }])))).toEqual(['spec.ephemeralContainers: Forbidden: cannot be set on create']);
  });

  it('adds are allowed in any order; a change or a removal is Forbidden by name', () => {
    const a = { name: 'a', image: 'b', env: [{ name: 'X', value: '1' }] };
    const b = { name: 'b', image: 'b' };
    expect(validateEphemeralContainersUpdate(pod([b, { env: [{ value: '1', name: 'X' }], image: 'b', name: 'a' }]), pod([a]))).toEqual([]);
    expect(fields(validateEphemeralContainersUpdate(pod([{ ...a, image: 'c' }]), pod([a, b])))).toEqual([
      'spec.ephemeralContainers: Forbidden: existing ephemeral containers "a" may not be changed',
      'spec.ephemeralContainers: Forbidden: existing ephemeral containers "b" may not be removed',
    ]);
  });

  it('a mirror pod takes none', () => {
    const mirror = { 'kubernetes.io/config.mirror': 'abc' };
    expect(fields(validateEphemeralContainersUpdate(pod([{ name: 'd', image: 'b' }], mirror), pod([], mirror)))).toEqual([': Forbidden: static pods do not support ephemeral containers']);
  });
});
