// NodeRestriction admission (spec 001_bdb487117be0ea8a.txt §5.15) and the
// admission plugin flags.
import { describe, expect, it } from 'vitest';
import { StatusError } from '../../src/core/errors.js';
import { systemClock } from '../../src/core/clock.js';
import type { WriteOptions } from '../../src/registry/generic-store.js';
import type { ApiObject, ResourceDefinition } from '../../src/registry/types.js';
import { forbiddenLabelChanges, nodeRestrictionHooks } from '../../src/auth/authz/node/restriction.js';
import { admissionHooks, admissionPluginWarnings, enabledAdmissionPlugins } from '../../src/server/admission-plugins.js';

const def = (group: string, resource: string) => ({ group, resource }) as ResourceDefinition;
const PODS = def('', 'pods');
const NODES = def('', 'nodes');
const LEASES = def('coordination.orch.io', 'leases');
const n1: WriteOptions = { dryRun: false, requester: { username: 'system:node:n1', groups: ['system:nodes'] } };
const hooks = nodeRestrictionHooks('orch.io');

function msg(f: () => void): string | undefined {
  try {
    f();
    return undefined;
  } catch (e) {
    expect(e).toBeInstanceOf(StatusError);
    expect((e as StatusError).code).toBe(403);
    return (e as Error).message;
  }
}
const pod = (nodeName: string, extra: Record<string, unknown> = {}) => ({ metadata: { name: 'p', namespace: 'default' }, spec: { nodeName, ...extra } }) as unknown as ApiObject;
const nodeObj = (labels: Record<string, string> = {}, taints: unknown[] = []) => ({ metadata: { name: 'n1', labels }, spec: { taints } }) as unknown as ApiObject;

describe('NodeRestriction', () => {
  it('ignores requesters that are not nodes', () => {
    const admin: WriteOptions = { dryRun: false, requester: { username: 'system:node:n1', groups: ['system:masters'] } };
    expect(msg(() => hooks.beforeWrite(PODS, pod('n2'), undefined, admin))).toBeUndefined();
    expect(msg(() => hooks.beforeWrite(PODS, pod('n2'), undefined, { dryRun: false }))).toBeUndefined();
  });

  it('limits pod status updates and deletes to pods bound to the node', () => {
    const status = { ...n1, subresource: 'status' };
    expect(msg(() => hooks.beforeWrite(PODS, pod('n1'), pod('n1'), status))).toBeUndefined();
    expect(msg(() => hooks.beforeWrite(PODS, pod('n2'), pod('n2'), status))).toBe('pods "p" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself');
    expect(msg(() => hooks.beforeDelete(PODS, pod('n1'), n1))).toBeUndefined();
    expect(msg(() => hooks.beforeDelete(PODS, pod('n2'), n1))).toBe('pods "p" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself');
    expect(msg(() => hooks.beforeWrite(PODS, pod('n1'), pod('n1'), n1))).toContain('can only create and delete mirror pods');
  });

  it('refuses other pod sub-resources, ephemeral containers of its own pods too', () => {
    expect(msg(() => hooks.beforeWrite(PODS, pod('n1'), pod('n1'), { ...n1, subresource: 'ephemeralcontainers' }))).toBe(
      `pods "p" is forbidden: unexpected pod subresource "ephemeralcontainers", only 'status' and 'eviction' are allowed`,
    );
  });

  it('refuses mirror pods that reference secrets', () => {
    const p = pod('n1', { imagePullSecrets: [{ name: 's' }] });
    p.metadata!.annotations = { 'orch.io/config.mirror': 'x' };
    expect(msg(() => hooks.beforeWrite(PODS, p, undefined, n1))).toContain('can not create pods that reference secrets');
  });

  it('refuses taint changes and protected labels on its own node', () => {
    expect(msg(() => hooks.beforeWrite(NODES, nodeObj({}, [{ key: 'k', effect: 'NoSchedule' }]), nodeObj(), n1))).toBe('nodes "n1" is forbidden: node "n1" is not allowed to modify taints');
    expect(msg(() => hooks.beforeWrite(NODES, nodeObj({ 'orch.io/hostname': 'n1', 'node.orch.io/x': 'y', app: 'z' }), nodeObj(), n1))).toBeUndefined();
    expect(msg(() => hooks.beforeWrite(NODES, nodeObj(), nodeObj({ 'node-role.orch.io/control-plane': '' }), n1))).toContain('not allowed to modify labels: node-role.orch.io/control-plane');
    expect(msg(() => hooks.beforeDelete(NODES, { metadata: { name: 'n2' } } as ApiObject, n1))).toBe('nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"');
  });

  it('limits node leases to the lease named after the node', () => {
    const lease = (name: string, namespace = 'orch-node-lease') => ({ metadata: { name, namespace } }) as ApiObject;
    expect(msg(() => hooks.beforeWrite(LEASES, lease('n1'), undefined, n1))).toBeUndefined();
    expect(msg(() => hooks.beforeWrite(LEASES, lease('n2'), undefined, n1))).toBe('leases.coordination.orch.io "n2" is forbidden: can only access node lease with the same name as the requesting node');
    // with --api-domain k8s.io the node leases are kube's
    const kube = nodeRestrictionHooks('k8s.io');
    const kubeLeases = def('coordination.k8s.io', 'leases');
    expect(msg(() => kube.beforeWrite(kubeLeases, lease('n2', 'kube-node-lease'), undefined, n1))).toBe('leases.coordination.k8s.io "n2" is forbidden: can only access node lease with the same name as the requesting node');
    expect(msg(() => kube.beforeWrite(kubeLeases, lease('n2', 'orch-node-lease'), undefined, n1))).toBeUndefined();
  });

  it('classifies labels like kube, with the API domain', () => {
    expect(forbiddenLabelChanges({ 'topology.orch.io/zone': 'a', 'kubelet.orch.io/x': '1', 'foo.k8s.io/y': '1', 'example.com/z': '1' }, {}, 'orch.io')).toEqual(['foo.k8s.io/y']);
    expect(forbiddenLabelChanges({ 'node-restriction.orch.io/a': 'x' }, { 'node-restriction.orch.io/a': 'x' }, 'orch.io')).toEqual([]);
  });
});

describe('admission plugin flags', () => {
  // no quotas: the ResourceQuota plugin admits everything
  const quotas = { list: () => [], listFresh: async () => [], writeUsed: async () => {} };
  const limitRanges = { list: () => [] };
  const priorityClasses = () => [];
  const none = () => [];
  const podSecurity = { namespace: () => undefined, pods: () => [] };
  const deps = { lookup: () => undefined, random: () => 0.5, quotas, limitRanges, priorityClasses, storageClasses: none, ingressClasses: none, runtimeClasses: none, podSecurity, clock: systemClock };
  it('kube\'s default plugins that orch has are on by default and can be disabled', () => {
    const all = [
      'NodeRestriction', 'LimitRanger', 'ServiceAccount', 'TaintNodesByCondition', 'PodSecurity', 'Priority', 'DefaultTolerationSeconds', 'DefaultStorageClass',
      'StorageObjectInUseProtection', 'PersistentVolumeClaimResize', 'RuntimeClass', 'CertificateSubjectRestriction', 'DefaultIngressClass', 'ResourceQuota',
    ];
    expect(enabledAdmissionPlugins({})).toEqual(all);
    expect(enabledAdmissionPlugins({ disable: all })).toEqual([]);
    expect(() => enabledAdmissionPlugins({ enable: ['Nope'] })).toThrow('admission plugin "Nope" is unknown (known: CertificateSubjectRestriction, DefaultIngressClass, DefaultStorageClass, DefaultTolerationSeconds, LimitRanger, NodeRestriction, PersistentVolumeClaimResize, PodSecurity, Priority, ResourceQuota, RuntimeClass, ServiceAccount, StorageObjectInUseProtection, TaintNodesByCondition)');
    expect(() => enabledAdmissionPlugins({ enable: ['NodeRestriction'], disable: ['NodeRestriction'] })).toThrow('both enabled and disabled');
  });

  it('accepts kube\'s plugin names that are always on or not built by default, and refuses opt-in ones orch lacks', () => {
    // a kube-apiserver command line: the always-on ones and kube's default-on ones orch lacks start the server
    const kubeLine = { enable: ['NamespaceLifecycle', 'LimitRanger', 'ServiceAccount', 'ClusterTrustBundleAttest', 'MutatingAdmissionWebhook', 'ResourceQuota'] };
    expect(enabledAdmissionPlugins(kubeLine)).toContain('LimitRanger');
    expect(enabledAdmissionPlugins(kubeLine)).not.toContain('NamespaceLifecycle');
    expect(admissionPluginWarnings(kubeLine)).toEqual(['admission plugin ClusterTrustBundleAttest is not built in orch; ignored']);
    expect(admissionPluginWarnings({ disable: ['ValidatingAdmissionWebhook'] })).toEqual(["admission plugin ValidatingAdmissionWebhook is part of orch's write path and stays on"]);
    expect(() => enabledAdmissionPlugins({ enable: ['AlwaysPullImages'] })).toThrow('admission plugin "AlwaysPullImages" is not built in orch (built: ');
    expect(enabledAdmissionPlugins({ disable: ['AlwaysPullImages'] })).toContain('ResourceQuota');
  });

  it('runs the ServiceAccount plugin before the webhook chain, mutating and validating (kube\'s order)', async () => {
    const seen: string[] = [];
    const sa = { metadata: { name: 'default', namespace: 'default' } } as unknown as ApiObject;
    const lookup = (resource: string) => (resource === 'namespaces' ? ({ metadata: { name: 'default' } } as ApiObject) : sa);
    const chain = {
      mutate: async (c: { object: ApiObject | undefined }) => {
        seen.push(`webhook sees ${String((c.object as unknown as { spec: { serviceAccountName?: string } }).spec.serviceAccountName)}`);
        return c.object;
      },
      validateAdmission: async () => void seen.push('policies'),
    };
    const h = admissionHooks({}, { disable: ['NodeRestriction', 'DefaultTolerationSeconds'] }, 'orch.io', { lookup, random: () => 0.5, quotas, limitRanges, priorityClasses, storageClasses: none, ingressClasses: none, runtimeClasses: none, podSecurity, clock: systemClock }, chain);
    const call = { operation: 'CREATE' as const, def: PODS, namespace: 'default', name: 'p', object: pod('n1'), oldObject: undefined, opts: { dryRun: false } };
    const out = await h.mutate!(call);
    await h.validateAdmission!({ ...call, object: out });
    expect(seen).toEqual(['webhook sees default', 'policies']);
  });

  it('runs the base hooks before the plugins', () => {
    const seen: string[] = [];
    const h = admissionHooks({ beforeWrite: () => seen.push('base') }, { disable: ['NodeRestriction', 'DefaultTolerationSeconds', 'ServiceAccount'] }, 'orch.io', deps);
    h.beforeWrite(PODS, pod('n2'), undefined, n1);
    expect(seen).toEqual(['base']);
    const on = admissionHooks({ beforeWrite: () => seen.push('base2') }, {}, 'orch.io', deps);
    expect(msg(() => on.beforeWrite(PODS, pod('n2'), undefined, n1))).toContain('can only create mirror pods');
    expect(seen).toEqual(['base', 'base2']);
  });
});
