// Defaulting and validation of the workload kinds (issue #11 item 4), run
// through each kind's strategy as the store runs it.

import { describe, expect, it } from 'vitest';
import { builtinDefinitions, builtinSchemaDefinitions } from '../../src/registry/kinds/index.js';
import { decodeProtobufObject, encodeProtobufObjectReport } from '../../src/machinery/protobuf/codec.js';
import { kindExamples } from '../fixtures/kind-examples.js';
import { matchesLabelSelector } from '../../src/registry/kinds/workload-shared.js';
import { scaleOf } from '../../src/registry/scale.js';
import type { ApiObject, JSONValue, ResourceDefinition } from '../../src/registry/types.js';

const kinds = builtinDefinitions('orch.io');
const def = (group: string, kind: string, version = 'v1'): ResourceDefinition => kinds.find((d) => d.group === group && d.kind === kind && d.version === version)!;
const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };
type J = Record<string, any>;

function defaulted(d: ResourceDefinition, o: ApiObject): J {
  d.strategy.default?.(o);
  return o as J;
}

describe('workload defaults', () => {
  it('Deployment: replicas 1, RollingUpdate 25%/25%, history 10, deadline 600, pod template defaults', () => {
    const o = defaulted(def('apps', 'Deployment'), { metadata: { name: 'd' }, spec: { selector: { matchLabels: { app: 'web' } }, template: structuredClone(template) } });
    expect(o.spec.replicas).toBe(1);
    expect(o.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } });
    expect(o.spec.revisionHistoryLimit).toBe(10);
    expect(o.spec.progressDeadlineSeconds).toBe(600);
    expect(o.spec.template.spec).toMatchObject({ restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', schedulerName: 'default-scheduler', terminationGracePeriodSeconds: 30 });
    expect(o.spec.template.spec.containers[0]).toMatchObject({ imagePullPolicy: 'Always', terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' });
  });

  it('Deployment: a Recreate strategy gets no rollingUpdate block', () => {
    const o = defaulted(def('apps', 'Deployment'), { spec: { strategy: { type: 'Recreate' }, template: structuredClone(template) } });
    expect(o.spec.strategy).toEqual({ type: 'Recreate' });
  });

  it('Job: completions and parallelism 1, backoffLimit 6, NonIndexed; parallelism alone leaves completions unset', () => {
    const a = defaulted(def('batch', 'Job'), { spec: { template: structuredClone(template) } });
    expect(a.spec).toMatchObject({ completions: 1, parallelism: 1, backoffLimit: 6, completionMode: 'NonIndexed', suspend: false });
    const b = defaulted(def('batch', 'Job'), { spec: { parallelism: 3, template: structuredClone(template) } });
    expect(b.spec.completions).toBeUndefined();
    // the PodSpec default, as in kube: validation then asks for OnFailure or Never
    expect(b.spec.template.spec.restartPolicy).toBe('Always');
  });

  it('CronJob: Allow, history limits 3/1; the job template gets its pod template defaults, not the Job defaults', () => {
    const o = defaulted(def('batch', 'CronJob'), { spec: { schedule: '@hourly', jobTemplate: { spec: { template: structuredClone(template) } } } });
    expect(o.spec).toMatchObject({ concurrencyPolicy: 'Allow', suspend: false, successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 1 });
    expect(Object.keys(o.spec.jobTemplate.spec)).toEqual(['template']);
    expect(o.spec.jobTemplate.spec.template.spec).toMatchObject({ dnsPolicy: 'ClusterFirst', terminationGracePeriodSeconds: 30 });
  });

  it('HPA v2: minReplicas 1 and the 80% CPU metric', () => {
    const o = defaulted(def('autoscaling', 'HorizontalPodAutoscaler', 'v2'), { spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, maxReplicas: 3 } });
    expect(o.spec.minReplicas).toBe(1);
    expect(o.spec.metrics).toEqual([{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }]);
  });

  it('ReplicationController: selector and labels from the template', () => {
    const o = defaulted(def('', 'ReplicationController'), { metadata: { name: 'rc' }, spec: { template: structuredClone(template) } });
    expect(o.spec.selector).toEqual({ app: 'web' });
    expect(o.metadata.labels).toEqual({ app: 'web' });
  });
});

describe('workload validation', () => {
  const fields = (d: ResourceDefinition, o: ApiObject) => (d.strategy.validate?.(o) ?? []).map((e) => `${e.type} ${e.field}`);

  it('Deployment: selector required and must match the template labels; selector immutable', () => {
    const d = def('apps', 'Deployment');
    expect(fields(d, { spec: { template: template } })).toEqual(['FieldValueRequired spec.selector']);
    expect(fields(d, { spec: { selector: { matchLabels: { app: 'other' } }, template } })).toEqual(['FieldValueInvalid spec.template.metadata.labels']);
    expect(fields(d, { spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: template.metadata, spec: { containers: [] } } } })).toEqual(['FieldValueRequired spec.template.spec.containers']);
    const old: ApiObject = { spec: { selector: { matchLabels: { app: 'web' } }, template } };
    expect(d.strategy.validateUpdate!({ spec: { selector: { matchLabels: { app: 'web', x: 'y' } }, template: { ...template, metadata: { labels: { app: 'web', x: 'y' } } } } }, old).map((e) => e.field)).toEqual(['spec.selector']);
  });

  it("a template's pod spec is validated as a pod's, under the template's path (kube's ValidatePodTemplateSpec)", () => {
    const bad = { metadata: template.metadata, spec: { containers: [{ name: 'Bad_Name', image: '', ports: [{ containerPort: 70000 }] }] } };
    const spec = { selector: { matchLabels: { app: 'web' } }, template: bad };
    const messages = (d: ResourceDefinition, o: ApiObject) => (d.strategy.validate?.(o) ?? []).map((e) => `${e.field}: ${e.message}`);
    const podErrors = (at: string) => [
      `${at}.spec.containers[0].name: Invalid value: "Bad_Name": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
      `${at}.spec.containers[0].image: Required value`,
      `${at}.spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive`,
    ];
    for (const k of ['Deployment', 'ReplicaSet', 'DaemonSet']) expect(messages(def('apps', k), { spec })).toEqual(podErrors('spec.template'));
    // kube leaves a StatefulSet's pod spec to its pods (volumeClaimTemplates add volumes)
    expect(messages(def('apps', 'StatefulSet'), { spec })).toEqual([]);
    expect(messages(def('', 'ReplicationController'), { spec: { selector: { app: 'web' }, template: bad } })).toEqual(podErrors('spec.template'));
    expect(messages(def('batch', 'Job'), { spec: { template: { ...bad, spec: { ...bad.spec, restartPolicy: 'Never' } } } })).toEqual(podErrors('spec.template'));
    expect(messages(def('batch', 'CronJob'), { spec: { schedule: '@daily', jobTemplate: { spec: { template: { ...bad, spec: { ...bad.spec, restartPolicy: 'Never' } } } } } })).toEqual(podErrors('spec.jobTemplate.spec.template'));
  });

  it("selectors and template metadata: kube's ValidateLabelSelector and ValidateLabels/Annotations", () => {
    const d = def('apps', 'Deployment');
    const messages = (spec: Record<string, JSONValue>) => (d.strategy.validate?.({ spec }) ?? []).map((e) => `${e.field}: ${e.message}`);
    const sel = messages({ selector: { matchLabels: { a: 'b' }, matchExpressions: [{ key: 'x', operator: 'Bogus' }, { key: 'y', operator: 'In' }, { key: 'z', operator: 'Exists', values: ['v'] }] }, template });
    expect(sel).toEqual([
      'spec.selector.matchExpressions[0].operator: Invalid value: "Bogus": not a valid selector operator',
      "spec.selector.matchExpressions[1].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      "spec.selector.matchExpressions[2].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
    ]);
    const badKey = messages({ selector: { matchLabels: { 'bad key!': 'b' } }, template });
    expect(badKey).toHaveLength(1);
    expect(badKey[0]).toMatch(/^spec\.selector\.matchLabels: Invalid value: "bad key!": name part must consist of alphanumeric characters/);
    const meta = messages({ selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web', 'bad key!': 'v' }, annotations: { 'also bad!': 'x' } }, spec: template.spec } });
    expect(meta.map((m) => m.slice(0, m.indexOf(': name part')))).toEqual([
      'spec.template.metadata.labels: Invalid value: "bad key!"',
      'spec.template.metadata.annotations: Invalid value: "also bad!"',
    ]);
  });

  it("pods: env names and valueFrom, nodeSelector labels (kube 1.32's ValidateEnv with relaxed names)", () => {
    const d = def('', 'Pod');
    const messages = (spec: Record<string, JSONValue>) => (d.strategy.validate?.({ spec }) ?? []).map((e) => `${e.field}: ${e.message}`);
    const env: JSONValue[] = [
      { name: '1BAD.ok-in-1.32', value: 'x' }, { name: 'A=B' },
      { name: 'C', value: 'x', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'D', valueFrom: {} },
      { name: 'E', valueFrom: { fieldRef: { fieldPath: 'metadata.name' }, secretKeyRef: { name: 's', key: 'k' } } },
    ];
    expect(messages({ containers: [{ name: 'c', image: 'nginx', env }], nodeSelector: { zone: 'a' } })).toEqual([
      `spec.containers[0].env[1].name: Invalid value: "A=B": a valid environment variable name must consist only of printable ASCII characters other than '='`,
      'spec.containers[0].env[2].valueFrom: Invalid value: "": may not be specified when `value` is not empty',
      'spec.containers[0].env[3].valueFrom: Invalid value: "": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`',
      'spec.containers[0].env[4].valueFrom: Invalid value: "": may not have more than one field specified at a time',
    ]);
    const ns = messages({ containers: [{ name: 'c', image: 'nginx' }], nodeSelector: { 'bad key!': 'x' } });
    expect(ns).toHaveLength(1);
    expect(ns[0]).toMatch(/^spec\.nodeSelector: Invalid value: "bad key!": name part must consist/);
  });

  it('long-running kinds: restartPolicy Always only, no activeDeadlineSeconds, no ephemeral containers', () => {
    const t = (extra: Record<string, unknown>) => ({ selector: { matchLabels: { app: 'web' } }, template: { ...template, spec: { ...template.spec, ...extra } } });
    const messages = (d: ResourceDefinition, o: ApiObject) => (d.strategy.validate?.(o) ?? []).map((e) => `${e.field}: ${e.message}`);
    expect(messages(def('apps', 'Deployment'), { spec: t({ restartPolicy: 'Never' }) })).toEqual(['spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"']);
    expect(messages(def('apps', 'Deployment'), { spec: t({ activeDeadlineSeconds: 5 }) })).toEqual(['spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported']);
    expect(messages(def('apps', 'StatefulSet'), { spec: t({ activeDeadlineSeconds: 5 }) })).toEqual(['spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in StatefulSet is not Supported']);
    expect(messages(def('apps', 'DaemonSet'), { spec: t({ ephemeralContainers: [{ name: 'dbg', image: 'busybox' }] }) })).toEqual(['spec.template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template']);
  });

  it("negative replicas: kube's handwritten message, not the schema's", () => {
    const spec = { replicas: -1, selector: { matchLabels: { app: 'web' } }, template };
    for (const k of ['Deployment', 'ReplicaSet', 'StatefulSet']) {
      expect((def('apps', k).strategy.validate?.({ spec }) ?? []).map((e) => `${e.field}: ${e.message}`)).toEqual(['spec.replicas: Invalid value: -1: must be greater than or equal to 0']);
    }
    expect((def('', 'ReplicationController').strategy.validate?.({ spec: { replicas: -1, selector: { app: 'web' }, template } }) ?? []).map((e) => e.message)).toEqual(['Invalid value: -1: must be greater than or equal to 0']);
  });

  it("Deployment: the strategy and counters, with kube's messages", () => {
    const d = def('apps', 'Deployment');
    const base = { selector: { matchLabels: { app: 'web' } }, template };
    const messages = (spec: Record<string, unknown>) => (d.strategy.validate?.({ spec: { ...base, ...spec } }) ?? []).map((e) => `${e.field}: ${e.message}`);
    expect(messages({ strategy: { type: 'Recreate', rollingUpdate: { maxSurge: 1 } } })).toEqual(["spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"]);
    expect(messages({ strategy: { type: 'Recreate' } })).toEqual([]);
    expect(messages({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 0 } } })).toEqual(['spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:""}: may not be 0 when `maxSurge` is 0']);
    expect(messages({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '150%', maxSurge: 1 } } })).toEqual(['spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}: must not be greater than 100%']);
    expect(messages({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 'half', maxSurge: -1 } } })).toEqual([
      `spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"half"}: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')`,
      'spec.strategy.rollingUpdate.maxSurge: Invalid value: -1: must be greater than or equal to 0',
    ]);
    expect(messages({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } } })).toEqual([]);
    expect(messages({ minReadySeconds: 700, progressDeadlineSeconds: 600 })).toEqual(['spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds']);
    expect(messages({ minReadySeconds: -1, revisionHistoryLimit: -1 })).toEqual([
      'spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0',
      'spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0',
    ]);
  });

  it('DaemonSet and StatefulSet: rolling update fields and counters', () => {
    const base = { selector: { matchLabels: { app: 'web' } }, template };
    const messages = (d: ResourceDefinition, spec: Record<string, unknown>) => (d.strategy.validate?.({ spec: { ...base, ...spec } }) ?? []).map((e) => `${e.field}: ${e.message}`);
    const ds = (ru: Record<string, unknown>) => messages(def('apps', 'DaemonSet'), { updateStrategy: { type: 'RollingUpdate', rollingUpdate: ru } });
    expect(ds({ maxUnavailable: 0, maxSurge: 0 })).toEqual(['spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0']);
    expect(ds({ maxUnavailable: 1, maxSurge: '25%' })).toEqual(['spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"25%"}: may not be set when maxUnavailable is non-zero']);
    expect(ds({ maxUnavailable: 0, maxSurge: '200%' })).toEqual(['spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"200%"}: must not be greater than 100%']);
    expect(ds({ maxUnavailable: 1, maxSurge: 0 })).toEqual([]);
    expect(messages(def('apps', 'StatefulSet'), { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: -1 } }, minReadySeconds: -2 })).toEqual([
      'spec.minReadySeconds: Invalid value: -2: must be greater than or equal to 0',
      'spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0',
    ]);
  });

  it('Job updates: completions immutable unless Indexed (then only with parallelism); the template immutable but for a suspended, unstarted job', () => {
    const d = def('batch', 'Job');
    const job = (spec: Record<string, JSONValue>, status: Record<string, JSONValue> = {}): ApiObject => ({
      spec: { completions: 2, parallelism: 2, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } }, ...spec },
      status,
    });
    const upd = (o: ApiObject, old: ApiObject) => (d.strategy.validateUpdate?.(o, old) ?? []).map((e) => `${e.field}: ${e.message.replace(/Invalid value: .*: /, '')}`);
    expect(upd(job({ completions: 5 }), job({}))).toEqual(['spec.completions: field is immutable']);
    expect(upd(job({ completionMode: 'Indexed', completions: 5, parallelism: 5 }), job({ completionMode: 'Indexed' }))).toEqual([]);
    expect(upd(job({ completionMode: 'Indexed', completions: 5 }), job({ completionMode: 'Indexed' }))).toEqual(['spec.completions: can only be modified in tandem with spec.parallelism']);
    const image = (img: string, extra: Record<string, unknown> = {}) => ({ metadata: { labels: { a: 'b' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: img }], ...extra } });
    expect(upd(job({ template: image('busybox:2') }), job({}))).toEqual(['spec.template: field is immutable']);
    // suspended and never started: the scheduling directives may change, nothing else
    expect(upd(job({ suspend: true, template: image('busybox', { nodeSelector: { zone: 'a' } }) }), job({ suspend: true }))).toEqual([]);
    expect(upd(job({ suspend: true, template: image('busybox', { nodeSelector: { zone: 'a' } }) }), job({ suspend: true }, { startTime: '2026-01-01T00:00:00Z' }))).toEqual(['spec.template: field is immutable']);
    expect(upd(job({ suspend: true, template: image('busybox:2') }), job({ suspend: true }))).toEqual(['spec.template: field is immutable']);
  });

  it('Job: restartPolicy Always or none is required to be OnFailure or Never; another value is not supported', () => {
    const d = def('batch', 'Job');
    const withPolicy = (restartPolicy?: string) => ({ spec: { template: { ...template, spec: { ...template.spec, ...(restartPolicy ? { restartPolicy } : {}) } } } });
    expect(fields(d, withPolicy('Always'))).toEqual(['FieldValueRequired spec.template.spec.restartPolicy']);
    expect(fields(d, withPolicy())).toEqual(['FieldValueRequired spec.template.spec.restartPolicy']);
    expect(fields(d, withPolicy('Sometimes'))).toEqual(['FieldValueNotSupported spec.template.spec.restartPolicy']);
  });

  it('CronJob: an unparseable schedule', () => {
    const d = def('batch', 'CronJob');
    const spec = (schedule: string) => ({ spec: { schedule, jobTemplate: { spec: { template: { ...template, spec: { ...template.spec, restartPolicy: 'Never' } } } } } });
    expect(fields(d, spec('every day'))).toEqual(['FieldValueInvalid spec.schedule']);
    expect(fields(d, spec('*/5 * * * *'))).toEqual([]);
    expect(fields(d, spec('@daily'))).toEqual([]);
  });

  it('PDB: minAvailable and maxUnavailable are exclusive; percentages need %', () => {
    const d = def('policy', 'PodDisruptionBudget');
    expect(fields(d, { spec: { minAvailable: 1, maxUnavailable: 1 } })).toEqual(['FieldValueInvalid spec']);
    expect(fields(d, { spec: { maxUnavailable: 'half' } })).toEqual(['FieldValueInvalid spec.maxUnavailable']);
    expect(fields(d, { spec: { maxUnavailable: '50%' } })).toEqual([]);
  });

  it('HPA: maxReplicas below minReplicas', () => {
    expect(fields(def('autoscaling', 'HorizontalPodAutoscaler', 'v2'), { spec: { minReplicas: 5, maxReplicas: 2 } })).toEqual(['FieldValueInvalid spec.maxReplicas']);
  });

  it("Ingress hosts: DNS names, not IPs; a wildcard only as the first label (kube's messages)", () => {
    const d = def('networking.orch.io', 'Ingress');
    const host = (h: string) => (d.strategy.validate?.({ spec: { rules: [{ host: h }] } }) ?? []).map((e) => `${e.field}: ${e.message}`);
    expect(host('foo.example.com')).toEqual([]);
    expect(host('*.example.com')).toEqual([]);
    expect(host('Foo_.com')).toEqual([`spec.rules[0].host: Invalid value: "Foo_.com": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`]);
    expect(host('10.0.0.1')).toEqual(['spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address']);
    expect(host('foo.*.com')[0]).toMatch(/^spec\.rules\[0\]\.host: Invalid value: "foo\.\*\.com": a wildcard DNS-1123 subdomain must start with '\*\.'/);
  });

  it("Service: one port per protocol and port, targetPort in range, externalName a DNS name (kube's messages)", () => {
    const d = def('', 'Service');
    const messages = (spec: Record<string, JSONValue>) => (d.strategy.validate?.({ spec }) ?? []).map((e) => `${e.field}: ${e.message}`);
    expect(messages({ ports: [{ name: 'a', port: 80 }, { name: 'b', port: 80, targetPort: 81 }] })).toEqual([
      'spec.ports[1]: Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}',
    ]);
    expect(messages({ ports: [{ name: 'a', port: 53, protocol: 'TCP' }, { name: 'b', port: 53, protocol: 'UDP' }] })).toEqual([]);
    expect(messages({ ports: [{ port: 80, targetPort: 70000 }] })).toEqual(['spec.ports[0].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive']);
    expect(messages({ type: 'ExternalName', externalName: 'db.example.com.' })).toEqual([]);
    expect(messages({ type: 'ExternalName', externalName: 'bad_name!' })[0]).toMatch(/^spec\.externalName: Invalid value: "bad_name!": a lowercase RFC 1123 subdomain/);
  });

  it("Lease: a positive duration, non-negative transitions (kube's messages)", () => {
    const d = kinds.find((x) => x.kind === 'Lease')!;
    expect((d.strategy.validate?.({ spec: { leaseDurationSeconds: 0, leaseTransitions: -1 } }) ?? []).map((e) => `${e.field}: ${e.message}`)).toEqual([
      'spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0',
      'spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0',
    ]);
  });

  it("RBAC bindings: kube's v1 defaults (the RBAC group for roleRef, Users and Groups) and subject checks", () => {
    const d = kinds.find((x) => x.kind === 'RoleBinding')!;
    const rb: ApiObject = { roleRef: { kind: 'Role', name: 'r' }, subjects: [{ kind: 'User', name: 'alice' }, { kind: 'Group', name: 'g' }, { kind: 'ServiceAccount', name: 'sa' }] };
    d.strategy.default?.(rb);
    expect(rb.roleRef).toEqual({ kind: 'Role', name: 'r', apiGroup: 'rbac.authorization.orch.io' });
    expect((rb.subjects as { apiGroup?: string }[]).map((x) => x.apiGroup)).toEqual(['rbac.authorization.orch.io', 'rbac.authorization.orch.io', undefined]);
    expect(d.strategy.validate?.(rb)).toEqual([]);
    const bad: ApiObject = { roleRef: { kind: 'Role', name: 'r' }, subjects: [{ kind: 'User', name: '' }, { kind: 'ServiceAccount', name: 'Bad_SA' }] };
    d.strategy.default?.(bad);
    expect((d.strategy.validate?.(bad) ?? []).map((e) => `${e.field}: ${e.message.slice(0, 40)}`)).toEqual([
      'subjects[0].name: Required value',
      'subjects[1].name: Invalid value: "Bad_SA": a lowercase RFC',
    ]);
  });

  it('ResourceQuota: no negative hard limit', () => {
    const d = def('', 'ResourceQuota');
    expect((d.strategy.validate?.({ spec: { hard: { pods: '-1', cpu: '2' } } }) ?? []).map((e) => `${e.field}: ${e.message}`)).toEqual(['spec.hard[pods]: Invalid value: "-1": must be greater than or equal to 0']);
  });

  it('Ingress: neither rules nor a default backend; relative paths', () => {
    const d = def('networking.orch.io', 'Ingress');
    expect(fields(d, { spec: {} })).toEqual(['FieldValueInvalid spec']);
    expect(fields(d, { spec: { rules: [{ http: { paths: [{ path: 'x', pathType: 'Prefix', backend: {} }] } }] } })).toEqual(['FieldValueInvalid spec.rules[0].http.paths[0].path']);
  });
});

describe('label selectors and Scale', () => {
  it('matches matchLabels and every matchExpressions operator', () => {
    const labels = { app: 'web', tier: 'fe' };
    const sel = (s: Record<string, JSONValue>) => matchesLabelSelector(s, labels);
    expect(sel({ matchLabels: { app: 'web' } })).toBe(true);
    expect(sel({ matchLabels: { app: 'db' } })).toBe(false);
    expect(sel({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['fe', 'be'] }] })).toBe(true);
    expect(sel({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['fe'] }] })).toBe(false);
    expect(sel({ matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] })).toBe(true);
    expect(sel({ matchExpressions: [{ key: 'zone', operator: 'Exists' }] })).toBe(false);
  });

  it('builds an autoscaling/v1 Scale from the declared paths', () => {
    const d = def('apps', 'Deployment');
    const s = scaleOf(d, d.scale!, {
      metadata: { name: 'web', namespace: 'ns', uid: 'u', resourceVersion: '7', labels: { a: 'b' } },
      spec: { replicas: 4, selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['fe', 'be'] }] } },
      status: { replicas: 2 },
    }) as J;
    expect(s).toEqual({
      kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: { name: 'web', namespace: 'ns', uid: 'u', resourceVersion: '7' },
      spec: { replicas: 4 }, status: { replicas: 2, selector: 'app=web,tier in (fe,be)' },
    });
    const rc = def('', 'ReplicationController');
    expect((scaleOf(rc, rc.scale!, { spec: { replicas: 1, selector: { app: 'old' } } }) as J).status).toEqual({ replicas: 0, selector: 'app=old' });
  });
});

describe('protobuf field numbers', () => {
  const defs = builtinSchemaDefinitions('orch.io');
  // a PersistentVolume's volume sources are kept as given (not numbered), so it answers in JSON
  it.each(kindExamples.filter(([, k]) => k !== 'PersistentVolume'))('%s %s round-trips through protobuf without skipping a field', (group, k, example) => {
    const d = kinds.find((x) => x.group === group && x.kind === k && example.apiVersion === (group ? `${group}/${x.version}` : x.version))!;
    const { apiVersion: _a, kind: _k, ...obj } = structuredClone(example) as J;
    d.strategy.default?.(obj);
    const { bytes, skipped } = encodeProtobufObjectReport(obj, d, defs);
    expect(skipped).toEqual([]);
    expect(decodeProtobufObject(bytes, d, defs)).toEqual(obj);
  });
});
