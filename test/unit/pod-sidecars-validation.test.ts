// kube 1.32's validation of the container-level restartPolicy (sidecar containers, KEP-753):
// ValidatePodSpec's messages and field paths, for pods and for workload templates.

import { describe, expect, it } from 'vitest';
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
