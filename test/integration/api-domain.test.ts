// `--api-domain k8s.io`: every group carrying the product word is renamed so
// unmodified Kubernetes clients use every group (issue 2, item 3).

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { dirname, join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { eventually } from '../helpers/eventually.js';

const exec = promisify(execFile);
let t: TestServer;

beforeAll(async () => {
  t = await startTestServer({ apiDomain: 'k8s.io' });
});
afterAll(async () => {
  await t?.stop();
});

describe('api domain k8s.io', () => {
  it('serves the groups under k8s.io in discovery', async () => {
    const groups = (await t.request('GET', '/apis')).json<{ groups: { name: string }[] }>().groups.map((g) => g.name);
    expect(groups).toEqual(expect.arrayContaining(['coordination.k8s.io', 'events.k8s.io', 'rbac.authorization.k8s.io']));
    expect(groups.some((g) => g.includes('orch.io'))).toBe(false);
  });

  it('a 406 names the protobuf media type as kube-apiserver does; both names are still accepted', async () => {
    const path = '/api/v1/namespaces/default/configmaps';
    const r = await t.request('GET', path, { headers: { Accept: 'application/vnd.unknown' } });
    expect(r.status).toBe(406);
    expect(r.json<{ message: string }>().message).toBe('only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf');
    for (const type of ['application/vnd.kubernetes.protobuf', 'application/vnd.orch.protobuf']) {
      const ok = await t.request('GET', path, { headers: { Accept: type } });
      expect(ok.status).toBe(200);
      expect(ok.headers['content-type']).toBe(type);
    }
  });

  it('client-node typed clients work for every built-in group', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(t.server.kubeconfigPath);
    const coord = kc.makeApiClient(k8s.CoordinationV1Api);
    const lease = await coord.createNamespacedLease({
      namespace: 'kube-node-lease',
      body: { metadata: { name: 'node-a' }, spec: { holderIdentity: 'node-a', leaseDurationSeconds: 40 } },
    });
    expect(lease.apiVersion).toBe('coordination.k8s.io/v1');
    const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac.createClusterRole({ body: { metadata: { name: 'reader' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] } });
    const roles = await rbac.listClusterRole();
    expect(roles.items.map((r) => r.metadata?.name)).toContain('reader');
  });

  it('the built-in namespaces and the CA ConfigMap carry Kubernetes\' names, and stay', async () => {
    const names = (await t.request('GET', '/api/v1/namespaces')).json<{ items: { metadata: { name: string } }[] }>().items.map((n) => n.metadata.name);
    expect(names).toEqual(expect.arrayContaining(['default', 'kube-system', 'kube-public', 'kube-node-lease']));
    expect(names.filter((n) => n.startsWith('orch-'))).toEqual([]);
    const del = await t.request('DELETE', '/api/v1/namespaces/kube-system');
    expect(del.status).toBe(403);
    expect(del.json<{ message: string }>().message).toContain('kube-system');
    await eventually(async () => (await t.request('GET', '/api/v1/namespaces/kube-system/configmaps/kube-root-ca.crt')).status === 200, 'kube-root-ca.crt');
  });

  it('kubectl uses the renamed groups', async () => {
    // a discovery cache of its own: kubectl caches per host:port, and an earlier server on this port had the other domain
    const cacheDir = join(dirname(t.server.kubeconfigPath), 'kubectl-cache');
    const { stdout } = await exec('kubectl', ['--kubeconfig', t.server.kubeconfigPath, '--cache-dir', cacheDir, 'get', 'leases', '-A', '-o', 'name']);
    expect(stdout.trim()).toBe('lease.coordination.k8s.io/node-a');
  });
});

describe('a data directory remembers its API domain', () => {
  it('refuses to start with another --api-domain, naming both, and starts again with its own', async () => {
    const first = await startTestServer({ apiDomain: 'orch.io' });
    await first.request('POST', '/apis/coordination.orch.io/v1/namespaces/default/leases', { body: { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'kept' } } });
    await first.stop(true);
    await expect(startTestServer({ apiDomain: 'k8s.io', dataDir: first.dataDir })).rejects.toThrow(
      '--api-domain k8s.io: this data was created with --api-domain orch.io; start it with --api-domain orch.io, or use another --data-dir',
    );
    const again = await startTestServer({ apiDomain: 'orch.io', dataDir: first.dataDir });
    try {
      expect((await again.request('GET', '/apis/coordination.orch.io/v1/namespaces/default/leases/kept')).status).toBe(200);
    } finally {
      await again.stop();
    }
  });
});
