// kube 1.32's validation of the container-level restartPolicy (sidecar containers, KEP-753):
// ValidatePodSpec's messages and field paths, for pods and for workload templates; and kubectl's READY and
// RESTARTS columns of a pod with sidecars.

import { describe, expect, it } from 'vitest';
import { builtinDefinitions } from '../../src/registry/kinds/index.js';
import { validatePod } from '../../src/registry/kinds/pod-validation.js';
import { validatePodTemplate } from '../../src/registry/kinds/workload-validation.js';
import type { ApiObject } from '../../src/registry/types.js';

const probe = { exec: { command: ['true'] } };
const pod = (spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'main', image: 'busybox' }], ...spec } }) as unknown as ApiObject;
const errors = (o: ApiObject) => validatePod(o).map((e) => `${e.field}: ${e.message}`);

describe('container restartPolicy (sidecars)', () => {
  it('an init container may set restartPolicy Always, with probes and hooks', () => {
    const sidecar = { name: 'side', image: 'busybox', restartPolicy: 'Always', startupProbe: probe, livenessProbe: probe, readinessProbe: probe, lifecycle: { preStop: { sleep: { seconds: 1 } } } };
    expect(errors(pod({ initContainers: [sidecar] }))).toEqual([]);
  });

  it('an init container may set no other restartPolicy (Unsupported value)', () => {
    const e = validatePod(pod({ initContainers: [{ name: 'i', image: 'busybox', restartPolicy: 'OnFailure' }] }));
    expect(e).toEqual([{ field: 'spec.initContainers[0].restartPolicy', type: 'FieldValueNotSupported', message: 'Unsupported value: "OnFailure": supported values: "Always"' }]);
  });

  it('a regular init container may have neither probes nor lifecycle hooks (Forbidden), each named', () => {
    const init = { name: 'i', image: 'busybox', livenessProbe: probe, readinessProbe: probe, startupProbe: probe, lifecycle: { postStart: probe } };
    expect(errors(pod({ initContainers: [{ name: 'ok', image: 'busybox' }, init] }))).toEqual([
      'spec.initContainers[1].lifecycle: Forbidden: may not be set for init containers without restartPolicy=Always',
      'spec.initContainers[1].livenessProbe: Forbidden: may not be set for init containers without restartPolicy=Always',
      'spec.initContainers[1].readinessProbe: Forbidden: may not be set for init containers without restartPolicy=Always',
      'spec.initContainers[1].startupProbe: Forbidden: may not be set for init containers without restartPolicy=Always',
    ]);
    // a restartPolicy that is not Always does not make the probes allowed either
    expect(errors(pod({ initContainers: [{ name: 'i', image: 'busybox', restartPolicy: 'Never', readinessProbe: probe }] }))).toEqual([
      'spec.initContainers[0].restartPolicy: Unsupported value: "Never": supported values: "Always"',
      'spec.initContainers[0].readinessProbe: Forbidden: may not be set for init containers without restartPolicy=Always',
    ]);
  });

  it('a regular container may not set restartPolicy (Forbidden)', () => {
    const o = pod({});
    (o.spec as { containers: Record<string, unknown>[] }).containers[0]!.restartPolicy = 'Always';
    expect(errors(o)).toEqual(['spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers']);
  });

  it('a workload template is checked the same way, under its path', () => {
    const tmpl = { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox' }], initContainers: [{ name: 'i', image: 'busybox', restartPolicy: 'Sometimes' }] } };
    expect(validatePodTemplate(tmpl as never, 'spec.template', 'Job').map((e) => `${e.field}: ${e.message}`)).toEqual([
      'spec.template.spec.initContainers[0].restartPolicy: Unsupported value: "Sometimes": supported values: "Always"',
    ]);
  });
});

describe('kubectl get pods columns with sidecars (kube printPod)', () => {
  const kinds = builtinDefinitions('orch.io');
  const def = kinds.find((d) => d.group === '' && d.kind === 'Pod')!;
  const cells = (o: ApiObject) => Object.fromEntries(def.strategy.columns!.map((c) => [c.name, c.cell(o, 0)]));
  const spec = { initContainers: [{ name: 'init', image: 'x' }, { name: 'side', image: 'x', restartPolicy: 'Always' }], containers: [{ name: 'main', image: 'x' }] };

  it('READY counts started, ready sidecars; RESTARTS counts sidecars and containers once initialized', () => {
    const running = {
      spec,
      status: {
        phase: 'Running',
        conditions: [{ type: 'Initialized', status: 'True' }, { type: 'Ready', status: 'True' }],
        initContainerStatuses: [
          { name: 'init', restartCount: 4, state: { terminated: { exitCode: 0, reason: 'Completed' } } },
          { name: 'side', restartCount: 2, started: true, ready: true, state: { running: {} } },
        ],
        containerStatuses: [{ name: 'main', restartCount: 1, ready: true, state: { running: {} } }],
      },
    } as unknown as ApiObject;
    expect(cells(running)).toMatchObject({ Ready: '2/2', Status: 'Running', Restarts: '3' });
  });

  it('while a sidecar has not started the pod is initializing: Init:1/2, the init containers\' restarts', () => {
    const starting = {
      spec,
      status: {
        phase: 'Pending',
        conditions: [{ type: 'Initialized', status: 'False' }],
        initContainerStatuses: [
          { name: 'init', restartCount: 1, state: { terminated: { exitCode: 0, reason: 'Completed' } } },
          { name: 'side', restartCount: 0, started: false, ready: false, state: { running: {} } },
        ],
        containerStatuses: [{ name: 'main', restartCount: 0, ready: false, state: { waiting: { reason: 'PodInitializing' } } }],
      },
    } as unknown as ApiObject;
    expect(cells(starting)).toMatchObject({ Ready: '0/2', Status: 'Init:1/2', Restarts: '1' });
  });
});
