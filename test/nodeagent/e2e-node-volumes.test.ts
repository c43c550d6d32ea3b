// Kubernetes' sig-storage e2e conformance tests of downwardAPI, configMap and
// secret volumes (test/e2e/common/storage/downwardapi_volume.go,
// configmap_volume.go, secrets_volume.go), on orch with kube's API domain and
// a real node agent on the simulated runtime; the suites are in
// test/helpers/e2e-node-volume-suites.ts (shared with the projected ones).
// Not ported: the [NodeFeature:FSGroup] tests (no fsGroup ownership changes).
// And test/e2e/storage/empty_dir_wrapper.go: a secret and a configMap volume
// in one pod do not conflict; five pods of a ReplicationController with 50
// configMap volumes each all start (kube's race of wrapped emptyDirs, #29641);
// kube's scale (50 volumes, 5 pods) but one round instead of three.

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Obj, AGNHOST, PAUSE, e2eEnv, namespace } from '../helpers/e2e-apps.js';
import { PODS, uniqueName } from '../helpers/e2e-node-output.js';
import { runKubectl } from '../helpers/kubectl.js';
import { configMapVolumeSuite, downwardApiVolumeSuite, secretVolumeSuite } from '../helpers/e2e-node-volume-suites.js';

const node = 'volumes-node';
const suite = { env: e2eEnv(node, { syncFrequency: '2s' }) /* the update tests wait for the periodic volume refresh (kubelet's default: a minute) */, node, projected: false };
downwardApiVolumeSuite(suite);
configMapVolumeSuite(suite);
secretVolumeSuite(suite);

describe('[sig-storage] EmptyDir wrapper volumes', () => {
  const { env } = suite;
  const ns = () => namespace(env, `emptydir-wrapper-${Math.random().toString(36).slice(2, 8)}`);
  /** podClient.CreateSync: created, then Running and Ready */
  const createSync = async (n: string, pod: Obj): Promise<void> => {
    await env.call('POST', PODS(n), pod);
    await env.eventually(async () => {
      const p = await env.get(`${PODS(n)}/${pod.metadata.name}`);
      return p.status?.phase === 'Running' && (p.status.conditions as Obj[]).some((c) => c.type === 'Ready' && c.status === 'True');
    }, `${pod.metadata.name} Running and Ready`);
  };

  it.concurrent('should not conflict [Conformance]', async () => {
    const n = await ns();
    const name = uniqueName('emptydir-wrapper-test-');
    const data = { 'data-1': Buffer.from('value-1\n').toString('base64') };
    await env.call('POST', `/api/v1/namespaces/${n}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name }, data });
    await env.call('POST', `/api/v1/namespaces/${n}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, binaryData: data });
    const pod = {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: uniqueName('pod-secrets-') },
      spec: {
        volumes: [{ name: 'secret-volume', secret: { secretName: name } }, { name: 'configmap-volume', configMap: { name } }],
        containers: [{
          name: 'secret-test', image: AGNHOST, args: ['test-webserver'],
          volumeMounts: [{ name: 'secret-volume', mountPath: '/etc/secret-volume', readOnly: true }, { name: 'configmap-volume', mountPath: '/etc/configmap-volume' }],
        }],
      },
    };
    await createSync(n, pod);
    // beyond kube's test: both volumes hold their file in the running container
    const r = await runKubectl(join(env.ts().dataDir, 'admin.kubeconfig'), ['exec', '-n', n, pod.metadata.name, '--', 'cat', '/etc/secret-volume/data-1', '/etc/configmap-volume/data-1']);
    expect(r.stdout, r.stderr).toBe('value-1\nvalue-1\n');
    for (const path of [`secrets/${name}`, `configmaps/${name}`, `pods/${pod.metadata.name}`]) await env.call('DELETE', `/api/v1/namespaces/${n}/${path}`);
  });

  it.concurrent('should not cause race condition when used for configmaps [Serial] [Conformance]', async () => {
    const n = await ns();
    const VOLUMES = 50;
    const PODS_PER_RC = 5;
    // kube repeats the RC three times to catch a race; the agent's volume setup has none to catch, and each round costs ~3 s here
    const ITERATIONS = 1;
    // createConfigmapsForRace and makeConfigMapVolumes
    const names = Array.from({ length: VOLUMES }, (_, i) => `racey-configmap-${i}`);
    await Promise.all(names.map((name) => env.call('POST', `/api/v1/namespaces/${n}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { 'data-1': 'value-1' } })));
    const volumes = names.map((name) => ({ name, configMap: { name, items: [{ key: 'data-1', path: 'data-1' }] } }));
    const volumeMounts = names.map((name, i) => ({ name, mountPath: `/etc/config-${i}` }));
    const node = (await env.get(`/api/v1/nodes/${suite.node}`)).metadata.labels['kubernetes.io/hostname'];
    for (let i = 0; i < ITERATIONS; i++) {
      // testNoWrappedVolumeRace: an RC of pause pods with every volume, pinned to one node
      const rcName = uniqueName('wrapped-volume-race-');
      const affinity = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] }] } } };
      await env.call('POST', `/api/v1/namespaces/${n}/replicationcontrollers`, {
        apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: rcName },
        spec: { replicas: PODS_PER_RC, selector: { name: rcName }, template: { metadata: { labels: { name: rcName } }, spec: { containers: [{ name: 'test-container', image: PAUSE, volumeMounts }], affinity, dnsPolicy: 'Default', volumes } } },
      });
      // e2epod.PodsCreated, then each pod Running
      await env.runningPods(n, `name=${rcName}`, PODS_PER_RC);
      // e2erc.DeleteRCAndWaitForGC
      await env.call('DELETE', `/api/v1/namespaces/${n}/replicationcontrollers/${rcName}`, { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' });
      await env.eventually(async () => (await env.list(PODS(n), `name=${rcName}`)).items.length === 0, `the pods of ${rcName} gone`, 60_000);
    }
    await Promise.all(names.map((name) => env.call('DELETE', `/api/v1/namespaces/${n}/configmaps/${name}`)));
  });
});
