// Node authorizer and its graph (spec 001_bdb487117be0ea8a.txt §5.15), fed
// through an in-memory ObjectSource like the store adapter's.
import { describe, expect, it } from 'vitest';
import { createNodeAuthorization } from '../../src/auth/authz/node/index.js';
import type { ObjectSource, ObjectSources, RequestAttributes, SourceEvent, SourceObject } from '../../src/auth/authz/types.js';

class MemSource implements ObjectSource {
  private readonly objs = new Map<string, SourceObject>();
  private readonly handlers = new Set<(e: SourceEvent) => void>();
  subscribe(h: (e: SourceEvent) => void): () => void {
    for (const o of this.objs.values()) h({ type: 'ADDED', object: o });
    this.handlers.add(h);
    return () => this.handlers.delete(h);
  }
  put(o: SourceObject): void {
    const k = `${o.metadata?.namespace}/${o.metadata?.name}`;
    const type = this.objs.has(k) ? 'MODIFIED' : 'ADDED';
    this.objs.set(k, o);
    for (const h of this.handlers) h({ type, object: o });
  }
  del(ns: string, name: string): void {
    const k = `${ns}/${name}`;
    const o = this.objs.get(k);
    if (!o) return;
    this.objs.delete(k);
    for (const h of this.handlers) h({ type: 'DELETED', object: o });
  }
}

const node = (name: string) => ({ username: `system:node:${name}`, groups: ['system:nodes', 'system:authenticated'] });
function attrs(p: Partial<RequestAttributes>): RequestAttributes {
  return {
    user: node('n1'),
    verb: 'get',
    isResourceRequest: true,
    path: '/',
    apiGroup: '',
    apiVersion: 'v1',
    namespace: 'default',
    resource: 'secrets',
    subresource: '',
    name: '',
    ...p,
  };
}
const pod = (name: string, nodeName: string | undefined, spec: Record<string, unknown> = {}): SourceObject => ({
  metadata: { name, namespace: 'default' },
  spec: { nodeName, containers: [{ name: 'c', image: 'i' }], ...spec },
});

function setup(withPV = true, apiDomain = 'orch.io') {
  const pods = new MemSource();
  const pvcs = new MemSource();
  const pvs = new MemSource();
  const sources: ObjectSources = (_g, r) => {
    if (r === 'pods') return pods;
    if (withPV && r === 'persistentvolumeclaims') return pvcs;
    if (withPV && r === 'persistentvolumes') return pvs;
    throw new Error(`no resource ${r}`);
  };
  const logs: string[] = [];
  const na = createNodeAuthorization({ sources, apiDomain, withSelectors: true, log: (m) => logs.push(m) });
  na.start();
  const decide = async (p: Partial<RequestAttributes>) => (await na.authorizer.authorize(attrs(p))).decision;
  return { pods, pvcs, pvs, na, logs, decide };
}

describe('Node authorizer', () => {
  it('has no opinion on users outside system:nodes or not of the node form', async () => {
    const { na } = setup();
    for (const user of [{ username: 'system:node:n1', groups: ['other'] }, { username: 'alice', groups: ['system:nodes'] }]) {
      expect((await na.authorizer.authorize(attrs({ user, resource: 'services', verb: 'list' }))).decision).toBe('noOpinion');
    }
  });

  it('cannot list a node\'s rules: incomplete with kube\'s error; other users are complete', async () => {
    const { na } = setup();
    expect(await na.authorizer.rulesFor({ username: 'system:node:n1', groups: ['system:nodes'] })).toEqual({
      resourceRules: [],
      nonResourceRules: [],
      incomplete: true,
      errors: ['node authorizer does not support user rule resolution'],
    });
    expect(await na.authorizer.rulesFor({ username: 'alice', groups: ['system:nodes'] })).toEqual({ resourceRules: [], nonResourceRules: [], incomplete: false });
  });

  it('allows a secret only while a pod bound to the node references it', async () => {
    const { pods, decide, na } = setup();
    expect(await decide({ name: 's1' })).toBe('noOpinion');
    pods.put(pod('p', 'n1', { volumes: [{ name: 'v', secret: { secretName: 's1' } }] }));
    expect(await decide({ name: 's1' })).toBe('allow');
    expect(await decide({ name: 's1', user: node('n2') })).toBe('noOpinion');
    expect(await decide({ name: 's1', namespace: 'other' })).toBe('noOpinion');
    expect(await decide({ name: 's1', verb: 'update' })).toBe('noOpinion');
    expect((await na.authorizer.authorize(attrs({ name: 's2' }))).reason).toBe("no relationship found between node 'n1' and this object");
    pods.del('default', 'p');
    expect(await decide({ name: 's1' })).toBe('noOpinion');
  });

  it('follows every kind of secret and configmap reference, and a reschedule moves edges', async () => {
    const { pods, decide } = setup();
    pods.put(
      pod('p', 'n1', {
        imagePullSecrets: [{ name: 'pull' }],
        serviceAccountName: 'sa',
        containers: [
          {
            name: 'c',
            envFrom: [{ secretRef: { name: 'ef-s' } }, { configMapRef: { name: 'ef-c' } }],
            env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'env-s', key: 'k' } } }, { name: 'Y', valueFrom: { configMapKeyRef: { name: 'env-c', key: 'k' } } }],
          },
        ],
        volumes: [{ name: 'p', projected: { sources: [{ secret: { name: 'proj-s' } }, { configMap: { name: 'proj-c' } }] } }, { name: 'c', configMap: { name: 'vol-c' } }],
      }),
    );
    for (const s of ['pull', 'ef-s', 'env-s', 'proj-s']) expect(await decide({ name: s })).toBe('allow');
    for (const c of ['ef-c', 'env-c', 'proj-c', 'vol-c']) expect(await decide({ resource: 'configmaps', name: c })).toBe('allow');
    expect(await decide({ resource: 'serviceaccounts', subresource: 'token', verb: 'create', name: 'sa' })).toBe('allow');
    expect(await decide({ resource: 'serviceaccounts', subresource: 'token', verb: 'create', name: 'other' })).toBe('noOpinion');
    // list/watch only narrowed to one related name
    expect(await decide({ verb: 'watch', fieldSelector: [{ key: 'metadata.name', operator: 'In', values: ['pull'] }] })).toBe('allow');
    expect(await decide({ verb: 'list' })).toBe('noOpinion');
    pods.put(pod('p', 'n2', { imagePullSecrets: [{ name: 'pull' }] }));
    expect(await decide({ name: 'pull' })).toBe('noOpinion');
    expect(await decide({ name: 'pull', user: node('n2') })).toBe('allow');
  });

  it('keeps a secret reachable while another pod on the node still references it', async () => {
    const { pods, decide } = setup();
    pods.put(pod('a', 'n1', { imagePullSecrets: [{ name: 's' }] }));
    pods.put(pod('b', 'n1', { imagePullSecrets: [{ name: 's' }] }));
    pods.del('default', 'a');
    expect(await decide({ name: 's' })).toBe('allow');
    pods.del('default', 'b');
    expect(await decide({ name: 's' })).toBe('noOpinion');
  });

  it('reaches PVCs, their bound PV and the PV secret, in any arrival order', async () => {
    const { pods, pvcs, pvs, decide } = setup();
    pvs.put({ metadata: { name: 'pv1' }, spec: { claimRef: { namespace: 'default', name: 'claim' }, csi: { driver: 'd', nodePublishSecretRef: { name: 'csi-s', namespace: 'kube' } } } });
    pods.put(pod('p', 'n1', { volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'claim' } }] }));
    expect(await decide({ resource: 'persistentvolumeclaims', name: 'claim' })).toBe('allow');
    expect(await decide({ resource: 'persistentvolumes', namespace: '', name: 'pv1' })).toBe('noOpinion');
    pvcs.put({ metadata: { name: 'claim', namespace: 'default' }, spec: { volumeName: 'pv1' } });
    expect(await decide({ resource: 'persistentvolumes', namespace: '', name: 'pv1' })).toBe('allow');
    expect(await decide({ namespace: 'kube', name: 'csi-s' })).toBe('allow');
    expect(await decide({ resource: 'persistentvolumeclaims', verb: 'list' })).toBe('noOpinion');
  });

  it('tolerates a server without PV/PVC resources', async () => {
    const { pods, decide, logs } = setup(false);
    expect(logs.some((l) => l.includes('persistentvolumes'))).toBe(true);
    pods.put(pod('p', 'n1', { imagePullSecrets: [{ name: 's' }] }));
    expect(await decide({ name: 's' })).toBe('allow');
  });

  it('with AuthorizeNodeWithSelectors reads only its own Node and its pods', async () => {
    const { pods, decide } = setup();
    expect(await decide({ resource: 'nodes', namespace: '', name: 'n1' })).toBe('allow');
    expect(await decide({ resource: 'nodes', namespace: '', name: 'n2' })).toBe('noOpinion');
    expect(await decide({ resource: 'nodes', namespace: '', verb: 'list' })).toBe('noOpinion');
    expect(await decide({ resource: 'nodes', namespace: '', verb: 'watch', fieldSelector: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] })).toBe('allow');
    expect(await decide({ resource: 'pods', namespace: '', verb: 'list', fieldSelector: [{ key: 'spec.nodeName', operator: 'In', values: ['n1'] }] })).toBe('allow');
    expect(await decide({ resource: 'pods', namespace: '', verb: 'list', fieldSelector: [{ key: 'spec.nodeName', operator: 'In', values: ['n2'] }] })).toBe('noOpinion');
    expect(await decide({ resource: 'pods', name: 'p' })).toBe('noOpinion');
    pods.put(pod('p', 'n1'));
    expect(await decide({ resource: 'pods', name: 'p' })).toBe('allow');
    expect(await decide({ resource: 'pods', subresource: 'status', verb: 'patch', name: 'p' })).toBe('allow');
    expect(await decide({ resource: 'pods', subresource: 'status', verb: 'patch', name: 'p', user: node('n2') })).toBe('noOpinion');
  });

  it('without the gate reads every node and pod', async () => {
    const na = createNodeAuthorization({ sources: () => new MemSource(), apiDomain: 'orch.io', withSelectors: false, log: () => {} });
    na.start();
    expect((await na.authorizer.authorize(attrs({ resource: 'nodes', namespace: '', verb: 'list' }))).decision).toBe('allow');
    expect((await na.authorizer.authorize(attrs({ resource: 'pods', name: 'x' }))).decision).toBe('allow');
  });

  it('allows writes on its own node, lease, events, CSRs and reviews only', async () => {
    const { decide } = setup();
    expect(await decide({ resource: 'nodes', subresource: 'status', verb: 'patch', namespace: '', name: 'n1' })).toBe('allow');
    expect(await decide({ resource: 'nodes', subresource: 'status', verb: 'patch', namespace: '', name: 'n2' })).toBe('noOpinion');
    expect(await decide({ resource: 'nodes', verb: 'update', namespace: '', name: 'n2' })).toBe('noOpinion');
    const lease = { apiGroup: 'coordination.orch.io', resource: 'leases', namespace: 'orch-node-lease', verb: 'update' };
    expect(await decide({ ...lease, name: 'n1' })).toBe('allow');
    expect(await decide({ ...lease, name: 'n2' })).toBe('noOpinion');
    expect(await decide({ ...lease, namespace: 'default', name: 'n1' })).toBe('noOpinion');
    expect(await decide({ resource: 'events', verb: 'create' })).toBe('allow');
    expect(await decide({ apiGroup: 'certificates.orch.io', resource: 'certificatesigningrequests', namespace: '', verb: 'create' })).toBe('allow');
    expect(await decide({ apiGroup: 'authentication.orch.io', resource: 'tokenreviews', namespace: '', verb: 'create' })).toBe('allow');
    expect(await decide({ apiGroup: 'authorization.orch.io', resource: 'subjectaccessreviews', namespace: '', verb: 'create' })).toBe('allow');
    expect(await decide({ resource: 'services', verb: 'delete', name: 'x' })).toBe('noOpinion');
    expect(await decide({ apiGroup: 'apps', resource: 'deployments', verb: 'get', name: 'x' })).toBe('noOpinion');
  });

  it('with --api-domain k8s.io the node lease is in kube-node-lease', async () => {
    const { decide } = setup(true, 'k8s.io');
    const lease = { apiGroup: 'coordination.k8s.io', resource: 'leases', verb: 'update', name: 'n1' };
    expect(await decide({ ...lease, namespace: 'kube-node-lease' })).toBe('allow');
    expect(await decide({ ...lease, namespace: 'orch-node-lease' })).toBe('noOpinion');
  });
});
