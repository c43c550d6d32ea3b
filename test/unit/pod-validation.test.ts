// kube 1.32's pod validation, create and update, through the Pod kind's
// strategy (defaults, then validate / validateUpdate): ValidatePodUpdate's
// rules and ValidatePodSpec's checks, with kube's paths and messages.

import { describe, expect, it } from 'vitest';
import { builtinDefinitions, builtinSchemaDefinitions } from '../../src/registry/kinds/index.js';
import type { ApiObject, FieldError, JSONValue, ResourceDefinition } from '../../src/registry/types.js';
import { applyDefaults } from '../../src/machinery/schema/defaults.js';

const kinds = builtinDefinitions('k8s.io');
const defs = builtinSchemaDefinitions('k8s.io');
const podDef: ResourceDefinition = kinds.find((d) => d.kind === 'Pod' && d.group === '')!;

type Spec = Record<string, JSONValue>;
const pod = (spec: Spec = {}): ApiObject => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' },
  spec: { containers: [{ name: 'app', image: 'nginx:1' }], ...spec },
});

/** the store's pipeline without admission: schema defaults, the strategy's defaults, validation */
function defaulted(o: ApiObject, def = podDef): ApiObject {
  const obj = structuredClone(o);
  applyDefaults(obj, def.schema, defs);
  def.strategy.default?.(obj);
  return obj;
}
const brief = (errs: FieldError[]): string[] => errs.map((e) => `${e.field}: ${e.message}`);
const create = (o: ApiObject, def = podDef): string[] => brief(def.strategy.validate!(defaulted(o, def)));
const update = (next: ApiObject, old: ApiObject, sub?: string): string[] => brief(podDef.strategy.validateUpdate!(defaulted(next), defaulted(old), sub));

describe('pod updates (ValidatePodUpdate)', () => {
  const FORBIDDEN = 'spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`';

  it('terminationGracePeriodSeconds may not change, but for a negative one set to 1', () => {
    const errs = update(pod({ terminationGracePeriodSeconds: 5 }), pod({ terminationGracePeriodSeconds: 30 }));
    expect(errs).toHaveLength(1);
    expect(errs[0]).toContain(FORBIDDEN);
    const negative = pod({ terminationGracePeriodSeconds: -1 });
    expect(update(pod({ terminationGracePeriodSeconds: 1 }), negative).filter((e) => e.startsWith('spec:'))).toEqual([]);
    expect(update(pod({ terminationGracePeriodSeconds: 2 }), negative).filter((e) => e.startsWith('spec:'))).toHaveLength(1);
  });

  it('spec.nodeName may not be set by an update (binding is pods/binding), but the binding write may', () => {
    const bound = pod({ nodeName: 'node-1' });
    expect(update(bound, pod())[0]).toContain(FORBIDDEN);
    expect(update(bound, pod(), 'binding')).toEqual([]);
    expect(update(pod({ nodeName: 'node-2' }), bound)[0]).toContain(FORBIDDEN);
  });

  it('the spec is validated on update as on create', () => {
    expect(update(pod({ activeDeadlineSeconds: -5 }), pod())).toContain('spec.activeDeadlineSeconds: Invalid value: -5: must be between 0 and 2147483647, inclusive');
    const badPort = pod({ containers: [{ name: 'app', image: 'nginx:1', ports: [{ containerPort: 70000 }] }] });
    expect(update(badPort, badPort)).toEqual(['spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive']);
  });

  it('activeDeadlineSeconds may be added or lowered, not raised or removed', () => {
    expect(update(pod({ activeDeadlineSeconds: 30 }), pod())).toEqual([]);
    expect(update(pod({ activeDeadlineSeconds: 10 }), pod({ activeDeadlineSeconds: 30 }))).toEqual([]);
    expect(update(pod({ activeDeadlineSeconds: 60 }), pod({ activeDeadlineSeconds: 30 }))).toEqual([
      'spec.activeDeadlineSeconds: Invalid value: 60: must be less than or equal to previous value',
    ]);
    expect(update(pod(), pod({ activeDeadlineSeconds: 30 }))).toEqual([
      'spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive integer to nil value',
    ]);
  });

  it('containers may not be added or removed; images may change', () => {
    const two = pod({ containers: [{ name: 'app', image: 'nginx:1' }, { name: 'b', image: 'busybox:1' }] });
    expect(update(two, pod())).toEqual(['spec.containers: Forbidden: pod updates may not add or remove containers']);
    expect(update(pod({ containers: [{ name: 'app', image: 'nginx:2' }] }), pod())).toEqual([]);
  });

  it('scheduling gates may be removed, not added; tolerations added, not changed', () => {
    const gated = pod({ schedulingGates: [{ name: 'example.com/a' }] });
    expect(update(pod(), gated)).toEqual([]);
    expect(update(pod({ schedulingGates: [{ name: 'example.com/a' }, { name: 'example.com/b' }] }), gated)).toEqual([
      "spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling gate 'example.com/b'",
    ]);
    const tol = { key: 'k', operator: 'Exists', effect: 'NoSchedule' };
    expect(update(pod({ tolerations: [tol, { key: 'j', operator: 'Exists' }] }), pod({ tolerations: [tol] }))).toEqual([]);
    expect(update(pod({ tolerations: [] }), pod({ tolerations: [tol] }))).toEqual([
      'spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds',
    ]);
  });

  it('a status write validates no spec (kube\'s status strategy)', () => {
    const bad = pod({ containers: [{ name: 'app', image: 'nginx:1', ports: [{ containerPort: 70000 }] }] });
    expect(update(bad, bad)).toHaveLength(1);
    expect(update(bad, bad, 'status')).toEqual([]);
  });
});

describe('httpGet defaults (SetDefaults_HTTPGetAction)', () => {
  const handler = { httpGet: { port: 8080 } };
  const container = { name: 'app', image: 'nginx:1', livenessProbe: { ...handler }, readinessProbe: { httpGet: { port: 80, path: '/ready' } }, lifecycle: { preStop: { ...handler }, postStart: { ...handler } } };
  type C = { livenessProbe: { httpGet: { path: string } }; readinessProbe: { httpGet: { path: string } }; lifecycle: { preStop: { httpGet: { path: string } }; postStart: { httpGet: { path: string } } } };
  const paths = (c: C): string[] => [c.livenessProbe.httpGet.path, c.readinessProbe.httpGet.path, c.lifecycle.preStop.httpGet.path, c.lifecycle.postStart.httpGet.path];

  it('a pod\'s probes and lifecycle handlers get path "/"', () => {
    const o = defaulted(pod({ containers: [structuredClone(container)] })) as unknown as { spec: { containers: C[] } };
    expect(paths(o.spec.containers[0]!)).toEqual(['/', '/ready', '/', '/']);
  });

  it('so do a workload\'s pod template\'s', () => {
    const deploy = kinds.find((d) => d.kind === 'Deployment' && d.group === 'apps')!;
    const o = defaulted({
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'default' },
      spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [structuredClone(container)] } } },
    }, deploy) as unknown as { spec: { template: { spec: { containers: C[] } } } };
    expect(paths(o.spec.template.spec.containers[0]!)).toEqual(['/', '/ready', '/', '/']);
  });
});
