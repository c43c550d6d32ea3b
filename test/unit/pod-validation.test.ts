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
    // both kube's: ValidatePodSpec's range, then ValidatePodUpdate's
    expect(update(pod({ activeDeadlineSeconds: -5 }), pod())).toEqual([
      'spec.activeDeadlineSeconds: Invalid value: -5: must be between 1 and 2147483647, inclusive',
      'spec.activeDeadlineSeconds: Invalid value: -5: must be between 0 and 2147483647, inclusive',
    ]);
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

describe('pod spec validation (ValidatePodSpec)', () => {
  const c = (extra: Spec = {}): Spec => ({ name: 'app', image: 'nginx:1', ...extra });
  const probe = (extra: Spec = {}): Spec => ({ tcpSocket: { port: 80 }, ...extra });

  it('container ports: names are IANA_SVC_NAMEs unique within a container; host ports unique across containers', () => {
    expect(create(pod({ containers: [c({ ports: [{ name: 'http', containerPort: 80 }, { name: 'http', containerPort: 81 }] })] }))).toEqual([
      'spec.containers[0].ports[1].name: Duplicate value: "http"',
    ]);
    // kube checks names per container: two containers may both name a port "http"
    expect(create(pod({ containers: [c({ ports: [{ name: 'http', containerPort: 80 }] }), { name: 'b', image: 'b:1', ports: [{ name: 'http', containerPort: 81 }] }] }))).toEqual([]);
    expect(create(pod({ containers: [c({ ports: [{ name: 'a-very-long-port-name', containerPort: 80 }, { name: 'Web--', containerPort: 81 }, { name: '8080', containerPort: 82 }] })] }))).toEqual([
      'spec.containers[0].ports[0].name: Invalid value: "a-very-long-port-name": must be no more than 15 characters',
      'spec.containers[0].ports[1].name: Invalid value: "Web--": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
      'spec.containers[0].ports[1].name: Invalid value: "Web--": must not contain consecutive hyphens',
      'spec.containers[0].ports[1].name: Invalid value: "Web--": must not begin or end with a hyphen',
      'spec.containers[0].ports[2].name: Invalid value: "8080": must contain at least one letter (a-z)',
    ]);
    expect(create(pod({ containers: [c({ ports: [{ containerPort: 80, hostPort: 8080 }] }), { name: 'b', image: 'b:1', ports: [{ containerPort: 81, hostPort: 8080 }] }] }))).toEqual([
      'spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//8080"',
    ]);
    // UDP on the same host port is another port
    expect(create(pod({ containers: [c({ ports: [{ containerPort: 80, hostPort: 8080 }, { containerPort: 80, hostPort: 8080, protocol: 'UDP' }] })] }))).toEqual([]);
  });

  it('probes: one handler, non-negative counters, successThreshold 1 for liveness and startup', () => {
    expect(create(pod({ containers: [c({ livenessProbe: probe({ successThreshold: 2 }), startupProbe: probe({ successThreshold: 3 }), readinessProbe: probe({ successThreshold: 2 }) })] }))).toEqual([
      'spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1',
      'spec.containers[0].startupProbe.successThreshold: Invalid value: 3: must be 1',
    ]);
    expect(create(pod({ containers: [c({ readinessProbe: { periodSeconds: 5 } })] }))).toEqual([
      'spec.containers[0].readinessProbe: Required value: must specify a handler type',
    ]);
    expect(create(pod({ containers: [c({ readinessProbe: { exec: { command: ['true'] }, tcpSocket: { port: 80 } } })] }))).toEqual([
      'spec.containers[0].readinessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type',
    ]);
    expect(create(pod({ containers: [c({ livenessProbe: probe({ initialDelaySeconds: -1, periodSeconds: -2 }) })] }))).toEqual([
      'spec.containers[0].livenessProbe.initialDelaySeconds: Invalid value: -1: must be greater than or equal to 0',
      'spec.containers[0].livenessProbe.periodSeconds: Invalid value: -2: must be greater than or equal to 0',
    ]);
    expect(create(pod({ containers: [c({ livenessProbe: { httpGet: { port: 'not_a_name' } }, readinessProbe: probe({ terminationGracePeriodSeconds: 5 }), lifecycle: { preStop: {} } })] }))).toEqual([
      'spec.containers[0].livenessProbe.httpGet.port: Invalid value: "not_a_name": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
      'spec.containers[0].readinessProbe.terminationGracePeriodSeconds: Invalid value: 5: must not be set for readinessProbes',
      'spec.containers[0].lifecycle.preStop: Required value: must specify a handler type',
    ]);
  });

  it('volumes: one source (a second one named in kube\'s order), the sources\' required fields, modes, no ".."', () => {
    const mount = { volumeMounts: [{ name: 'v', mountPath: '/v' }] };
    expect(create(pod({ volumes: [{ name: 'v', emptyDir: {}, hostPath: { path: '/tmp' } }], containers: [c(mount)] }))).toEqual([
      'spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type',
      // as in kube, an invalid volume cannot be mounted
      'spec.containers[0].volumeMounts[0].name: Not found: "v"',
    ]);
    expect(create(pod({ volumes: [{ name: 'a', secret: {} }, { name: 'b', configMap: {} }, { name: 'c', hostPath: { path: '/var/../etc' } }] }))).toEqual([
      'spec.volumes[0].secret.secretName: Required value',
      'spec.volumes[1].configMap.name: Required value',
      "spec.volumes[2].hostPath.path: Invalid value: \"/var/../etc\": must not contain '..'",
    ]);
    expect(create(pod({ volumes: [{ name: 'a', secret: { secretName: 's', defaultMode: 512 } }, { name: 'b', configMap: { name: 'm', defaultMode: -1, items: [{ key: 'k', path: '../x' }] } }] }))).toEqual([
      'spec.volumes[0].secret.defaultMode: Invalid value: 512: must be a number between 0 and 0777 (octal), both inclusive',
      'spec.volumes[1].configMap.defaultMode: Invalid value: -1: must be a number between 0 and 0777 (octal), both inclusive',
      "spec.volumes[1].configMap.items[0].path: Invalid value: \"../x\": must not contain '..'",
    ]);
  });

  it('single fields: activeDeadlineSeconds, hostname, subdomain, nodeName, image whitespace, tolerations', () => {
    expect(create(pod({ activeDeadlineSeconds: 0 }))).toEqual(['spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive']);
    const names = create(pod({ hostname: 'Bad_Host', subdomain: 'a.b', nodeName: 'Node_1' }));
    expect(names.map((e) => e.split(': Invalid value: ')[0])).toEqual(['spec.nodeName', 'spec.hostname', 'spec.subdomain']);
    expect(names[1]).toMatch(/^spec\.hostname: Invalid value: "Bad_Host": a lowercase RFC 1123 label must consist of/);
    expect(names[0]).toMatch(/^spec\.nodeName: Invalid value: "Node_1": a lowercase RFC 1123 subdomain must consist of/);
    expect(create(pod({ containers: [c({ image: ' nginx:1' })] }))).toEqual(['spec.containers[0].image: Invalid value: " nginx:1": must not have leading or trailing whitespace']);
    expect(create(pod({ tolerations: [{ key: 'k', operator: 'Exists', value: 'v', effect: 'NoSchedule' }] }))).toEqual([
      'spec.tolerations[0].operator: Invalid value: core.Toleration{Key:"k", Operator:"Exists", Value:"v", Effect:"NoSchedule", TolerationSeconds:(*int64)(nil)}: value must be empty when `operator` is \'Exists\'',
    ]);
  });

  it('pod templates get the same checks under their path, but not the pod-only image whitespace one', () => {
    const deploy = kinds.find((d) => d.kind === 'Deployment' && d.group === 'apps')!;
    const d = (spec: Spec): ApiObject => ({
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'default' },
      spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [c()], ...spec } } },
    });
    expect(create(d({ containers: [c({ image: 'nginx:1 ', ports: [{ name: 'http', containerPort: 80 }, { name: 'http', containerPort: 81 }], livenessProbe: probe({ successThreshold: 2 }) })] }), deploy)).toEqual([
      'spec.template.spec.containers[0].ports[1].name: Duplicate value: "http"',
      'spec.template.spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1',
    ]);
    expect(create(d({ volumes: [{ name: 'v', secret: {} }] }), deploy)).toEqual(['spec.template.spec.volumes[0].secret.secretName: Required value']);
  });
});

describe('Go zero values written out (SetDefaults_Probe, SetDefaults_HTTPGetAction)', () => {
  it('a probe\'s 0 counters and an empty httpGet path are kube\'s defaults, in pods and templates', () => {
    const c = { name: 'app', image: 'nginx:1', livenessProbe: { httpGet: { port: 80, path: '' }, timeoutSeconds: 0, periodSeconds: 0, successThreshold: 0, failureThreshold: 0 }, lifecycle: { preStop: { httpGet: { port: 80, path: '' } } } };
    const want = { httpGet: { port: 80, path: '/', scheme: 'HTTP' }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 };
    const o = defaulted(pod({ containers: [structuredClone(c)] })) as unknown as { spec: { containers: Spec[] } };
    expect(o.spec.containers[0]!.livenessProbe).toEqual(want);
    expect(o.spec.containers[0]!.lifecycle).toEqual({ preStop: { httpGet: { port: 80, path: '/', scheme: 'HTTP' } } });
    const job = kinds.find((d) => d.kind === 'Job' && d.group === 'batch')!;
    const j = defaulted({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j', namespace: 'default' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [structuredClone(c)] } } } }, job) as unknown as { spec: { template: { spec: { containers: Spec[] } } } };
    expect(j.spec.template.spec.containers[0]!.livenessProbe).toEqual(want);
  });
});
